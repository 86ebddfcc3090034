"""The conversation store, read once per turn.

A turn of a conversation reads its latest checkpoint twice: the owner check (app/turn.py:thread_owner, before
the graph reads anything of the thread) and LangGraph's start of the run. Each is a trip to the database (on
SQLite, several turns of aiosqlite's thread), and both lie before the routing step, beside the question's
embedding: with SQLite they took longer than the embedding itself (about 2 ms each, measured), so the answer
waited for the store. The savers here hand LangGraph's first read of the turn's thread the checkpoint the owner
check has just read (or, for a thread made by this turn, its absence) instead of reading it again.

Nothing can have changed between the two reads in this process: the owner check runs inside the thread's turn
lock (app/turn.py:_ThreadTurns), after the previous turn's write. Every other read (another thread, an explicit
checkpoint id, a subgraph's namespace, a second read in the same turn) goes to the database.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from langgraph.checkpoint.base import CheckpointTuple
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

# [thread, checkpoint] while held; emptied in place when taken, so that "once" holds in every context copied from
# the turn's (a task LangGraph might start for its read sees the same list).
_HELD: ContextVar[list[Any] | None] = ContextVar("turn_checkpoint", default=None)


class ReadOnce:
    """Mixin for a LangGraph async saver: the turn's first read of its thread's latest checkpoint is `held`."""

    async def aget_tuple(self, config: Any) -> CheckpointTuple | None:
        """The held checkpoint for the turn's first read of its thread's latest one; else the database's."""
        held = _HELD.get()
        conf = config.get("configurable") or {}
        if (held and conf.get("thread_id") == held[0] and not conf.get("checkpoint_ns")
                and not conf.get("checkpoint_id")):
            checkpoint = held[1]
            held.clear()  # once: a later read is the database's
            return checkpoint
        return await super().aget_tuple(config)  # type: ignore[misc]


class SqliteSaver(ReadOnce, AsyncSqliteSaver):
    """LangGraph's SQLite saver, read once per turn."""


def read_once(saver_cls: type) -> type:
    """`saver_cls` (an async LangGraph saver class) read once per turn."""
    return type(saver_cls.__name__, (ReadOnce, saver_cls), {"__doc__": f"{saver_cls.__name__}, read once per turn."})


@contextmanager
def held(thread: str, checkpoint: CheckpointTuple | None) -> Iterator[None]:
    """Within this block, the first read of `thread`'s latest checkpoint returns `checkpoint` (None: the thread
    has none yet) without going to the database.
    """
    token = _HELD.set([thread, checkpoint])
    try:
        yield
    finally:
        _HELD.reset(token)
