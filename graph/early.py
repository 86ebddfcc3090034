"""The FAQ answer before LangGraph's start.

An FAQ answer depends on the question alone: not on the conversation, not on the caller's profile. Yet in the
graph it is written by the routing step, which runs only after LangGraph has read the conversation and
prepared the step (a few milliseconds on SQLite, about as long as the question's embedding or longer). So
the entry points make the same decision beside the graph (`Desk.answer_early`): as soon as the question's
embedding arrives, the router decides exactly as route_question will (the same checks of the input, the same
embedding from the memo, the same router), and when it picks an FAQ entry, its text goes to the caller at once.
The graph still runs the whole turn and records it; route_question makes the same decision and writes the
same text, which the caller has already (app/turn.py sends each piece once).

The decision's inputs that route_question has and this one lacks (the conversation's last intents) are read
only for follow-ups, never on the way to an FAQ entry; only an FAQ entry's text is sent early.
"""

from __future__ import annotations

from langchain_core.messages import HumanMessage

from graph.context import Context
from graph.deps import Deps
from graph.intake import new_turn
from graph.paths import Decision
from tools.faq import FaqEntry


def faq_entry(d: Decision, faq: dict[str, FaqEntry]) -> FaqEntry | None:
    """The FAQ entry a decision answers with (None: not the FAQ path, or an entry no longer served)."""
    return faq.get(d.faq_id) if d.path == "faq" and d.faq_id else None


async def faq_text(deps: Deps, question: str, user: str, ctx: Context) -> str | None:
    """The FAQ entry's text when route_question will answer `question` from `user` with one; None otherwise."""
    fresh, problem = new_turn({"messages": [HumanMessage(question)], "user": user}, ctx.max_question_chars)
    if problem is not None or not ctx.faq_enabled:
        return None
    d = await deps.router.decide(fresh["question"], fresh["user"], None, ctx.faq_enabled, ctx.templates_enabled)
    entry = faq_entry(d, deps.faq)
    return entry.answer if entry is not None else None
