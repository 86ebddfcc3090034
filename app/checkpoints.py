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

import json
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from langgraph.checkpoint.base import CheckpointTuple, get_checkpoint_id
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.checkpoint.sqlite.utils import load_pending_writes, pending_writes_sql

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


_LATEST = ("SELECT thread_id, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata FROM checkpoints "
           "WHERE thread_id = ? AND checkpoint_ns = ? ORDER BY checkpoint_id DESC LIMIT 1")
_BY_ID = ("SELECT thread_id, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata FROM checkpoints "
          "WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?")


class TwoTrips(AsyncSqliteSaver):
    """LangGraph's SQLite saver, reading a checkpoint in two trips to aiosqlite's thread instead of about seven.

    The library's read opens a cursor, runs the checkpoint's query, fetches its row, runs the pending writes'
    query, fetches them and closes the cursor: a trip to the database's thread and back to the event loop each.
    A turn's owner check makes that read beside the question's embedding, the early answer waits for it, and
    while the loop is busy with the turn each trip waits for the loop: traced in a continuing conversation, the
    read ended 2-6.7 ms after it began (0.8 ms alone), after the answer was ready in most turns. Here each query
    is run and fetched in one trip (aiosqlite's `execute_fetchall`); the rows are read as the library reads them
    (tests/unit/app/test_checkpoints.py compares the two).
    """

    async def aget_tuple(self, config: Any) -> CheckpointTuple | None:
        """The checkpoint the config names (its latest without a checkpoint id), with its pending writes."""
        await self.setup()
        conf = config["configurable"]
        thread, ns, wanted = str(conf["thread_id"]), conf.get("checkpoint_ns", ""), get_checkpoint_id(config)
        async with self.lock:
            rows = list(await self.conn.execute_fetchall(_BY_ID, (thread, ns, wanted)) if wanted else
                        await self.conn.execute_fetchall(_LATEST, (thread, ns)))
            if not rows:
                return None
            thread_id, checkpoint_id, parent_id, kind, checkpoint, metadata = rows[0]
            writes = await self.conn.execute_fetchall(pending_writes_sql(self._has_task_path),
                                                      (str(thread_id), ns, str(checkpoint_id)))
        own = config if wanted else {"configurable": {"thread_id": thread_id, "checkpoint_ns": ns,
                                                      "checkpoint_id": checkpoint_id}}
        parent = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ns, "checkpoint_id": parent_id}}
        return CheckpointTuple(own, self.serde.loads_typed((kind, checkpoint)),
                               json.loads(metadata) if metadata is not None else {},
                               parent if parent_id else None, load_pending_writes(writes, self.serde))


class SqliteSaver(ReadOnce, TwoTrips):
    """LangGraph's SQLite saver, read once per turn, in two trips."""


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
