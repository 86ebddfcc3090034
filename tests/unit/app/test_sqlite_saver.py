"""The app's SQLite conversation store: what one turn writes, the next turn, the thread listing (next-turn
prefetch's warm-up) and a deletion read back, as LangGraph's own saver would.
"""

from __future__ import annotations

import asyncio

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.graph import END, START, MessagesState, StateGraph

from app.resources import sqlite_saver


def _echo_graph(saver):
    async def answer(state: MessagesState) -> dict:
        return {"messages": [AIMessage(f"you said: {state['messages'][-1].content}")]}

    builder = StateGraph(MessagesState)
    builder.add_node("answer", answer)
    builder.add_edge(START, "answer")
    builder.add_edge("answer", END)
    return builder.compile(checkpointer=saver)


async def test_a_conversation_is_kept_listed_and_deleted(tmp_path):
    config = {"configurable": {"thread_id": "t1"}}
    async with sqlite_saver(str(tmp_path / "turns.sqlite")) as saver:
        graph = _echo_graph(saver)
        await graph.ainvoke({"messages": [HumanMessage("payday?")]}, config, durability="exit")
        final = await graph.ainvoke({"messages": [HumanMessage("and leave?")]}, config, durability="exit")
        assert [m.content for m in final["messages"]] == ["payday?", "you said: payday?", "and leave?",
                                                           "you said: and leave?"]  # turn 2 read turn 1
        listed = [c async for c in saver.alist(None)]
        assert len(listed) == 2 and {c.config["configurable"]["thread_id"] for c in listed} == {"t1"}
        await saver.adelete_thread("t1")
        assert await saver.aget_tuple(config) is None
    async with sqlite_saver(str(tmp_path / "turns.sqlite")) as again:  # on disk, not in the process
        assert [c async for c in again.alist(None)] == []


async def test_turns_of_many_conversations_at_once_each_keep_their_own(tmp_path):
    async with sqlite_saver(str(tmp_path / "turns.sqlite")) as saver:
        graph = _echo_graph(saver)

        async def listed() -> int:  # warm-up's listing on a worker thread, beside the turns inline
            return len([c async for c in saver.alist(None)])

        async def converse(k: int) -> list[str]:
            config = {"configurable": {"thread_id": f"t{k}"}}
            await graph.ainvoke({"messages": [HumanMessage(f"q{k}")]}, config, durability="exit")
            final = await graph.ainvoke({"messages": [HumanMessage(f"again {k}")]}, config, durability="exit")
            return [m.content for m in final["messages"]]

        *kept, _ = await asyncio.gather(*(converse(k) for k in range(16)), listed())
        assert await listed() == 32
    for k, messages in enumerate(kept):
        assert messages == [f"q{k}", f"you said: q{k}", f"again {k}", f"you said: again {k}"]
