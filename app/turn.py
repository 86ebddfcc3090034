"""One turn of the help desk: the graph with its conversation store, a question through it, and the row
every entry point reports (`ask --json` prints it, the API sends it as its `final` event, the benchmark scores
it). The CLI (app/ask.py), the chat (app/ui.py), the HTTP API (app/api.py), the benchmark and the tests share
it, so a turn is answered and reported the same way wherever it is asked.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from langchain_core.messages import HumanMessage
from langgraph.types import Overwrite

from app.failures import Failure, failure
from app.observability import record, run_config, user_hash
from app.owners import claim, owner_of
from app.resources import build_resources
from app.settings import Settings, get_settings
from graph.context import Context
from graph.graph import Desk

log = logging.getLogger(__name__)


class _ThreadTurns:
    """One turn at a time per conversation in this process. The answer's text reaches the caller before the
    turn is recorded (the checkpoint write at the turn's end), so a caller may send the next question of the
    same thread before that write: that turn waits here until the one before it is recorded, and then reads
    its state. A lock lives while a turn of its thread runs or waits.
    """

    def __init__(self) -> None:
        self._locks: dict[str, tuple[asyncio.Lock, list[int]]] = {}

    @asynccontextmanager
    async def turn(self, thread: str) -> AsyncIterator[None]:
        lock, users = self._locks.setdefault(thread, (asyncio.Lock(), [0]))
        users[0] += 1
        try:
            async with lock:
                yield
        finally:
            users[0] -= 1
            if not users[0]:
                del self._locks[thread]

    def __len__(self) -> int:
        return len(self._locks)


THREAD_TURNS = _ThreadTurns()


def new_thread_id() -> str:
    """A thread id nobody can guess (128 random bits)."""
    return secrets.token_urlsafe(16)


@asynccontextmanager
async def open_graph(settings: Settings | None = None) -> AsyncIterator[Desk]:
    """The help desk for one command (the CLI, the probes, the tests): the process's resources
    (app/resources.py), opened around it and closed afterwards.
    """
    async with build_resources(settings or get_settings()) as resources:
        yield await resources.get()


class _Delivery:
    """The answer's pieces to the caller as the graph streams them, and when the first one went (`ttft_ms`)."""

    def __init__(self, t0: float, on_delta: Any) -> None:
        self.t0, self.on_delta = t0, on_delta
        self.first_ms: float | None = None
        self.sent: list[str] = []

    def __call__(self, text: str) -> None:
        if self.first_ms is None:
            self.first_ms = (time.perf_counter() - self.t0) * 1000
        self.sent.append(text)
        if self.on_delta:
            self.on_delta(text)


async def _stream(graph: Any, redis: Any, question: str, user: str, thread: str, fresh: bool, ctx: Context,
                  deliver: _Delivery, on_update: Any) -> tuple[dict[str, Any], bool]:
    """The graph's run of one turn: (final state, refused as someone else's conversation)."""
    owner = None if fresh else await owner_of(graph, redis, thread, user)  # a thread id made here: nobody else's
    if owner is not None and owner != user:
        log.warning("refused: user %s tried to use thread %s… started by user %s",
                    user_hash(user), thread[:6], user_hash(owner))
        return {}, True
    final: dict[str, Any] = {}
    async for mode, chunk in graph.astream({"messages": [HumanMessage(question)], "user": user},
                                           run_config(thread, user), context=ctx,
                                           stream_mode=["custom", "updates", "values"],
                                           durability=get_settings().checkpoint_durability):
        if mode == "custom" and isinstance(chunk, dict) and "answer_delta" in chunk:  # graph/kit.py:emit
            deliver(chunk["answer_delta"])
        elif mode == "updates" and on_update:
            for node, update in chunk.items():
                if isinstance(update, dict):
                    on_update(node, _plain(update))
        elif mode == "values":
            final = chunk
    if fresh and redis is not None:  # recorded after the answer: nobody else knows the thread's id before it
        await claim(redis, thread, user)
    return final, False


def _plain(update: dict[str, Any]) -> dict[str, Any]:
    """A node's update as the state will hold it: a value written past its reducer (a new turn's timings) unwrapped."""
    return {k: v.value if isinstance(v, Overwrite) else v for k, v in update.items()}


async def run_turn(desk: Desk | Any, question: str, user: str, thread: str | None, ctx: Context,
                   on_delta: Any = None, on_update: Any = None) -> dict[str, Any]:
    """One question through the graph, streamed; returns the row `ask --json` prints.

    `desk` is the help desk (`open_graph`), or a bare compiled graph over the same state (the benchmark's
    plain agent). The text the caller receives is the graph's stream, and the row's `answer` its final state: the
    same text (graph/nodes.py writes each answer as it streams it). A turn that could not run (someone else's
    conversation, a failure) carries its `failure` (app/failures.py), and its `answer` is what streamed before.

    `on_delta(text)` receives each answer piece as it is produced, `on_update(node, update)` each
    node's state update (the chat shows them as steps). `user` comes from a verified credential
    (app/auth.py) or from the operator's CLI; a thread started by someone else is refused before the
    graph reads anything of it.
    """
    fresh = not thread  # a thread id made here is new: nobody else can have started it
    thread = thread or new_thread_id()
    t0 = time.perf_counter()
    row: dict[str, Any] = {"q": question, "user": user, "thread": thread}
    graph = desk.graph if isinstance(desk, Desk) else desk
    deliver = _Delivery(t0, on_delta)
    if isinstance(desk, Desk):
        desk.start_early(question, ctx)
    try:
        async with THREAD_TURNS.turn(thread):  # after the thread's previous turn is recorded
            final, denied = await _stream(graph, desk.deps.redis if isinstance(desk, Desk) else None, question, user,
                                          thread, fresh, ctx, deliver, on_update)
        if denied:
            return _failed(row, "denied", failure("not_your_conversation", question, ctx.language), deliver, t0)
    except Exception as exc:  # noqa: BLE001 - one failed question must not stop a batch
        log.exception("turn failed")
        return _failed(row, "error", failure("turn_failed", question, ctx.language, kind=type(exc).__name__),
                       deliver, t0)
    total = (time.perf_counter() - t0) * 1000
    nxt = final.get("next_turn") or {}
    out = {**row, "answer": final.get("answer", ""), "route": final.get("route"),
            "intent": final.get("intent"), "answered_by": final.get("answered_by"), "faq": final.get("faq"),
            "router": decision.summary if (decision := final.get("router")) else {},
            "tools": [{"name": r["name"], "args": r["args"], "ms": r["ms"], "cache": r["cache"], "ok": r["ok"],
                       "error": r["error"]} for r in final.get("results") or []],
            "prefetch": final.get("prefetch") or {}, "llm_calls": final.get("llm_calls", 0),
            "next_turn": {"offered": len(nxt.get("offered") or []) + len(nxt.get("in_flight") or []),
                          "used": nxt.get("used", 0),
                          "wasted": nxt.get("wasted", 0)},
            "timings_ms": {k: round(v, 1) for k, v in (final.get("timings_ms") or {}).items()},
            "total_ms": round(total, 1),
            "ttft_ms": round(deliver.first_ms, 1) if deliver.first_ms is not None else None,
            "error": final.get("error")}
    record(out)
    return out


def _failed(row: dict[str, Any], route: str, why: Failure, deliver: _Delivery, t0: float) -> dict[str, Any]:
    """The row of a turn that could not run: what streamed before it stopped, and why (its `failure`)."""
    return {**row, "answer": "".join(deliver.sent), "route": route, "tools": [], "llm_calls": 0, "timings_ms": {},
            "total_ms": round((time.perf_counter() - t0) * 1000, 1), "ttft_ms": None, "error": why.message,
            "failure": why.as_dict()}


def error_row(item: dict[str, Any], error: str) -> dict[str, Any]:
    """A row that says why a question got no answer, in the shape of an answered one."""
    return {"q": item.get("q"), "user": item.get("user"), "thread": item.get("thread"), "answer": "",
            "route": "error", "tools": [], "llm_calls": 0, "timings_ms": {}, "total_ms": 0.0, "error": error}
