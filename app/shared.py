"""The server process (`python -m app ui`, or one Ray Serve replica): its resources and the warm-up before it
says it is ready.

The resources come from the one factory (app/resources.py). A server builds them once, in
`process_resources()`, the process's only singleton: `app.web.build_app` keeps them on `app.state` for the
API's and the chat's handlers, and a Ray Serve replica warms the same ones in its constructor, before its
app is built. They hold only clients (the conversations live in the checkpointer, the counters in Redis),
so replicas can run side by side.
"""

from __future__ import annotations

import asyncio
import logging
from functools import lru_cache

from app.resources import Resources, build_resources
from app.settings import get_settings
from app.turn import new_thread_id, run_turn
from graph.context import Context
from graph.graph import Desk
from graph.next_turn import WARMUP_PREFIX

log = logging.getLogger(__name__)


@lru_cache
def process_resources() -> Resources:
    """The resources of this server process, built from its settings on the first call (nothing opened yet)."""
    return build_resources(get_settings())


WARM_QUESTIONS = ("When is payday?", "How many leave days do I have left?")  # FAQ path; template path


async def warm(resources: Resources | None = None) -> None:
    """Everything the first request needs, before the server says it is ready: the graph (embedding
    thread, router, date parser, language detector), the checkpointer, the Redis pools, the backend
    connection and the templates, by answering two questions on a throwaway thread; the token issuer's keys;
    Gradio's event path; and vLLM's prefix cache, by sending each LLM prompt's static part once. The two
    questions come last: when next-turn prefetch's read of the kept conversations came after them, the first
    user's question took 1.4-2.5x the same question warm (`python -m app.bench.coldstart`); now 0.8-1.2x.
    """
    resources = resources or process_resources()
    if resources.ready.is_set():  # a Ray Serve replica warms in its constructor, before the app's lifespan starts
        return
    try:
        desk = await resources.get()
        await warm_prefix_cache(resources)
        await seed_next_turn(desk)
        await resources.rate_limit.limiter.storage.check()  # the limiter's Redis connection
        await asyncio.to_thread(resources.verifier.warm)
        warm_gradio()
        thread = f"{WARMUP_PREFIX}{new_thread_id()}"
        for q in WARM_QUESTIONS:
            row = await run_turn(desk, q, "E1001", thread, Context())
            if row.get("error"):
                log.warning("warm-up question %r failed: %s", q, row["error"])
    except Exception:  # a service down at start: serve anyway (each path has its own fallback), and say so
        log.exception("warm-up did not complete; serving cold")
    finally:
        resources.ready.set()


async def seed_next_turn(desk: Desk) -> None:
    """Next-turn prefetch learns from the conversations kept, when this Redis has learned nothing yet; a
    failure costs only that (the warm-up's other steps are done), so it is logged, not raised.
    """
    try:
        if learned := await desk.seed_next_turn():
            log.info("next-turn prefetch learned %d request pairs from the conversations kept", learned)
    except Exception:  # noqa: BLE001 - prefetch then learns from live turns only
        log.warning("next-turn prefetch could not read the conversations kept", exc_info=True)


async def warm_prefix_cache(resources: Resources) -> None:
    """Send the planner's, the answer writer's and the writing prompts once (one token each), so the first
    LLM request finds their static prefix (rules and tool schemas) in vLLM's prefix cache.
    """
    import httpx
    from langchain_core.messages import convert_to_openai_messages

    from graph.prompts import answer_messages, planner_messages, writing_messages

    settings = resources.settings
    profile, today = {"id": "E0000"}, "2026-01-01"
    prompts = [planner_messages(profile, today, [], "warm-up"), answer_messages(profile, today, [], "warm-up", ""),
               writing_messages(profile, today, [], "warm-up")]
    headers = {"authorization": f"Bearer {settings.vllm_api_key}"} if settings.vllm_api_key else {}
    async with httpx.AsyncClient(base_url=settings.llm_url, timeout=60, headers=headers) as client:
        for messages in prompts:
            body = {"model": settings.vllm_model, "max_tokens": 1, "messages": convert_to_openai_messages(messages)}
            (await client.post("/chat/completions", json=body)).raise_for_status()


def warm_gradio() -> None:
    """What Gradio does before every event, done once before ready: it resolves matplotlib's backend, which the
    first time took ~80 ms of the first user's first answer (and queued the events behind it).
    """
    from gradio.utils import MatplotlibBackendMananger

    with MatplotlibBackendMananger():
        pass
