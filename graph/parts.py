"""What a request asks, one part per intent, each with its own slots: built from the router's decision.

A compound request ("my salary for March and the weather in Lyon") is split by the router into clauses;
each part reads its slots from its own clause first, so one clause's month or city never leaks into another.
"""

from __future__ import annotations

from datetime import date
from typing import Any

from graph import templates
from graph.paths import Decision, Route
from graph.replies import faq_answer, faq_reply
from graph.slots import clause_slots
from graph.state import Part
from graph.tracing import annotate
from tools.faq import FaqEntry


def part_of(faq: dict[str, FaqEntry], intent: str, clause: str, slots: dict[str, Any], profile: dict[str, Any],
            today: date) -> Part:
    """One part of a request: its FAQ answer, its handbook look-up (searched on the clause's own words), or its
    intent with slots read from its own clause first.
    """
    if intent.startswith("faq:") and intent[4:] in faq:
        return Part(intent=intent, slots={}, answer=faq_answer(faq[intent[4:]], slots.get("lang", "en")))
    if intent == "handbook":  # searched on its own words: the whole message would find the other parts' rules
        asked = clause[:500] or slots["question"]
        return Part(intent=templates.POLICY_LOOKUP.name, slots={**slots, "question": asked})
    own = clause_slots(clause, slots, today, profile) if clause else slots
    return templates.settle_months(Part(intent=intent, slots=own), today)


def template_parts(d: Decision, faq: dict[str, FaqEntry], slots: dict[str, Any], profile: dict[str, Any],
                   today: date) -> list[Part]:
    """The parts of a templated request, a period's months one part each."""
    return [p for i, intent in enumerate(d.intents)
            for p in templates.per_month(part_of(faq, intent, d.clauses[i] if d.clauses else "", slots, profile,
                                                 today))]


def llm_parts(d: Decision, faq: dict[str, FaqEntry], slots: dict[str, Any], profile: dict[str, Any],
              today: date) -> list[Part]:
    """The parts the LLM path plans around: FAQ parts carry their answer (framed as likely when not sure),
    handbook parts their own clause, the rest the request's slots.
    """
    lang = slots.get("lang", "en")
    return [Part(intent=i, slots={}, answer=faq_reply(faq[i[4:]], d.faq_parts[i] == "sure", lang))
            if i in d.faq_parts else part_of(faq, i, d.clauses[n], slots, profile, today) if i == "handbook"
            else Part(intent=i, slots=slots) for n, i in enumerate(d.intents)]


def label_of(route: Route, parts: list[Part]) -> dict[str, Any]:
    """The turn's route and its label for traces and `ask --json` ("salary+weather"), annotated on the trace."""
    label = "+".join(dict.fromkeys(p["intent"] for p in parts)) or None
    annotate(route=route, intent=label)
    return {"route": route, "intent": label}
