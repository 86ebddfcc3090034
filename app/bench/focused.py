"""Runs of the optimized graph alone, minutes rather than the full benchmark's hour: `python -m app bench
--accuracy-only` (accuracy, floors, next-turn prefetch on the whole workload) and `--contention` (the
router's decision idle and while vLLM decodes).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from tqdm import tqdm

from app.bench import plots, probes
from app.bench.metrics import GC_PAUSES
from app.bench.run import optimized_summary, summarize
from app.bench.runner import Runner, conversation_store
from app.bench.sessions import interleaved
from app.bench.workload import load
from app.runtime import build_deps
from app.settings import get_settings
from app.stack import services
from app.training.router_train import load_split


async def contention(threads: int | None = None) -> int:
    """Router decisions idle vs while vLLM decodes (`--contention`; `--threads N` overrides TORCH_THREADS)."""
    settings = get_settings()
    if threads is not None:
        settings = settings.model_copy(update={"torch_threads": threads})
    services.up(settings)
    deps = await build_deps(settings)
    questions = [it["q"] for it in load_split("test")][:120]
    out = await probes.router_under_llm_load(deps, questions, settings.llm_url, settings.vllm_model)
    print(f"torch threads {settings.torch_threads}: router decision idle p50/p95 {out['idle_p50_ms']:.1f}/"
          f"{out['idle_p95_ms']:.1f} ms, while vLLM decodes {out['busy_p50_ms']:.1f}/{out['busy_p95_ms']:.1f} ms")
    await deps.aclose()
    return 0


async def accuracy_only(out: str = "bench-results") -> int:
    """The optimized graph alone on the whole workload: accuracy of the main mix beside the held-out slice,
    with the misses listed and every row kept (minutes, not the full benchmark's hour; no plain agent, no
    ablation).
    """
    settings = get_settings()
    services.up(settings)
    deps = await build_deps(settings)
    GC_PAUSES.install()
    async with conversation_store() as saver:
        runner = Runner(deps, run_id=str(int(time.time())), saver=saver)
        await runner.learn_sessions(["optimized"])
        rows = [await runner.run_measured("optimized", item)
                for item in tqdm(interleaved(load()), desc="accuracy", unit="req")]
    held = [r for r in rows if r["kind"] == "heldout"]
    main_rows = [r for r in rows if r["kind"] != "heldout"]
    summary = {"main_workload": summarize(main_rows), "heldout_slice": summarize(held)}
    summary["accuracy_gap_points"] = round(100 * (summary["main_workload"]["accuracy"]
                                                  - summary["heldout_slice"]["accuracy"]), 1)
    summary.update(optimized_summary(rows))
    misses = [{k: r[k] for k in ("kind", "q", "route", "answer")} for r in rows if not r["correct"]]
    Path(out).mkdir(parents=True, exist_ok=True)
    kept = [{k: r.get(k) for k in ("kind", "session", "user", "q", "route", "router_label", "correct", "total_ms",
                                   "ttft_ms", "floor_kind", "floor_ms", "gc_ms", "queued_ms",
                                   "tools", "next_turn", "timings_ms")} for r in rows]
    (Path(out) / "accuracy.json").write_text(json.dumps({"summary": summary, "misses": misses, "rows": kept},
                                                        indent=2))
    for name in ("main_workload", "heldout_slice"):
        s = summary[name]
        print(f"{name:14s} n={s['n']:3d} accuracy {s['accuracy']:.1%}  mean {s['mean_ms']:,.0f} ms  "
              f"p95 {s['p95_ms']:,.0f} ms  LLM calls/request {s['llm_calls_per_request']:.2f}")
    print(f"gap {summary['accuracy_gap_points']} points; misses in {Path(out) / 'accuracy.json'}")
    print(f"FAQ route p95 {summary['faq_route_p95_ms']:.1f} ms" + plots.optimized_lines(summary))
    await deps.aclose()
    return 0
