"""Who a conversation belongs to: whoever started it. Checked before the graph reads anything of a thread.

One Redis read answers it: a record `hd:owner:<thread>` written when the thread's first turn starts (`SET NX`, so of
two first turns at once only one starts it). The checkpointer stays the authority: a thread without a record
(started before records existed, expired, lost with Redis, or Redis unreachable) is looked up in its latest
checkpoint, and the record written back. The record saves the checkpoint read that LangGraph makes again when
the turn runs: on the FAQ path about 2 ms of a 6 ms first text, since that read waits behind the question's
embedding for the interpreter.
"""

from __future__ import annotations

import logging
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from redis.exceptions import RedisError

log = logging.getLogger(__name__)
TTL_S = 30 * 24 * 3600  # a month; a conversation picked up after that is looked up in its checkpoint once


def _key(thread: str) -> str:
    return f"hd:owner:{thread}"


async def latest_values(graph: Any, thread: str) -> dict[str, Any]:
    """The channel values of a thread's latest checkpoint, read as the graph reads them ({} for no such thread)."""
    config: RunnableConfig = {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}
    if not isinstance(saver := getattr(graph, "checkpointer", None), BaseCheckpointSaver):
        snapshot = await graph.aget_state(config)
        return dict(snapshot.values or {}) if snapshot else {}
    found = await saver.aget_tuple(config)
    return dict(found.checkpoint["channel_values"]) if found else {}


async def _from_checkpoint(graph: Any, thread: str) -> str | None:
    """The user of the thread's latest checkpoint (None: no such thread)."""
    return (await latest_values(graph, thread)).get("user")


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


async def owner_of(graph: Any, redis: Any, thread: str, user: str) -> str | None:
    """Who started `thread`, claiming it for `user` when nobody has (a new thread): `user` when it is theirs or new,
    someone else's id when it is not. `redis` None (a bare graph: the benchmark's plain agent, Studio) reads the
    checkpoint only.
    """
    if redis is None:
        return await _from_checkpoint(graph, thread)
    try:
        if (owner := await redis.get(_key(thread))) is not None:
            return _text(owner)
    except RedisError as exc:
        log.warning("thread owner record unavailable (%s): reading the checkpoint", type(exc).__name__)
        return await _from_checkpoint(graph, thread)
    return await claim(redis, thread, await _from_checkpoint(graph, thread) or user)  # written back, or a new thread


async def claim(redis: Any, thread: str, user: str) -> str:
    """Record `user` as the thread's owner unless someone already is; returns the owner."""
    try:
        if await redis.set(_key(thread), user, nx=True, ex=TTL_S):
            return user
        owner = await redis.get(_key(thread))  # another first turn got there first
        return _text(owner or user)
    except RedisError:
        return user  # without Redis, the owner as the caller read it (the checkpoint, or a new thread)

