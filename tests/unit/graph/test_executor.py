"""The executor: parallel and dependent calls, failures as results, the cache, the LLM gate, and the
per-turn prefetches' hand-off and sweep. The sweep: prefetches of turns that never reached the tool stage are
cancelled after two minutes, and nothing younger (or already handed over) is touched. A fake clock
stands in for time, and a backend that holds calls until released keeps prefetches in flight without
sleeping.
"""

import asyncio
import time
from types import SimpleNamespace

import pytest

from graph import executor
from graph.context import Context
from graph.executor import TurnPrefetches, run_plan, signature
from graph.state import ToolCall
from tests.unit.conftest import FakeCache, make_deps

CTX = Context()


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class HeldTools:
    """A backend that holds every call until `release` is set."""

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.entered = asyncio.Event()

    async def call(self, tool, args):
        self.entered.set()
        await self.release.wait()
        return {"city": args.get("city"), "date": args.get("date"), "temperature_c": 4, "condition": "rain"}


@pytest.fixture
def clock(monkeypatch):
    clock = Clock()
    # Only the executor's view of time is faked: the event loop keeps the real monotonic clock.
    monkeypatch.setattr(executor, "time", SimpleNamespace(monotonic=clock, perf_counter=time.perf_counter))
    return clock


@pytest.fixture
def deps():
    # What a prefetch touches: the cache (a miss) and the backend. No router or embedder needed.
    return SimpleNamespace(cache=FakeCache(), tools=HeldTools())


@pytest.fixture
def prefetches():
    return TurnPrefetches()


def tasks_of(prefetches, turn_id):
    """A turn's prefetch tasks, left where they are (the sweep's view, not the tool stage's)."""
    return list(prefetches._by_turn[turn_id][1].values())


def weather(city):
    return ("weather", {"city": city, "date": "2026-11-30"})




async def settle(tasks):
    """Let the (released) tasks end and say which of them were cancelled."""
    await asyncio.gather(*tasks, return_exceptions=True)
    return [t.cancelled() for t in tasks]


async def test_prefetches_of_a_turn_abandoned_for_over_two_minutes_are_cancelled(clock, deps, prefetches):
    prefetches.start("abandoned", deps, [weather("Paris")], "E1001", CTX)
    old = tasks_of(prefetches, "abandoned")
    await deps.tools.entered.wait()  # the backend call is really in flight
    clock.now += 121
    started = prefetches.start("next", deps, [weather("Rome")], "E1001", CTX)
    deps.tools.release.set()  # an uncancelled prefetch would now finish normally
    assert await settle(old) == [True]
    assert prefetches.take("abandoned") == {}  # a late tool stage finds nothing and fetches afresh
    fresh = prefetches.take("next")
    assert list(fresh) == started == [signature(*weather("Rome"))]
    (outcome,) = await asyncio.gather(*fresh.values())  # the new turn's prefetch was left alone
    assert outcome.error is None and outcome.data["city"] == "Rome"


async def test_turns_up_to_two_minutes_old_keep_their_prefetches(clock, deps, prefetches):
    prefetches.start("t0", deps, [weather("Paris")], "E1001", CTX)
    swept = tasks_of(prefetches, "t0")
    clock.now += 30
    prefetches.start("t30", deps, [weather("Rome")], "E1001", CTX)
    clock.now += 90  # t0 is exactly 120 s old: still within the limit
    prefetches.start("t120", deps, [weather("Oslo")], "E1001", CTX)
    assert prefetches.turns() == {"t0", "t30", "t120"}
    clock.now += 0.5  # t0 is now past the limit, t30 is not
    prefetches.start("t120.5", deps, [weather("Bern")], "E1001", CTX)
    assert prefetches.turns() == {"t30", "t120", "t120.5"}
    deps.tools.release.set()
    kept = [task for tid in ("t30", "t120", "t120.5") for task in prefetches.take(tid).values()]
    assert await settle(kept) == [False, False, False]
    assert await settle(swept) == [True]


async def test_prefetches_already_handed_to_the_tool_stage_are_not_swept(clock, deps, prefetches):
    prefetches.start("slow", deps, [weather("Paris")], "E1001", CTX)
    taken = prefetches.take("slow")  # the tool stage owns these now, however long it takes
    clock.now += 3600
    prefetches.start("later", deps, [weather("Rome")], "E1001", CTX)
    deps.tools.release.set()
    assert await settle(list(taken.values())) == [False]
    assert await settle(list(prefetches.take("later").values())) == [False]


async def test_the_sweep_runs_even_when_the_new_turn_prefetches_nothing(clock, deps, prefetches):
    prefetches.start("abandoned", deps, [weather("Paris")], "E1001", CTX)
    old = tasks_of(prefetches, "abandoned")
    clock.now += 500
    assert prefetches.start("empty", deps, [("no_such_tool", {})], "E1001", CTX) == []
    deps.tools.release.set()
    assert await settle(old) == [True]
    assert prefetches.take("empty") == {}


def call(id_, name, args, deps=()):
    return ToolCall(id=id_, name=name, args=args, depends_on=list(deps))


async def test_independent_calls_run_at_once_and_one_by_one_when_parallel_is_off():
    plan = [call("salary", "salary", {"employee": "E1001", "month": "2026-10"}),
            call("weather", "weather", {"city": "Paris", "date": "2026-11-30"})]
    deps = make_deps()
    await run_plan(deps, plan, "E1001", CTX)
    assert deps.tools.max_in_flight == 2  # both in flight together: waiting costs max(t), not sum(t)
    deps = make_deps()
    await run_plan(deps, plan, "E1001", Context(parallel_enabled=False))
    assert deps.tools.max_in_flight == 1


async def test_dependent_call_waits_for_its_input_only():
    deps = make_deps(latency={"weather": 0.2, "salary": 0.5})
    plan = [call("weather", "weather", {"city": "Paris", "date": "2026-11-30"}),
            call("clothing_advice", "clothing_advice", {"temperature": "@weather.temperature_c",
                                                         "condition": "@weather.condition"}, ["weather"]),
            call("salary", "salary", {"employee": "E1001", "month": "2026-10"})]
    results = await run_plan(deps, plan, "E1001", CTX)
    assert results[1]["ok"] and results[1]["args"] == {"temperature": 4, "condition": "rain"}


async def test_failures_become_results_not_exceptions():
    deps = make_deps()
    plan = [call("a", "salary", {"employee": "E1001", "month": "../../etc"}),
            call("b", "nope", {}),
            call("c", "salary", {"employee": "E1002", "month": "2026-10"}),
            call("d", "clothing_advice", {"temperature": "@a.temperature_c", "condition": "x"}, ["a"])]
    results = await run_plan(deps, plan, "E1001", CTX)
    assert [r["ok"] for r in results] == [False, False, False, False]
    assert "invalid month" in results[0]["error"]
    assert "only answers for the caller" in results[2]["error"]
    assert deps.tools.calls == []  # nothing unchecked reached the backend


async def test_second_call_hits_the_cache():
    deps = make_deps()
    plan = [call("w", "weather", {"city": "Paris", "date": "2026-11-30"})]
    first = await run_plan(deps, plan, "E1001", CTX)
    second = await run_plan(deps, plan, "E1002", CTX)
    assert (first[0]["cache"], second[0]["cache"]) == ("miss", "hit")
    assert len(deps.tools.calls) == 1


async def test_prefetch_is_taken_when_it_matches_and_the_rest_is_left_for_cancelling():
    deps = make_deps()
    args = {"city": "Paris", "date": "2026-11-30"}
    prefetches = TurnPrefetches()
    prefetches.start("turn1", deps, [("weather", args), ("leave_balance", {"employee": "E1001"})], "E1001", CTX)
    pending = prefetches.take("turn1")
    assert prefetches.take("turn1") == {}  # taken once
    await asyncio.gather(*pending.values())  # the prefetches finish (no clock: wait on the tasks themselves)
    results = await run_plan(deps, [call("weather", "weather", args)], "E1001", CTX, pending)
    assert results[0]["cache"] == "prefetch" and results[0]["ok"]
    assert [c[0] for c in deps.tools.calls].count("weather") == 1  # the plan did not call it again
    assert list(pending) == [signature("leave_balance", {"employee": "E1001"})]


async def test_llm_gate_sheds_load_beyond_its_queue():
    from graph.llm_gate import LLMBusy, LLMGate

    gate = LLMGate(limit=1, queue=1)
    release = asyncio.Event()

    async def hold():
        async with gate.slot():
            await release.wait()

    first = asyncio.create_task(hold())
    await asyncio.sleep(0)
    second = asyncio.create_task(hold())  # waits in the queue
    await asyncio.sleep(0)
    try:
        async with gate.slot():
            raise AssertionError("a third request must not get in")
    except LLMBusy as exc:
        assert "busy" in str(exc)
    release.set()
    await asyncio.gather(first, second)
    assert gate.rejected == 1 and gate.waiting == 0
