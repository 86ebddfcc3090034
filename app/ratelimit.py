"""Requests per identity per minute, counted in Redis by the `limits` library (shared by every replica).

A moving window per employee id: beyond the limit the caller gets a "slow down" answer and nothing is
processed; other identities are unaffected. When Redis cannot be reached the limiter lets requests
through (and logs it): the help desk stays up, it just stops counting.
"""

from __future__ import annotations

import logging
import time

from limits import parse
from limits.aio.strategies import MovingWindowRateLimiter
from limits.storage import storage_from_string

from app.failures import Failure, failure
from app.settings import Settings

log = logging.getLogger(__name__)


class RateLimit:
    """One limit (e.g. "30/minute") for every identity."""

    def __init__(self, settings: Settings, limit: str | None = None, scope: str = "helpdesk-ratelimit") -> None:
        self.item = parse(limit or settings.rate_limit)
        # `async+` + REDIS_URL: limits picks its Redis or Redis Cluster storage from the scheme.
        storage = storage_from_string("async+" + settings.redis, implementation="redispy", key_prefix=scope,
                                      socket_timeout=2, socket_connect_timeout=2)
        self.limiter = MovingWindowRateLimiter(storage)

    async def allow(self, user: str) -> bool:
        """Count one request of `user`; False when it goes over the limit."""
        try:
            return await self.limiter.hit(self.item, user)
        except Exception as exc:  # noqa: BLE001 - a limiter outage must not take the help desk down
            log.warning("rate limiter unavailable (%s): request let through", type(exc).__name__)
            return True

    async def retry_after(self, user: str) -> int:
        """Seconds until `user` may send again (at least 1)."""
        try:
            reset, _ = await self.limiter.get_window_stats(self.item, user)
        except Exception:  # noqa: BLE001
            return 1
        return max(1, int(reset - time.time()) + 1)

    async def refuse(self, user: str, question: str, preferred: str | None = None) -> Failure | None:
        """Count one question of `user`; over the limit, the failure they read, in the question's language."""
        if await self.allow(user):
            return None
        return failure("rate_limited", question, preferred, retry_after=await self.retry_after(user),
                       amount=self.item.amount, period=self.item.GRANULARITY.name)
