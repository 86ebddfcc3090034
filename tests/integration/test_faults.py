"""Faults survived on the real services: vLLM down or slow, Redis down, tool backends failing,
and abandoned streams cancelled."""

import asyncio
import re
import time
from urllib.parse import urlparse

import httpx
import pytest
from langgraph.checkpoint.memory import InMemorySaver

from app.runtime import build_deps
from app.turn import run_turn
from graph.context import Context
from graph.graph import build_desk
from tests.integration.proxy import FaultProxy

LLM_Q = "Write a short cheerful note to my team about Mondays."  # only the LLM answers it, when it drafts
LLM_DRAFTS = Context(llm_drafts=True)


async def _graph_through(settings, **update):
    deps = await build_deps(settings.model_copy(update=update))
    return build_desk(deps, checkpointer=InMemorySaver()), deps


@pytest.fixture
async def llm_proxy(settings, running):
    url = urlparse(settings.llm_url)
    proxy = await FaultProxy(url.hostname, url.port, delay_s=6).start()
    yield proxy
    await proxy.stop()


@pytest.fixture
async def redis_proxy(settings, running):
    url = urlparse(settings.redis)
    proxy = await FaultProxy(url.hostname, url.port).start()
    yield proxy
    await proxy.stop()


@pytest.fixture
def faults(settings, running):
    """Inject backend faults through the demo backend's admin endpoint; always cleared afterwards."""
    injected = set()

    def inject(tool, fault):
        injected.add(tool)
        httpx.post(settings.backend + "/admin/fault", json={tool: fault}, timeout=5).raise_for_status()

    yield inject
    httpx.post(settings.backend + "/admin/fault", json=dict.fromkeys(injected), timeout=5)


async def test_vllm_down_then_back(settings, llm_proxy):
    # A dropped connection fails at once; the timeout only bounds the "back" turn, which on a box still
    # busy from earlier tests (a vLLM server killed and restarted) can take more than a few seconds.
    timeout_s = 30
    graph, _ = await _graph_through(settings, vllm_base_url=f"http://127.0.0.1:{llm_proxy.port}/v1",
                                    llm_timeout_s=timeout_s)
    await llm_proxy.set_mode("down")
    faq = await run_turn(graph, "When do we get paid?", "E1002", None, Context())
    tpl = await run_turn(graph, "How many leave days do I have left?", "E1002", None, Context())
    assert faq["route"] == "faq" and tpl["route"] == "template" and tpl["answer"].startswith("You have")
    down = await run_turn(graph, LLM_Q, "E1002", None, LLM_DRAFTS)
    assert "language model is not reachable" in down["answer"] and down["error"]  # refused, not timed out
    assert down["total_ms"] < timeout_s * 1000 / 3  # the dropped connection ended it, long before the timeout
    await llm_proxy.set_mode("up")  # vLLM is back: the same process recovers on its own
    back = await run_turn(graph, LLM_Q, "E1002", None, LLM_DRAFTS)
    assert back["error"] is None and back["llm_calls"] >= 1 and back["answer"]


async def test_vllm_slow_answers_within_the_timeout(settings, llm_proxy):
    timeout_s = 2
    graph, _ = await _graph_through(settings, vllm_base_url=f"http://127.0.0.1:{llm_proxy.port}/v1",
                                    llm_timeout_s=timeout_s)
    await llm_proxy.set_mode("slow")
    row = await run_turn(graph, LLM_Q, "E1002", None, LLM_DRAFTS)
    assert row["total_ms"] < 4 * timeout_s * 1000, row["total_ms"]  # bounded by the timeout, not the slow server
    assert "did not answer in time" in row["answer"] or "not reachable" in row["answer"]


async def test_redis_down_bypasses_the_cache_and_reconnects(settings, redis_proxy):
    graph, _ = await _graph_through(settings, redis_url=f"redis://127.0.0.1:{redis_proxy.port}/0")
    q = "What should I wear in Dublin tomorrow?"
    first = await run_turn(graph, q, "E1007", None, Context())
    await redis_proxy.set_mode("down")
    down = await run_turn(graph, q, "E1007", None, Context())
    assert down["error"] is None and down["answer"] == first["answer"]  # still correct
    assert {t["cache"] for t in down["tools"]} == {"bypass"}
    faq = await run_turn(graph, "When do we get paid?", "E1007", None, Context())
    assert faq["error"] is None and faq["route"] == "faq"  # the router and the FAQ live in the process
    await redis_proxy.set_mode("up")
    again = await run_turn(graph, q, "E1007", None, Context())
    assert {t["cache"] for t in again["tools"]} <= {"hit", "miss"}
    assert (await run_turn(graph, q, "E1007", None, Context()))["tools"][0]["cache"] == "hit"


async def test_tool_errors_timeouts_and_malformed_data_are_explained(ask, faults):
    faults("clothing_advice", "error")
    row = await ask("What should I wear in Milan tomorrow?", user="E1009", cache_enabled=False)
    assert "Milan" in row["answer"] and "could not fetch" in row["answer"]  # the rest is still given
    assert "clothing advice" in row["answer"]
    faults("salary", "timeout")
    timeout_s, retries = 1.0, 1
    row = await ask("What was my salary in June?", user="E1009", tool_timeout_s=timeout_s, tool_retries=retries,
                    cache_enabled=False)
    assert row["total_ms"] < 3 * (1 + retries) * timeout_s * 1000  # its attempts' timeouts, not the hung backend
    assert "did not answer within" in row["answer"] and row["tools"][0]["ok"] is False
    faults("attendance", "malformed")
    row = await ask("What was my attendance in June?", user="E1009", cache_enabled=False)
    assert "malformed" in row["answer"] and row["error"] is None


async def test_abandoned_stream_is_cancelled_in_vllm(settings, running, helpdesk):
    async def vllm(name, reasons=None):
        async with httpx.AsyncClient(timeout=10) as client:
            text = (await client.get(settings.llm_url.removesuffix("/v1") + "/metrics")).text
        rows = re.findall(rf"^vllm:{name}{{([^}}]*)}} ([0-9.e+]+)$", text, re.M)
        return sum(float(v) for labels, v in rows
                   if reasons is None or re.search(r'finished_reason="(\w+)"', labels).group(1) in reasons)

    # Start from an idle server: a request an earlier test left behind (vLLM restarted by the cluster tests,
    # the slow proxy's upstream) must not end inside the window counted below.
    deadline = time.monotonic() + 120
    while await vllm("num_requests_running") + await vllm("num_requests_waiting") > 0:
        assert time.monotonic() < deadline, "vLLM never went idle before the test"
        await asyncio.sleep(0.2)
    first_piece = asyncio.Event()
    task = asyncio.create_task(run_turn(helpdesk, "Write a long story about a cheerful Monday at the store.",
                                        "E1003", None, Context(answer_max_tokens=400, templates_enabled=False),
                                        lambda _t: first_piece.set()))
    await asyncio.wait_for(first_piece.wait(), 60)
    # A piece of the answer has arrived, so vLLM is generating it (400 tokens would take ~20 s here). Counted
    # now: a plan the router's doubt asked for has already ended, and ends with a stop token.
    finished = await vllm("request_success_total", {"stop", "length"})  # requests that ran to their end
    task.cancel()  # the user closed the chat
    with pytest.raises(asyncio.CancelledError):
        await task
    # Poll vLLM's own counters (no fixed sleep): the request must leave within seconds, then stay gone.
    deadline = time.monotonic() + 15
    while await vllm("num_requests_running") > 0:
        assert time.monotonic() < deadline, "vLLM kept a request nobody waits for"
        await asyncio.sleep(0.2)
    # It left because it was aborted: vLLM counts a request that ends by a stop token or its length limit,
    # never one aborted by its client.
    ended = await vllm("request_success_total", {"stop", "length"})
    assert ended == finished, f"the answer was not cut off ({finished} requests had ended, then {ended})"
    tokens = await vllm("generation_tokens_total")
    for _ in range(10):  # two more seconds of polls: the count must not move
        await asyncio.sleep(0.2)
        assert await vllm("generation_tokens_total") == tokens, "vLLM kept generating for a closed stream"
