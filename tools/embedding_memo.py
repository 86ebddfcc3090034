"""Embeddings by text, each computed once per process, in batches: the memo the router and the graph embed
through (graph/deps.py), over an `Embedder` (tools/embeddings.py) or anything with its `submit`.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import numpy as np

log = logging.getLogger(__name__)


class EmbeddingMemo:
    """Embeddings by text, each computed once per process (bounded), in batches, off the event loop.

    `prefetch(text)` starts a text's embedding before anyone asks for it (the question, while the graph
    loads its checkpoint): a later call awaits that same computation instead of starting another. Texts
    prefetched while an earlier prefetch is being computed wait for it and then go together, as one
    batch: questions that arrive at once from several conversations share one pass of the model instead of
    queueing a pass each. An encoder that runs one text per pass anyway (`gains_from_batches` False: the int8
    router, whose activations are quantized per run) gains nothing from that wait, and a batch is handed out only
    when its last text is done: there each prefetch goes to the encoder's thread at once, alone, and its callers
    are answered as soon as it is computed (of 32 questions at once, the 31 after the first waited for all 31).
    """

    def __init__(self, embedder: Any, size: int = 4096) -> None:
        self.embedder = embedder
        self.size = size
        self._memo: dict[str, np.ndarray] = {}
        # prefetched text -> the loop it was prefetched on, and its callers' futures (answered by `_deliver`)
        self._pending: dict[str, tuple[asyncio.AbstractEventLoop, list[asyncio.Future[np.ndarray]]]] = {}
        self._queued: list[str] = []  # prefetched texts waiting for the batch under way to finish
        self._busy: asyncio.AbstractEventLoop | None = None  # the loop whose prefetch batch is under way
        self._batches = getattr(embedder, "gains_from_batches", True)

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
        if not self._batches:
            self._submit([text], loop)
            return
        self._queued.append(text)
        if self._busy is None:  # the encoder is free of prefetches: this one starts at once
            self._next_batch(loop)

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
            self._submit(batch, loop)

    def _submit(self, batch: list[str], loop: asyncio.AbstractEventLoop) -> None:
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
            if self._batches:
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


def _retrieved(fut: asyncio.Future[Any]) -> None:
    """Mark a future's error as seen (its caller may have left before awaiting it)."""
    if not fut.cancelled():
        fut.exception()
