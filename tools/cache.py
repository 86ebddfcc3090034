"""Semantic tool-result cache on Redis: exact match on structured arguments, similarity on free text.

Key rules (unit-tested): the key holds the tool, the scope (the caller's id for personal tools,
`shared` otherwise) and a hash of the exactly-matched arguments. A tool with a free-text argument
(`kb_search.query`) keeps its entries in a vector set per tool and scope and matches by cosine
similarity above a threshold. Entries expire after the tool's TTL. When Redis is unreachable the
cache steps aside (counted as `bypass`) and the call goes to the backend.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import time
from typing import Any

import numpy as np
from redis.asyncio import Redis
from redis.exceptions import RedisError

from tools.registry import ToolSpec
from tools.vectors import VectorSet

log = logging.getLogger(__name__)
PREFIX = "hd:tc"


def scope_of(spec: ToolSpec, user: str) -> str:
    """Personal results belong to the caller; shared ones to everybody."""
    return f"u:{user}" if spec.personal else "shared"


def exact_args(spec: ToolSpec, args: dict[str, Any]) -> dict[str, Any]:
    """The arguments matched exactly (all but the free-text one), normalized."""
    out = {}
    for k, v in sorted(args.items()):
        if k == spec.similarity_arg:
            continue
        out[k] = v.strip().lower() if isinstance(v, str) else v
    return out


def cache_key(spec: ToolSpec, args: dict[str, Any], user: str) -> str:
    """Redis key of an exactly-matched entry (or of the vector set for similarity tools).

    On a Redis Cluster the braces are the hash tag: a similarity tool's vector set (`<key>:v`) and its
    entries (`<key>:e:...`) live on one shard, so a search never points at an entry on another shard, and
    entries spread over the shards by tool, scope (user) and arguments.
    """
    digest = hashlib.sha256(json.dumps(exact_args(spec, args), sort_keys=True).encode()).hexdigest()[:24]
    return f"{PREFIX}:{{{spec.name}:{scope_of(spec, user)}:{digest}}}"


class ToolCache:
    """Get/put tool results, counting hits, misses and bypasses in Redis."""

    def __init__(self, redis: Redis, similarity_threshold: float = 0.95, namespace: str = "") -> None:
        self.redis = redis
        self.similarity_threshold = similarity_threshold
        self.namespace = namespace  # separates caches that must not share entries (benchmark variants)
        self._counting: set[asyncio.Task[None]] = set()  # hit/miss counts on their way to Redis

    def key_of(self, spec: ToolSpec, args: dict[str, Any], user: str) -> str:
        """The Redis key an exactly-matched call's result lives under, in this cache's namespace."""
        return self.namespace + cache_key(spec, args, user)

    def entry_of(self, spec: ToolSpec, args: dict[str, Any], user: str) -> str:
        """The key of a similarity tool's entry for exactly this text (its vector set points at such keys)."""
        assert spec.similarity_arg is not None, f"{spec.name} has no free-text argument"
        text = str(args.get(spec.similarity_arg, ""))
        return f"{self.key_of(spec, args, user)}:e:{hashlib.sha256(text.strip().lower().encode()).hexdigest()[:16]}"

    async def get(self, spec: ToolSpec, args: dict[str, Any], user: str,
                  text_vec: np.ndarray | None = None,
                  threshold: float | None = None) -> tuple[dict[str, Any] | None, str]:
        """(result, outcome): outcome is hit, miss (absent or expired) or bypass (Redis unavailable)."""
        key = self.key_of(spec, args, user)
        try:
            if spec.similarity_arg is None:
                raw = await self.redis.get(key)
            else:
                raw = await self._similar(key, text_vec, threshold or self.similarity_threshold)
        except RedisError as exc:
            log.warning("tool cache bypassed (redis: %s)", exc)
            return None, "bypass"
        self._count_later(spec.name, "hit" if raw else "miss")
        return (json.loads(raw), "hit") if raw else (None, "miss")

    async def _similar(self, key: str, vec: np.ndarray | None, threshold: float) -> bytes | None:
        if vec is None:
            return None
        vs = VectorSet(self.redis, key + ":v")
        now = time.time()
        for hit in await vs.search(vec, k=3):
            if hit.score < threshold:
                break
            if hit.attrs.get("exp", 0) < now:
                await vs.remove(hit.name)
                continue
            raw = await self.redis.get(hit.name)
            if raw:
                return raw if isinstance(raw, bytes) else raw.encode()
            await vs.remove(hit.name)
        return None

    async def put(self, spec: ToolSpec, args: dict[str, Any], user: str, result: dict[str, Any],
                  text_vec: np.ndarray | None = None) -> None:
        """Store a result for the tool's lifetime."""
        key = self.key_of(spec, args, user)
        try:
            body = json.dumps(result)
            if spec.similarity_arg is None:
                await self.redis.set(key, body, ex=spec.ttl_s)
                return
            if text_vec is None:
                return
            entry = self.entry_of(spec, args, user)
            await self.redis.set(entry, body, ex=spec.ttl_s)
            vs = VectorSet(self.redis, key + ":v")
            await vs.add(entry, text_vec, {"exp": time.time() + spec.ttl_s,
                                           "q": str(args.get(spec.similarity_arg, ""))[:200]})
            await self.redis.expire(key + ":v", spec.ttl_s * 2)
        except RedisError as exc:
            log.warning("tool cache bypassed on write (redis: %s)", exc)

    def _count_later(self, tool: str, outcome: str) -> None:
        """Count an outcome without making the caller wait for it: a cache hit is one Redis round trip, not two."""
        task = asyncio.ensure_future(self._count(tool, outcome))
        self._counting.add(task)
        task.add_done_callback(self._counting.discard)

    async def _count(self, tool: str, outcome: str) -> None:
        try:
            await self.redis.hincrby("hd:stats:cache", f"{tool}:{outcome}", 1)
        except RedisError:
            pass

    async def stats(self) -> dict[str, int]:
        """Counters per tool and outcome."""
        raw = await self.redis.hgetall("hd:stats:cache")
        return {(k.decode() if isinstance(k, bytes) else k): int(v) for k, v in raw.items()}

    async def clear(self) -> None:
        """Drop every cached tool result (used by the benchmark between phases)."""
        async for key in self.redis.scan_iter(match=f"{self.namespace}{PREFIX}:*", count=500):
            await self.redis.delete(key)
