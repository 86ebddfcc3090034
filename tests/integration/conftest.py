"""Real services for integration tests: vLLM, Redis 8, the demo backend and the embedding model,
started once per test session (reused when already running)."""

from __future__ import annotations

import httpx
import pytest

from app.settings import get_settings
from app.stack import services
from app.turn import open_graph, run_turn
from graph.context import Context
from tests.integration.servers import bring_up

pytestmark = pytest.mark.integration


@pytest.fixture(scope="session")
def settings():
    return get_settings()


@pytest.fixture(scope="session")
def running(settings):
    return bring_up("services", services.up, settings)


@pytest.fixture(scope="session")
async def helpdesk(running):
    """The help desk on the real services, with an empty tool cache to start from."""
    async with open_graph() as desk:
        yield desk


@pytest.fixture(scope="session")
async def clear_cache(settings, running):
    from redis.asyncio import Redis

    from tools.cache import ToolCache

    redis = Redis.from_url(settings.redis)
    await ToolCache(redis).clear()
    await redis.aclose()


@pytest.fixture
async def fresh_cache(settings, running):
    """An empty tool cache for tests that assert hit/miss outcomes (other tests may have warmed it)."""
    from redis.asyncio import Redis

    from tools.cache import ToolCache

    redis = Redis.from_url(settings.redis)
    await ToolCache(redis).clear()
    await redis.aclose()


@pytest.fixture(scope="session")
def backend(settings, running):
    """Direct access to the backend, to know the figures an answer must contain."""
    with httpx.Client(base_url=settings.backend, timeout=10) as client:
        yield client


@pytest.fixture
def ask(helpdesk, clear_cache):
    async def _ask(q, user="E1001", thread=None, deltas=None, **options):
        ctx = Context(**options)
        return await run_turn(helpdesk, q, user, thread, ctx, deltas.append if deltas is not None else None)

    return _ask

