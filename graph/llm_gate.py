"""Backpressure on the LLM: a bounded number of requests at once, a bounded queue, then "busy".

Admission control only (a semaphore and a counter of waiters); it holds no request or user state.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator


class LLMUnavailable(RuntimeError):
    """vLLM could not be reached or timed out. `key` names the message for the user in the catalogs
    (`tools/messages/`); the exception's own text is the English one.
    """

    def __init__(self, key: str) -> None:
        from tools.i18n import say

        super().__init__(say(key))
        self.key = key


class LLMBusy(LLMUnavailable):
    """Too many requests are already waiting for the LLM (backpressure instead of collapse)."""


class LLMGate:
    """Admission control: at most `limit` LLM requests at once and `queue` waiting; beyond that the
    request is refused at once with a busy message, so a saturated LLM sheds load instead of piling up.
    """

    def __init__(self, limit: int = 4, queue: int = 32) -> None:
        self.limit, self.queue = limit, queue
        self.waiting = 0
        self.rejected = 0
        self._sem = asyncio.Semaphore(limit)

    @contextlib.asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        """Hold one LLM slot for the duration of a request."""
        if self.waiting >= self.queue:
            self.rejected += 1
            raise LLMBusy("llm_busy")
        self.waiting += 1
        try:
            await self._sem.acquire()
        finally:
            self.waiting -= 1
        try:
            yield
        finally:
            self._sem.release()
