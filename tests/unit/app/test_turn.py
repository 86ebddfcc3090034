"""One turn at a time per conversation: the answer reaches the caller before the turn is recorded, so a next
question of the same thread waits for that record and then reads it.
"""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Annotated, TypedDict

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.config import get_stream_writer
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages

from app import turn
from graph.context import Context
from graph.graph import build_desk
from graph.kit import emit
from tests.unit.conftest import make_deps
from tools.i18n import say


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


async def test_the_caller_gets_the_graphs_stream_once_and_the_row_records_the_final_state():
    """Answer text reaches the caller only through LangGraph's stream (custom `answer_delta` events): other custom
    events are not text, and the row's answer is the graph's final state.
    """
    got: list[str] = []

    async def answer(state: _Turn) -> dict:
        emit("Payday is ")
        get_stream_writer()({"progress": "looked it up"})  # not answer text
        emit("the 25th.")
        return {"answer": "Payday is the 25th."}

    builder = StateGraph(_Turn)
    builder.add_node("answer", answer)
    builder.add_edge(START, "answer")
    builder.add_edge("answer", END)
    row = await turn.run_turn(builder.compile(), "When do we get paid?", "E1001", None, Context(), on_delta=got.append)
    assert got == ["Payday is ", "the 25th."] and row["answer"] == "Payday is the 25th."
    assert row["ttft_ms"] is not None and row["ttft_ms"] <= row["total_ms"]


def _counted(deps) -> list[str]:
    """The questions the router decides, in order."""
    calls: list[str] = []
    decide = deps.router.decide

    async def counted(question, *args, **kwargs):
        calls.append(question)
        return await decide(question, *args, **kwargs)

    deps.router.decide = counted
    return calls


@pytest.mark.parametrize(("question", "route"), [
    ("When is payday?", "faq"),
    ("What was my salary last month?", "template"),
    ("What should I wear in Paris tomorrow?", "template"),
    ("What is E1002's salary?", "refused"),
    ("", "invalid"),
])
async def test_what_the_caller_sees_is_what_the_graph_recorded_and_the_route_is_decided_once(question, route):
    deps = make_deps()
    calls = _counted(deps)
    desk = build_desk(deps, InMemorySaver())
    for attempt in range(2):  # the second time, template results come from the cache
        got: list[str] = []
        row = await turn.run_turn(desk, question, "E1001", None, Context(today="2026-11-29"), on_delta=got.append)
        assert row["route"] == route and row["answer"]
        assert " ".join("".join(got).split()) == " ".join(row["answer"].split()), "one answer, the graph's"
        state = (await desk.graph.aget_state({"configurable": {"thread_id": row["thread"]}})).values
        assert state["answer"] == row["answer"] and state["messages"][-1].content == row["answer"]
        assert len(calls) == (attempt + 1 if question else 0)  # one decision per turn, in the graph


async def test_someone_elses_conversation_is_refused_before_the_graph_reads_it():
    deps = make_deps()
    calls = _counted(deps)
    desk = build_desk(deps, InMemorySaver())
    mine = await turn.run_turn(desk, "What was my salary last month?", "E1001", None, Context(today="2026-11-29"))
    got: list[str] = []
    theirs = await turn.run_turn(desk, "When is payday?", "E1002", mine["thread"], Context(today="2026-11-29"),
                                 on_delta=got.append)
    assert theirs["route"] == "denied" and theirs["answer"] == "" and got == []
    assert theirs["failure"] == {"kind": "not_your_conversation", "status": 403, "message": theirs["error"]}
    assert theirs["error"] == say("not_your_conversation")
    assert calls == ["What was my salary last month?"]  # the intruder's question was never routed
    state = (await desk.graph.aget_state({"configurable": {"thread_id": mine["thread"]}})).values
    assert [m.content for m in state["messages"]][-2:] == ["What was my salary last month?", mine["answer"]]
