"""Typed state of the help-desk graph. Fields marked "per turn" are reset as a turn starts
(`route_question`, its first step).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, TypedDict

from langchain_core.messages import AnyMessage
from langgraph.graph.message import add_messages

from graph.paths import AnsweredBy, Decision, Route

RESET = "__reset__"


def merge_timings(old: dict[str, float] | None, new: dict[str, float] | None) -> dict[str, float]:
    """Add node durations; an update carrying RESET starts a fresh turn."""
    if not new:
        return dict(old or {})
    base = {} if RESET in new else dict(old or {})
    for k, v in new.items():
        if k != RESET:
            base[k] = round(base.get(k, 0.0) + v, 3)
    return base


def pinned_profile(values: Mapping[str, Any], user: str) -> dict[str, Any] | None:
    """The caller's profile a conversation's state pinned at its start (None: none pinned for this caller)."""
    kept = values.get("profile")
    return kept if isinstance(kept, dict) and kept.get("id") == user else None


def turn_reset(turn_id: str, question: str) -> dict[str, Any]:
    """The per-turn fields as a new turn starts them (`route_question`): nothing of the last turn's decision left."""
    return {"turn_id": turn_id, "question": question, "route": "", "intent": None, "slots": {}, "router": None,
            "parts": [], "faq": None, "plan": [], "results": [], "prefetch": {}, "answer": "", "llm_calls": 0,
            "tool_rounds": 0, "error": None, "answered_by": None, "streamed_parts": [], "streamed": "",
            "timings_ms": {RESET: 0.0}}


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
    turn_id: str  # per turn: identifies in-flight prefetches
    question: str  # per turn: the open request, normalized
    lang: str  # per turn: the language the answer is written in (the question's, else the conversation's so far)
    route: Route  # per turn: the route the router's path (or the input check) led to (graph/paths.py)
    intent: str | None  # per turn: a label for traces and ask --json ("salary+weather"); `parts` holds the list
    router: Decision | None  # per turn: the router's decision (path, label, confidence, intents, reason, ...)
    parts: list[Part]  # per turn: what the request asks, one part per intent, each with its slots
    slots: dict[str, Any]  # per turn: filled slots (month, date, city, leave_type, ...)
    faq: dict[str, Any] | None  # per turn: the FAQ entry answered {id, score, accepted, reason}
    plan: list[ToolCall]  # per turn: tool calls to make
    results: list[ToolResult]  # per turn: their outcomes
    prefetch: dict[str, Any]  # per turn: {started: [...], used: n, wasted: n}
    next_turn: dict[str, Any]  # per turn: what the last turn prefetched for this one {offered: [...], used, wasted}
    answer: str  # per turn: the final answer text
    llm_calls: int  # per turn: number of LLM requests made
    tool_rounds: int  # per turn: planning rounds taken on the LLM path
    error: str | None  # per turn: a sentence for the user when something failed
    streamed_parts: list[int]  # per turn: parts already streamed by call_tools, in the order they were
    streamed: str  # per turn: the text they made, which the answer continues (graph/nodes.py:continued)
    answered_by: AnsweredBy | None  # per turn: which answer the tool paths ended with (graph.py names each)
    timings_ms: Annotated[dict[str, float], merge_timings]  # per turn: duration of each node
    last_intents: list[str]  # across turns: intents of the last answered tool request (follow-ups)
    last_slots: dict[str, Any]  # across turns: its slots
