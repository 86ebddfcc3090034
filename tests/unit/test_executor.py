import asyncio

from graph.context import Context
from graph.executor import Prefetcher, run_plan, signature
from graph.state import ToolCall
from tests.unit.conftest import make_deps

CTX = Context()


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
    Prefetcher.start("turn1", deps, [("weather", args), ("leave_balance", {"employee": "E1001"})], "E1001", CTX)
    pending = Prefetcher.take(deps, "turn1")
    assert Prefetcher.take(deps, "turn1") == {}  # taken once
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
