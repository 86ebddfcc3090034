"""What the chat and the HTTP API share in one server process: the graph, the token verifier, the limiter.

Each is built on first use inside the server's event loop and holds only clients (the conversations
live in the checkpointer, the counters in Redis), so replicas can run side by side.
"""

from __future__ import annotations

import asyncio
import logging
from functools import lru_cache
from typing import Any

from app.auth import Verifier
from app.ratelimit import RateLimit
from app.settings import get_settings
from app.turn import new_thread_id, open_graph, run_turn
from graph.context import Context
from graph.graph import Desk
from graph.next_turn import WARMUP_PREFIX

log = logging.getLogger(__name__)


class GraphHolder:
    """Builds the help desk on first use inside the server's event loop and keeps it for the process."""

    def __init__(self) -> None:
        self._desk: Desk | None = None
        self._cm: Any = None
        self._lock = asyncio.Lock()

    async def get(self) -> Desk:
        """The help desk: the compiled graph and its resources (built on the first call)."""
        async with self._lock:
            if self._desk is None:
                self._cm = open_graph(get_settings())
                self._desk = await self._cm.__aenter__()
            return self._desk

    async def close(self) -> None:
        """Close the graph's checkpointer and clients (a process that ends on its own, e.g. a probe)."""
        async with self._lock:
            if self._cm is not None:
                await self._cm.__aexit__(None, None, None)
            self._desk = self._cm = None


HOLDER = GraphHolder()
READY = asyncio.Event()  # set once warm(): /healthz says ready only then


def request_context() -> Context:
    """The knobs of a served request: the defaults, and who writes drafts (settings: LLM_DRAFTS)."""
    return Context(llm_drafts=get_settings().llm_drafts)


WARM_QUESTIONS = ("When is payday?", "How many leave days do I have left?")  # FAQ path; template path


async def warm() -> None:
    """Everything the first request needs, before the server says it is ready: the graph (embedding
    thread, router, date parser, language detector), the checkpointer, the Redis pools, the backend
    connection and the templates, by answering two questions on a throwaway thread; Gradio's event path;
    and vLLM's prefix cache, by sending each LLM prompt's static part once. The two questions come last:
    when next-turn prefetch's read of the kept conversations came after them, the first user's question took
    1.4-2.5x the same question warm (`python -m app.bench.coldstart`); now 0.8-1.2x.
    """
    if READY.is_set():  # a Ray Serve replica warms in its constructor, before the app's lifespan starts
        return
    try:
        desk = await HOLDER.get()
        await warm_prefix_cache()
        await seed_next_turn(desk)
        await rate_limit().limiter.storage.check()  # the limiter's Redis connection
        warm_gradio()
        thread = f"{WARMUP_PREFIX}{new_thread_id()}"
        for q in WARM_QUESTIONS:
            row = await run_turn(desk, q, "E1001", thread, Context())
            if row.get("error"):
                log.warning("warm-up question %r failed: %s", q, row["error"])
    except Exception:  # a service down at start: serve anyway (each path has its own fallback), and say so
        log.exception("warm-up did not complete; serving cold")
    finally:
        READY.set()


async def seed_next_turn(desk: Desk) -> None:
    """Next-turn prefetch learns from the conversations kept, when this Redis has learned nothing yet; a
    failure costs only that (the warm-up's other steps are done), so it is logged, not raised.
    """
    try:
        if learned := await desk.seed_next_turn():
            log.info("next-turn prefetch learned %d request pairs from the conversations kept", learned)
    except Exception:  # noqa: BLE001 - prefetch then learns from live turns only
        log.warning("next-turn prefetch could not read the conversations kept", exc_info=True)


async def warm_prefix_cache() -> None:
    """Send the planner's, the answer writer's and the writing prompts once (one token each), so the first
    LLM request finds their static prefix (rules and tool schemas) in vLLM's prefix cache.
    """
    import httpx
    from langchain_core.messages import convert_to_openai_messages

    from graph.prompts import answer_messages, planner_messages, writing_messages

    settings = get_settings()
    profile, today = {"id": "E0000"}, "2026-01-01"
    prompts = [planner_messages(profile, today, [], "warm-up"), answer_messages(profile, today, [], "warm-up", ""),
               writing_messages(profile, today, [], "warm-up")]
    headers = {"authorization": f"Bearer {settings.vllm_api_key}"} if settings.vllm_api_key else {}
    async with httpx.AsyncClient(base_url=settings.llm_url, timeout=60, headers=headers) as client:
        for messages in prompts:
            body = {"model": settings.vllm_model, "max_tokens": 1, "messages": convert_to_openai_messages(messages)}
            (await client.post("/chat/completions", json=body)).raise_for_status()


@lru_cache
def http_client() -> Any:
    """One HTTP client for the process's own calls (the sign-in service, the chat's signed-in line): a new
    client builds a TLS context each time, ~70 ms of one core, which every sign-in and page load paid.
    """
    import httpx

    return httpx.AsyncClient(timeout=10)


def warm_gradio() -> None:
    """What Gradio does before every event, done once before ready: it resolves matplotlib's backend, which the
    first time took ~80 ms of the first user's first answer (and queued the events behind it).
    """
    from gradio.utils import MatplotlibBackendMananger

    with MatplotlibBackendMananger():
        pass


@lru_cache
def verifier() -> Verifier:
    """The process's token verifier (its JWKS cache is per process; keys are public)."""
    return Verifier(get_settings())


@lru_cache
def rate_limit() -> RateLimit:
    """The per-identity limit, counted in Redis."""
    return RateLimit(get_settings())


@lru_cache
def login_limit() -> RateLimit:
    """Sign-in attempts, per employee id and per client address (password guessing)."""
    settings = get_settings()
    return RateLimit(settings, settings.login_rate_limit, scope="helpdesk-login-limit")
