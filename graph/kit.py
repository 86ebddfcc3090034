"""What every node uses: its duration in the state, streaming pieces of the answer, the run's date, and
the question made printable.
"""

from __future__ import annotations

import asyncio
import functools
import re
import time
import unicodedata
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from datetime import date
from typing import Any

from langgraph.config import get_config, get_stream_writer
from langgraph.runtime import Runtime, get_runtime

from graph.context import Context
from graph.state import State
from graph.tracing import node_span

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def timed(fn: Callable[..., Awaitable[dict[str, Any]]]) -> Callable[..., Awaitable[dict[str, Any]]]:
    """Record the node's wall time in `timings_ms` under its name."""

    @functools.wraps(fn)
    async def wrapper(self: Any, state: State, runtime: Runtime[Context]) -> dict[str, Any]:
        t0 = time.perf_counter()
        with node_span(fn.__name__):
            update = await fn(self, state, runtime)
        timings = dict(update.get("timings_ms") or {})
        timings[fn.__name__] = (time.perf_counter() - t0) * 1000
        return {**update, "timings_ms": timings}

    return wrapper


# Where the answer's pieces go when the caller takes them directly (app/turn.py:run_turn sets it for its turn):
# the piece reaches the caller as the node emits it, not three turns of the event loop later through
# LangGraph's stream. Unset (LangGraph Studio, a plain `astream`), the pieces go to the custom stream.
ANSWER_SINK: ContextVar[Callable[[str], None] | None] = ContextVar("answer_sink", default=None)


def emit(text: str) -> None:
    """Stream a piece of the answer: to the caller's sink (`ANSWER_SINK`), or the custom stream mode."""
    if (sink := ANSWER_SINK.get()) is not None:
        sink(text)
        return
    try:
        get_stream_writer()({"answer_delta": text})
    except RuntimeError:  # not running inside a streaming graph (plain ainvoke)
        pass


async def hand_over() -> None:
    """Let the caller receive what this step has emitted before the step ends.

    LangGraph hands a custom stream chunk to the caller in the middle of a step only while the step waits on
    the event loop, and the chunk needs three turns of the loop to arrive (the stream's waiter, the runner's
    wait, the caller's iteration). A step that emits its whole answer and returns would otherwise keep the
    text until LangGraph has closed the step: 0.5-1 ms of an FAQ answer's 7-8 ms. A caller with a sink
    (`ANSWER_SINK`) has the text already.
    """
    if ANSWER_SINK.get() is not None:
        return
    for _ in range(3):
        await asyncio.sleep(0)


def pieces(text: str) -> list[str]:
    """A text that is ready at once, as it is streamed: sentence by sentence."""
    return re.findall(r"[^.!?]+[.!?]*\s*", text) or [text]


def emit_chunked(text: str) -> None:
    """Stream a text that is ready at once, sentence by sentence."""
    for piece in pieces(text):
        emit(piece)


def thread_of() -> str | None:
    """The conversation's thread id, when the graph runs with a checkpointer (None otherwise)."""
    try:
        return (get_config().get("configurable") or {}).get("thread_id")
    except RuntimeError:  # not inside a graph run
        return None


def current_context() -> Context:
    """The run's Context from inside a node's helper (the defaults outside a graph run)."""
    try:
        return context_of(get_runtime(Context))
    except RuntimeError:
        return Context()


def context_of(runtime: Runtime[Context] | None) -> Context:
    """The run's Context (the defaults when the caller passed none, as LangGraph Studio may)."""
    return (runtime.context if runtime is not None else None) or Context()


def today_of(ctx: Context) -> date:
    """The run's date: the context override, or the real one."""
    return date.fromisoformat(ctx.today) if ctx.today else date.today()


def normalize(text: str) -> str:
    """Printable, NFC-normalized, whitespace collapsed."""
    text = unicodedata.normalize("NFC", text.encode("utf-8", "replace").decode("utf-8", "replace"))
    return " ".join(_CONTROL.sub(" ", text).split())
