"""What every node uses: its duration in the state, streaming pieces of the answer, the run's date, and
the question made printable.
"""

from __future__ import annotations

import functools
import re
import time
import unicodedata
from collections.abc import Awaitable, Callable
from datetime import date
from typing import Any

from langgraph.config import get_config, get_stream_writer
from langgraph.runtime import Runtime, get_runtime
from langgraph.types import Overwrite

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
        took = {fn.__name__: (time.perf_counter() - t0) * 1000}
        timings = update.get("timings_ms")
        if isinstance(timings, Overwrite):  # a new turn's first node: its own time is the turn's first
            return {**update, "timings_ms": Overwrite({**timings.value, **took})}
        return {**update, "timings_ms": {**(timings or {}), **took}}

    return wrapper


def emit(text: str) -> None:
    """Stream a piece of the answer through LangGraph's custom stream mode (`{"answer_delta": text}`): the chat,
    the API, the CLI, Studio and a notebook all read it from the graph's own stream.
    """
    if not text:
        return
    try:
        get_stream_writer()({"answer_delta": text})
    except RuntimeError:  # not running inside a graph (a node's helper called directly)
        pass


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
