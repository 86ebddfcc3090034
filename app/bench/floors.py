"""Floor probes: the least time the parts of an answer allow, measured right after the answer itself.

A route's floor ratio (its latency over its floor) says whether any time is left to win:

- FAQ answer: one embedding of the question with the router's encoder (never memoized) plus its scoring;
- template answer whose tools all hit the cache: that embedding plus one Redis read per cached result;
- template answer that called the backend: the same calls, with the same arguments, made directly
  (independent calls at once, a call that reads another's result after it);
- LLM answer: vLLM's time to first token plus decoding as many tokens as the answer has.

A probe meets the machine as its request did. In the full benchmark and `--quick` every optimized request comes
right after another variant's LLM answer, and so does its probe: it runs after the next variant's request, not
right after its own. A probe run right after its request found the encoder warm from it, while the request had
met it cold; the first embedding after an LLM answer (or a second's idle) is slower, about 0.7 ms on an FAQ
question here (docs/benchmark.md). That probe is kept as `floor_warm_ms` and summarized beside
(`warm_first_text_*`): the least the parts take on a warm machine. `--accuracy-only` runs the optimized graph
alone, each probe right after its request.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import httpx

from app.bench.metrics import percentile
from graph.deps import Deps
from tools.embedding_memo import EmbeddingMemo
from tools.embeddings import Embedder
from tools.registry import INTENTS, TOOLS

# Tools whose arguments read another call's result ("@weather.temperature_c"): they wait for it.
DEPENDENT = frozenset(tool for spec in INTENTS.values() for _, tool, args in spec.calls
                      if any(str(v).startswith("@") for v in args.values()))


def kind_of(row: dict[str, Any]) -> str | None:
    """The floor a row is measured against: faq, cache_hit, template, llm (None: no floor, e.g. refusals)."""
    tools = [t for t in row.get("tools") or [] if t.get("ok")]
    if row.get("route") == "faq":
        return "faq"
    if row.get("route") == "template" and tools and not row.get("llm_calls"):
        return "cache_hit" if all(t["cache"] == "hit" for t in tools) else "template"
    if row.get("route") == "llm" and row.get("llm_calls"):
        return "llm"
    return None


def router_encoder(deps: Deps) -> Embedder:
    """The encoder the router decides with: its own (the fine-tuned one, int8 or not), or the app's shared one."""
    own = deps.router.embed
    return own.embedder if isinstance(own, EmbeddingMemo) else deps.embedder


async def embedding_ms(deps: Deps, question: str) -> float:
    """The FAQ floor: the question's embedding on the router's encoder, as a turn runs it, and its scoring."""
    encoder = router_encoder(deps)
    t0 = time.perf_counter()
    vec = (await encoder.submit([question]))[0]  # the encoder as the turn runs it, without the memo
    deps.router.model.score(vec)
    return (time.perf_counter() - t0) * 1000


async def _timed_call(deps: Deps, name: str, args: dict[str, Any]) -> float:
    t0 = time.perf_counter()
    await deps.tools.call(name, args)
    return (time.perf_counter() - t0) * 1000


async def _backend_ms(deps: Deps, tools: list[dict[str, Any]]) -> float:
    """The row's backend calls made directly: independent ones at once, dependent ones after them."""
    total = 0.0
    for stage in ([t for t in tools if t["name"] not in DEPENDENT], [t for t in tools if t["name"] in DEPENDENT]):
        if stage:
            total += max(await asyncio.gather(*(_timed_call(deps, t["name"], t["args"]) for t in stage)))
    return total


async def cache_read_ms(deps: Deps, question: str, tools: list[dict[str, Any]], user: str) -> float:
    """Embedding plus reading each cached result (one Redis round trip each, at once)."""
    encoder = router_encoder(deps)
    t0 = time.perf_counter()
    await encoder.submit([question])
    keys = [deps.cache.key_of(TOOLS[t["name"]], t["args"], user) for t in tools if t["name"] in TOOLS]
    await asyncio.gather(*(deps.redis.get(k) for k in keys))
    return (time.perf_counter() - t0) * 1000


async def _llm_ms(llm_url: str, model: str, question: str, answer: str) -> float:
    """Time to first token plus decoding the answer's length on vLLM (ignore_eos keeps the length)."""
    async with httpx.AsyncClient(base_url=llm_url.removesuffix("/v1"), timeout=120) as client:
        tokens = (await client.post("/tokenize", json={"model": model, "prompt": answer})).json().get("count", 1)
        body = {"model": model, "max_tokens": max(1, int(tokens)), "min_tokens": max(1, int(tokens)),
                "ignore_eos": True, "temperature": 0, "messages": [{"role": "user", "content": question}]}
        t0 = time.perf_counter()
        (await client.post("/v1/chat/completions", json=body)).raise_for_status()
        return (time.perf_counter() - t0) * 1000


async def floor_ms(deps: Deps, row: dict[str, Any], user: str, llm_url: str, model: str) -> tuple[str, float] | None:
    """(floor kind, floor in ms) for one answered row, or None when its route has no floor."""
    kind = kind_of(row)
    if kind is None:
        return None
    tools = [t for t in row.get("tools") or [] if t.get("ok")]
    try:
        if kind == "faq":
            return kind, await embedding_ms(deps, row["q"])
        if kind == "cache_hit":
            return kind, await cache_read_ms(deps, row["q"], tools, user)
        if kind == "template":
            return kind, await _backend_ms(deps, [t for t in tools if t["cache"] != "hit"])
        return kind, await _llm_ms(llm_url, model, row["q"], row.get("answer") or "")
    except Exception:  # noqa: BLE001 - a failed probe leaves the row without a floor, never stops the run
        return None


def floor_summary(rows: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Per floor kind: how many rows, and median and p95 of latency over floor, to the end of the turn
    (`median`, `p95`: `total_ms`, the row) and to the first text the caller receives (`first_text_median`,
    `first_text_p95`: `ttft_ms`, the answer's first piece).
    """
    out: dict[str, dict[str, float]] = {}
    for kind in ("faq", "cache_hit", "template", "llm"):
        kept = [r for r in rows if r.get("floor_kind") == kind and r.get("floor_ms")]
        ratios = [r["total_ms"] / r["floor_ms"] for r in kept]
        if ratios:
            out[kind] = {"n": len(ratios), "median": percentile(ratios, 50), "p95": percentile(ratios, 95)}
            first = [r["ttft_ms"] / r["floor_ms"] for r in kept if r.get("ttft_ms") is not None]
            if first:
                out[kind] |= {"first_text_median": percentile(first, 50), "first_text_p95": percentile(first, 95)}
            warm = [r["ttft_ms"] / r["floor_warm_ms"] for r in kept if r.get("ttft_ms") is not None
                    and r.get("floor_warm_ms")]
            if warm:
                out[kind] |= {"warm_first_text_median": percentile(warm, 50),
                              "warm_first_text_p95": percentile(warm, 95)}
    return out


def nodes_ms(row: dict[str, Any]) -> float:
    """The time a turn spent inside its nodes (their own `timings_ms`): the answering work."""
    return sum(v for v in (row.get("timings_ms") or {}).values() if isinstance(v, int | float))


def overhead_budget(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The turn's own cost on the shortcut paths (faq, cache_hit, template), at p50 and p95 beside the floor.

    `framework_ms` is the time to the final result (`total_ms`) less the time inside the nodes: LangGraph's
    steps, the checkpoint read and write, the stream and the thread-owner check. `first_text_ms` is when the
    answer's first text reached the caller; `gc_ms` the garbage collector's pauses during the turn; `queued_ms`
    how long the loop's thread and the encoders waited for a core (`metrics.CoreWaits`); the `*_over_floor`
    ratios are per row. `slowest` names the three turns furthest over their floor, with their waits.
    """
    out: dict[str, dict[str, Any]] = {}
    for kind in ("faq", "cache_hit", "template"):
        kept = [r for r in rows if r.get("floor_kind") == kind and r.get("floor_ms") and r.get("ttft_ms") is not None]
        if not kept:
            continue
        series = {"floor_ms": [r["floor_ms"] for r in kept], "first_text_ms": [r["ttft_ms"] for r in kept],
                  "total_ms": [r["total_ms"] for r in kept], "nodes_ms": [nodes_ms(r) for r in kept],
                  "framework_ms": [r["total_ms"] - nodes_ms(r) for r in kept],
                  "after_first_text_ms": [r["total_ms"] - r["ttft_ms"] for r in kept],
                  "gc_ms": [r.get("gc_ms") or 0.0 for r in kept],
                  "queued_ms": [r.get("queued_ms") or 0.0 for r in kept],
                  "first_text_over_floor": [r["ttft_ms"] / r["floor_ms"] for r in kept],
                  "total_over_floor": [r["total_ms"] / r["floor_ms"] for r in kept]}
        slowest = sorted(kept, key=lambda r: r["ttft_ms"] / r["floor_ms"], reverse=True)[:3]
        out[kind] = {"n": len(kept), **{f"{name}_p{p}": percentile(xs, p) for name, xs in series.items()
                                        for p in (50, 95)},
                     "slowest": [{"id": r.get("id"), "first_text_ms": r["ttft_ms"], "floor_ms": r["floor_ms"],
                                  "queued_ms": r.get("queued_ms"),
                                  "gc_ms": r.get("gc_ms")} for r in slowest]}
    return out


def compound_ttft(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Requests the router split into several parts: time to first token over their fastest tool's time.

    The ratio counts the requests whose fastest part reached the backend, which is what progressive answers
    are about (the leave balance shows while the forecast is still on its way). A part served from the cache
    in a millisecond or two is no floor a graph turn can meet, so those requests give their first token only
    (`ttft_ms` is over all of them).
    """
    ratios, ttfts = [], []
    for r in rows:
        tools = [t for t in r.get("tools") or [] if t.get("ok") and t.get("ms")]
        if r.get("router_label") == "compound" and r.get("ttft_ms") and tools:
            ttfts.append(r["ttft_ms"])
            fastest = min(tools, key=lambda t: t["ms"])
            if fastest.get("cache") == "miss":
                ratios.append(r["ttft_ms"] / fastest["ms"])
    return {"n": len(ttfts), "n_backend": len(ratios), "ttft_ms": percentile(ttfts, 50),
            "ttft_over_fastest_tool": percentile(ratios, 50) if ratios else None}
