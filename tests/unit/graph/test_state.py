"""The per-turn state: `merge_timings`, the reducer of `timings_ms` (node durations add up within a turn and start
afresh on the next, through LangGraph's `Overwrite`), and the fields a turn starts from, read from `State`."""

import operator
from typing import Annotated, TypedDict

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import Overwrite

from graph.state import State, merge_timings, turn_reset


def test_nothing_new_keeps_the_old_timings_as_a_copy():
    old = {"route": 1.5}
    for new in (None, {}):
        merged = merge_timings(old, new)
        assert merged == {"route": 1.5}
        merged["route"] = 99.0
        assert old == {"route": 1.5}  # the reducer never aliases the previous state
    assert merge_timings(None, None) == {}


def test_durations_of_the_same_node_add_up_and_new_nodes_are_added():
    assert merge_timings({"plan_tools": 1.25, "route": 2.0}, {"plan_tools": 0.5, "call_tools": 3.0}) == {
        "plan_tools": 1.75, "route": 2.0, "call_tools": 3.0}
    assert merge_timings(None, {"route": 2.0}) == {"route": 2.0}


def test_sums_are_rounded_to_microseconds():
    assert merge_timings({"a": 0.1}, {"a": 0.2}) == {"a": 0.3}
    assert merge_timings(None, {"a": 1.23456}) == {"a": 1.235}


def test_inputs_are_not_mutated():
    old, new = {"a": 1.0}, {"a": 2.0}
    merge_timings(old, new)
    assert old == {"a": 1.0} and new == {"a": 2.0}


def test_a_new_turn_starts_every_field_declared_per_turn_and_keeps_the_rest():
    fresh = turn_reset("t2", "and in May?")
    assert fresh["turn_id"] == "t2" and fresh["question"] == "and in May?"
    assert isinstance(fresh["timings_ms"], Overwrite)
    assert fresh["answer"] == "" and fresh["results"] == [] and fresh["router"] is None and fresh["llm_calls"] == 0
    assert not {"messages", "user", "profile", "last_intents", "last_slots"} & fresh.keys()  # the conversation's
    assert set(State.__annotations__) - fresh.keys() == {"messages", "user", "profile", "last_intents", "last_slots"}
    fresh["results"].append("x")
    assert turn_reset("t3", "q")["results"] == []  # each turn gets its own copy


class S(TypedDict, total=False):
    timings_ms: Annotated[dict[str, float], merge_timings]
    hops: Annotated[int, operator.add]


def _graph():
    """route_question resets; plan runs twice (a re-plan) and two branches run in the same step."""
    g = StateGraph(S)
    g.add_node("route_question", lambda s: {"timings_ms": Overwrite({"route_question": 1.0})})
    g.add_node("plan", lambda s: {"timings_ms": {"plan": 2.0}, "hops": 1})
    g.add_node("tools_a", lambda s: {"timings_ms": {"tools_a": 3.0}})
    g.add_node("tools_b", lambda s: {"timings_ms": {"tools_b": 4.0}})
    g.add_edge(START, "route_question")
    g.add_edge("route_question", "plan")
    g.add_conditional_edges("plan", lambda s: "plan" if s.get("hops", 0) % 2 else ["tools_a", "tools_b"])
    g.add_edge("tools_a", END)
    g.add_edge("tools_b", END)
    return g.compile(checkpointer=InMemorySaver())


async def test_in_a_graph_each_turn_reports_only_its_own_node_times():
    graph = _graph()
    cfg = {"configurable": {"thread_id": "t"}}
    first = await graph.ainvoke({}, cfg)
    expected = {"route_question": 1.0, "plan": 4.0, "tools_a": 3.0, "tools_b": 4.0}  # plan ran twice; branches merged
    assert first["timings_ms"] == expected
    second = await graph.ainvoke({}, cfg)  # same thread: the checkpoint holds the first turn's timings
    assert second["timings_ms"] == expected
