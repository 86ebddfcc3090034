"""Months, days, places and leave types read from questions in the desk's other languages (a city the weather tool
does not serve keeps its name: the tool, not a guess, says so)."""

from __future__ import annotations

from datetime import date

import pytest

from graph.leave_slots import leave_type_slot
from graph.slots import city_slot, fill_slots
from graph.times_local import date_slot, read_times
from tools.domain import HOME_CITIES

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
    # a weekday of a week named relative to this one (weeks run Monday to Sunday; TODAY is a Sunday)
    ("zh", "下周三杭州天气怎么样？", "2026-12-09"), ("zh", "下星期五会下雨吗", "2026-12-11"),
    ("zh", "周三天气", "2026-12-09"),
    # this week's day that has passed, asked for a forecast: the coming one, not yesterday
    ("zh", "这周六去伦敦出差，需要带羽绒服吗", "2026-12-12"),
    ("de", "Wetter diese Woche Samstag in Berlin", "2026-12-12"),
    ("de", "Wetter nächste Woche Mittwoch in Berlin", "2026-12-09"),
    ("de", "Wetter am nächsten Mittwoch", "2026-12-09"),
    ("de", "Wetter übernächste Woche Mittwoch in Berlin", "2026-12-16"),
    ("nl", "weer volgende week woensdag in Amsterdam", "2026-12-09"),
    ("fr", "quel temps mercredi prochain à Paris", "2026-12-09"),
    ("es", "¿qué tiempo hará el próximo miércoles en Madrid?", "2026-12-09"),
])
def test_days_in_every_language(lang, text, day):
    assert date_slot(text, TODAY, lang) == day


@pytest.mark.parametrize(("text", "city"), [("北京今天天气怎么样", "Beijing"), ("Wetter in München", "Munich"),
                                            ("tempo a Milano", "Milan"), ("tempo em Lisboa", "Lisbon"),
                                            ("weer in Den Haag", "The Hague"), ("明天杭州天气怎么样？", "Hangzhou"),
                                            ("che tempo fa a Napoli?", "Naples"), ("wetter münchen morgen", "Munich"),
                                            ("il fait froid à Bruxelles ?", "Brussels")])
def test_cities_under_their_local_names(text, city):
    assert city_slot(text) == city


@pytest.mark.parametrize(("text", "lang"), [("What's the weather in Smallville tomorrow?", "en"),
                                            ("Wie wird das Wetter morgen in Kleinhausen?", "de"),
                                            ("Quel temps fera-t-il demain à Bourg-Lès-Ailleurs ?", "fr")])
def test_a_place_the_gazetteer_does_not_know_stays_as_written_never_the_callers_city(text, lang):
    assert city_slot(text, lang) not in (None, *HOME_CITIES)


@pytest.mark.parametrize(("text", "lang"), [("Can I take leave in May?", "en"), ("When is payday?", "en"),
                                            ("Nice, what is the dress code?", "en"),
                                            ("Wie viel Gehalt habe ich im Mai bekommen?", "de"),
                                            ("我的工资是多少？", "zh"), ("A0XVE", "en")])
def test_words_that_are_also_some_citys_name_are_not_read_as_places(text, lang):
    assert city_slot(text, lang) is None


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


@pytest.mark.parametrize(("lang", "text", "months"), [
    ("de", "Was hab ich vor zwei Monaten verdient?", ["2026-10"]),
    ("fr", "mes absences il y a trois mois", ["2026-09"]),
    ("es", "¿cuántas veces llegué tarde hace tres meses?", ["2026-09"]),
    ("es", "la nómina del mes antepasado", ["2026-10"]),
    ("it", "due mesi fa quanti giorni di assenza ho avuto?", ["2026-10"]),
    ("nl", "wat heb ik twee maanden geleden bruto verdiend?", ["2026-10"]),
    ("pt", "quanto foi meu salário bruto no mês retrasado?", ["2026-10"]),
    ("pt", "o meu recibo de há 2 meses", ["2026-10"]),
    ("zh", "两个月前的工资是多少", ["2026-10"]),
    ("zh", "七个月前的考勤", ["2026-05"]),  # numbers of the words file, tens written with its ten-word
    ("zh", "十二个月前的工资", ["2025-12"]),
])
def test_months_counted_back_in_every_language(lang, text, months):
    assert read_times(text, TODAY, lang).months == months


@pytest.mark.parametrize(("lang", "text", "day"), [
    ("zh", "12月10号米兰会下雨吗", "2026-12-10"),
    ("zh", "十二月二十五号去巴黎", "2026-12-25"),
    ("zh", "后天上海冷不冷", "2026-12-08"),
    ("de", "Was pack ich für Kopenhagen am 10.12. ein?", "2026-12-10"),
    ("de", "Brauch ich übermorgen in Wien eine Jacke?", "2026-12-08"),
    ("pt", "previsão para Bruxelas no dia 10 de dezembro?", "2026-12-10"),
    ("pt", "chove em Lisboa depois de amanhã?", "2026-12-08"),
    ("it", "dopodomani volo a Copenaghen, cosa mi metto?", "2026-12-08"),
    ("nl", "regent het overmorgen in Brussel?", "2026-12-08"),
    ("fr", "le 3/1 à Paris ?", "2027-01-03"),  # a day past this year's is next year's: forecasts are ahead
    ("de", "1.5 Stunden Überstunden", None),  # hours, not the 1st of May
    ("fr", "une 1/2 journée de congé", None),  # half a day
])
def test_days_by_day_word_or_day_and_month(lang, text, day):
    assert date_slot(text, TODAY, lang) == day


@pytest.mark.parametrize(("lang", "text", "city"), [
    ("fr", "Il va faire beau à Lyon demain ?", "Lyon"), ("es", "¿Qué tiempo hará en Sevilla mañana?", "Sevilla"),
    ("it", "che tempo fa domani a Napoli?", "Naples"), ("pt", "como vai estar o tempo no Porto amanhã?", "Porto"),
    ("pt", "vai fazer calor em São Paulo no sábado?", "Sao Paulo"), ("nl", "regent het in Rotterdam?", "Rotterdam"),
    ("it", "piove a Natale?", None), ("es", "¿llueve en Marzo?", None),
])
def test_a_city_the_weather_tool_does_not_serve_keeps_its_name_instead_of_the_callers(lang, text, city):
    assert city_slot(text, lang) == city


@pytest.mark.parametrize(("text", "kind"), [
    ("Meine Frau ist schwanger, wie viel Vaterschaftsurlaub krieg ich?", "paternity"),
    ("a minha mulher está grávida, quantos dias de licença tenho?", "paternity"),
    ("mia moglie partorisce a febbraio, quanti giorni di congedo mi spettano?", "paternity"),
    ("我老婆怀孕了，我能休几天？", "paternity"),
    ("Ich bin schwanger, wie lange ist der Mutterschutz?", "maternity"),
    ("想请两个月不带薪的假", "unpaid"),
])
def test_a_partners_pregnancy_names_the_callers_partner_leave(text, kind):
    assert leave_type_slot(text) == kind


@pytest.mark.parametrize("text", ["13月的工资", "2025年13月的考勤", "0月的工资"])
def test_a_month_that_does_not_exist_is_not_read_as_another(text):
    assert read_times(text, TODAY, "zh").months == []
