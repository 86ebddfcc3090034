"""Metric computations of the benchmark: percentiles, answer scoring, summaries (unit-tested)."""

from __future__ import annotations

import gc
import math
import random
import re
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

_NUM = re.compile(r"-?\d[\d,]*(?:\.\d+)?")


def percentile(values: Iterable[float], p: float) -> float:
    """Linear-interpolated percentile (p in 0..100) of the values; NaN when there are none."""
    xs = sorted(values)
    if not xs:
        return math.nan
    k = (len(xs) - 1) * p / 100
    lo, hi = math.floor(k), math.ceil(k)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def numbers(text: str) -> set[float]:
    """Every number in a text, thousands separators removed ("1,910.30" -> 1910.3)."""
    out = set()
    for tok in _NUM.findall(text):
        try:
            out.add(round(float(tok.replace(",", "")), 2))
        except ValueError:
            continue
    return out


def has_fact(answer: str, fact: str) -> bool:
    """A fact is present: numbers compare by value, words case-insensitively, spacing ignored."""
    if _NUM.fullmatch(fact.strip()):
        return round(float(fact.replace(",", "")), 2) in numbers(answer)
    norm = lambda s: " ".join(s.lower().split())  # noqa: E731
    if norm(fact) in norm(answer):
        return True
    fact_nums = numbers(fact)
    return bool(fact_nums) and fact_nums <= numbers(answer) and \
        all(w in answer.lower() for w in re.findall(r"[a-z]{3,}", fact.lower()))


def score_row(answer: str, route: str | None, facts: list[str], forbidden: list[str],
              expect_routes: list[str] | None) -> dict[str, bool | None]:
    """Route correct (None when not applicable), all facts present, no forbidden fact present."""
    facts_ok = all(has_fact(answer or "", f) for f in facts)
    clean = not any(has_fact(answer or "", f) for f in forbidden)
    route_ok = None if expect_routes is None or route is None else route in expect_routes
    return {"route_ok": route_ok, "facts_ok": facts_ok, "clean": clean,
            "correct": facts_ok and clean and route_ok is not False}


def latency_summary(ms: list[float]) -> dict[str, float]:
    """Mean and tail latencies in ms."""
    return {"n": len(ms), "mean_ms": sum(ms) / len(ms) if ms else math.nan, "p50_ms": percentile(ms, 50),
            "p95_ms": percentile(ms, 95), "p99_ms": percentile(ms, 99)}


def faq_precision_recall(rows: list[dict[str, Any]]) -> dict[str, float]:
    """Precision: share of FAQ shortcut answers that were correct; recall: share of FAQ-labelled items
    the shortcut answered.
    """
    took = [r for r in rows if r.get("route") == "faq"]
    expected = [r for r in rows if r.get("expect_routes") == ["faq"]]
    right = [r for r in took if r.get("correct")]
    return {"precision": len(right) / len(took) if took else math.nan,
            "recall": sum(1 for r in expected if r.get("route") == "faq") / len(expected) if expected else math.nan,
            "shortcuts": len(took)}


def ratio(a: float, b: float) -> float:
    """A / b, NaN when b is zero or missing."""
    return a / b if b and not math.isnan(b) else math.nan


def paired_ratio_ci(ref: dict[str, float], var: dict[str, float], reps: int = 2000,
                    seed: int = 0) -> tuple[float, float]:
    """95% bootstrap interval of mean(var) / mean(ref) over the items both measured (resampled in pairs).

    An ablation's slowdown whose interval contains 1.0 is not separated from noise by this run.
    """
    keys = sorted(set(ref) & set(var))
    if len(keys) < 2:
        return math.nan, math.nan
    rng = random.Random(seed)
    ratios = []
    for _ in range(reps):
        pick = [rng.choice(keys) for _ in keys]
        ratios.append(sum(var[k] for k in pick) / max(1e-9, sum(ref[k] for k in pick)))
    return percentile(ratios, 2.5), percentile(ratios, 97.5)


class GcPauses:
    """The garbage collector's pauses in this process, added up (`total_ms`) from the moment it is installed: a
    row's share is the difference across its turn (`gc_ms`), so an answer that waited for a collection says so.
    """

    def __init__(self) -> None:
        self.total_ms = 0.0
        self._started: float | None = None
        self._installed = False

    def install(self) -> None:
        """Start adding up (once per process; a second call changes nothing)."""
        if not self._installed:
            gc.callbacks.append(self._on_gc)
            self._installed = True

    def _on_gc(self, phase: str, _info: dict[str, Any]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        elif self._started is not None:
            self.total_ms += (time.perf_counter() - self._started) * 1000
            self._started = None


GC_PAUSES = GcPauses()


class CoreWaits:
    """How long the event loop's thread (and the threads of processes `pids`) were ready to run but waited for a
    core, in ms, from the kernel's per-task `schedstat` (its second field). A turn that met a busy machine says
    so (`queued_ms`): time that no change to the turn's own code could win back. None where the kernel does not
    keep it.
    """

    def __init__(self) -> None:
        self._loop = Path(f"/proc/self/task/{threading.get_native_id()}/schedstat")  # made on the loop's thread

    def read(self, pids: Iterable[int] = ()) -> tuple[float, float] | None:
        """The waits so far of the loop's thread, and of every thread of the processes `pids` together."""
        try:
            loop = int(self._loop.read_text().split()[1])
        except (OSError, IndexError, ValueError):
            return None
        return loop / 1e6, schedstat_ms(pids, WAITING)


RUNNING, WAITING = 0, 1  # the fields of a task's `schedstat`: time on a core, time ready but waiting for one


def schedstat_ms(pids: Iterable[int], field: int, proc: Path = Path("/proc")) -> float:
    """One field of the kernel's per-task `schedstat`, added up over every thread of the processes `pids`, in
    ms. A process that is gone, or ends while read, counts 0.
    """
    ns = 0
    for pid in pids:
        try:
            ns += sum(int((t / "schedstat").read_text().split()[field]) for t in (proc / str(pid) / "task").iterdir())
        except (OSError, IndexError, ValueError):
            continue
    return ns / 1e6
