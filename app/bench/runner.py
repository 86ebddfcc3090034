"""One request through one variant of the benchmark, scored (`Runner`), and the order in which the variants
meet the machine (`run_item`, `finish`): the optimized turn between the two plain agents, its floor probed as
the turn met the machine. Each measured request and each probe is sent once the LLM server has finished what
came before (`quiet.py`). `conversation_store` keeps the run's conversations as the app does.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

from app.bench import floors, metrics, quiet
from app.bench.asks import TODAY
from app.bench.baseline import build_plain_agent, run_create_agent
from app.bench.items import Item
from app.bench.metrics import GC_PAUSES
from app.bench.sessions import interleaved, training_sessions
from app.resources import sqlite_saver
from app.settings import get_settings
from app.turn import run_turn
from graph.context import Context
from graph.graph import build_desk
from tools.cache import ToolCache


class Runner:
    """Runs one item through one variant and scores it; each variant has its own cache namespace."""

    def __init__(self, deps: Any, run_id: str, saver: Any = None) -> None:
        self.deps = deps
        self.run_id = run_id
        self.saver = saver  # the conversations' store (`conversation_store`); None: each graph's own, in memory
        self.graphs: dict[str, Any] = {}
        self.histories: dict[str, list] = {}
        self.waits = metrics.CoreWaits()  # made on the event loop's thread
        self.server = quiet.LlmServer(get_settings().llm_url)  # each measured request waits out its leftovers

    def _deps_for(self, variant: str) -> Any:
        return replace(self.deps, cache=ToolCache(self.deps.redis, namespace=f"bench:{self.run_id}:{variant}:"))

    async def learn_sessions(self, variants: list[str]) -> None:
        """Before the measured pass: the training conversations through the graph in a namespace of their own,
        then each variant's next-turn prefetch learns from what that graph's checkpointer kept, as a server
        does at its warm-up. Without it each variant would learn from nothing, during the measured pass.
        """
        for item in interleaved(training_sessions()):
            await self.run("train", item, settle=False)
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

    async def run(self, variant: str, item: Item, options: dict[str, Any] | None = None,
                  settle: bool = True) -> dict[str, Any]:
        """One scored row; with `settle`, sent once the LLM server is done with what came before (`quiet`).
        Requests sent side by side (the load test) do not settle: each would wait for the others.
        """
        ctx = Context(today=TODAY.isoformat(), **(options or {}))
        thread = f"{self.run_id}-{variant}-{item.session}"
        settle_ms = await self.server.settle() if settle else None
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
            collected = GC_PAUSES.total_ms
            before = self.waits.read()
            row = await run_turn(self.graph(variant), item.q, item.user, thread, ctx)
            row["gc_ms"] = GC_PAUSES.total_ms - collected
            if before is not None and (after := self.waits.read()) is not None:
                row["queued_ms"] = max(0.0, sum(after) - sum(before))
            if variant == "baseline":
                row["route"] = None
        scored = metrics.score_row(row["answer"], row["route"], item.facts, item.forbidden,
                                   item.expect_routes if row["route"] is not None else None)
        return {"variant": variant, "id": item.id, "kind": item.kind, "session": item.session, "user": item.user,
                "q": item.q,
                "expect_routes": item.expect_routes, **{k: row.get(k) for k in (
                    "answer", "route", "tools", "llm_calls", "total_ms", "ttft_ms", "timings_ms", "error",
                    "gc_ms", "queued_ms")}, "settle_ms": settle_ms,
                "router_label": (row.get("router") or {}).get("label"), "prefetch": row.get("prefetch") or {},
                "next_turn": row.get("next_turn") or {},
                **scored}

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
        await self.server.settle()
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


@asynccontextmanager
async def conversation_store() -> AsyncIterator[Any]:
    """The conversations' store as the app keeps them (app/resources.py: SQLite, a turn's read and write
    inline, with the app's serializer), in a file of the run's own. Kept in memory instead, every
    conversation of the run would be part of the process's heap, which the app's is not: its garbage collections
    grew with the run.
    """
    with tempfile.TemporaryDirectory(prefix="helpdesk-bench-") as tmp:
        async with sqlite_saver(str(Path(tmp) / "checkpoints.sqlite")) as saver:
            yield saver
