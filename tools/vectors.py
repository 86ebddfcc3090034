"""Nearest-neighbour search on Redis 8 vector sets (VADD / VSIM), with JSON attributes."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import numpy as np
from redis.asyncio import Redis


@dataclass(frozen=True)
class Hit:
    """One neighbour: element name, cosine similarity in [-1, 1] and its attributes."""

    name: str
    score: float
    attrs: dict[str, Any]


def _fp32(vec: np.ndarray) -> bytes:
    return np.asarray(vec, dtype=np.float32).tobytes()


class VectorSet:
    """A named vector set. Scores are cosine similarities (Redis reports (1 + cos) / 2)."""

    def __init__(self, redis: Redis, key: str) -> None:
        self.redis = redis
        self.key = key

    async def add(self, name: str, vec: np.ndarray, attrs: dict[str, Any] | None = None) -> None:
        """Insert or replace one element (no quantization: exact scores matter for thresholds)."""
        args: list[Any] = ["VADD", self.key, "FP32", _fp32(vec), name, "NOQUANT"]
        if attrs is not None:
            args += ["SETATTR", json.dumps(attrs)]
        await self.redis.execute_command(*args)

    async def search(self, vec: np.ndarray, k: int = 5, filter_expr: str | None = None) -> list[Hit]:
        """The k nearest elements, best first; FILTER narrows by attributes (e.g. `.scope == "E1001"`)."""
        args: list[Any] = ["VSIM", self.key, "FP32", _fp32(vec), "WITHSCORES", "WITHATTRIBS", "COUNT", k]
        if filter_expr:
            args += ["FILTER", filter_expr]
        raw = await self.redis.execute_command(*args)
        return _parse(raw)

    async def remove(self, name: str) -> None:
        """Drop one element."""
        await self.redis.execute_command("VREM", self.key, name)

    async def size(self) -> int:
        """Number of elements (0 when the set does not exist)."""
        return int(await self.redis.execute_command("VCARD", self.key) or 0)


def _text(v: Any) -> str:
    return v.decode() if isinstance(v, bytes) else str(v)


def _parse(raw: Any) -> list[Hit]:
    if not raw:
        return []
    if isinstance(raw, dict):  # RESP3: {name: [score, attrs]}
        items = [(k, *(v if isinstance(v, list | tuple) else [v, None])) for k, v in raw.items()]
    else:  # RESP2: flat [name, score, attrs, ...]
        items = [tuple(raw[i:i + 3]) for i in range(0, len(raw), 3)]
    hits = []
    for name, score, attrs in items:
        parsed = json.loads(_text(attrs)) if attrs else {}
        hits.append(Hit(_text(name), 2.0 * float(_text(score)) - 1.0, parsed))
    return hits
