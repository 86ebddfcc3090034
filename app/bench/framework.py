"""How much of a shortcut's first text LangGraph itself costs on this machine, beside what the desk costs.

The one-path rule has every answer written by a graph node and streamed through LangGraph's stream. This probe
measures, in the same run and in alternating order, each shortcut turn of the desk and the least graph of the
same shape: bare nodes that only await the same embedding (started before the graph runs, on the router's
encoder thread, as a turn starts it) and score it, read the cached results where the turn reads them, and send
one custom event. Same checkpointer, stream modes and durability as a turn. Each is read over its own floor
(`floors.embedding_ms`, `floors.cache_read_ms`), as the benchmark reads the desk's turns: what the bare graph
takes over the floor is what any implementation under the rule pays here; the rest is the desk's own.
"""

from __future__ import annotations

import asyncio
import math
import statistics
import time
import uuid
from typing import Any, TypedDict

from langchain_core.messages import HumanMessage
from langgraph.config import get_stream_writer
from langgraph.graph import END, START, StateGraph

from app.bench.floors import cache_read_ms, embedding_ms, kind_of, router_encoder
from app.turn import run_turn
from graph.context import Context
from graph.graph import Desk
from tools.registry import TOOLS

IDLE_S = 0.01  # before each measurement: a turn arrives on its own, not right behind another


class _Bare(TypedDict, total=False):
    messages: list[Any]
    route: str


def _bare_graph(desk: Desk, steps: list[str], pending: dict[str, Any]) -> Any:
    """`steps` in a row: the first awaits the embedding and scores it, the last reads the cached results (none for
    an FAQ answer) and sends the text, the ones between do nothing.
    """
    deps = desk.deps

    async def first(state: _Bare) -> dict[str, Any]:
        deps.router.model.score((await pending.pop("vec"))[0])
        return {"route": "shortcut"}

    async def between(state: _Bare) -> dict[str, Any]:
        return {}

    async def last(state: _Bare) -> dict[str, Any]:
        await asyncio.gather(*(deps.redis.get(k) for k in pending.pop("keys")))
        get_stream_writer()({"answer_delta": "."})
        return {}

    builder = StateGraph(_Bare)
    for i, step in enumerate(steps):
        builder.add_node(step, first if i == 0 else last if i == len(steps) - 1 else between)
        builder.add_edge(START if i == 0 else steps[i - 1], step)
    builder.add_edge(steps[-1], END)
    return builder.compile(checkpointer=desk.graph.checkpointer, name="bare_" + steps[-1])


async def _bare_turn(desk: Desk, graph: Any, pending: dict[str, Any], question: str, keys: list[str]) -> float | None:
    t0 = time.perf_counter()
    pending["vec"], pending["keys"] = router_encoder(desk.deps).submit([question]), keys
    first = None
    async for mode, _ in graph.astream({"messages": [HumanMessage(question)]},
                                       {"configurable": {"thread_id": uuid.uuid4().hex}},
                                       stream_mode=["custom", "updates", "values"], durability="exit"):
        if mode == "custom" and first is None:
            first = (time.perf_counter() - t0) * 1000
    return first


async def _desk_turn(desk: Desk, ctx: Context, question: str, user: str, kind: str) -> float | None:
    desk.forget_embedding(question)
    row = await run_turn(desk, question, user, None, ctx)
    return row["ttft_ms"] if kind_of(row) == kind else None  # only turns that took the shortcut again


async def framework_floor(desk: Desk, ctx: Context, faq: list[str], cached: list[tuple[str, str, list[dict[str, Any]]]],
                          rounds: int = 10) -> dict[str, float]:
    """First text over its floor, p50 and p95, for the desk and the bare graph: FAQ answers (`faq`: questions) and
    answers from cached results (`cached`: question, caller, the row's tool calls), each question through both in
    every round (which goes first alternates), each followed by its floor. Round 0 warms up and is not counted.
    """
    deps = desk.deps
    pending: dict[str, Any] = {}
    faq_items: list[tuple[str, str, list[dict[str, Any]]]] = [(q, "E1001", []) for q in faq]
    shapes = {"faq": (_bare_graph(desk, ["route_question", "answer_faq"], pending), faq_items),
              "cache_hit": (_bare_graph(desk, ["route_question", "fill_slots", "call_tools"], pending), cached)}
    ratios: dict[str, list[float]] = {f"{who}_{kind}": [] for kind in shapes for who in ("desk", "framework")}
    for rnd in range(rounds + 1):
        for kind, (bare, items) in shapes.items():
            for i, (q, user, calls) in enumerate(items):
                keys = [deps.cache.key_of(TOOLS[c["name"]], c["args"], user) for c in calls if c["name"] in TOOLS]
                for who in ("framework", "desk") if (rnd + i) % 2 else ("desk", "framework"):
                    await asyncio.sleep(IDLE_S)
                    first = await (_bare_turn(desk, bare, pending, q, keys) if who == "framework"
                                   else _desk_turn(desk, ctx, q, user, kind))
                    await asyncio.sleep(IDLE_S)
                    floor = await (embedding_ms(deps, q) if kind == "faq" else cache_read_ms(deps, q, calls, user))
                    if rnd and first is not None:
                        ratios[f"{who}_{kind}"].append(first / floor)
    out: dict[str, float] = {}
    for name, rs in ratios.items():
        rs.sort()
        out |= {f"{name}_over_floor_p50": statistics.median(rs) if rs else math.nan,
                f"{name}_over_floor_p95": rs[int(0.95 * (len(rs) - 1))] if rs else math.nan, f"{name}_turns": len(rs)}
    return out
