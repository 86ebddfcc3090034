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
only for follow-ups, never on the way to an FAQ entry; only an FAQ entry's text is sent early. The same decision
also starts the shared encoder's embedding of the question when a later step will need it (a handbook search, a
leave type settled by meaning), a LangGraph start sooner than route_question would.
"""

from __future__ import annotations

from langchain_core.messages import HumanMessage

from graph.context import Context
from graph.deps import Deps
from graph.intake import new_turn
from graph.paths import Decision
from graph.slots import leave_type_needs_meaning
from tools.faq import FaqEntry


def faq_entry(d: Decision, faq: dict[str, FaqEntry]) -> FaqEntry | None:
    """The FAQ entry a decision answers with (None: not the FAQ path, or an entry no longer served)."""
    return faq.get(d.faq_id) if d.path == "faq" and d.faq_id else None


def wants_search_embedding(d: Decision, question: str) -> bool:
    """Whether a later step embeds the question with the shared encoder: a handbook search, or a leave type that
    no keyword names (settled by meaning) on a leave-policy part or the LLM path.
    """
    settles_leave = "leave_policy" in d.intents or d.path == "llm"
    return d.path == "handbook" or (settles_leave and leave_type_needs_meaning(question))


async def faq_text(deps: Deps, question: str, user: str, ctx: Context) -> str | None:
    """The FAQ entry's text when route_question will answer `question` from `user` with one; None otherwise.
    Starts the shared encoder's embedding when a later step will need it (not for a follow-up: which intents it
    continues is the conversation's).
    """
    fresh, problem = new_turn({"messages": [HumanMessage(question)], "user": user}, ctx.max_question_chars)
    if problem is not None or not ctx.faq_enabled:
        return None
    d = await deps.router.decide(fresh["question"], fresh["user"], None, ctx.faq_enabled, ctx.templates_enabled)
    if ctx.early_embedding and d.label != "follow_up" and wants_search_embedding(d, fresh["question"]):
        deps.prefetch_search_embedding(fresh["question"])
    entry = faq_entry(d, deps.faq)
    return entry.answer if entry is not None else None
