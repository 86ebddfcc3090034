"""Which conversation an OpenAI-style request continues, with no state in the app process.

OpenAI clients send the whole history each time and know nothing of threads. After each answer the desk keeps
one Redis key: a hash of (the caller, the conversation up to and including that answer) -> the thread that
recorded it, for `TTL_S`. The next request hashes (the caller, the history it sends) and finds that thread, so
any replica can continue it. The key only proposes a thread: it is continued when the checkpointer's record of
it belongs to the caller and its messages are the end of the history sent (all of it, for a conversation the
desk answered from the start). Anything else (an edited or made-up history, an expired key, Redis down) starts a
new thread: the desk never takes a client's word for what it answered, and a thread is never shared between
identities (the caller is in the hash, and `run_turn` refuses someone else's thread whatever the key says).
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Sequence
from typing import Any

from redis.exceptions import RedisError

from app.openai_wire import Turn
from app.owners import latest_values
from graph.graph import Desk

log = logging.getLogger(__name__)
KEY_PREFIX = "hd:oai:thread:"
TTL_S = 7 * 24 * 3600  # a conversation left for a week starts afresh (the client still shows it)
_ROLES = {"human": "user", "ai": "assistant"}


def _norm(text: Any) -> str:
    """Text as compared: whitespace collapsed (clients trim answers and re-join streamed pieces)."""
    if isinstance(text, list):  # a message's content parts
        text = "\n".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in text)
    return " ".join(str(text).split())


def conversation_key(user: str, turns: Sequence[Turn]) -> str:
    """The Redis key of a conversation as one caller sees it."""
    canon = json.dumps([user, [[role, _norm(text)] for role, text in turns]], ensure_ascii=False)
    return KEY_PREFIX + hashlib.sha256(canon.encode()).hexdigest()


async def recorded(desk: Desk, thread: str) -> tuple[str | None, list[Turn]]:
    """A thread's owner and its messages as the checkpointer holds them ((None, []) for an unknown thread)."""
    values = await latest_values(desk.graph, thread)
    turns = [(_ROLES.get(m.type, m.type), _norm(m.content)) for m in values.get("messages") or []]
    return values.get("user"), turns


async def find_thread(desk: Desk, user: str, history: Sequence[Turn]) -> str | None:
    """The caller's thread whose record ends with `history` (None: start a new one)."""
    if not history:
        return None
    try:
        found = await desk.deps.redis.get(conversation_key(user, history))
    except RedisError as exc:
        log.warning("conversation lookup failed, starting a new thread: %s", exc)
        return None
    if not found:
        return None
    thread = found.decode() if isinstance(found, bytes) else str(found)
    owner, turns = await recorded(desk, thread)
    sent = [(role, _norm(text)) for role, text in history]
    if owner == user and turns and turns == sent[-len(turns):]:
        return thread
    log.info("thread %s… does not match the history sent; starting a new one", thread[:6])
    return None


async def remember(desk: Desk, user: str, turns: Sequence[Turn], thread: str) -> None:
    """Map the conversation so far (the history, the question, the answer as sent) to its thread."""
    try:
        await desk.deps.redis.set(conversation_key(user, turns), thread, ex=TTL_S)
    except RedisError as exc:
        log.warning("could not remember the conversation (its follow-up starts a new thread): %s", exc)
