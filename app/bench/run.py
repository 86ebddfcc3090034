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
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from tqdm import tqdm

from app import services
from app.bench import coldstart, floors, metrics, plots, probes
from app.bench.baseline import build_plain_agent, run_create_agent
from app.bench.items import Item
from app.bench.metrics import GC_PAUSES
from app.bench.sessions import interleaved, next_turn_summary, training_sessions
from app.bench.workload import TODAY, load
from app.bench.workload import quick as quick_slice
from app.checkpoints import SqliteSaver
from app.router_train import load_split
from app.runtime import build_deps
from app.settings import get_settings
from app.turn import run_turn
from graph.context import Context
from graph.graph import build_desk
from tools.cache import ToolCache

log = logging.getLogger(__name__)
SHORTCUTS = ["faq_enabled", "templates_enabled", "parallel_enabled", "cache_enabled", "prefetch_enabled",
             "next_turn_enabled", "pruning_enabled", "progressive_enabled"]
ABLATIONS: dict[str, dict[str, bool]] = {f"no_{k.removesuffix('_enabled')}": {k: False} for k in SHORTCUTS}
ABLATIONS["all_off"] = dict.fromkeys(SHORTCUTS, False)


class Runner:
    """Runs one item through one variant and scores it; each variant has its own cache namespace."""

    def __init__(self, deps: Any, run_id: str, saver: Any = None) -> None:
        self.deps = deps
        self.run_id = run_id
        self.saver = saver  # the conversations' store (`conversation_store`); None: each graph's own, in memory
        self.graphs: dict[str, Any] = {}
        self.histories: dict[str, list] = {}
        self.waits = metrics.CoreWaits()  # made on the event loop's thread

    def _deps_for(self, variant: str) -> Any:
        return replace(self.deps, cache=ToolCache(self.deps.redis, namespace=f"bench:{self.run_id}:{variant}:"))

    async def learn_sessions(self, variants: list[str]) -> None:
        """Before the measured pass: the training conversations through the graph in a namespace of their own,
        then each variant's next-turn prefetch learns from what that graph's checkpointer kept, as a server
        does at its warm-up. Without it each variant would learn from nothing, during the measured pass.
        """
        for item in interleaved(training_sessions()):
            await self.run("train", item)
        kept = self.graph("train").graph.checkpointer
        for variant in variants:  # each variant's own prefetcher, in its own namespace
            await self.graph(variant).next_turn.seed_from_history(kept)

    def graph(self, variant: str) -> Any:
        """A variant's graph, built once: the plain agent's compiled graph, or the help desk (`Desk`)."""
        if variant not in self.graphs:
            deps = self._deps_for(variant)
            build = build_plain_agent if variant == "baseline" else build_desk
            self.graphs[variant] = build(deps, checkpointer=self.saver or InMemorySaver())
        return self.graphs[variant]

    async def run(self, variant: str, item: Item, options: dict[str, Any] | None = None) -> dict[str, Any]:
        """One scored row."""
        ctx = Context(today=TODAY.isoformat(), **(options or {}))
        thread = f"{self.run_id}-{variant}-{item.session}"
        if variant == "create_agent":
            history = self.histories.setdefault(thread, [])
            ttft: list[float] = []
            t0 = time.perf_counter()
            try:
                out = await run_create_agent(self.deps, item.q, item.user, history, ctx,
                                             lambda _t: ttft.append((time.perf_counter() - t0) * 1000))
                err = None
            except Exception as exc:  # noqa: BLE001 - a failed baseline request is a wrong answer, not a crash
                out = {"answer": "", "tools": [], "llm_calls": 0, "total_ms": (time.perf_counter() - t0) * 1000}
                err = str(exc)
            history += [HumanMessage(item.q), AIMessage(out["answer"])]
            row = {"answer": out["answer"], "route": None, "tools": [{"name": n} for n in out["tools"]],
                   "llm_calls": out["llm_calls"], "total_ms": out["total_ms"], "ttft_ms": ttft[0] if ttft else None,
                   "timings_ms": {}, "error": err}
        else:
            collected, encoders = GC_PAUSES.total_ms, self._encoders()
            waited = self.waits.total_ms(encoders)
            row = await run_turn(self.graph(variant), item.q, item.user, thread, ctx)
            row["gc_ms"] = GC_PAUSES.total_ms - collected
            if waited is not None and (now := self.waits.total_ms(encoders)) is not None:
                row["queued_ms"] = max(0.0, now - waited)
            if variant == "baseline":
                row["route"] = None
        scored = metrics.score_row(row["answer"], row["route"], item.facts, item.forbidden,
                                   item.expect_routes if row["route"] is not None else None)
        return {"variant": variant, "id": item.id, "kind": item.kind, "session": item.session, "user": item.user,
                "q": item.q,
                "expect_routes": item.expect_routes, **{k: row.get(k) for k in (
                    "answer", "route", "tools", "llm_calls", "total_ms", "ttft_ms", "timings_ms", "error",
                    "gc_ms", "queued_ms")},
                "router_label": (row.get("router") or {}).get("label"), "prefetch": row.get("prefetch") or {},
                "next_turn": row.get("next_turn") or {},
                **scored}

    def _encoders(self) -> set[int]:
        """The encoder processes a turn waits on: the shared one and the router's own."""
        pids = (e.process_id for e in (self.deps.embedder, floors.router_encoder(self.deps)))
        return {pid for pid in pids if pid is not None}

    async def run_measured(self, variant: str, item: Item) -> dict[str, Any]:
        """One scored row followed at once by its floor probe (`--accuracy-only`: no other variant's request to
        put between them; see `probe`).
        """
        row = await self.run(variant, item)
        await self.probe(variant, row, item)
        return row

    async def probe(self, variant: str, row: dict[str, Any], item: Item, key: str = "floor_ms") -> None:
        """The row's floor (`app/bench/floors.py`) into `row[key]`, and its kind into `row["floor_kind"]`."""
        settings = get_settings()
        found = await floors.floor_ms(self._deps_for(variant), row, item.user, settings.llm_url, settings.vllm_model)
        row["floor_kind"], row[key] = found or (None, None)


Probed = tuple[dict[str, Any], Item]  # an optimized row whose floor is still to be probed, and its item


async def run_item(runner: Runner, i: int, item: Item,
                   earlier: Probed | None = None) -> tuple[list[dict[str, Any]], Probed]:
    """One item on the three variants, the optimized graph between the two others (their order alternates with
    `i`), so it always meets the machine right after an LLM answer, as a user of a shared server does. Its floor is
    probed at once (`floor_warm_ms`), and as the turn met the machine (`floor_ms`, app/bench/floors.py): after the
    next item's last request, of the variant that came before this turn. So `earlier`, the previous item's
    optimized row, is probed here, after this item's last request; the row to probe after the next item's is
    returned with the rows (`finish` probes the last one).
    """
    first, last = ("baseline", "create_agent") if i % 2 == 0 else ("create_agent", "baseline")
    rows = [await runner.run(first, item), opt := await runner.run("optimized", item)]
    await runner.probe("optimized", opt, item, "floor_warm_ms")
    rows.append(await runner.run(last, item))
    if earlier is not None:
        await runner.probe("optimized", *earlier)
    return rows, (opt, item)


async def finish(runner: Runner, i: int, earlier: Probed) -> None:
    """The last item's floor (it was item `i`): after one more request of the variant that came before its turn
    (its answer is not scored).
    """
    await runner.run("baseline" if i % 2 == 0 else "create_agent", earlier[1])
    await runner.probe("optimized", *earlier)


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Latency, time to first token, accuracy and LLM calls of one variant's rows."""
    lat = metrics.latency_summary([r["total_ms"] for r in rows])
    ttft = [r["ttft_ms"] for r in rows if r.get("ttft_ms") is not None]
    return {**lat, "ttft_ms": metrics.percentile(ttft, 50), "accuracy": sum(r["correct"] for r in rows) / len(rows),
            "llm_calls_per_request": sum(r["llm_calls"] or 0 for r in rows) / len(rows),
            "errors": sum(1 for r in rows if r.get("error"))}


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
        return [await runner.run(variant, it) for it in group]

    done = [r for g in await asyncio.gather(*(session(g) for g in groups)) for r in g]
    wall = time.perf_counter() - t0
    lat = [r["total_ms"] for r in done]
    faq = [r["total_ms"] for r in done if r["route"] == "faq"]
    return {"sessions": sessions, "requests": len(done), "throughput_rps": len(done) / wall,
            "p95_ms": metrics.percentile(lat, 95), "mean_ms": sum(lat) / len(lat),
            "faq_ms": faq, "faq_route_p95_ms": metrics.percentile(faq, 95),
            "errors": sum(1 for r in done if r.get("error")), "accuracy": sum(r["correct"] for r in done) / len(done)}


@asynccontextmanager
async def conversation_store() -> AsyncIterator[Any]:
    """The conversations' store as the app keeps them (app/resources.py: SQLite, read once per turn on the event
    loop's thread), in a file of the run's own. Kept in memory instead, every conversation of the run would be
    part of the process's heap, which the app's is not: its garbage collections grew with the run.
    """
    with tempfile.TemporaryDirectory(prefix="helpdesk-bench-") as tmp:
        async with SqliteSaver.from_conn_string(str(Path(tmp) / "checkpoints.sqlite")) as saver:
            yield saver


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
