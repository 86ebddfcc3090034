"""One turn at a time per conversation: the answer reaches the caller before the turn is recorded, so a next
question of the same thread waits for that record and then reads it.
"""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Annotated, TypedDict

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages

from app import turn
from graph.context import Context
from graph.graph import build_desk
from graph.kit import emit
from tests.unit.conftest import FAQ, make_deps


class FakeGraph:
    """Streams its answer at once, then holds the turn open (its bookkeeping) until released."""

    def __init__(self) -> None:
        self.log: list[str] = []
        self.release = asyncio.Event()
        self.recorded: dict[str, str] = {}

    async def aget_state(self, config):
        thread = config["configurable"]["thread_id"]
        self.log.append(f"read {thread}: {self.recorded.get(thread)}")
        return SimpleNamespace(values={"user": "E1001"} if thread in self.recorded else {})

    async def astream(self, inp, config, **kw):
        thread, q = config["configurable"]["thread_id"], inp["messages"][0].content
        yield "custom", {"answer_delta": f"answer to {q}"}
        if q == "first":
            await self.release.wait()  # the checkpoint write, after the text went out
        self.recorded[thread] = q
        self.log.append(f"recorded {thread}: {q}")
        yield "values", {"answer": f"answer to {q}", "route": "faq"}


async def test_a_next_question_of_the_thread_waits_until_the_last_turn_is_recorded():
    graph = FakeGraph()
    seen = asyncio.Event()
    first = asyncio.create_task(turn.run_turn(graph, "first", "E1001", "t1", Context(), on_delta=lambda _: seen.set()))
    await seen.wait()  # the caller has the first answer; its turn is not recorded yet
    second = asyncio.create_task(turn.run_turn(graph, "second", "E1001", "t1", Context()))
    other = await turn.run_turn(graph, "elsewhere", "E1001", "t2", Context())  # another thread does not wait
    assert other["answer"] == "answer to elsewhere" and not second.done()
    graph.release.set()
    rows = await asyncio.gather(first, second)
    assert [r["answer"] for r in rows] == ["answer to first", "answer to second"]
    assert rows[0]["ttft_ms"] is not None and rows[0]["ttft_ms"] <= rows[0]["total_ms"]
    t1 = [e for e in graph.log if "t1" in e]
    assert t1 == ["read t1: None", "recorded t1: first", "read t1: first", "recorded t1: second"]
    assert len(turn.THREAD_TURNS) == 0  # no lock kept for a finished conversation


class _Turn(TypedDict, total=False):
    messages: Annotated[list, add_messages]
    user: str
    answer: str


async def test_the_answer_reaches_the_caller_while_the_step_that_wrote_it_still_runs():
    """run_turn's sink: a node's emitted text is the caller's at once, not when LangGraph next streams."""
    got: list[str] = []
    in_step: list[list[str]] = []

    async def answer(state: _Turn) -> dict:
        emit("Payday is the 25th.")
        in_step.append(list(got))  # what the caller had before this step returned or yielded to the loop
        return {"answer": "Payday is the 25th."}

    builder = StateGraph(_Turn)
    builder.add_node("answer", answer)
    builder.add_edge(START, "answer")
    builder.add_edge("answer", END)
    row = await turn.run_turn(builder.compile(), "When do we get paid?", "E1001", None, Context(), on_delta=got.append)
    assert in_step == [["Payday is the 25th."]]
    assert got == ["Payday is the 25th."]  # once: not again through the custom stream
    assert row["ttft_ms"] is not None and row["ttft_ms"] <= row["total_ms"]


class _SlowStore(InMemorySaver):
    """A conversation store whose reads wait until released: LangGraph's start of the run, held up."""

    def __init__(self) -> None:
        super().__init__()
        self.release, self.reads = asyncio.Event(), 0

    async def aget_tuple(self, config):
        self.reads += 1
        await self.release.wait()
        return await super().aget_tuple(config)


async def test_an_faq_answer_reaches_the_caller_before_langgraph_has_read_the_conversation():
    store, got, arrived = _SlowStore(), [], asyncio.Event()
    desk = build_desk(make_deps(), store)
    task = asyncio.create_task(turn.run_turn(desk, "When is payday?", "E1001", None, Context(today="2026-11-29"),
                                             on_delta=lambda text: (got.append(text), arrived.set())))
    await asyncio.wait_for(arrived.wait(), 5)
    assert store.reads == 1 and "".join(got) == FAQ["payday"].answer  # LangGraph's read is still held up
    store.release.set()
    row = await task
    assert row["route"] == "faq" and row["answer"] == FAQ["payday"].answer
    assert "".join(got) == FAQ["payday"].answer  # once: route_question's same text is not sent again


async def test_langgraph_starts_once_the_early_answer_has_gone():
    """Its start would hold the event loop while the early answer's replies wait (`Context.early_first`)."""
    store, reads_at_text = _SlowStore(), []
    store.release.set()
    desk = build_desk(make_deps(), store)
    for early_first in (True, False):
        row = await turn.run_turn(desk, "When is payday?", "E1001", None,
                                  Context(today="2026-11-29", early_first=early_first),
                                  on_delta=lambda _text: reads_at_text.append(store.reads))
        assert row["route"] == "faq" and row["answer"] == FAQ["payday"].answer
    assert reads_at_text[0] == 0  # early first: nothing of the run had started when the text went
    assert reads_at_text[1] == 2  # otherwise LangGraph's read of the new thread came first


async def test_without_the_early_answer_the_text_waits_for_the_graph_and_is_the_same():
    store, got = _SlowStore(), []
    desk = build_desk(make_deps(), store)
    ctx = Context(today="2026-11-29", early_answer=False)
    task = asyncio.create_task(turn.run_turn(desk, "When is payday?", "E1001", None, ctx, on_delta=got.append))
    for _ in range(50):
        await asyncio.sleep(0)
    assert got == []
    store.release.set()
    row = await task
    assert row["route"] == "faq" and "".join(got) == row["answer"] == FAQ["payday"].answer


async def test_someone_elses_conversation_gets_no_early_answer():
    store = _SlowStore()
    store.release.set()
    deps = make_deps()
    desk = build_desk(deps, store)
    first = await turn.run_turn(desk, "When is payday?", "E1001", None, Context(today="2026-11-29"))
    store.release.clear()  # the owner check's read is held up while the early decision is made
    calls = _counted(deps)
    got: list[str] = []
    task = asyncio.create_task(turn.run_turn(desk, "When is payday?", "E2002", first["thread"],
                                             Context(today="2026-11-29"), on_delta=got.append))
    for _ in range(100):  # the early decision is made and its text held
        await asyncio.sleep(0)
    assert calls == ["When is payday?"] and got == [] and not task.done()
    store.release.set()
    row = await task
    assert row["route"] == "denied" and row["answer"] == turn.NOT_YOUR_CONVERSATION and got == []


async def test_someone_elses_conversation_gets_no_early_template_answer():
    store = _SlowStore()
    store.release.set()
    desk = build_desk(make_deps(), store)
    question = "What is my salary this month and the weather in Paris?"
    await turn.run_turn(desk, question, "E2002", None, Context(today="2026-11-29"))  # the cache holds E2002's answer
    first = await turn.run_turn(desk, "When is payday?", "E1001", None, Context(today="2026-11-29"))
    store.release.clear()  # the owner check's read is held up while the early plan is made
    got: list[str] = []
    task = asyncio.create_task(turn.run_turn(desk, question, "E2002", first["thread"], Context(today="2026-11-29"),
                                             on_delta=got.append))
    for _ in range(200):  # the early plan is made and its text held
        await asyncio.sleep(0)
    assert got == [] and not task.done()
    store.release.set()
    row = await task
    assert row["route"] == "denied" and row["answer"] == turn.NOT_YOUR_CONVERSATION and got == []


@pytest.mark.parametrize("held", [True, False])
async def test_a_template_turn_answers_with_the_profile_its_conversation_pinned(held):
    """The early plan reads the caller's profile from Redis; when it changed since the conversation began (the
    employee moved city), nothing planned with it goes: the turn answers with the pinned one, as route_question
    plans it. `held`: the plan is made while the owner check's read is held up (else after it).
    """
    store, deps = _SlowStore(), make_deps()
    store.release.set()
    desk = build_desk(deps, store)
    ctx = Context(today="2026-11-29")
    first = await turn.run_turn(desk, "What's the weather today?", "E1001", None, ctx)  # Berlin, pinned
    await turn.run_turn(desk, "What's the weather in Paris today?", "E1001", None, ctx)  # the cache holds Paris too
    profile = deps.profile

    async def moved(user):
        return {**(await profile(user)), "city": "Paris"}

    deps.profile = moved  # type: ignore[method-assign]
    if held:
        store.release.clear()
    got: list[str] = []
    task = asyncio.create_task(turn.run_turn(desk, "What's the weather today?", "E1001", first["thread"], ctx,
                                             on_delta=got.append))
    for _ in range(200):  # the early plan is made (with Paris); held: its text waits for the owner check
        await asyncio.sleep(0)
    assert got == [] or not held
    store.release.set()
    row = await task
    assert "Berlin" in row["answer"] and "Paris" not in row["answer"]
    assert "".join(got).strip() == row["answer"].strip() == first["answer"].strip()  # once, the pinned city's
    fresh = await turn.run_turn(desk, "What's the weather today?", "E1001", None, ctx)  # a new conversation
    assert "Paris" in fresh["answer"] and [t["cache"] for t in fresh["tools"]] == ["hit"]


async def test_a_continuing_conversation_keeps_its_early_template_answer(monkeypatch):
    """The profile pinned in the checkpoint (serialized and read back) is the one Redis holds: the plan stands."""
    from graph import early

    store, deps = _SlowStore(), make_deps()
    store.release.set()
    desk = build_desk(deps, store)
    ctx = Context(today="2026-11-29")
    question = "What is my salary this month and the weather in Paris?"
    first = await turn.run_turn(desk, question, "E1001", None, ctx)  # pins the profile, fills the cache
    made = []
    start = early.start

    def kept(*args, **kwargs):
        made.append(start(*args, **kwargs))
        return made[-1]

    monkeypatch.setattr(early, "start", kept)
    row = await turn.run_turn(desk, question, "E1001", first["thread"], ctx)
    plan = made[0].planned.result()
    assert plan is not None and early.agrees(made[0].pin, plan.profile)  # taken as planned early
    assert row["answer"] == first["answer"] and [t["cache"] for t in row["tools"]] == ["hit", "hit"]


async def test_a_template_answer_the_cache_lacks_waits_for_its_tools():
    store, got = _SlowStore(), []
    desk = build_desk(make_deps(), store)
    task = asyncio.create_task(turn.run_turn(desk, "What was my salary last month?", "E1001", None,
                                             Context(today="2026-11-29"), on_delta=got.append))
    for _ in range(100):
        await asyncio.sleep(0)
    assert got == [] and store.reads == 1  # planned early, but nothing to say before the tools
    store.release.set()
    row = await task
    assert row["route"] == "template" and "".join(got).strip() == row["answer"].strip()


async def test_a_template_answer_the_cache_holds_reaches_the_caller_before_langgraph_has_read_the_conversation():
    store, deps = _SlowStore(), make_deps()
    store.release.set()
    desk = build_desk(deps, store)
    question = "What is my salary this month and the weather in Paris?"
    first = await turn.run_turn(desk, question, "E1001", None, Context(today="2026-11-29"))  # fills the cache
    store.release.clear()
    profiles: list[str] = []
    profile = deps.profile

    async def counted(user):
        profiles.append(user)
        return await profile(user)

    deps.profile = counted  # type: ignore[method-assign]
    got: list[str] = []
    arrived = asyncio.Event()
    task = asyncio.create_task(turn.run_turn(desk, question, "E1001", None, Context(today="2026-11-29"),
                                             on_delta=lambda text: (got.append(text), arrived.set())))
    await asyncio.wait_for(arrived.wait(), 5)
    assert store.reads == 2 and "".join(got).strip() == first["answer"].strip()  # the read is still held up
    store.release.set()
    row = await task
    assert row["route"] == "template" and [t["cache"] for t in row["tools"]] == ["hit", "hit"]
    assert "".join(got).strip() == row["answer"].strip() == first["answer"].strip()  # once, as the graph wrote it
    assert profiles == ["E1001"]  # planned once: route_question took the early plan


def _counted(deps) -> list[str]:
    """The questions the router decides, in order."""
    calls: list[str] = []
    decide = deps.router.decide

    async def counted(question, *args, **kwargs):
        calls.append(question)
        return await decide(question, *args, **kwargs)

    deps.router.decide = counted
    return calls


async def test_route_question_takes_the_early_decision_as_its_own():
    deps = make_deps()
    calls = _counted(deps)
    desk = build_desk(deps, InMemorySaver())
    faq = await turn.run_turn(desk, "When is payday?", "E1001", None, Context(today="2026-11-29"))
    template = await turn.run_turn(desk, "What was my salary last month?", "E1001", faq["thread"],
                                   Context(today="2026-11-29"))
    assert (faq["route"], template["route"]) == ("faq", "template")
    assert calls == ["When is payday?", "What was my salary last month?"]  # once each: the graph took it
    follow_up = await turn.run_turn(desk, "and last month?", "E1001", faq["thread"], Context(today="2026-11-29"))
    assert follow_up["route"] == "template" and calls[2:] == ["and last month?"] * 2  # the graph decides it again
    off = await turn.run_turn(desk, "When is payday?", "E1001", None, Context(today="2026-11-29", early_answer=False))
    assert off["route"] == "faq" and calls[4:] == ["When is payday?"]
