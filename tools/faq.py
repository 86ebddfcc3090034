"""The FAQ: question/answer entries kept as data, every phrasing embedded in a Redis vector set."""

from __future__ import annotations

import asyncio
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import yaml
from redis.asyncio import Redis

from tools.embeddings import Embedder
from tools.vectors import Hit, VectorSet

FAQ_KEY = "hd:faq"
FAQ_VERSION_KEY = "hd:faq:version"


@dataclass(frozen=True)
class FaqEntry:
    """One policy question, its answer and the ways employees ask it."""

    id: str
    question: str
    answer: str
    paraphrases: list[str] = field(default_factory=list)

    @property
    def phrasings(self) -> list[str]:
        """The canonical question and every paraphrase."""
        return [self.question, *self.paraphrases]


def load_faq(path: Path) -> dict[str, FaqEntry]:
    """Read the FAQ data file."""
    rows = yaml.safe_load(path.read_text(encoding="utf-8"))
    return {r["id"]: FaqEntry(r["id"], r["question"], r["answer"], list(r.get("paraphrases", []))) for r in rows}


class FaqIndex:
    """Nearest FAQ phrasing by vector similarity."""

    def __init__(self, redis: Redis, entries: dict[str, FaqEntry]) -> None:
        self.entries = entries
        self.vs = VectorSet(redis, FAQ_KEY)
        self.redis = redis

    async def ensure(self, embedder: Embedder) -> int:
        """Index every phrasing unless the same FAQ is already indexed; returns the phrasing count."""
        items = [(e.id, i, text) for e in self.entries.values() for i, text in enumerate(e.phrasings)]
        version = hashlib.sha256((json.dumps(items) + embedder.name).encode()).hexdigest()
        current = await self.redis.get(FAQ_VERSION_KEY)
        if current and current.decode() == version and await self.vs.size() == len(items):
            return len(items)
        await self.redis.delete(FAQ_KEY)
        vecs = await asyncio.to_thread(embedder.embed, [t for _, _, t in items])
        for (fid, i, _), vec in zip(items, vecs, strict=True):
            await self.vs.add(f"{fid}#{i}", vec, {"id": fid})
        await self.redis.set(FAQ_VERSION_KEY, version)
        return len(items)

    async def nearest(self, vec: np.ndarray, k: int = 5) -> list[tuple[FaqEntry, Hit]]:
        """Nearest phrasings, best first, each with its entry."""
        hits = await self.vs.search(vec, k)
        return [(self.entries[h.attrs["id"]], h) for h in hits if h.attrs.get("id") in self.entries]
