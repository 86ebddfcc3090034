"""The framework probe: the desk's shortcut turns and bare LangGraph steps of the same shape, each over its floor."""

import asyncio
import time

from langgraph.checkpoint.memory import InMemorySaver

from app.bench.framework import framework_floor
from app.turn import run_turn
from graph.context import Context
from graph.graph import build_desk
from tests.unit.conftest import FakeEmbedder, make_deps

CTX = Context(today="2026-11-29")


class SlowEncoder(FakeEmbedder):
    """20 ms a text, on a thread, as the router's encoder runs off the event loop."""

    def run(self, fn, *args):
        return asyncio.get_running_loop().run_in_executor(None, lambda: (time.sleep(0.02), fn(*args))[1])


async def test_both_shortcuts_are_read_for_the_desk_and_the_bare_steps_against_the_same_floor():
    deps = make_deps()
    deps.embedder.__class__ = SlowEncoder
    desk = build_desk(deps, InMemorySaver())
    q = "What was my salary in March?"
    first = await run_turn(desk, q, "E1001", None, CTX)  # fills the cache: the probe's turns hit it
    out = await framework_floor(desk, CTX, ["When is payday?"], [(q, "E1001", first["tools"])], rounds=2)
    for kind in ("faq", "cache_hit"):
        assert out[f"desk_{kind}_turns"] == out[f"framework_{kind}_turns"] == 2
        # Neither can send its text before the 20 ms embedding its floor waits for; bare steps add little to it
        assert 1.0 <= out[f"framework_{kind}_over_floor_p50"] < 1.5
        assert out[f"desk_{kind}_over_floor_p50"] >= 1.0
