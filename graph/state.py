"""Typed state of the help-desk graph. A field a turn starts afresh is declared so in its annotation
(`PerTurn(start)`); `turn_reset` reads those declarations, so no list of per-turn fields is kept by hand.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Annotated, Any, TypedDict, get_type_hints

from langchain_core.messages import AnyMessage
from langgraph.graph.message import add_messages
from langgraph.types import Overwrite

from graph.paths import AnsweredBy, Decision, Route


@dataclass(frozen=True)
class PerTurn:
    """Annotation of a field a new turn starts from `start` (a copy of it), whatever the last turn left there."""

    start: Any = None


def merge_timings(old: dict[str, float] | None, new: dict[str, float] | None) -> dict[str, float]:
    """Add node durations (a node that ran twice in a turn counts both); a turn's first write overwrites them."""
    base = dict(old or {})
    for k, v in (new or {}).items():
        base[k] = round(base.get(k, 0.0) + v, 3)
    return base


def pinned_profile(values: Mapping[str, Any], user: str) -> dict[str, Any] | None:
    """The caller's profile a conversation's state pinned at its start (None: none pinned for this caller)."""
    kept = values.get("profile")
    return kept if isinstance(kept, dict) and kept.get("id") == user else None


@cache
def _per_turn() -> dict[str, PerTurn]:
    hints = get_type_hints(State, include_extras=True)
    return {name: mark for name, hint in hints.items()
            for mark in getattr(hint, "__metadata__", ()) if isinstance(mark, PerTurn)}


def turn_reset(turn_id: str, question: str) -> dict[str, Any]:
    """The fields a new turn starts with (`route_question` writes them): each `PerTurn` field from its start, and
    the node timings overwritten past their reducer (LangGraph's `Overwrite`).
    """
    fresh = {name: copy.deepcopy(mark.start) for name, mark in _per_turn().items()}
    return {**fresh, "turn_id": turn_id, "question": question, "timings_ms": Overwrite({})}


class ToolCall(TypedDict):
    """One planned tool call; `depends_on` lists ids whose results fill `@tool.field` arguments."""

    id: str
    name: str
    args: dict[str, Any]
    depends_on: list[str]


class ToolResult(TypedDict):
    """Outcome of one tool call."""

    id: str
    name: str
    args: dict[str, Any]
    ok: bool
    data: dict[str, Any] | None
    error: str | None
    ms: float
    cache: str  # hit | miss | prefetch | next_turn | bypass (Redis unavailable) | off


class Part(TypedDict, total=False):
    """One thing a request asks: a template intent with its own slots, or an FAQ entry's answer."""

    intent: str
    slots: dict[str, Any]
    answer: str  # FAQ parts only


class InputState(TypedDict, total=False):
    """What a caller sends: the new message, who is asking, optional profile override."""

    messages: Annotated[list[AnyMessage], add_messages]
    user: str


class State(TypedDict, total=False):
    """Everything the nodes read and write."""

    messages: Annotated[list[AnyMessage], add_messages]  # the conversation, kept by the checkpointer
    user: str  # caller's employee id, from the session (never from the question)
    profile: dict[str, Any]  # pinned facts about the caller: name, city, department
    turn_id: Annotated[str, PerTurn("")]  # identifies in-flight prefetches
    question: Annotated[str, PerTurn("")]  # the open request, normalized
    # the language the answer is written in (the question's, else the conversation's so far)
    lang: Annotated[str, PerTurn("en")]
    route: Annotated[Route, PerTurn("")]  # the route the router's path (or the input check) led to (graph/paths.py)
    # a label for traces and ask --json ("salary+weather"); `parts` holds the list
    intent: Annotated[str | None, PerTurn(None)]
    # the router's decision (path, label, confidence, intents, reason, ...)
    router: Annotated[Decision | None, PerTurn(None)]
    parts: Annotated[list[Part], PerTurn([])]  # what the request asks, one part per intent, each with its slots
    slots: Annotated[dict[str, Any], PerTurn({})]  # filled slots (month, date, city, leave_type, ...)
    faq: Annotated[dict[str, Any] | None, PerTurn(None)]  # the FAQ entry answered {id, score, accepted, reason}
    plan: Annotated[list[ToolCall], PerTurn([])]  # tool calls to make
    results: Annotated[list[ToolResult], PerTurn([])]  # their outcomes
    prefetch: Annotated[dict[str, Any], PerTurn({})]  # {started: [...], used: n, wasted: n}
    # what the last turn prefetched for this one {offered: [...], used, wasted}
    next_turn: Annotated[dict[str, Any], PerTurn({})]
    answer: Annotated[str, PerTurn("")]  # the final answer text
    llm_calls: Annotated[int, PerTurn(0)]  # number of LLM requests made
    tool_rounds: Annotated[int, PerTurn(0)]  # planning rounds taken on the LLM path
    error: Annotated[str | None, PerTurn(None)]  # a sentence for the user when something failed
    streamed_parts: Annotated[list[int], PerTurn([])]  # parts already streamed by call_tools, in the order they were
    streamed: Annotated[str, PerTurn("")]  # the text they made, which the answer continues (graph/nodes.py:continued)
    # which answer the tool paths ended with (graph.py names each)
    answered_by: Annotated[AnsweredBy | None, PerTurn(None)]
    timings_ms: Annotated[dict[str, float], PerTurn(), merge_timings]  # per turn: duration of each node
    last_intents: list[str]  # across turns: intents of the last answered tool request (follow-ups)
    last_slots: dict[str, Any]  # across turns: its slots
