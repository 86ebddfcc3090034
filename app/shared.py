"""What the chat and the HTTP API share in one server process: the graph, the token verifier, the limiter.

Each is built on first use inside the server's event loop and holds only clients (the conversations
live in the checkpointer, the counters in Redis), so replicas can run side by side.
"""

from __future__ import annotations

import asyncio
from functools import lru_cache
from typing import Any

from app.ask import open_graph
from app.auth import Verifier
from app.ratelimit import RateLimit
from app.settings import get_settings


class GraphHolder:
    """Builds the graph on first use inside the server's event loop and keeps it for the process."""

    def __init__(self) -> None:
        self._graph: Any = None
        self._cm: Any = None
        self._lock = asyncio.Lock()

    async def get(self) -> Any:
        """The compiled graph (built on the first call)."""
        async with self._lock:
            if self._graph is None:
                self._cm = open_graph(get_settings())
                self._graph = await self._cm.__aenter__()
            return self._graph


HOLDER = GraphHolder()


@lru_cache
def verifier() -> Verifier:
    """The process's token verifier (its JWKS cache is per process; keys are public)."""
    return Verifier(get_settings())


@lru_cache
def rate_limit() -> RateLimit:
    """The per-identity limit, counted in Redis."""
    return RateLimit(get_settings())
