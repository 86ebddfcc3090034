"""The conversation store on SQLite for an asyncio server: LangGraph's `SqliteSaver`, a turn's reads and writes run
where the turn runs.

LangGraph's `AsyncSqliteSaver` runs a read or a write as five or six awaits on aiosqlite's connection thread
(cursor, execute, fetch, execute, fetch, close), all under one asyncio lock. Each await comes back only when the
event loop next runs, so under load the lock was held for several turns of a busy loop per call, and every other
turn's read and write queued behind it. A turn's own read (its latest checkpoint) and write (one checkpoint, its
writes) take SQLite well under a millisecond here (WAL, synced at checkpoints, not at each commit), less than even
one hop to a worker thread and back costs a turn while 31 others keep the loop busy: they run inline. Under the 32 x
10 load (docs/benchmark.md), FAQ answers' p95 was 554-603 ms on aiosqlite, 343-382 ms with each call one hop to a
thread, 232-283 ms inline. Listing a thread's or every thread's checkpoints (warm-up reads every conversation kept)
and deleting one can take long: those go to a worker thread, and a turn that needs the lock meanwhile waits for
them. The file, the tables and what a read returns are LangGraph's own.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager, closing
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import ChannelVersions, Checkpoint, CheckpointMetadata, CheckpointTuple
from langgraph.checkpoint.serde.base import SerializerProtocol
from langgraph.checkpoint.sqlite import SqliteSaver


class LoopSqliteSaver(SqliteSaver):
    """`SqliteSaver` whose async methods run a turn's read and write inline, and longer work on a worker thread."""

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """The thread's latest checkpoint (or the one `config` names)."""
        return self.get_tuple(config)

    async def alist(self, config: RunnableConfig | None, *, filter: dict[str, Any] | None = None,  # noqa: A002
                    before: RunnableConfig | None = None, limit: int | None = None) -> AsyncIterator[CheckpointTuple]:
        """The checkpoints `list` finds, all read on a worker thread."""
        def listed() -> list[CheckpointTuple]:
            return list(self.list(config, filter=filter, before=before, limit=limit))

        for found in await asyncio.to_thread(listed):
            yield found

    async def aput(self, config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata,
                   new_versions: ChannelVersions) -> RunnableConfig:
        """Save a checkpoint."""
        return self.put(config, checkpoint, metadata, new_versions)

    async def aput_writes(self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str,
                          task_path: str = "") -> None:
        """Save a step's pending writes."""
        self.put_writes(config, writes, task_id, task_path)

    async def adelete_thread(self, thread_id: str) -> None:
        """Delete a thread's checkpoints and writes on a worker thread."""
        await asyncio.to_thread(self.delete_thread, thread_id)

    async def aget_delta_channel_history(self, *, config: RunnableConfig,
                                         channels: Sequence[str]) -> Mapping[str, Any]:
        """The sync saver's one-query history of delta channels, on a worker thread."""
        return await asyncio.to_thread(lambda: self.get_delta_channel_history(config=config, channels=channels))


def _connect(path: str) -> sqlite3.Connection:
    """A connection any worker thread may use (the saver's lock keeps one at a time), its write-ahead log synced at
    checkpoints rather than at every commit (`synchronous=NORMAL`, SQLite's advice for WAL): a turn's state survives
    the process crashing, and only a power cut can lose the last turns.
    """
    conn = sqlite3.connect(path, check_same_thread=False)
    conn.execute("PRAGMA synchronous=NORMAL")
    return conn


@asynccontextmanager
async def sqlite_saver(path: str, serde: SerializerProtocol) -> AsyncIterator[LoopSqliteSaver]:
    """The saver on a file at `path`, closed when the block ends."""
    with closing(await asyncio.to_thread(_connect, path)) as conn:
        saver = LoopSqliteSaver(conn, serde=serde)
        await asyncio.to_thread(saver.setup)
        yield saver

