"""Employees asking in their own language, end to end on the real services: the answer comes in that language, with
the backend's figures, and what is not the desk's business takes no shortcut in any language.
"""

import re

import pytest
from babel.numbers import format_currency

from graph.language import written_in
from tools.company import translated_answer
from tools.i18n import amounts_in, catalog, locale_of

HAN = re.compile(r"[\u4e00-\u9fff]")


def _money(x, lang):
    return format_currency(x, "EUR", locale=locale_of(lang))


def _in(lang, answer, key=None):
    """The answer is written in `lang`: Chinese mostly Chinese characters; else the detector says so, or (an answer
    mostly figures) it carries the longest fixed words of the catalog message `key` in that language.
    """
    if lang == "zh":
        return len(HAN.findall(answer)) > len(answer) / 4
    if written_in(answer) == lang:
        return True
    words = max(re.split(r"\{[^}]*\}", catalog(lang)[key]), key=len).strip(" .,:") if key else None
    return bool(words) and words in answer


PAY_LAST_MONTH = {
    "zh": "我上个月的工资是多少？",
    "de": "Wie viel Gehalt habe ich letzten Monat bekommen?",
    "fr": "Combien j'ai touché le mois dernier ?",
    "es": "¿Cuánto me pagaron de nómina el mes pasado?",
    "it": "Quanto ho preso di stipendio il mese scorso?",
    "nl": "Wat was mijn nettoloon vorige maand?",
    "pt": "Quanto recebi de salário no mês passado?",
}


@pytest.mark.parametrize("lang", sorted(PAY_LAST_MONTH))
async def test_pay_last_month_in_each_language_is_the_backends_payslip_in_that_language(ask, backend, lang):
    row = await ask(PAY_LAST_MONTH[lang], user="E1006")
    month = next(t["args"]["month"] for t in row["tools"] if t["name"] == "salary")
    slip = backend.get("/salary", params={"employee": "E1006", "month": month}).json()
    assert row["router"]["lang"] == lang and {t["name"] for t in row["tools"]} == {"salary"}
    assert _money(slip["net"], lang) in row["answer"], row["answer"]
    assert _in(lang, row["answer"], "salary_month"), row["answer"]


LEAVE_LEFT = {"zh": "我还有几天年假？", "de": "Wie viele Urlaubstage habe ich noch?",
              "fr": "Combien de jours de congés me reste-t-il ?", "es": "¿Cuántos días de vacaciones me quedan?",
              "it": "Quanti giorni di ferie mi restano?", "nl": "Hoeveel vakantiedagen heb ik nog?",
              "pt": "Quantos dias de férias ainda tenho?"}


@pytest.mark.parametrize("lang", sorted(LEAVE_LEFT))
async def test_leave_left_in_each_language(ask, backend, lang):
    row = await ask(LEAVE_LEFT[lang], user="E1009")
    balance = backend.get("/leave/balance", params={"employee": "E1009"}).json()
    assert [t["name"] for t in row["tools"]] == ["leave_balance"] and row["llm_calls"] == 0
    assert str(balance["annual_remaining"]) in row["answer"], row["answer"]
    assert _in(lang, row["answer"], "leave_balance"), row["answer"]


FAQ_QUESTIONS = {"zh": ("公司的上班时间是几点？", "office-working-hours"),
                 "de": ("Wann wird das Gehalt überwiesen?", "payday"),
                 "fr": ("Comment je réinitialise mon mot de passe ?", "password-reset"),
                 "es": ("¿Qué hago si pierdo mi tarjeta de acceso?", "lost-badge"),
                 "it": ("Come si chiede un rimborso spese?", "expenses-submission"),
                 "nl": ("Hoe vraag ik verlof aan?", "apply-for-leave"),
                 "pt": ("Qual é o período experimental?", "probation")}


@pytest.mark.parametrize("lang", sorted(FAQ_QUESTIONS))
async def test_an_faq_question_gets_the_translated_entry_or_steps_aside(ask, lang):
    """The shortcut answers with the entry's translation; where the router is not sure it steps aside, never
    answering another entry."""
    q, entry = FAQ_QUESTIONS[lang]
    row = await ask(q)
    if row["route"] == "faq":
        assert row["faq"]["id"] == entry and row["answer"] == amounts_in(translated_answer(entry, lang) or "", lang)
        assert row["llm_calls"] == 0
    else:
        assert row["faq"] is None or row["faq"]["id"] == entry


async def test_the_reference_cases_chinese_weather_question_names_the_city_and_says_what_to_wear(ask):
    row = await ask("柏林今天天气怎么样，适合穿什么衣服？", user="E1003")
    assert {t["name"] for t in row["tools"]} == {"weather", "clothing_advice"}
    assert next(t for t in row["tools"] if t["name"] == "weather")["args"]["city"] == "Berlin"
    assert "柏林" in row["answer"] and _in("zh", row["answer"]), row["answer"]


async def test_overtime_hours_stay_attendance_and_a_follow_up_moves_back_a_month_in_german(ask):
    first = await ask("Wie viele Überstunden habe ich im Oktober 2026 gemacht?", user="E1002", thread=None)
    assert [t["name"] for t in first["tools"]] == ["attendance"] and first["tools"][0]["args"]["month"] == "2026-10"
    then = await ask("Und der Monat davor?", user="E1002", thread=first["thread"])
    assert [t["name"] for t in then["tools"]] == ["attendance"] and then["tools"][0]["args"]["month"] == "2026-09"
    assert then["router"]["lang"] == "de" and _in("de", then["answer"], "attendance_month"), then["answer"]


OFF_TOPIC = {"zh": "给我讲个笑话吧", "de": "Wer hat gestern das Spiel Bayern gegen Dortmund gewonnen?",
             "fr": "Donne-moi une recette de crêpes", "es": "¿Cuál es la capital de Australia?",
             "it": "Come si calcola l'IVA su una fattura?", "nl": "Wat is het beste recept voor stamppot?",
             "pt": "Qual é a melhor praia do Algarve?"}


@pytest.mark.parametrize("lang", sorted(OFF_TOPIC))
async def test_other_matters_take_no_shortcut_in_any_language(ask, lang):
    row = await ask(OFF_TOPIC[lang])
    assert row["route"] != "faq" and not [t for t in row["tools"] if t["name"] != "kb_search"], row


async def test_with_the_english_only_model_the_llm_answer_is_introduced_in_the_askers_language(ask):
    from tools.i18n import say

    row = await ask("Schreib mir bitte eine kurze Nachricht an mein Team, dass ich morgen später komme.")
    assert row["llm_calls"] >= 1, row  # a draft in German is the LLM's to write (the desk's own drafts are English)
    assert row["answer"].startswith(say("llm_english_only", "de")), row["answer"]
