from datetime import date

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from graph.slots import (
    city_slot,
    clause_slots,
    date_slot,
    fill_slots,
    leave_type_slot,
    month_slot,
    month_slots,
    refers_back,
    spell_entities,
)

TODAY = date(2026, 11, 29)  # a Sunday


@pytest.mark.parametrize(("text", "month"), [
    ("What was my salary last month?", "2026-10"),
    ("salary for March", "2026-03"),
    ("attendance in October 2025", "2025-10"),
    ("payslip 2026-07", "2026-07"),
    ("my pay this month", "2026-11"),
    ("May I see my payslip for may?", "2026-05"),
    ("salary for December", "2025-12"),  # a month not yet reached means last year's
    ("my salary", None),
    ("salary for 2026-13", None),
    ("how much did I make two months ago", "2026-09"),
    ("was I late on the 3rd?", "2026-11"),
    ("my overtime in october", "2026-10"),
    ("pay for sept", "2026-09"),
    ("attendance from Oct 2025", "2025-10"),
    ("how much did I get paid in 03/2026?", "2026-03"),  # a month and year in figures, read, never defaulted
    ("OT hrs for 3.2026", "2026-03"),
    ("payslip 2026/07", "2026-07"),
    ("pay for 13/2026", None),
])
def test_month_slot(text, month):
    assert month_slot(text, TODAY) == month


@pytest.mark.parametrize(("text", "day"), [
    ("weather today", "2026-11-29"),
    ("weather tomorrow in Paris", "2026-11-30"),
    ("what to wear on Friday", "2026-12-04"),
    ("this weekend", "2026-12-05"),
    ("on 2026-12-24", "2026-12-24"),
    ("on 3 December", "2026-12-03"),
    ("on 2026-02-30", None),
    ("will it rain on saturday in Rome", "2026-12-05"),
    ("weather next Monday", "2026-11-30"),
    ("forecast for the day after tomorrow", "2026-12-01"),
    ("weather on the 3rd", "2026-12-03"),
    ("any chance of rain in Lisbon tmrw?", "2026-11-30"),
])
def test_date_slot(text, day):
    assert date_slot(text, TODAY) == day


@pytest.mark.parametrize(("text", "day"), [
    ("need a coat in madrid tomorow?", "2026-11-30"),  # not today: a misspelt day is still that day
    ("weather in Paris tommorow", "2026-11-30"),
    ("rain in Dublin on wednsday?", "2026-12-02"),
    ("forecast for thrusday", "2026-12-03"),
    ("any sun 2morrow", "2026-11-30"),
])
def test_misspelt_days_are_read_as_the_day_meant(text, day):
    assert fill_slots(text, TODAY, {})["date"] == day


def test_spelling_only_touches_near_misses_of_slot_words():
    assert spell_entities("salary for febuary in Berln") == "salary for february in Berlin"
    assert spell_entities("a match in Romeo's town, marsh and mouth") == "a match in Romeo's town, marsh and mouth"
    assert city_slot(spell_entities("weather in lisbn")) == "Lisbon"


def test_every_month_a_question_names():
    assert month_slots("Did my pay go up in April compared to March?", TODAY) == ["2026-04", "2026-03"]
    assert month_slots("salary for March, I mean the 3rd of March", TODAY) == ["2026-03"]
    assert month_slots("my salary", TODAY) == []
    slots = fill_slots("attendance in june and july", TODAY, {})
    assert slots["month"] == "2026-06" and slots["months"] == ["2026-06", "2026-07"]
    assert "months" not in fill_slots("attendance in june", TODAY, {})


def test_a_compound_part_keeps_its_own_months_not_the_whole_requests():
    whole = fill_slots("my salary for March and April and my attendance for June", TODAY, {})
    assert whole["months"] == ["2026-03", "2026-04", "2026-06"]
    attendance = clause_slots("my attendance for June", whole, TODAY, {})
    assert attendance["month"] == "2026-06" and "months" not in attendance
    assert clause_slots("my salary for March and April", whole, TODAY, {})["months"] == ["2026-03", "2026-04"]


def test_another_clauses_day_is_not_a_parts_month_but_a_shared_month_is():
    whole = fill_slots("my salary and the weather in Rome tomorrow", TODAY, {})
    salary = clause_slots("my salary", whole, TODAY, {})
    assert salary["sources"]["month"] == "default"  # the month is unsaid: the template's default applies
    shared = fill_slots("my salary and attendance in October", TODAY, {})
    assert clause_slots("my salary", shared, TODAY, {})["month"] == "2026-10"  # "in October" is for both


def test_city_from_gazetteer_and_capitalized_place():
    assert city_slot("weather in berlin tomorrow") == "Berlin"
    assert city_slot("Is it raining in Springfield?") == "Springfield"
    assert city_slot("weather in March") is None


def test_leave_type_synonyms():
    assert leave_type_slot("rules for vacation days") == "annual"
    assert leave_type_slot("compassionate leave after a funeral") == "bereavement"
    assert leave_type_slot("what about lunch") is None
    assert leave_type_slot("how many weeks off do new dads get") == "paternity"
    assert leave_type_slot("time off after my father died") == "bereavement"
    assert leave_type_slot("whats my remaining PTO") == "annual"
    assert leave_type_slot("do I get paid if I'm off sick") == "sick"
    assert leave_type_slot("I'm giving birth in April, how long can I stay home?") == "maternity"
    # a couple expecting a baby is not a maternity question when the father asks
    assert leave_type_slot("my wife and I are expecting a baby, how long can I take off as the father") == "paternity"
    assert leave_type_slot("mat leave - how long is it and is it full pay the whole time?") == "maternity"
    assert leave_type_slot("wife's due in march, how much pat leave do I get?") == "paternity"


def test_fill_slots_prefers_question_then_conversation_then_profile():
    slots = fill_slots("and in Paris?", TODAY, {"city": "Berlin"}, {"city": "Madrid", "month": "2026-01"})
    assert slots["city"] == "Paris" and slots["sources"]["city"] == "question"
    assert slots["month"] == "2026-01" and slots["sources"]["month"] == "conversation"
    slots = fill_slots("weather tomorrow", TODAY, {"city": "Berlin"})
    assert slots["city"] == "Berlin" and slots["sources"]["city"] == "profile"


@pytest.mark.parametrize(("text", "kinds"), [
    ("what about my pay that month", {"month", "date"}),
    ("how much was my net pay then?", {"month", "date"}),
    ("will it rain there?", {"city"}),
    ("what should I wear there on the same day", {"city", "month", "date"}),
    ("is there any leave left", set()),  # "there" that points at nothing
    ("are there holidays in May", set()),
    ("ok then, what is my salary", set()),  # "then" as a word of transition
])
def test_refers_back(text, kinds):
    assert refers_back(text) == kinds


def test_injection_is_not_a_month():
    assert month_slot("salary for month=../../etc/passwd", TODAY) is None
    assert fill_slots("salary month=../../etc", TODAY, {})["month"] == "2026-11"


@given(st.text(max_size=300))
def test_slot_filler_never_crashes_and_only_emits_valid_values(text):
    slots = fill_slots(text, TODAY, {"city": "Berlin"})
    assert len(slots["month"]) == 7 and slots["month"][4] == "-"
    date.fromisoformat(slots["date"])
    assert slots["city"].replace(" ", "").isalpha()


async def test_leave_type_by_meaning_when_no_single_keyword_names_it():
    from graph.slots import resolve_leave_type
    from tools.domain import LEAVE_DESCRIPTIONS

    axes = {k: i for i, k in enumerate(LEAVE_DESCRIPTIONS)}
    meaning = {"a new dad wanting unpaid weeks": "paternity", "my kid has chickenpox and needs me": "parental"}

    async def embed(texts):  # each text points along its leave type's axis (descriptions along their own)
        out = np.zeros((len(texts), len(axes)), dtype=np.float32)
        for i, t in enumerate(texts):
            kind = next((k for k, d in LEAVE_DESCRIPTIONS.items() if d == t), meaning.get(t))
            if kind:
                out[i, axes[kind]] = 1.0
        return out

    assert await resolve_leave_type("rules for sick leave", embed) == "sick"  # one keyword: no embedding needed
    assert await resolve_leave_type("my kid has chickenpox and needs me", embed) == "parental"
    assert await resolve_leave_type("how do I book leave", embed) is None  # about no type: steps aside
    # several named ("dad", "unpaid"): meaning decides among them only
    assert await resolve_leave_type("a new dad wanting unpaid weeks", embed) == "paternity"
