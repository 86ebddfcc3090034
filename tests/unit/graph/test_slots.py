from datetime import date

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from graph.leave_slots import leave_type_slot, leave_types_named
from graph.slots import (
    city_slot,
    clause_slots,
    fill_slots,
    refers_back,
    spell_entities,
)
from graph.times import MAX_MONTHS, date_slot, month_slot, month_slots

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
    assert "span" not in salary  # nor is tomorrow the day it asks about
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


def test_a_partners_pregnancy_is_the_callers_partner_leave_not_maternity_leave():
    assert leave_type_slot("my wife is due in june, how many weeks can i take once the baby is here?") == "paternity"
    assert leave_type_slot("My girlfriend is pregnant - what leave do I get?") == "paternity"
    assert leave_type_slot("our partner's due date is in May, how long can I be off?") == "paternity"
    assert leave_type_slot("My wife is giving birth next month. Can I take time off?") == "paternity"
    assert leave_type_slot("I'm pregnant and my partner wants to know when I should tell HR") == "maternity"
    assert leave_type_slot("my wife died last week, how many days off can I take?") == "bereavement"
    assert leave_type_slot("my wife is ill, can I take a sick day to look after her?") == "sick"
    assert leave_type_slot("I'm the non-birth mum, is there leave for me when the baby comes?") == "paternity"


def test_a_leave_word_inside_a_longer_one_names_the_longer_ones_type():
    """Chinese writes no spaces: 陪产假 (partner leave) holds 产假 (maternity leave)."""
    assert leave_types_named("老婆下个月预产期，男方能请几天陪产假？工资照发吗？") == ["paternity"]
    assert leave_types_named("产假有多少周？") == ["maternity"]
    assert leave_types_named("产假和陪产假各有几天？") == ["maternity", "paternity"]


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
    if "unread_time" in slots or "period" in slots:  # no one month: none guessed
        assert "month" not in slots
    else:
        assert len(slots["month"]) == 7 and slots["month"][4] == "-"
    if "unread_time" not in slots and "period" not in slots:
        date.fromisoformat(slots["date"])
    assert all(len(m) == 7 and m[4] == "-" for m in slots.get("months", []))
    assert slots["city"].replace(" ", "").isalpha()


async def test_leave_type_by_meaning_when_no_single_keyword_names_it():
    from graph.leave_slots import resolve_leave_type
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


async def test_leave_type_from_the_classifiers_before_the_descriptions():
    from graph.leave_model import NONE, LeaveTypeModel
    from graph.leave_slots import resolve_leave_type
    from tools.domain import LEAVE_DESCRIPTIONS, LEAVE_TYPES

    classes = [*LEAVE_TYPES, NONE]
    full = LeaveTypeModel(classes, np.eye(len(classes), dtype=np.float32) * 10, np.zeros(len(classes), np.float32),
                          {"threshold": 0.9})
    embedded: list[list[str]] = []

    async def embed(texts):  # the shared encoder: "toddler" questions point at parental, others at nothing
        embedded.append(texts)
        out = np.zeros((len(texts), len(classes)), dtype=np.float32)
        for i, t in enumerate(texts):
            if "toddler" in t:
                out[i, classes.index("parental")] = 1.0
        return out

    # The router's classifier was sure: no embedding at all
    assert await resolve_leave_type("time off to mind my toddler", embed, sure="parental", full=full) == "parental"
    assert await resolve_leave_type("how do I book time off", embed, sure=NONE, full=full) is None
    assert embedded == []
    # Not sure: the shared encoder's classifier reads the question alone (no descriptions embedded)
    assert await resolve_leave_type("time off to mind my toddler", embed, full=full) == "parental"
    assert embedded == [["time off to mind my toddler"]]
    # Two types named and the router's classifier sure of a third: not taken; the descriptions of the two named
    # are embedded with the question, and (equally far here) they settle none
    embedded.clear()
    assert await resolve_leave_type("dad or unpaid weeks for my toddler", embed, sure="sick") is None
    assert embedded == [["dad or unpaid weeks for my toddler", LEAVE_DESCRIPTIONS["paternity"],
                         LEAVE_DESCRIPTIONS["unpaid"]]]
    # Neither classifier sure: the descriptions are embedded with the question
    embedded.clear()
    await resolve_leave_type("what about my leave", embed, full=full)
    assert len(embedded) == 2 and len(embedded[1]) == 1 + len(LEAVE_TYPES)


DEC2 = date(2026, 12, 2)  # a Wednesday; November's payslip is out, December's comes on the 22nd


def _months(first, last):
    y, m = map(int, first.split("-"))
    out = []
    while f"{y}-{m:02d}" <= last:
        out.append(f"{y}-{m:02d}")
        y, m = (y + 1, 1) if m == 12 else (y, m + 1)
    return out


@pytest.mark.parametrize(("text", "months"), [
    ("What was my net pay the month before last?", ["2026-10"]),  # not November: that is "last month"
    ("my payslip last month", ["2026-11"]),
    ("Was I late at all the week before last?", ["2026-11"]),
    ("was I late two weeks ago?", ["2026-11"]),
    ("How much bonus did I get in Q1 2026?", _months("2026-01", "2026-03")),
    ("bonus for the first quarter", _months("2026-01", "2026-03")),
    ("my overtime in the second quarter of 2026", _months("2026-04", "2026-06")),
    ("attendance in Q3", _months("2026-07", "2026-09")),
    ("what did I earn last quarter", _months("2026-07", "2026-09")),
    ("my pay in Q4 2025", _months("2025-10", "2025-12")),
    ("how much have I earned this year so far", _months("2026-01", "2026-12")),
    ("overtime so far this year", _months("2026-01", "2026-12")),
    ("how many days was I absent since January?", _months("2026-01", "2026-12")),
    ("was I off sick over the summer", _months("2026-06", "2026-08")),
    ("my pay last summer", _months("2026-06", "2026-08")),  # the summer just gone, said in December
    ("net pay over the last three months", _months("2026-09", "2026-11")),  # the months completed
    ("late arrivals in the past two months", _months("2026-10", "2026-11")),
    ("my salary from March to June", _months("2026-03", "2026-06")),
    ("attendance between May and July 2025", _months("2025-05", "2025-07")),
    ("total bonus last year", _months("2025-01", "2025-12")),
    ("how much tax did I pay in 2025?", _months("2025-01", "2025-12")),
    ("Did my pay go up in April compared to March?", ["2026-04", "2026-03"]),  # two months, each asked about
])
def test_relative_and_calendar_periods_resolve_against_the_runs_date(text, months):
    assert month_slots(text, DEC2) == months
    slots = fill_slots(text, DEC2, {})
    if len(months) == 1:
        assert slots["month"] == months[0] and slots["sources"]["month"] == "question"
    elif "compared" not in text:  # a period: its months together, no one month (and no default) beside them
        assert slots["months"] == months and slots["period"] and "month" not in slots


@pytest.mark.parametrize(("text", "today", "months"), [
    ("bonus in Q1", date(2026, 2, 10), ["2026-01", "2026-02"]),  # a period never reaches a month still to come
    ("my pay this quarter", DEC2, _months("2026-10", "2026-12")),
    ("attendance over the summer", date(2026, 7, 15), ["2026-06", "2026-07"]),
    ("attendance last summer", date(2026, 7, 15), _months("2025-06", "2025-08")),  # this one has not ended
    ("overtime last winter", DEC2, ["2025-12", "2026-01", "2026-02"]),
    ("attendance from November to January", date(2026, 3, 1), ["2025-11", "2025-12", "2026-01"]),
])
def test_periods_follow_the_calendar_and_stop_at_this_month(text, today, months):
    assert month_slots(text, today) == months


def test_a_week_is_the_month_it_falls_in_and_the_week_is_kept():
    slots = fill_slots("Was I late at all the week before last?", DEC2, {})
    assert slots["month"] == "2026-11" and slots["span"] == ["2026-11-16", "2026-11-22"]
    across = fill_slots("was I late last week", date(2026, 12, 9), {})  # 30 November to 6 December
    assert across["months"] == ["2026-11", "2026-12"] and across["period"] and "month" not in across
    assert across["span"] == ["2026-11-30", "2026-12-06"]


@pytest.mark.parametrize(("text", "unread"), [
    ("What was my net pay the fortnight before last?", "the fortnight before last"),
    ("my overtime over the last few months", "last few months"),
    ("attendance next quarter", "quarter"),
    ("how much did I earn a few months ago", "few months ago"),
    ("bonus in Q1 2027", "Q1 2027"),  # all still to come
    ("my salary since 2024", "since 2024"),  # 36 months: longer than a period is answered for
    ("pay in Q1 compared to Q2", "Q1 / Q2"),  # two periods: not one list of months
    ("what have I earned since I joined?", "since I"),
    ("was I late on the 31st?", "the 31st"),  # November has 30 days
    ("salary for 2026-13", "2026-13"),
    ("overtime in the financial year", "financial year"),
])
def test_a_time_that_cannot_be_read_fills_no_month_and_no_default(text, unread):
    slots = fill_slots(text, TODAY, {"city": "Berlin"}, previous={"month": "2026-05", "date": "2026-05-04"})
    assert slots["unread_time"].startswith(unread)
    assert "month" not in slots and "date" not in slots and "months" not in slots  # never the newest, nor the last
    assert month_slot(text, TODAY) is None


def test_words_about_time_that_name_no_time_keep_the_default():
    for text in ("what is my salary per month", "my monthly pay", "my latest payslip", "is my salary paid yearly"):
        slots = fill_slots(text, DEC2, {})
        assert slots["sources"]["month"] == "default" and "unread_time" not in slots, text


def test_more_named_months_than_answered_one_by_one_are_answered_together_not_cut():
    slots = fill_slots("my pay in jan, feb, mar, apr and may", DEC2, {})
    assert len(slots["months"]) == 5 > MAX_MONTHS and slots["period"] and "month" not in slots


def test_a_compound_part_shares_the_requests_period_unless_it_names_its_own_time():
    whole = fill_slots("my salary and attendance in Q1 2026", DEC2, {})
    salary = clause_slots("my salary", whole, DEC2, {})
    assert salary["months"] == ["2026-01", "2026-02", "2026-03"] and salary["period"] and "month" not in salary
    mixed = fill_slots("my salary for October and my attendance in Q1 2026", DEC2, {})
    attendance = clause_slots("my attendance in Q1 2026", mixed, DEC2, {})
    assert attendance["period"] and "month" not in attendance  # October is the other part's
    october = clause_slots("my salary for October", mixed, DEC2, {})
    assert october["month"] == "2026-10" and "period" not in october and "months" not in october
    unread = clause_slots("my pay the fortnight before", mixed, DEC2, {})
    assert unread["unread_time"] and "month" not in unread


def test_a_forecast_question_after_a_forecast_is_about_the_same_place_and_day():
    from graph.slots import reusable

    last = {"city": "Amsterdam", "date": "2026-12-07", "month": "2026-12"}
    kept = reusable(last, "should I wear a raincoat then?", "weather_clothing", ["weather"])
    slots = fill_slots("should I wear a raincoat?", date(2026, 12, 6), {"city": "Vienna"}, kept)
    assert (slots["city"], slots["date"]) == ("Amsterdam", "2026-12-07")
    named = fill_slots("and in Paris?", date(2026, 12, 6), {"city": "Vienna"}, kept)
    assert (named["city"], named["date"]) == ("Paris", "2026-12-07")  # its own place, the same day
    assert reusable(last, "how much did I earn?", "salary", ["weather"]) == {}
