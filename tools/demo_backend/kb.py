"""The knowledge base: company documents chunked, embedded and kept in a Redis vector set."""

from __future__ import annotations

import asyncio
import hashlib
import logging
import re
from dataclasses import dataclass
from pathlib import Path

from redis.asyncio import Redis

from tools.embeddings import Embedder
from tools.text import idf_overlaps
from tools.vectors import Hit, VectorSet

log = logging.getLogger(__name__)
KB_KEY = "hd:kb"
KB_VERSION_KEY = "hd:kb:version"


@dataclass(frozen=True)
class Chunk:
    """A passage of one document."""

    id: str
    title: str
    text: str


def load_chunks(docs_dir: Path, max_words: int = 120) -> list[Chunk]:
    """Split each Markdown document into paragraph groups of at most `max_words` words."""
    chunks: list[Chunk] = []
    for path in sorted(docs_dir.glob("*.md")):
        raw = path.read_text(encoding="utf-8")
        lines = raw.strip().splitlines()
        title = lines[0].lstrip("# ").strip() if lines else path.stem
        body = "\n".join(lines[1:])
        paras = [p.strip() for p in re.split(r"\n\s*\n", body) if p.strip()]
        buf: list[str] = []
        for para in paras:
            if buf and sum(len(p.split()) for p in buf) + len(para.split()) > max_words:
                chunks.append(Chunk(f"{path.stem}#{len(chunks)}", title, "\n".join(buf)))
                buf = []
            buf.append(para)
        if buf:
            chunks.append(Chunk(f"{path.stem}#{len(chunks)}", title, "\n".join(buf)))
    return chunks


async def ensure_index(redis: Redis, embedder: Embedder, docs_dir: Path) -> int:
    """Embed the documents into Redis unless the same content is already there; returns chunk count."""
    chunks = load_chunks(docs_dir)
    version = hashlib.sha256(("|".join(f"{c.id}:{c.title}:{c.text}" for c in chunks)
                              + embedder.name).encode()).hexdigest()
    vs = VectorSet(redis, KB_KEY)
    current = await redis.get(KB_VERSION_KEY)
    current_text = current.decode() if isinstance(current, bytes) else current
    if current_text == version and await vs.size() == len(chunks):
        return len(chunks)
    await redis.delete(KB_KEY)
    vecs = await asyncio.to_thread(embedder.embed, [f"{c.title}. {c.text}" for c in chunks])
    for chunk, vec in zip(chunks, vecs, strict=True):
        await vs.add(chunk.id, vec, {"title": chunk.title, "text": chunk.text})
    await redis.set(KB_VERSION_KEY, version)
    log.info("knowledge base indexed: %d chunks from %s", len(chunks), docs_dir)
    return len(chunks)


LEXICAL_WEIGHT = 0.15


async def search(redis: Redis, embedder: Embedder, query: str, k: int = 3) -> list[dict[str, object]]:
    """Top-k passages for a query, best first (dense candidates from the vector set, then `rerank`)."""
    vec = await embedder.aembed_one(query)
    return rerank(query, await VectorSet(redis, KB_KEY).search(vec, candidates(k)), k)


def candidates(k: int) -> int:
    """How many dense neighbours are reranked for k passages."""
    return max(k * 4, 12)


def rerank(query: str, hits: list[Hit], k: int) -> list[dict[str, object]]:
    """Dense candidates reranked with word overlap, so a passage naming the place or thing asked about
    beats one that is only on the same topic (also what the quote calibration replays, without Redis).
    """
    lexical = idf_overlaps(query, [f"{h.attrs.get('title', '')} {h.attrs.get('text', '')}" for h in hits])
    scored = sorted(((h.score + LEXICAL_WEIGHT * lx, h) for h, lx in zip(hits, lexical, strict=True)),
                    key=lambda x: -x[0])[:k]
    return [{"id": h.name, "title": h.attrs.get("title", ""), "text": h.attrs.get("text", ""),
             "score": round(s, 4)} for s, h in scored]
