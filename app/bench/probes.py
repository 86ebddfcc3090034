"""Focused measurements the targets name: vLLM prefix-cache hit rate and warm vs cold time to first
token, the two-tool fan-out against the slower tool, and the router's decision time.
"""

from __future__ import annotations

import re
import time
import uuid
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx

from graph.context import Context
from graph.deps import Deps
from graph.executor import run_plan
from graph.prompts import answer_system, planner_system
from graph.state import ToolCall


def vllm_counters(base_url: str) -> dict[str, float]:
    """Prefix-cache and speculative-decoding counters from vLLM's /metrics."""
    text = httpx.get(base_url.removesuffix("/v1") + "/metrics", timeout=5).text
    out: dict[str, float] = {}
    for name in ("vllm:prefix_cache_queries_total", "vllm:prefix_cache_hits_total",
                 "vllm:spec_decode_num_accepted_tokens_total", "vllm:spec_decode_num_draft_tokens_total"):
        vals = re.findall(rf"^{re.escape(name)}(?:{{[^}}]*}})? ([0-9.e+]+)$", text, re.M)
        out[name] = sum(float(v) for v in vals)
    return out


def prefix_hit_rate(before: dict[str, float], after: dict[str, float]) -> float:
    """Share of prompt tokens served from vLLM's prefix cache between two readings."""
    q = after["vllm:prefix_cache_queries_total"] - before["vllm:prefix_cache_queries_total"]
    h = after["vllm:prefix_cache_hits_total"] - before["vllm:prefix_cache_hits_total"]
    return h / q if q else float("nan")


def _ttft(client: httpx.Client, model: str, system: str, question: str) -> float:
    t0 = time.perf_counter()
    body = {"model": model, "stream": True, "max_tokens": 4, "temperature": 0,
            "messages": [{"role": "system", "content": system}, {"role": "user", "content": question}]}
    with client.stream("POST", "/chat/completions", json=body) as resp:
        for line in resp.iter_lines():
            if line.startswith("data: ") and '"content"' in line:
                return (time.perf_counter() - t0) * 1000
    return (time.perf_counter() - t0) * 1000


def prefix_ttft(base_url: str, model: str, repeats: int = 3) -> dict[str, float]:
    """Time to first token with a never-seen static prefix (cold) and the same prefix again (warm)."""
    cold, warm = [], []
    with httpx.Client(base_url=base_url, timeout=120) as client:
        for _ in range(repeats):
            system = f"[{uuid.uuid4().hex}]\n{planner_system()}\n{answer_system()}" * 3
            cold.append(_ttft(client, model, system, "When is payday?"))
            warm.append(_ttft(client, model, system, "How many leave days do I have?"))
    c, w = sorted(cold)[len(cold) // 2], sorted(warm)[len(warm) // 2]
    return {"cold_ttft_ms": c, "warm_ttft_ms": w, "warm_over_cold": w / c}


async def fan_out(deps: Deps, repeats: int = 3) -> dict[str, float]:
    """Two independent tools (weather 1.2 s, knowledge base 0.8 s by default), no cache: stage / slower tool."""
    ctx = Context(cache_enabled=False)
    ratios = []
    for i in range(repeats):
        plan = [ToolCall(id="w", name="weather", args={"city": "Paris", "date": f"2026-12-0{i + 1}"}, depends_on=[]),
                ToolCall(id="k", name="kb_search", args={"query": f"hotel limit {i}"}, depends_on=[])]
        t0 = time.perf_counter()
        results = await run_plan(replace(deps), plan, "E1001", ctx)
        stage = (time.perf_counter() - t0) * 1000
        ratios.append(stage / max(r["ms"] for r in results))
    return {"stage_over_slower_tool": sorted(ratios)[len(ratios) // 2]}


class _Sink(BaseHTTPRequestHandler):
    """Accepts anything (stands in for a LangSmith endpoint during the overhead probe)."""

    def _ok(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.end_headers()
        self.wfile.write(b"{}")

    do_POST = do_PATCH = do_GET = do_PUT = _ok

    def log_message(self, *args: object) -> None:  # noqa: D102
        pass


async def router_decisions(deps: Deps, questions: list[str]) -> dict[str, float]:
    """In-process time of the router's decision (its embedding included) on questions it has not seen."""
    times = []
    for q in questions:
        t0 = time.perf_counter()
        await deps.router.decide(q, "E1001", None)
        times.append((time.perf_counter() - t0) * 1000)
    times.sort()
    return {"router_decision_p50_ms": times[len(times) // 2], "router_decision_p95_ms": times[int(0.95 * len(times))],
            "router_decisions": len(times)}


async def tracing_overhead(graph: object, questions: list[tuple[str, str]], reps: int = 5) -> dict[str, float]:
    """Per-request cost of tracing on short requests (FAQ and cache-hit answers, the worst case):
    none vs OpenTelemetry spans vs OpenTelemetry + LangSmith (to a local sink), interleaved after a
    warm-up round.
    """
    import threading

    from langsmith import Client, tracing_context
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from opentelemetry.trace import NoOpTracer

    from app.turn import run_turn
    from graph import tracing

    server = ThreadingHTTPServer(("127.0.0.1", 0), _Sink)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    client = Client(api_url=f"http://127.0.0.1:{server.server_address[1]}", api_key="probe")
    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(InMemorySpanExporter()))
    modes = ("none", "otel", "otel+langsmith")
    times: dict[str, list[float]] = {m: [] for m in modes}
    try:
        for rep in range(reps + 1):
            for i, (q, user) in enumerate(questions):
                for k in range(3):
                    mode = modes[(rep + i + k) % 3]
                    tracing._tracer = provider.get_tracer("helpdesk.graph") if mode != "none" else NoOpTracer()
                    with tracing_context(enabled=mode == "otel+langsmith", client=client):
                        row = await run_turn(graph, q, user, None, Context())
                    if rep:  # the first round warms clients and caches
                        times[mode].append(row["total_ms"])
    finally:
        tracing._tracer = NoOpTracer()
        client.flush()
        server.shutdown()
    mean = {m: sum(v) / len(v) for m, v in times.items()}
    return {"untraced_mean_ms": mean["none"], "otel_mean_ms": mean["otel"], "traced_mean_ms": mean["otel+langsmith"],
            "otel_overhead_ms": mean["otel"] - mean["none"], "overhead_ms": mean["otel+langsmith"] - mean["none"],
            "overhead_pct": 100 * (mean["otel+langsmith"] - mean["none"]) / mean["none"]}


async def _main() -> None:
    """`python -m app.bench.probes`: the tracing-overhead probe alone."""
    from app.turn import open_graph

    async with open_graph() as graph:
        questions = [("When do we get paid?", "E1001"), ("How many leave days do I have left?", "E1002"),
                     ("What is the hotel limit in Paris?", "E1003")]
        await tracing_overhead(graph, questions, reps=1)  # warm caches and code paths
        print(await tracing_overhead(graph, questions, reps=10))


if __name__ == "__main__":
    import asyncio

    asyncio.run(_main())


async def router_under_llm_load(deps: Deps, questions: list[str], llm_url: str, model: str,
                                streams: int = 2) -> dict[str, float]:
    """The router's decision time idle, then while `streams` LLM requests decode back to back: what an FAQ
    or template question pays for someone else's LLM answer on the same cores.
    """
    import asyncio

    import httpx

    async def decode(stop: asyncio.Event) -> None:
        async with httpx.AsyncClient(timeout=120) as client:
            while not stop.is_set():
                await client.post(f"{llm_url}/chat/completions", json={
                    "model": model, "max_tokens": 200,
                    "messages": [{"role": "user", "content": "Write a long story about a shop."}]})

    half = len(questions) // 2
    idle = await router_decisions(deps, questions[:half])
    stop = asyncio.Event()
    tasks = [asyncio.create_task(decode(stop)) for _ in range(streams)]
    await asyncio.sleep(2)  # both streams decoding
    busy = await router_decisions(deps, questions[half:])
    stop.set()
    await asyncio.gather(*tasks)
    p50, p95 = "router_decision_p50_ms", "router_decision_p95_ms"
    return {"idle_p50_ms": idle[p50], "idle_p95_ms": idle[p95], "busy_p50_ms": busy[p50], "busy_p95_ms": busy[p95],
            "busy_over_idle_p95": busy[p95] / idle[p95]}
