"""Focused measurements the targets name: vLLM prefix-cache hit rate and warm vs cold time to first
token, and the two-tool fan-out against the slower tool.
"""

from __future__ import annotations

import re
import time
import uuid
from dataclasses import replace

import httpx

from graph.context import Context
from graph.deps import Deps
from graph.executor import run_plan
from graph.prompts import ANSWER_SYSTEM, PLANNER_SYSTEM
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
            system = f"[{uuid.uuid4().hex}]\n{PLANNER_SYSTEM}\n{ANSWER_SYSTEM}" * 3
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
