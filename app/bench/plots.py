"""PNG plots and the printed summary table of a benchmark run."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

COLORS = {"baseline": "#c0392b", "create_agent": "#e67e22", "optimized": "#27ae60"}


def _fmt(x: Any, nd: int = 0) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    return f"{x:,.{nd}f}"


def optimized_lines(s: dict[str, Any]) -> str:
    """The optimized graph against its floors: per-route floor ratios, compound first token, next-turn
    prefetch, cold vs warm first request (whatever the summary holds).
    """
    lines: list[str] = []
    if s.get("floor_ratio"):
        lines.append("\n| floor (optimized over what its parts allow) | requests | to first text, median | p95 "
                     "| to the end of the turn, median | p95 | first text over the warm floor, median / p95 |"
                     "\n|---|---|---|---|---|---|---|")
        for kind, f in s["floor_ratio"].items():
            warm = (f"{_fmt(f['warm_first_text_median'], 2)}x / {_fmt(f['warm_first_text_p95'], 2)}x"
                    if "warm_first_text_median" in f else "-")
            lines.append(f"| {kind} | {f['n']} | {_fmt(f.get('first_text_median'), 2)}x | "
                         f"{_fmt(f.get('first_text_p95'), 2)}x | {_fmt(f['median'], 2)}x | {_fmt(f['p95'], 2)}x | "
                         f"{warm} |")
    if s.get("overhead_budget"):
        lines.append("\n| per-turn overhead (ms, p50/p95) | requests | floor | first text | end of turn | in nodes "
                     "| framework | after first text | garbage collection | waiting for a core |"
                     "\n|---|---|---|---|---|---|---|---|---|---|")
        for kind, b in s["overhead_budget"].items():
            cells = " | ".join(f"{_fmt(b.get(f'{k}_p50'), 1)}/{_fmt(b.get(f'{k}_p95'), 1)}" for k in (
                "floor_ms", "first_text_ms", "total_ms", "nodes_ms", "framework_ms", "after_first_text_ms", "gc_ms",
                "queued_ms"))
            lines.append(f"| {kind} | {b['n']} | {cells} |")
        for kind, b in s["overhead_budget"].items():
            slow = "; ".join(f"{r['id']} {_fmt(r['first_text_ms'], 1)} ms over {_fmt(r['floor_ms'], 1)}, waited "
                             f"{_fmt(r.get('queued_ms'), 1)} ms for a core"
                             for r in b.get("slowest", []))
            lines.append(f"slowest {kind} turns (first text over floor): {slow}")
    if s.get("compound", {}).get("n"):
        c = s["compound"]
        lines.append(f"compound requests ({c['n']}): first token {_fmt(c['ttft_ms'])} ms; the "
                     f"{c.get('n_backend', c['n'])} whose fastest part reached the backend: "
                     f"{_fmt(c['ttft_over_fastest_tool'], 2)}x that tool (median)")
    if s.get("next_turn"):
        n = s["next_turn"]
        share = "-" if n["served_share"] is None else f"{n['served_share']:.0%}"
        lines.append(f"next-turn prefetch: {share} of {n['later_personal_requests']} later personal requests served "
                     f"from it; calls used {n['used']}, wasted {n['wasted']} "
                     f"({n['wasted_per_session']:.2f} per session)")
        if n.get("slice_later_personal_requests"):
            lines.append(f"  session slice: {n['slice_served_share']:.0%} of {n['slice_later_personal_requests']} "
                         f"later personal requests; wasted {n['slice_wasted_per_session']:.2f} per session")
    if "cold_first_request_ms" in s:
        lines.append(f"first request after start {_fmt(s['cold_first_request_ms'])} ms, the same again warm "
                     f"{_fmt(s['warm_first_request_ms'])} ms (cold/warm {_fmt(s['cold_over_warm'], 2)})")
        if "warm_memo_hit_ms" in s:
            lines.append(f"  the same again with its embedding memoized: {_fmt(s['warm_memo_hit_ms'])} ms "
                         f"(cold/memo hit {_fmt(s['cold_over_memo_hit'], 2)})")
        if "warm_unseen_request_ms" in s:
            lines.append(f"  another question of the kind, warm: {_fmt(s['warm_unseen_request_ms'])} ms "
                         f"(cold/warm {_fmt(s['cold_over_warm_unseen'], 2)})")
    return "\n".join(lines)


def table(s: dict[str, Any]) -> str:
    """The summary as a Markdown table (also printed by the command)."""
    lines = ["| | mean ms | p50 ms | p95 ms | p99 ms | first token ms | accuracy | LLM calls/req |",
             "|---|---|---|---|---|---|---|---|"]
    for v in ("baseline", "create_agent", "optimized"):
        r = s[v]
        lines.append(f"| {v} | {_fmt(r['mean_ms'])} | {_fmt(r['p50_ms'])} | {_fmt(r['p95_ms'])} | {_fmt(r['p99_ms'])}"
                     f" | {_fmt(r['ttft_ms'])} | {r['accuracy']:.1%} | {r['llm_calls_per_request']:.2f} |")
    lines.append(f"\nspeedup vs the plain agent: mean {_fmt(s['speedup_mean'], 1)}x, p95 {_fmt(s['speedup_p95'], 1)}x")
    lines.append(f"routes (optimized): {s['routes']}; FAQ precision {_fmt(s['faq']['precision'], 3)}, "
                 f"recall {_fmt(s['faq']['recall'], 3)}; cache hit rate {s['cache']['hit_rate']:.1%}, "
                 f"false hits {s['cache']['false_hits']}; prefetch started {s['prefetch'].get('started', '-')}, used "
                 f"{s['prefetch']['used']}, wasted {s['prefetch'].get('wasted', '-')}")
    lines.append(optimized_lines(s))
    lines.append("\n| ablation (switched off) | mean ms | p95 ms | slowdown (95% interval) | accuracy |"
                 "\n|---|---|---|---|---|")
    ref = s["ablation_reference"]
    lines.append(f"| (none: optimized) | {_fmt(ref['mean_ms'])} | {_fmt(ref['p95_ms'])} | 1.00x "
                 f"| {ref['accuracy']:.1%} |")
    for name, a in s["ablation"].items():
        lo, hi = a.get("slowdown_ci95") or (math.nan, math.nan)
        lines.append(f"| {name} | {_fmt(a['mean_ms'])} | {_fmt(a['p95_ms'])} | {_fmt(a['slowdown'], 2)}x "
                     f"({_fmt(lo, 2)}-{_fmt(hi, 2)}) | {a['accuracy']:.1%} |")
    p = s["probes"]
    if "heldout_slice" in s:
        h = s["heldout_slice"]
        lines.append(f"\nheld-out phrasing slice ({h['optimized']['n']} requests): accuracy "
                     f"{h['optimized']['accuracy']:.1%} vs main workload {h['main_workload']['accuracy']:.1%} "
                     f"(gap {h['accuracy_gap_points']:+.1f} points); mean {_fmt(h['optimized']['mean_ms'])} ms, "
                     f"p95 {_fmt(h['optimized']['p95_ms'])} ms; plain agent {h['baseline']['accuracy']:.1%}, "
                     f"mean {_fmt(h['baseline']['mean_ms'])} ms")
    if "multilingual_slice" in s:
        lines.append("\n| language | requests | accuracy | gap to English, points | routes faq/template/llm "
                     "| FAQ first text, median ms | over English |\n|---|---|---|---|---|---|---|")
        for lang, m in s["multilingual_slice"].items():
            r = m.get("routes") or {}
            lines.append(f"| {lang} | {m['n']} | {m['accuracy']:.1%} | {m.get('accuracy_gap_points', 0.0):+.1f} "
                         f"| {r.get('faq', '-')}/{r.get('template', '-')}/{r.get('llm', '-')} "
                         f"| {_fmt(m.get('faq_ttft_ms') or math.nan, 1)} "
                         f"| {_fmt(m.get('faq_ttft_over_english') or math.nan, 2)}x |")
    if "router_decision_p95_ms" in s["probes"]:
        lines.append(f"router decision p50/p95 {_fmt(s['probes']['router_decision_p50_ms'], 1)}/"
                     f"{_fmt(s['probes']['router_decision_p95_ms'], 1)} ms (embedding included)")
    if "framework" in s:  # app/bench/framework.py
        f = s["framework"]
        lines.append("\n| first text over floor, one probe (p50 / p95) | the desk | bare LangGraph steps |"
                     "\n|---|---|---|")
        for kind in ("faq", "cache_hit"):
            desk, bare = (f"{_fmt(f[f'{who}_{kind}_over_floor_p50'], 2)}x / "
                          f"{_fmt(f[f'{who}_{kind}_over_floor_p95'], 2)}x" for who in ("desk", "framework"))
            lines.append(f"| {kind} | {desk} | {bare} |")
    lines.append(f"\nFAQ route p95 {_fmt(s['faq_route_p95_ms'], 1)} ms; "
                 f"cache hit p95 {_fmt(s['cache']['hit_ms_p95'], 1)} ms;"
                 f" two-tool stage / slower tool {_fmt(p['stage_over_slower_tool'], 2)}; warm/cold prefix TTFT "
                 f"{_fmt(p['warm_ttft_ms'])}/{_fmt(p['cold_ttft_ms'])} ms = {_fmt(p['warm_over_cold'], 2)}; "
                 f"vLLM prefix-cache hit rate {_fmt(s['baseline'].get('prefix_cache_hit_rate', math.nan), 3)}")
    if "tracing" in p:
        t = p["tracing"]
        lines.append(f"tracing: OpenTelemetry {t['otel_overhead_ms']:+.1f} ms, OpenTelemetry + LangSmith "
                     f"{t['overhead_ms']:+.1f} ms per request = {t['overhead_pct']:+.1f}% of a short (FAQ or "
                     f"cache-hit) request, {t.get('overhead_pct_of_mean_request', math.nan):+.2f}% of the mean request")
    lines.append("\n| load | sessions | requests | throughput req/s | p95 ms | errors |\n|---|---|---|---|---|---|")
    for v, ld in s["load"].items():
        lines.append(f"| {v} | {ld['sessions']} | {ld['requests']} | {ld['throughput_rps']:.2f} | {_fmt(ld['p95_ms'])}"
                     f" | {ld['errors']} |")
    if w := s.get("faq_whole_run"):
        lines.append(f"\nFAQ answers over the main pass and the load test: {w['requests']}, p50/p95 "
                     f"{_fmt(w['p50_ms'], 1)}/{_fmt(w['p95_ms'], 1)} ms")
    return "\n".join(lines)


def write_all(result: dict[str, Any], out: Path) -> None:
    """Latency CDF, per-node breakdown, ablation, load, and accuracy against latency."""
    rows, s = result["rows"], result["summary"]
    fig, ax = plt.subplots(figsize=(7, 4))
    for v, color in COLORS.items():
        xs = sorted(r["total_ms"] / 1000 for r in rows if r["variant"] == v)
        ax.step(xs, [(i + 1) / len(xs) for i in range(len(xs))], where="post", label=v, color=color)
    ax.set(xscale="log", xlabel="end-to-end latency (s, log)", ylabel="share of requests", title="Latency CDF")
    ax.legend()
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(out / "latency_cdf.png", dpi=120)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(7, 4))
    for i, v in enumerate(("baseline", "optimized")):
        vr = [r for r in rows if r["variant"] == v]
        nodes: dict[str, float] = {}
        for r in vr:
            for k, ms in (r["timings_ms"] or {}).items():
                nodes[k] = nodes.get(k, 0.0) + ms / len(vr)
        left = 0.0
        for k, ms in sorted(nodes.items(), key=lambda x: -x[1]):
            ax.barh(i, ms / 1000, left=left, label=f"{v}: {k}")
            if ms > 150:
                ax.text(left + ms / 2000, i, k, ha="center", va="center", fontsize=7)
            left += ms / 1000
    ax.set(yticks=[0, 1], yticklabels=["baseline", "optimized"], xlabel="mean seconds per request",
           title="Where the time goes (per node)")
    fig.tight_layout()
    fig.savefig(out / "node_breakdown.png", dpi=120)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(7, 4))
    names = ["optimized", *s["ablation"]]
    vals = [s["ablation_reference"]["mean_ms"] / 1000] + [a["mean_ms"] / 1000 for a in s["ablation"].values()]
    ax.bar(names, vals, color=["#27ae60"] + ["#7f8c8d"] * (len(names) - 1))
    ax.set(ylabel="mean latency (s)", title="Ablation: each technique switched off")
    ax.tick_params(axis="x", rotation=35)
    fig.tight_layout()
    fig.savefig(out / "ablation.png", dpi=120)
    plt.close(fig)

    fig, axes = plt.subplots(1, 2, figsize=(8, 3.5))
    load = s["load"]
    axes[0].bar(list(load), [x["throughput_rps"] for x in load.values()], color=[COLORS[v] for v in load])
    axes[0].set(title="Throughput under load", ylabel="requests / s")
    axes[1].bar(list(load), [x["p95_ms"] / 1000 for x in load.values()], color=[COLORS[v] for v in load])
    axes[1].set(title="p95 latency under load", ylabel="s")
    fig.tight_layout()
    fig.savefig(out / "load.png", dpi=120)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(7, 4.5))
    for v, color in COLORS.items():  # the three systems, on the whole workload
        ax.scatter(s[v]["mean_ms"] / 1000, s[v]["accuracy"] * 100, color=color, s=60, label=v, zorder=3)
    points = {"optimized (ablation ref.)": s["ablation_reference"], **s["ablation"]}
    for name, a in points.items():  # each technique off, on the ablation slice
        ax.scatter(a["mean_ms"] / 1000, a["accuracy"] * 100, color="#7f8c8d", marker="x", zorder=2)
        ax.annotate(name, (a["mean_ms"] / 1000, a["accuracy"] * 100), fontsize=7, xytext=(4, 2),
                    textcoords="offset points")
    ax.set(xscale="log", xlabel="mean latency (s, log)", ylabel="accuracy (%)", ylim=(0, 105),
           title="Accuracy against latency (systems; x: ablation variants)")
    ax.legend(loc="lower left")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(out / "accuracy_latency.png", dpi=120)
    plt.close(fig)
