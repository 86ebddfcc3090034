import asyncio

from graph.context import Context
from graph.executor import signature
from graph.next_turn import NextTurn, account
from tests.unit.conftest import FakeTools, make_deps


def _result(name, args, cache):
    return {"id": name, "name": name, "args": args, "ok": True, "data": {}, "error": None, "ms": 1.0, "cache": cache}


def test_a_cache_hit_on_a_call_the_last_turn_prefetched_is_reported_as_served_by_it():
    args = {"employee": "E1001", "month": "2026-10"}
    offered = {"offered": [signature("attendance", args)], "used": 0, "wasted": 1}
    results, counts = account(offered, [_result("attendance", args, "hit"),
                                        _result("weather", {"city": "Rome", "date": "2026-11-30"}, "hit")])
    assert [r["cache"] for r in results] == ["next_turn", "hit"]  # the weather hit came from elsewhere
    assert (counts["used"], counts["wasted"]) == (1, 0)


def test_a_prefetched_call_for_another_month_is_wasted_and_the_real_call_is_not_mislabelled():
    offered = {"offered": [signature("attendance", {"employee": "E1001", "month": "2026-10"})], "used": 0,
               "wasted": 1}
    results, counts = account(offered, [_result("attendance", {"employee": "E1001", "month": "2026-09"}, "miss")])
    assert results[0]["cache"] == "miss" and (counts["used"], counts["wasted"]) == (0, 1)


async def test_a_run_of_follow_ups_does_not_drown_what_follows_a_request():
    deps = make_deps()
    nt = NextTurn(deps)
    for _ in range(6):  # "and last month?" again and again: the same intent, never prefetched
        await nt.learn(["salary"], ["salary"])
    await nt.learn(["salary"], ["attendance"])
    await nt.learn(["salary"], ["attendance"])
    assert await nt.likely("salary", min_share=0.3, min_seen=2) == ["attendance"]
    assert await nt.likely("salary", min_share=0.3, min_seen=3) == []


def test_a_call_still_in_flight_when_the_question_came_is_awaited_and_counted_as_used():
    args = {"employee": "E1001", "month": "2026-10"}
    sig = signature("attendance", args)
    results, counts = account({"offered": [], "in_flight": [sig], "used": 0, "wasted": 0},
                              [_result("attendance", args, "prefetch")])
    assert results[0]["cache"] == "next_turn" and (counts["used"], counts["wasted"]) == (1, 0)
    _, counts = account({"offered": [], "in_flight": [sig], "used": 0, "wasted": 0},
                        [_result("salary", args, "miss")], left=1)  # asked something else: stopped, wasted
    assert (counts["used"], counts["wasted"]) == (0, 1)


async def _kept_turn(saver, thread, step, turn_id, last_intents):
    """A turn's final checkpoint as the graph leaves it: its id and the intents of the last tool turn."""
    from langgraph.checkpoint.base import empty_checkpoint

    checkpoint = empty_checkpoint()
    checkpoint["channel_values"] = {"turn_id": turn_id, "last_intents": last_intents}
    versions = {"turn_id": step, "last_intents": step}  # savers that keep values per channel version need them
    checkpoint["channel_versions"] = versions
    config = {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}
    await saver.aput(config, checkpoint, {"source": "loop", "step": step}, versions)


async def test_a_new_namespace_learns_what_followed_what_from_the_conversations_kept_once():
    from langgraph.checkpoint.memory import InMemorySaver

    from graph.next_turn import tool_turns

    saver = InMemorySaver()
    for thread in ("t1", "t2"):
        await _kept_turn(saver, thread, 1, f"{thread}a", ["salary"])
        await _kept_turn(saver, thread, 4, f"{thread}b", ["salary"])  # an FAQ answer in between leaves them
        await _kept_turn(saver, thread, 7, f"{thread}c", ["attendance"])
    await _kept_turn(saver, "warmup-x", 1, "w1", ["salary"])  # a server's warm-up is no conversation
    await _kept_turn(saver, "warmup-x", 4, "w2", ["leave_balance"])
    assert (await tool_turns(saver))["t1"] == [["salary"], ["attendance"]]
    nt = NextTurn(make_deps())
    assert await nt.seed_from_history(saver) == 2
    assert await nt.likely("salary", min_share=0.3, min_seen=2) == ["attendance"]
    assert await nt.seed_from_history(saver) == 0  # seeded once: live turns count from then on
    assert await nt.likely("salary", min_share=0.3, min_seen=3) == []


class HeldTools(FakeTools):
    """The fake backend, holding every call until `release` is set (a prefetch stays in flight, no sleeping)."""

    def __init__(self) -> None:
        super().__init__()
        self.release = asyncio.Event()
        self.entered = asyncio.Event()

    async def call(self, tool, args):
        self.entered.set()
        await self.release.wait()
        return await super().call(tool, args)


async def _prefetcher_that_expects_attendance_after_salary():
    deps = make_deps()
    deps.tools = HeldTools()
    nt = NextTurn(deps)
    for _ in range(2):
        await nt.learn(["salary"], ["attendance"])
    return deps, nt


async def test_a_call_still_running_when_the_next_question_comes_is_handed_to_that_turn_once():
    deps, nt = await _prefetcher_that_expects_attendance_after_salary()
    nt.launch("t1", "E1001", [], ["salary"], {"month": "2026-10"}, Context())
    await deps.tools.entered.wait()  # the attendance call reached the backend
    sig = signature("attendance", {"employee": "E1001", "month": "2026-10"})
    assert (await nt.collect("t1"))["in_flight"] == [sig]  # the next question: it may use the running call
    prefetched, ahead = nt.join("t1", {})
    assert list(prefetched) == [sig] and ahead == {sig}
    assert nt.join("t1", {}) == ({}, set())  # taken once
    deps.tools.release.set()
    outcome = await prefetched[sig]
    assert outcome.error is None and outcome.cache == "miss"


async def test_a_new_question_while_the_prefetcher_still_decides_stops_it_before_any_call():
    deps, nt = await _prefetcher_that_expects_attendance_after_salary()
    nt.launch("t1", "E1001", [], ["salary"], {"month": "2026-10"}, Context())
    job = nt._ahead["t1"].job  # learning from the turn, then deciding what to fetch
    assert await nt.collect("t1") == {"offered": [], "in_flight": [], "used": 0, "wasted": 0}
    await asyncio.wait([job])  # the job's end, whatever it was: an event, not a sleep
    assert job.cancelled() and deps.tools.calls == [] and not deps.tools.entered.is_set()
    assert nt.join("t1", {}) == ({}, set())
