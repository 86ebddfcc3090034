"""`python -m app bench`: the optimized graph against the plain agent and `create_agent`, interleaved
on the same workload, then an ablation of each technique, a load test and focused probes.

Writes results.json (per-request rows and the summary), summary.json (the summary alone, small enough to keep
beside the plots in docs/bench/) and PNG plots to --out, and prints a table.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import time
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from tqdm import tqdm

from app.bench import coldstart, floors, framework, metrics, plots, probes
from app.bench.asks import TODAY
from app.bench.items import Item
from app.bench.metrics import GC_PAUSES
from app.bench.runner import Runner, conversation_store, finish, run_item
from app.bench.sessions import next_turn_summary
from app.bench.workload import load, multilingual
from app.bench.workload import quick as quick_slice
from app.runtime import build_deps
from app.settings import get_settings
from app.stack import services
from app.training.router_train import load_split
from graph.context import Context

log = logging.getLogger(__name__)
SHORTCUTS = ["faq_enabled", "templates_enabled", "parallel_enabled", "cache_enabled", "prefetch_enabled",
             "next_turn_enabled", "pruning_enabled", "progressive_enabled"]
ABLATIONS: dict[str, dict[str, bool]] = {f"no_{k.removesuffix('_enabled')}": {k: False} for k in SHORTCUTS}
ABLATIONS["all_off"] = dict.fromkeys(SHORTCUTS, False)


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Latency, time to first token, accuracy and LLM calls of one variant's rows."""
    lat = metrics.latency_summary([r["total_ms"] for r in rows])
    ttft = [r["ttft_ms"] for r in rows if r.get("ttft_ms") is not None]
    return {**lat, "ttft_ms": metrics.percentile(ttft, 50), "accuracy": sum(r["correct"] for r in rows) / len(rows),
            "llm_calls_per_request": sum(r["llm_calls"] or 0 for r in rows) / len(rows),
            "errors": sum(1 for r in rows if r.get("error")),
            "settle_ms_max": max((r.get("settle_ms") or 0.0 for r in rows), default=0.0)}


def language_summary(lang_rows: list[dict[str, Any]], english: list[dict[str, Any]]) -> dict[str, Any]:
    """The multilingual slice beside English: per language its accuracy, routes and first text, and its FAQ answers'
    median first text over the English FAQ answers' of the same run (the held-out slice stands for English accuracy).
    """
    def faq_ttft(rows: list[dict[str, Any]]) -> float | None:
        got = [r["ttft_ms"] for r in rows if r["route"] == "faq" and r.get("ttft_ms") is not None]
        return metrics.percentile(got, 50) if got else None

    held = [r for r in english if r["kind"] == "heldout"]
    out: dict[str, Any] = {"en": {**summarize(held or english), "faq_ttft_ms": faq_ttft(english)}}
    for lang in sorted({r["kind"].split(":")[1] for r in lang_rows}):
        mine = [r for r in lang_rows if r["kind"] == f"lang:{lang}"]
        ttft = faq_ttft(mine)
        out[lang] = {**summarize(mine), "routes": {k: sum(r["route"] == k for r in mine) for k in ("faq", "template",
                                                                                                   "llm", "refused")},
                     "faq_ttft_ms": ttft, "faq_ttft_over_english": metrics.ratio(ttft, out["en"]["faq_ttft_ms"])
                     if ttft and out["en"]["faq_ttft_ms"] else None,
                     "accuracy_gap_points": round(100 * (out["en"]["accuracy"] - summarize(mine)["accuracy"]), 1),
                     "wrong": [{"q": r["q"], "route": r["route"], "answer": r["answer"][:160]} for r in mine
                               if not r["correct"]][:5]}
    return out


def optimized_summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """What the optimized graph's rows say about its floors, compound requests, next-turn prefetch and FAQ tail."""
    return {"floor_ratio": floors.floor_summary(rows), "overhead_budget": floors.overhead_budget(rows),
            "compound": floors.compound_ttft(rows),
            "next_turn": next_turn_summary(rows),
            "faq_route_p95_ms": metrics.percentile([r["total_ms"] for r in rows if r["route"] == "faq"], 95)}


async def load_test(runner: Runner, variant: str, items: list[Item], sessions: int, per_session: int) -> dict[str, Any]:
    """N concurrent sessions, each asking its questions in turn; throughput and p95 under load."""
    work = [items[(s * per_session + i) % len(items)] for s in range(sessions) for i in range(per_session)]
    groups = [[replace(it, session=f"load{s}-{it.session}") for it in work[s * per_session:(s + 1) * per_session]]
              for s in range(sessions)]
    t0 = time.perf_counter()

    async def session(group: list[Item]) -> list[dict[str, Any]]:
        return [await runner.run(variant, it, settle=False) for it in group]

    done = [r for g in await asyncio.gather(*(session(g) for g in groups)) for r in g]
    wall = time.perf_counter() - t0
    lat = [r["total_ms"] for r in done]
    faq = [r["total_ms"] for r in done if r["route"] == "faq"]
    return {"sessions": sessions, "requests": len(done), "throughput_rps": len(done) / wall,
            "p95_ms": metrics.percentile(lat, 95), "mean_ms": sum(lat) / len(lat),
            "faq_ms": faq, "faq_route_p95_ms": metrics.percentile(faq, 95),
            "errors": sum(1 for r in done if r.get("error")), "accuracy": sum(r["correct"] for r in done) / len(done)}


async def main(quick: bool = False, out: str = "bench-results", load_sessions: int = 8, repeats: int = 1) -> int:
    """Run everything and write the results."""
    async with conversation_store() as saver:
        return await _main(saver, quick, out, load_sessions, repeats)


async def _main(saver: Any, quick: bool, out: str, load_sessions: int, repeats: int) -> int:  # noqa: C901
    GC_PAUSES.install()
    settings = get_settings()
    services.up(settings)
    out_dir = Path(out)
    out_dir.mkdir(parents=True, exist_ok=True)
    cold = coldstart.run_child()  # a fresh process: its first question after warm-up vs the same again
    all_items = load()
    items = quick_slice(all_items) if quick else all_items
    main_items = [i for i in items if i.kind != "heldout"]  # the ablation runs on the main workload
    abl_items = main_items[::2] if not quick else [i for i in main_items if i.session != "long01"][:6]
    deps = await build_deps(settings)
    # The router on questions this process has never embedded (the test split's, none in the workload).
    router_probe = await probes.router_decisions(deps, [it["q"] for it in load_split("test")][: 60 if quick else 349])
    runner = Runner(deps, run_id=str(int(time.time())), saver=saver)
    variants = ["baseline", "create_agent", "optimized"]
    names = ["optimized", *ABLATIONS]
    await runner.learn_sessions(["optimized", *(f"abl{rnd}_{name}" for rnd in range(repeats) for name in names)])
    rows: list[dict[str, Any]] = []
    before = probes.vllm_counters(settings.llm_url)
    bar = tqdm(total=len(items) * len(variants) + repeats * len(abl_items) * (len(ABLATIONS) + 1), desc="bench",
               unit="req")
    earlier = None
    for i, item in enumerate(items):  # interleaved: machine drift hits every variant alike
        done, earlier = await run_item(runner, i, item, earlier)
        rows += done
        bar.update(3)
    if earlier is not None:
        await finish(runner, len(items) - 1, earlier)
    after = probes.vllm_counters(settings.llm_url)
    summary: dict[str, Any] = {v: summarize([r for r in rows if r["variant"] == v]) for v in variants}
    opt_rows = [r for r in rows if r["variant"] == "optimized"]
    summary["baseline"]["prefix_cache_hit_rate"] = probes.prefix_hit_rate(before, after)
    summary["speedup_mean"] = metrics.ratio(summary["baseline"]["mean_ms"], summary["optimized"]["mean_ms"])
    summary["speedup_p95"] = metrics.ratio(summary["baseline"]["p95_ms"], summary["optimized"]["p95_ms"])
    summary["routes"] = {k: sum(1 for r in opt_rows if r["route"] == k) for k in ("faq", "template", "llm", "refused")}
    summary["faq"] = metrics.faq_precision_recall(opt_rows)
    tool_rows = [t for r in opt_rows for t in r["tools"] or []]
    summary["cache"] = {"hit_rate": sum(t["cache"] == "hit" for t in tool_rows) / len(tool_rows) if tool_rows else 0,
                        "hit_ms_p95": metrics.percentile([t["ms"] for t in tool_rows if t["cache"] == "hit"], 95),
                        "false_hits": sum(1 for r in opt_rows if any(t["cache"] == "hit" for t in r["tools"] or [])
                                          and not r["clean"])}
    started = sum(len((r.get("prefetch") or {}).get("started", [])) for r in opt_rows)
    wasted = sum((r.get("prefetch") or {}).get("wasted", 0) for r in opt_rows)
    summary["prefetch"] = {"started": started, "used": sum(t["cache"] == "prefetch" for t in tool_rows),
                           "wasted": wasted, "accuracy": (started - wasted) / started if started else None}
    summary.update({k: cold[k] for k in ("cold_first_request_ms", "warm_first_request_ms", "cold_over_warm",
                                         "warm_memo_hit_ms", "cold_over_memo_hit", "warm_unseen_request_ms",
                                         "cold_over_warm_unseen") if k in cold})
    summary.update(optimized_summary(opt_rows))
    held = [r for r in opt_rows if r["kind"] == "heldout"]
    if held:
        main_rows = [r for r in opt_rows if r["kind"] != "heldout"]
        summary["heldout_slice"] = {"optimized": summarize(held), "main_workload": summarize(main_rows),
                                    "baseline": summarize([r for r in rows if r["variant"] == "baseline"
                                                           and r["kind"] == "heldout"])}
        summary["heldout_slice"]["accuracy_gap_points"] = round(
            100 * (summary["heldout_slice"]["main_workload"]["accuracy"] - summary["heldout_slice"]["optimized"]
                   ["accuracy"]), 1)
    summary["by_kind"] = {k: {v: summarize([r for r in rows if r["variant"] == v and r["kind"] == k])
                              for v in variants} for k in sorted({r["kind"] for r in rows})}
    # The multilingual slice: the optimized desk on its other languages, beside its own English figures.
    lang_rows = [await runner.run("optimized", item) for item in multilingual()]
    if lang_rows:
        summary["multilingual_slice"] = language_summary(lang_rows, opt_rows)
        rows += lang_rows

    # Ablation: each technique off in turn, interleaved per item, each with its own (cold) cache.
    # Each round runs every variant again with new (cold) caches; the slowdown's interval says whether the
    # difference stands out from the noise of this run.
    abl_rows: list[dict[str, Any]] = []
    for rnd in range(repeats):
        for i, item in enumerate(abl_items):
            for name in names[(i + rnd) % len(names):] + names[:(i + rnd) % len(names)]:
                row = await runner.run(f"abl{rnd}_{name}", item, ABLATIONS.get(name))
                abl_rows.append({**row, "variant": name, "round": rnd})
                bar.update()
    bar.close()
    ref = summarize([r for r in abl_rows if r["variant"] == "optimized"])
    summary["ablation_reference"] = {**ref, "rounds": repeats}
    summary["ablation"] = {}
    by_item = {name: {f"{r['round']}:{r['id']}": r["total_ms"] for r in abl_rows if r["variant"] == name}
               for name in names}
    for name in ABLATIONS:
        s = summarize([r for r in abl_rows if r["variant"] == name])
        lo, hi = metrics.paired_ratio_ci(by_item["optimized"], by_item[name])
        summary["ablation"][name] = {**s, "slowdown": metrics.ratio(s["mean_ms"], ref["mean_ms"]),
                                     "slowdown_ci95": [lo, hi]}
    if settings.local_vllm and not quick:
        summary["ablation"]["no_speculative"] = await speculative_ablation(settings, runner, abl_items, ref,
                                                                           by_item["optimized"])

    # Probes and load.
    summary["probes"] = {**probes.prefix_ttft(settings.llm_url, settings.vllm_model),
                         **await probes.fan_out(deps), **router_probe}
    cached = [(r["q"], r["user"], r["tools"]) for r in opt_rows if floors.kind_of(r) == "cache_hit"]
    summary["framework"] = await framework.framework_floor(
        runner.graph("optimized"), Context(today=TODAY.isoformat()),
        list(dict.fromkeys(r["q"] for r in opt_rows if r["route"] == "faq"))[:8], cached[:8], rounds=5 if quick else 10)
    traced = [("When do we get paid?", "E1001"), ("How many leave days do I have left?", "E1002"),
              ("What is the hotel limit in Paris?", "E1003")]
    tr = await probes.tracing_overhead(runner.graph("optimized"), traced, reps=3 if quick else 8)
    tr["overhead_pct_of_mean_request"] = 100 * tr["overhead_ms"] / summary["optimized"]["mean_ms"]
    summary["probes"]["tracing"] = tr
    per_session = 2 if quick else 3
    load_items = [i for i in all_items if i.session.startswith("s")]
    summary["load"] = {v: await load_test(runner, v, load_items, load_sessions if not quick else 4, per_session)
                       for v in ("baseline", "optimized")}
    # The FAQ tail over the main pass (FAQ answers right after LLM answers included) and the load test together.
    faq_all = [r["total_ms"] for r in opt_rows if r["route"] == "faq"] + summary["load"]["optimized"]["faq_ms"]
    summary["faq_whole_run"] = {"requests": len(faq_all), "p50_ms": metrics.percentile(faq_all, 50),
                                "p95_ms": metrics.percentile(faq_all, 95)}
    result = {"summary": summary, "rows": rows, "ablation_rows": abl_rows,
              "config": {"quick": quick, "items": len(items), "ablation_items": len(abl_items),
                         "ablation_rounds": repeats,
                         "context": asdict(Context(today=TODAY.isoformat())), "model": settings.vllm_model,
                         "llm_url": settings.llm_url}}
    (out_dir / "results.json").write_text(json.dumps(result, indent=2, default=_json_default))
    (out_dir / "summary.json").write_text(json.dumps({"summary": summary, "config": result["config"]}, indent=2,
                                                     default=_json_default))
    plots.write_all(result, out_dir)
    print(plots.table(summary))
    print(f"\nresults: {out_dir / 'results.json'}; plots: {', '.join(p.name for p in sorted(out_dir.glob('*.png')))}")
    await deps.aclose()
    return 0


async def speculative_ablation(settings: Any, runner: Runner, items: list[Item], ref: dict[str, Any],
                               ref_by_item: dict[str, float]) -> dict[str, Any]:
    """Restart the local vLLM without n-gram speculative decoding, rerun, restore.

    Its interval pairs each request with the reference's first round of the same request (`ref_by_item`, keyed
    "round:id"). Unlike the other ablations it is a pass of its own after them, not interleaved with the
    reference: the server restarts once for it, so machine drift between the passes is inside the interval.
    """
    plain = settings.model_copy(update={"vllm_speculative": False})
    try:
        services.stop(settings, "vllm")
        services.start_vllm(plain)
        rows = [await runner.run("abl_no_speculative", it) for it in items]
    finally:
        services.stop(plain, "vllm")
        services.start_vllm(settings)
    s = summarize(rows)
    lo, hi = metrics.paired_ratio_ci(ref_by_item, {f"0:{r['id']}": r["total_ms"] for r in rows})
    return {**s, "slowdown": metrics.ratio(s["mean_ms"], ref["mean_ms"]), "slowdown_ci95": [lo, hi]}


def _json_default(o: Any) -> Any:
    if isinstance(o, float) and math.isnan(o):
        return None
    return str(o)
