"""Vectors cached by content: a text is embedded once per encoder, so refitting a head after a knowledge edit (a new
FAQ entry, a changed answer, another company's folder) embeds only the texts that changed.

One SQLite file per encoder under the shared cache (`<cache_dir>/vectors/<encoder key>.sqlite`), keyed by a hash of
the text; several processes may read and write it at once (SQLite's own locking). The encoder's key names what
it is (its folder's fingerprint, its int8 recipe), never where a virtualenv put it.
"""

from __future__ import annotations

import hashlib
import logging
import sqlite3
from pathlib import Path
from typing import Any

import numpy as np

log = logging.getLogger(__name__)
_CHUNK = 500  # keys per SELECT (SQLite's parameter limit is 999 on old builds)


class CachedEncoder:
    """An encoder's `embed`, through a cache of the vectors it already computed."""

    def __init__(self, encoder: Any, key: str, folder: Path) -> None:
        self.encoder = encoder
        self.name = getattr(encoder, "name", key)
        self.key = key
        folder.mkdir(parents=True, exist_ok=True)
        self.path = folder / f"{key}.sqlite"
        self.embedded = 0  # texts this encoder embedded (not found in the cache)
        self.reused = 0  # texts read from the cache

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, timeout=60)
        conn.execute("CREATE TABLE IF NOT EXISTS vec (k TEXT PRIMARY KEY, v BLOB NOT NULL)")
        return conn

    def embed(self, texts: list[str]) -> np.ndarray:
        """The vectors of `texts`, in order: those cached read back, the rest embedded (in one batch) and kept."""
        keys = [hashlib.sha1(t.encode()).hexdigest() for t in texts]
        found: dict[str, np.ndarray] = {}
        with self._connect() as conn:
            unique = list(dict.fromkeys(keys))
            for i in range(0, len(unique), _CHUNK):
                part = unique[i:i + _CHUNK]
                rows = conn.execute(f"SELECT k, v FROM vec WHERE k IN ({','.join('?' * len(part))})", part)
                found.update((k, np.frombuffer(v, dtype=np.float32)) for k, v in rows)
            missing = list(dict.fromkeys(t for t, k in zip(texts, keys, strict=True) if k not in found))
            if missing:
                vecs = self._embed_missing(missing)
                new = {hashlib.sha1(t.encode()).hexdigest(): v for t, v in zip(missing, vecs, strict=True)}
                conn.executemany("INSERT OR REPLACE INTO vec VALUES (?, ?)",
                                 [(k, v.tobytes()) for k, v in new.items()])
                found.update(new)
        self.embedded += len(missing)
        self.reused += len(texts) - len(missing)
        if not texts:
            return np.zeros((0, int(getattr(self.encoder, "dim", 0) or 0)), np.float32)
        return np.vstack([found[k] for k in keys])

    def _embed_missing(self, texts: list[str]) -> np.ndarray:
        """Embed what the cache lacks, with a progress bar when it is more than a few seconds' work (set-up)."""
        from tqdm.auto import tqdm

        out = []
        with tqdm(total=len(texts), desc=f"embedding with {self.key}", unit="text", disable=len(texts) < _CHUNK,
                  mininterval=5) as bar:
            for i in range(0, len(texts), _CHUNK):
                out.append(np.asarray(self.encoder.embed(texts[i:i + _CHUNK]), dtype=np.float32))
                bar.update(len(out[-1]))
        return np.concatenate(out)

    def close(self) -> None:
        """Close the encoder it wraps, where it has threads of its own."""
        if hasattr(self.encoder, "close"):
            self.encoder.close()
