"""Months, days, places and leave types read from questions in the desk's other languages (a city the weather tool
does not serve keeps its name: the tool, not a guess, says so)."""

from __future__ import annotations

from datetime import date

import pytest

from graph.slots import city_slot, fill_slots, leave_type_slot
from graph.times_local import date_slot, read_times

TODAY = date(2026, 12, 6)  # a Sunday


@pytest.mark.parametrize(("lang", "text", "months"), [
    ("zh", "我上个月的工资是多少？", ["2026-11"]),
    ("zh", "2025年10月的工资条", ["2025-10"]),
    ("zh", "我十月的加班", ["2026-10"]),
    ("de", "Wie viel habe ich letzten Monat verdient?", ["2026-11"]),
    ("de", "Lohnzettel Jänner", ["2026-01"]),
    ("fr", "ma fiche de paie du mois dernier", ["2026-11"]),
    ("fr", "mes heures sup en mars et avril", ["2026-03", "2026-04"]),
    ("es", "¿Cuánto cobré el mes pasado?", ["2026-11"]),
    ("it", "busta paga di ottobre 2025", ["2025-10"]),
    ("nl", "loonstrook van deze maand", ["2026-12"]),
    ("pt", "recibo de vencimento de setembro", ["2026-09"]),
])
def test_months_in_every_language(lang, text, months):
    assert read_times(text, TODAY, lang).months == months


@pytest.mark.parametrize(("lang", "text", "day"), [
    ("zh", "明天北京天气怎么样？", "2026-12-07"),
    ("zh", "周五巴黎会下雨吗", "2026-12-11"),
    ("de", "Wie wird das Wetter morgen in München?", "2026-12-07"),
    ("fr", "Quel temps fera-t-il à Paris demain ?", "2026-12-07"),
    ("es", "¿Llueve mañana en Madrid?", "2026-12-07"),
    ("it", "che tempo fa a Milano venerdì?", "2026-12-11"),
    ("nl", "weer in Amsterdam morgen", "2026-12-07"),
    ("pt", "vai chover em Lisboa amanhã?", "2026-12-07"),
    ("fr", "Je pars à Londres le 9 décembre, manteau ou veste ?", "2026-12-09"),
    ("fr", "ma fiche de paie", None),
])
def test_days_in_every_language(lang, text, day):
    assert date_slot(text, TODAY, lang) == day


@pytest.mark.parametrize(("text", "city"), [("北京今天天气怎么样", "Beijing"), ("Wetter in München", "Munich"),
                                            ("tempo a Milano", "Milan"), ("tempo em Lisboa", "Lisbon"),
                                            ("weer in Den Haag", "Den Haag"),
                                            ("il fait froid à Bruxelles ?", "Brussels")])
def test_cities_under_their_local_names(text, city):
    assert city_slot(text) == city


@pytest.mark.parametrize(("text", "kind"), [("我还有几天年假？", "annual"),
                                            ("Wie viele Urlaubstage habe ich?", "annual"),
                                            ("combien de jours de congé maternité", "maternity"),
                                            ("permiso de paternidad", "paternity"), ("giorni di malattia", "sick"),
                                            ("ouderschapsverlof", "parental"), ("licença sem vencimento", "unpaid")])
def test_leave_types_in_every_language(text, kind):
    assert leave_type_slot(text) == kind


@pytest.mark.parametrize(("lang", "text"), [("en", "and the month before that?"), ("de", "und der Monat davor?"),
                                            ("zh", "那前一个月呢？"), ("fr", "et le mois d'avant ?"),
                                            ("it", "e il mese prima?")])
def test_a_follow_up_moves_from_the_month_the_conversation_used(lang, text):
    slots = fill_slots(text, TODAY, {"city": "Berlin"}, {"month": "2026-09"}, lang)
    assert slots["month"] == "2026-08" and slots["lang"] == lang
