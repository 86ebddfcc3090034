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
import sqlite3
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from contextvars import ContextVar
from typing import Any

import aiosqlite
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


class DirectReads(AsyncSqliteSaver):
    """LangGraph's SQLite saver, reading checkpoints on the event loop's own thread, through a second connection to
    the same file.

    The library's read opens a cursor, runs the checkpoint's query, fetches its row, runs the pending writes'
    query, fetches them and closes the cursor: a trip to aiosqlite's thread and back to the event loop each. A
    turn's owner check makes that read beside the question's embedding, the early answer waits for it, and while
    the loop is busy with the turn each trip waits for the loop. Two trips (each query run and fetched at once)
    still ended 2.6 ms after the question arrived, at the median of FAQ questions in continuing conversations,
    after the answer was ready (2.4 ms); the two queries themselves, by primary key on a local
    file, take tens of microseconds. Here they run on the loop's thread and wait for nothing.

    The library's setup puts the file in WAL mode, where a reader never waits for a writer and sees what was
    committed; a turn's write is committed before the thread's next turn reads (app/turn.py:_ThreadTurns). Were
    the file busy all the same (another journal mode), the read goes by aiosqlite's thread, in two trips, instead
    of blocking the loop. An in-memory database has no second connection: it is read that way too. The rows are
    read as the library reads them (tests/unit/app/test_checkpoints.py compares the two).
    """

    reader: sqlite3.Connection | None = None  # the file's second connection (`from_conn_string`)

    @classmethod
    @asynccontextmanager
    async def from_conn_string(cls, conn_string: str) -> AsyncIterator[Any]:
        """The saver on `conn_string` (a file's path, or ":memory:"), with its reading connection."""
        async with aiosqlite.connect(conn_string) as conn:
            saver = cls(conn)
            if conn_string != ":memory:" and not conn_string.startswith("file:"):
                # timeout 0: a busy file is read by aiosqlite's thread, never waited for here
                saver.reader = sqlite3.connect(conn_string, timeout=0, isolation_level=None, check_same_thread=False)
            try:
                yield saver
            finally:
                if saver.reader is not None:
                    saver.reader.close()

    async def aget_tuple(self, config: Any) -> CheckpointTuple | None:
        """The checkpoint the config names (its latest without a checkpoint id), with its pending writes."""
        await self.setup()
        conf = config["configurable"]
        thread, ns, wanted = str(conf["thread_id"]), conf.get("checkpoint_ns", ""), get_checkpoint_id(config)
        query, params = (_BY_ID, (thread, ns, wanted)) if wanted else (_LATEST, (thread, ns))
        found = self._read_here(query, params, ns)
        if found is None:
            found = await self._read_there(query, params, ns)
        if not found[0]:
            return None
        (thread_id, checkpoint_id, parent_id, kind, checkpoint, metadata), writes = found[0][0], found[1]
        own = config if wanted else {"configurable": {"thread_id": thread_id, "checkpoint_ns": ns,
                                                      "checkpoint_id": checkpoint_id}}
        parent = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ns, "checkpoint_id": parent_id}}
        return CheckpointTuple(own, self.serde.loads_typed((kind, checkpoint)),
                               json.loads(metadata) if metadata is not None else {},
                               parent if parent_id else None, load_pending_writes(writes, self.serde))

    def _read_here(self, query: str, params: tuple[str, ...], ns: str) -> tuple[list[Any], list[Any]] | None:
        """(the checkpoint's row, or none; its pending writes) read on this thread in one read transaction; None
        when there is no second connection or the file is busy.
        """
        if self.reader is None:
            return None
        try:
            self.reader.execute("BEGIN")
            try:
                rows = self.reader.execute(query, params).fetchall()
                writes = self.reader.execute(pending_writes_sql(self._has_task_path),
                                             (str(rows[0][0]), ns, str(rows[0][1]))).fetchall() if rows else []
            finally:
                self.reader.execute("COMMIT")
        except sqlite3.OperationalError:  # busy (or locked): aiosqlite's thread waits for it instead
            return None
        return rows, writes

    async def _read_there(self, query: str, params: tuple[str, ...], ns: str) -> tuple[list[Any], list[Any]]:
        """The same rows by aiosqlite's thread, in two trips."""
        async with self.lock:
            rows = list(await self.conn.execute_fetchall(query, params))
            if not rows:
                return [], []
            writes = await self.conn.execute_fetchall(pending_writes_sql(self._has_task_path),
                                                      (str(rows[0][0]), ns, str(rows[0][1])))
        return rows, list(writes)


class SqliteSaver(ReadOnce, DirectReads):
    """LangGraph's SQLite saver, read once per turn, on the event loop's thread."""


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
