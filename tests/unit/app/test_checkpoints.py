"""A turn reads its conversation once: the owner check's read is where LangGraph's run starts."""

from __future__ import annotations

import sqlite3
from typing import Annotated, Any, TypedDict

import pytest
from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages

from app import turn
from app.checkpoints import held, read_once
from graph.context import Context


class _Counted(InMemorySaver):
    """The store, counting its reads of a thread's latest checkpoint."""

    reads: list[str] = []

    async def aget_tuple(self, config: Any) -> Any:
        _Counted.reads.append(config["configurable"]["thread_id"])
        return await super().aget_tuple(config)


class _Turn(TypedDict, total=False):
    messages: Annotated[list, add_messages]
    user: str
    answer: str


async def _reply(state: _Turn) -> dict:
    said = len(state["messages"])  # what the run started from: every earlier turn's messages, and this question
    return {"answer": f"{said} messages so far", "messages": [AIMessage(f"{said} messages so far")]}


def _graph() -> Any:
    builder = StateGraph(_Turn)
    builder.add_node("reply", _reply)
    builder.add_edge(START, "reply")
    builder.add_edge("reply", END)
    return builder.compile(checkpointer=read_once(_Counted)())


async def test_each_turn_of_a_conversation_reads_it_once_and_continues_it():
    graph, _Counted.reads = _graph(), []
    rows = [await turn.run_turn(graph, q, "E1001", "t1", Context()) for q in ("first", "second", "third")]
    assert [r["answer"] for r in rows] == ["1 messages so far", "3 messages so far", "5 messages so far"]
    assert _Counted.reads == ["t1", "t1", "t1"]  # the owner checks; LangGraph's starts read nothing more


async def test_a_conversation_started_here_is_not_read_at_all():
    graph, _Counted.reads = _graph(), []
    row = await turn.run_turn(graph, "first", "E1001", None, Context())  # a new thread id: nothing stored yet
    assert row["answer"] == "1 messages so far"
    assert _Counted.reads == []
    again = await turn.run_turn(graph, "second", "E1001", row["thread"], Context())
    assert again["answer"] == "3 messages so far" and _Counted.reads == [row["thread"]]


async def test_someone_elses_conversation_is_refused_from_the_same_read():
    graph, _Counted.reads = _graph(), []
    await turn.run_turn(graph, "mine", "E1001", "t2", Context())
    other = await turn.run_turn(graph, "let me in", "E2002", "t2", Context())
    assert other["route"] == "denied" and other["answer"] == turn.NOT_YOUR_CONVERSATION
    assert (await graph.aget_state({"configurable": {"thread_id": "t2"}})).values["answer"] == "1 messages so far"


async def test_only_the_turns_own_thread_and_latest_checkpoint_are_handed_on():
    saver = read_once(_Counted)()
    _Counted.reads = []
    with held("t3", None):
        assert await saver.aget_tuple({"configurable": {"thread_id": "other", "checkpoint_ns": ""}}) is None
        assert await saver.aget_tuple({"configurable": {"thread_id": "t3", "checkpoint_ns": "sub"}}) is None
        assert await saver.aget_tuple({"configurable": {"thread_id": "t3", "checkpoint_ns": "",
                                                        "checkpoint_id": "x"}}) is None
        assert _Counted.reads == ["other", "t3", "t3"]  # each went to the store
        assert await saver.aget_tuple({"configurable": {"thread_id": "t3", "checkpoint_ns": ""}}) is None
        assert await saver.aget_tuple({"configurable": {"thread_id": "t3", "checkpoint_ns": ""}}) is None
        assert _Counted.reads == ["other", "t3", "t3", "t3"]  # handed on once; the second read is the store's
    await saver.aget_tuple({"configurable": {"thread_id": "t3", "checkpoint_ns": ""}})
    assert len(_Counted.reads) == 5  # outside the block, every read is the store's


class _Busy:
    """A connection whose file is locked: every statement says so."""

    def execute(self, *_args):
        raise sqlite3.OperationalError("database is locked")

    def close(self):
        pass


@pytest.mark.parametrize("where", ["file", "memory", "busy"])
async def test_the_direct_read_returns_what_the_librarys_read_does(tmp_path, where):
    """Latest, by id, the first one (no parent), with pending writes, and a thread with none: as the library reads,
    on the loop's thread, and by aiosqlite's when there is no second connection or the file is busy.
    """
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    from app.checkpoints import SqliteSaver

    async with SqliteSaver.from_conn_string(":memory:" if where == "memory" else str(tmp_path / "c.sqlite")) as saver:
        assert (saver.reader is None) == (where == "memory")
        if where == "busy":
            saver.reader = _Busy()
        direct = where == "file"
        builder = StateGraph(_Turn)
        builder.add_node("reply", _reply)
        builder.add_edge(START, "reply")
        builder.add_edge("reply", END)
        graph = builder.compile(checkpointer=saver)
        for q in ("first", "second"):
            await turn.run_turn(graph, q, "E1001", "t4", Context())
        latest = {"configurable": {"thread_id": "t4", "checkpoint_ns": ""}}
        head = await AsyncSqliteSaver.aget_tuple(saver, latest)
        await saver.aput_writes(head.config, [("answer", "pending"), ("user", "E1001")], task_id="task-1")
        first = [t async for t in saver.alist(latest)][-1].config
        there = saver._read_there
        if direct:  # a file that is not busy is read on this thread alone
            saver._read_there = None  # type: ignore[method-assign]
        for config in (latest, head.config, first, {"configurable": {"thread_id": "none", "checkpoint_ns": ""}}):
            ours, theirs = await saver.aget_tuple(config), await AsyncSqliteSaver.aget_tuple(saver, config)
            assert ours == theirs, config
        assert (await saver.aget_tuple(latest)).pending_writes == [("task-1", "answer", "pending"),
                                                                  ("task-1", "user", "E1001")]
        assert (await saver.aget_tuple(first)).parent_config is None
        saver._read_there = there  # type: ignore[method-assign]
