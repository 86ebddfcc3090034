"""The desk's own sentences in every language it speaks: complete catalogs, locale formatting, the FAQ's
translations, and the template answers a German or Chinese employee reads.
"""

from __future__ import annotations

import re
from datetime import date

import pytest
import yaml
from babel import Locale

from tools import i18n
from tools.company import DEFAULT_DIR, translations
from tools.faq import load_faq
from tools.i18n import LANGUAGES, catalog, english_name, fill, locale_of, money, month_text, placeholders, say, words
from tools.intents.leave_balance import render_leave_balance
from tools.intents.leave_policy import render_leave_policy
from tools.intents.salary import render_salary, summarize_salary
from tools.intents.weather import render_weather, render_weather_clothing

FAQ = load_faq(DEFAULT_DIR / "faq.yaml")
OTHER = [lang for lang in LANGUAGES if lang != "en"]


@pytest.mark.parametrize("lang", OTHER)
def test_every_catalog_has_every_key_with_the_same_placeholders(lang):
    en, other = catalog("en"), catalog(lang)
    assert list(other) == list(en), "the same keys, in the same order as the English source"
    for key, text in en.items():
        assert placeholders(other[key]) == placeholders(text), key
        for n in ("x", "2"):
            assert "{" not in fill(other[key], lang, dict.fromkeys(placeholders(text), n)), key  # all filled


# What a count reads as, for 1 and for 2, in each language (CLDR's plural rules through Babel).
COUNTS = {
    "en": ("1 late arrival, 1 overtime hour", "2 late arrivals, 2 overtime hours", "have 1 day of", "have 2 days of"),
    "de": ("1 Fehltag, 1 Verspätung, 1 Überstunde", "2 Fehltage, 2 Verspätungen, 2 Überstunden", "noch 1 Tag Jahres",
           "noch 2 Tage Jahres"),
    "fr": ("1 jour d'absence, 1 retard, 1 heure supplémentaire", "2 jours d'absence, 2 retards, 2 heures supp",
           "reste 1 jour de", "reste 2 jours de"),
    "es": ("1 ausencia, 1 llegada tarde, 1 hora extra", "2 ausencias, 2 llegadas tarde, 2 horas extra",
           "Te queda 1 día de", "Te quedan 2 días de"),
    "it": ("1 assenza, 1 ritardo, 1 ora di straordinario", "2 assenze, 2 ritardi, 2 ore di straordinario",
           "Ti resta 1 giorno di", "Ti restano 2 giorni di"),
    "nl": ("1 afwezig, 1 keer te laat, 1 overuur", "2 afwezig, 2 keer te laat, 2 overuren", "nog 1 vakantiedag over",
           "nog 2 vakantiedagen over"),
    "pt": ("1 falta, 1 atraso, 1 hora extraordinária", "2 faltas, 2 atrasos, 2 horas extraordinárias",
           "Resta 1 dia de", "Restam 2 dias de"),
    "zh": ("缺勤1天，迟到1次，加班1小时", "缺勤2天，迟到2次，加班2小时", "还剩1天年假", "还剩2天年假"),
}


@pytest.mark.parametrize("lang", LANGUAGES)
def test_counts_take_their_languages_plural_form_for_one_and_for_two(lang):
    one_att, two_att, one_left, two_left = COUNTS[lang]
    for n, att, left in (("1", one_att, one_left), ("2", two_att, two_left)):
        assert att in say("attendance_month", lang, month="März", to_date="", present="20", working="21",
                          absent=n, late=n, overtime=n)
        assert left in say("leave_balance", lang, left=n, entitled="25", carried="0", taken="3", pending="0",
                           sick="")


@pytest.mark.parametrize("lang", OTHER)
def test_every_faq_entry_is_translated_with_its_figures(lang):
    """Every entry, the same ids, and no figure of the English answer lost (dates may be written out in Chinese)."""
    mine = translations(lang)
    assert list(mine) == list(FAQ)
    for fid, entry in FAQ.items():
        for figure in re.findall(r"\d+", entry.answer):
            assert figure in mine[fid].answer, (lang, fid, figure)
        assert len(mine[fid].phrasings) >= 2


def test_english_keeps_its_house_style_and_other_locales_follow_babel():
    assert money(1910.3) == "EUR 1,910.30"
    assert money(1910.3, "de") == "1.910,30\xa0€"
    assert month_text(date(2026, 3, 1)) == "March 2026"
    assert month_text(date(2026, 3, 1), "de") == "März 2026"
    assert month_text(date(2026, 3, 1), "zh") == "2026年3月"
    assert i18n.supported("de-AT") == "de" and i18n.supported("pl") == "en"


SLIP = {"salary": {"base": 3000.0, "overtime_pay": 120.5, "bonus": 0.0, "gross": 3120.5, "tax": 600.0,
                   "pension": 150.0, "net": 2370.5}}


def test_a_payslip_reads_in_the_askers_language_with_the_backends_figures():
    en = render_salary({"month": "2026-11"}, SLIP)
    de = render_salary({"month": "2026-11", "lang": "de"}, SLIP)
    zh = render_salary({"month": "2026-11", "lang": "zh"}, SLIP)
    assert en.startswith("Your payslip for November 2026: gross EUR 3,120.50")
    assert "November 2026" in de and "2.370,50\xa0€" in de and "Your" not in de
    assert "2026年11月" in zh and "2,370.50" in zh and re.search(r"[\u4e00-\u9fff]", zh)
    period = summarize_salary({"lang": "fr", "months": ["2026-09", "2026-10"]},
                              {"2026-09": SLIP, "2026-10": SLIP})
    assert "septembre" in period and "octobre" in period and "4\u202f741,00\xa0€" in period


def test_leave_and_weather_answers_in_german_and_chinese():
    balance = {"leave_balance": {"annual_entitled": 25, "annual_taken": 3, "annual_pending": 1, "carried_over": 2,
                                 "annual_remaining": 23, "sick_used": 1, "sick_remaining": 11}}
    assert "23" in render_leave_balance({"lang": "de"}, balance) and "urlaub" in render_leave_balance(
        {"lang": "de"}, balance).lower()
    forecast = {"weather": {"city": "Munich", "date": "2026-12-07", "temperature_c": 3, "condition": "rain",
                            "wind_kmh": 12},
                "clothing_advice": {"advice": "Wear a warm coat, a sweater and an umbrella or a raincoat.",
                                    "items": ["a warm coat", "a sweater", "an umbrella or a raincoat"]}}
    de = render_weather_clothing({"lang": "de"}, forecast)
    assert "München" in de and "7. Dezember 2026" in de and "Wear" not in de
    zh = render_weather({"lang": "zh"}, forecast)
    assert "慕尼黑" in zh and "2026年12月7日" in zh and say("condition.rain", "zh") in zh
    unknown = {**forecast, "clothing_advice": {"advice": "Bring a kite.", "items": ["a kite"]}}
    assert render_weather_clothing({"lang": "de"}, unknown).endswith("Bring a kite."), "unknown words pass as given"


def test_a_leave_policy_in_another_language_is_the_translated_faq_entry_with_the_same_facts():
    policy = {"leave_policy": {"leave_type": "paternity", "entitlement": "2 weeks", "pay": "full pay",
                               "notice": "agree dates with your manager", "notes": ""}}
    assert render_leave_policy({"lang": "en"}, policy).startswith("Paternity leave: 2 weeks")
    assert render_leave_policy({"lang": "nl"}, policy) == translations("nl")["paternity-leave"].answer


def test_catalog_files_are_plain_yaml_mappings():
    for path in i18n.CATALOGS.glob("*.yaml"):
        assert isinstance(yaml.safe_load(path.read_text(encoding="utf-8")), dict), path


@pytest.mark.parametrize(("lang", "question", "city", "named"), [
    ("it", "Che tempo fa domani a Napoli?", "Naples", "Napoli"), ("zh", "明天杭州天气怎么样？", "Hangzhou", "杭州"),
    ("de", "Wetter morgen in München?", "Munich", "München"),
    ("en", "Weather in Naples tomorrow?", "Naples", "Naples")])
def test_a_forecast_names_the_city_as_its_reader_does(lang, question, city, named):
    w = {"city": city, "date": "2026-12-08", "temperature_c": 7, "condition": "sunny", "wind_kmh": 5}
    assert named in render_weather({"lang": lang, "question": question}, {"weather": w})


def test_an_faq_answers_amounts_read_as_its_readers_locale_writes_money():
    from graph.replies import faq_answer
    from tools.company import current
    from tools.i18n import amounts_in

    assert amounts_in("a budget of EUR 1,000, EUR 0.30 per km", "de") == "a budget of 1.000,00\xa0€, 0,30\xa0€ per km"
    assert amounts_in("EUR 1,000", "en") == "EUR 1,000"  # English keeps the company's own writing
    faq = current().faq
    assert "€\xa00,30" in faq_answer(faq["mileage"], "nl") and "EUR" not in faq_answer(faq["training-budget"], "de")


@pytest.mark.parametrize("lang", [lang for lang in LANGUAGES if lang != "en"])
def test_every_language_reads_times_from_its_words_file(lang):
    """A language's time words are data beside its catalog: each file holds the keys the readers use."""
    found = words(lang)
    assert {"months_relative", "number_words", "months_ago", "month_before_that", "days_relative",
            "time_words"} <= set(found)
    assert all(isinstance(offset, int) for _, offset in found["months_relative"] + found["days_relative"])
    assert english_name(lang) != lang and Locale.parse(locale_of(lang)).language == lang  # named, and Babel knows it


def test_the_refusal_of_another_language_names_every_language_with_a_catalog(monkeypatch):
    refusal = say("unsupported_language", "en", languages=i18n.spoken("en"))
    assert all(Locale("en").languages[lang] in refusal for lang in LANGUAGES)
    assert "Swedish" not in refusal
    monkeypatch.setattr(i18n, "LANGUAGES", (*LANGUAGES, "sv"))  # a ninth language's files added
    assert "Portuguese, Chinese and Swedish." in say("unsupported_language", "en", languages=i18n.spoken("en"))
    assert "Chinesisch und Schwedisch antworten" in say("unsupported_language", "de", languages=i18n.spoken("de"))


def test_only_chinese_writes_no_spaces_between_words_and_its_sentences_join_without_one():
    assert [lang for lang in LANGUAGES if not i18n.spaced(lang)] == ["zh"]
    assert i18n.sentences("zh", "你好。", "谢谢。") == "你好。谢谢。"
    assert i18n.sentences("de", "Hallo.", "", "Danke.") == "Hallo. Danke."
    assert i18n.spaced("sv")  # a language without a words file: spaces, as most
