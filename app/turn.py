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
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager, nullcontext
from contextvars import ContextVar
from typing import Any

from langchain_core.messages import HumanMessage
from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple

from app.checkpoints import held
from app.observability import record, run_config, user_hash
from app.resources import build_resources
from app.settings import Settings, get_settings
from graph.context import Context
from graph.early import EARLY, EarlyDecision
from graph.graph import Desk
from graph.kit import ANSWER_SINK
from graph.paths import Decision
from graph.state import pinned_profile

log = logging.getLogger(__name__)
STATE_TYPES = [(Decision.__module__, Decision.__name__)]  # the state's own types a checkpoint holds
# How long LangGraph's start waits for the early decision (`Context.early_first`): route_question waits for it
# anyway; past this (a stalled backend behind the profile read) the run starts beside it, as without the switch.
EARLY_FIRST_WAIT_S = 0.25
NOT_YOUR_CONVERSATION = ("This conversation belongs to someone else, so it cannot be continued or read here. "
                         "Start a new conversation to ask your question.")


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


async def thread_owner(graph: Any, thread: str) -> str | None:
    """Who started a conversation, from its latest checkpoint (None for a new thread)."""
    return (await _latest(graph, thread))[0]


async def _latest(graph: Any, thread: str) -> tuple[str | None, CheckpointTuple | None, bool]:
    """(who started the conversation, its latest checkpoint as the saver read it, whether that read can be
    handed on): no one and None for a new thread; not handed on when the graph's store is read another way (its
    state snapshot).

    The checkpoint alone is read, not the state snapshot LangGraph builds around it (its next tasks and
    pending writes): the check runs before every turn of a conversation, beside the question's embedding, and
    the turn's run starts from the same read (app/checkpoints.py).
    """
    config = {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}
    if not isinstance(saver := getattr(graph, "checkpointer", None), BaseCheckpointSaver):
        snapshot = await graph.aget_state(config)
        return ((snapshot.values or {}).get("user") if snapshot else None), None, False
    found = await saver.with_allowlist(STATE_TYPES).aget_tuple(config)  # as the graph reads it: typed, no warning
    return (found.checkpoint["channel_values"].get("user") if found else None), found, True


@asynccontextmanager
async def open_graph(settings: Settings | None = None) -> AsyncIterator[Desk]:
    """The help desk for one command (the CLI, the probes, the tests): the process's resources
    (app/resources.py), opened around it and closed afterwards.
    """
    async with build_resources(settings or get_settings()) as resources:
        yield await resources.get()


class _Delivery:
    """The answer's pieces to the caller, each once, and when the first one went (the row's `ttft_ms`).

    The early answer (graph/early.py: an FAQ entry, a template answer from the cache) may hand its pieces over
    before route_question writes them: they go to the caller once the owner check has passed (`clear`), at once
    if it has already, and route_question's same pieces are then not sent again. Nodes call it directly
    (graph/kit.py:ANSWER_SINK).
    """

    def __init__(self, t0: float, on_delta: Any) -> None:
        self.t0, self.on_delta = t0, on_delta
        self.first_ms: float | None = None
        self._cleared = False  # the caller may read this conversation
        self._early: list[str] = []  # the early answer's pieces: held until cleared, then those still to match

    def __call__(self, text: str) -> None:
        """A piece of the graph's answer."""
        if self._early and self.first_ms is not None:
            if text == self._early[0]:
                self._early.pop(0)
                return
            log.error("the early answer differs from the graph's: a piece of %d characters, then one of %d",
                      len(self._early[0]), len(text))  # lengths only: a template answer holds personal figures
            self._early = []
        self._send(text)

    def early(self, sent: list[str]) -> None:
        """The early answer's pieces: an FAQ entry's text, the moment the router picked it, or a template answer
        whose every result the cache holds.
        """
        if self.first_ms is None:  # the graph's text did not go first
            self._early = list(sent)
            if self._cleared:
                self._send_early()

    def withdraw(self) -> None:
        """The early answer held for the owner check must not go (its plan was void): the graph's text goes."""
        if not self._cleared:
            self._early = []

    def clear(self) -> None:
        """The owner check passed: the early text, if any, may go."""
        self._cleared = True
        if self._early and self.first_ms is None:
            self._send_early()

    def _send_early(self) -> None:
        for piece in self._early:
            self._send(piece)

    def _send(self, text: str) -> None:
        if self.first_ms is None:
            self.first_ms = (time.perf_counter() - self.t0) * 1000
        if self.on_delta:
            self.on_delta(text)


@contextmanager
def _bound(var: ContextVar[Any], value: Any) -> Iterator[None]:
    """Within this block, `var` is `value` (the graph's nodes see it: their tasks start inside)."""
    token = var.set(value)
    try:
        yield
    finally:
        var.reset(token)


async def _stream(graph: Any, question: str, user: str, thread: str, fresh: bool, ctx: Context,
                  deliver: _Delivery, on_update: Any,
                  early: EarlyDecision | None) -> tuple[dict[str, Any], float | None, bool]:
    """The graph's run of one turn: (final state, ms to the answer's first text, refused as someone else's)."""
    owner, found, known = (None, None, True) if fresh else await _latest(graph, thread)  # made here: none yet
    if owner is not None and owner != user:  # a conversation belongs to whoever started it
        log.warning("refused: user %s tried to use thread %s… started by user %s",
                    user_hash(user), thread[:6], user_hash(owner))
        return {}, None, True
    final: dict[str, Any] = {}
    values = found.checkpoint["channel_values"] if found else {}  # the state the run starts from
    pinned = pinned_profile(values, user)  # as route_question reads it
    if early is not None and not early.pinned(pinned, values if known else None):  # planned with another profile
        deliver.withdraw()
    deliver.clear()  # the early answer may go now, before LangGraph's start
    if early is not None and ctx.early_first:  # LangGraph's start would hold the loop while the early answer's
        await asyncio.wait([early.task], timeout=EARLY_FIRST_WAIT_S)  # Redis replies wait for it
    # The nodes hand the text over directly (graph/kit.py:emit), route_question takes the early decision
    # (graph/early.py), and the run starts from the owner check's read.
    with _bound(ANSWER_SINK, deliver), _bound(EARLY, early), (held(thread, found) if known else nullcontext()):
        async for mode, chunk in graph.astream({"messages": [HumanMessage(question)], "user": user},
                                               run_config(thread, user), context=ctx,
                                               stream_mode=["custom", "updates", "values"],
                                               durability=get_settings().checkpoint_durability):
            if mode == "custom" and "answer_delta" in chunk:  # a graph that streams it (a bare one, a fake)
                deliver(chunk["answer_delta"])
            elif mode == "updates" and on_update:
                for node, update in chunk.items():
                    if isinstance(update, dict):
                        on_update(node, update)
            elif mode == "values":
                final = chunk
    return final, deliver.first_ms, False


async def run_turn(desk: Desk | Any, question: str, user: str, thread: str | None, ctx: Context,
                   on_delta: Any = None, on_update: Any = None) -> dict[str, Any]:
    """One question through the graph, streamed; returns the row `ask --json` prints.

    `desk` is the help desk (`open_graph`), or a bare compiled graph over the same state (the benchmark's
    plain agent), which then has no early start.

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
    deliver, early = _Delivery(t0, on_delta), None
    if isinstance(desk, Desk):
        desk.start_early(question, ctx)
        early = desk.answer_early(question, user, ctx, deliver.early)
    try:
        async with THREAD_TURNS.turn(thread):  # after the thread's previous turn is recorded
            final, ttft, denied = await _stream(graph, question, user, thread, fresh, ctx, deliver, on_update, early)
        if denied:
            return {**row, "answer": NOT_YOUR_CONVERSATION, "route": "denied", "tools": [], "llm_calls": 0,
                    "timings_ms": {}, "total_ms": round((time.perf_counter() - t0) * 1000, 1), "ttft_ms": None,
                    "error": None}
    except Exception as exc:  # noqa: BLE001 - one failed question must not stop a batch
        log.exception("turn failed")
        return {**row, "answer": "", "route": "error", "tools": [], "llm_calls": 0, "timings_ms": {},
                "total_ms": round((time.perf_counter() - t0) * 1000, 1), "ttft_ms": None,
                "error": f"Something went wrong while answering ({type(exc).__name__}); please try again."}
    finally:
        if early is not None:  # refused, failed, or answered without it: nothing more to send
            early.task.cancel()
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
            "total_ms": round(total, 1), "ttft_ms": round(ttft, 1) if ttft is not None else None,
            "error": final.get("error")}
    record(out)
    return out


def error_row(item: dict[str, Any], error: str) -> dict[str, Any]:
    """A row that says why a question got no answer, in the shape of an answered one."""
    return {"q": item.get("q"), "user": item.get("user"), "thread": item.get("thread"), "answer": "",
            "route": "error", "tools": [], "llm_calls": 0, "timings_ms": {}, "total_ms": 0.0, "error": error}
