from langchain_core.messages import AIMessage, HumanMessage

from graph.prompts import answer_messages, answer_system, plan_schema, planner_messages, planner_system
from graph.pruning import prune, turns
from tools.registry import TOOLS

ANNA = {"id": "E1001", "name": "Anna", "city": "Amsterdam", "department": "IT"}
BEN = {"id": "E1002", "name": "Ben", "city": "Berlin", "department": "Finance"}


def test_static_prefix_is_byte_identical_across_requests():
    a = planner_messages(ANNA, "2026-11-29", [], "What is the weather?")
    b = planner_messages(BEN, "2026-12-01", [HumanMessage("hi"), AIMessage("hello")], "salary?")
    assert a[0].content == b[0].content == planner_system()
    assert a[1].content != b[1].content  # caller and date come after the prefix
    c = answer_messages(ANNA, "2026-11-29", [], "q1", "r1")
    d = answer_messages(BEN, "2026-11-30", [], "q2", "r2")
    assert c[0].content == d[0].content == answer_system()
    assert "E1001" not in planner_system() and "2026" not in answer_system()
    assert "Brightmart" in planner_system() and "{" not in answer_system()  # the company's name, from its folder


def test_plan_schema_names_only_known_tools():
    schema = plan_schema()
    names = {v["properties"]["tool"]["const"] for v in schema["properties"]["calls"]["items"]["anyOf"]}
    assert names == set(TOOLS)


def _history(n):
    msgs = []
    for i in range(n):
        msgs += [HumanMessage(f"question {i} about topic{i}"), AIMessage(f"answer {i} about topic{i}")]
    return msgs


def test_pruning_keeps_last_two_turns_and_relevant_older_ones():
    history = _history(12)
    history[4] = HumanMessage("what about my hotel allowance in Paris")
    kept = prune(history, "and the hotel limit in Paris?", keep_last=2, keep_relevant=2)
    texts = [m.content for m in kept]
    assert texts[-4:] == [m.content for m in history[-4:]]  # last two turns, in order
    assert "what about my hotel allowance in Paris" in texts  # the relevant old turn
    assert len(turns(kept)) <= 4
    assert "question 1 about topic1" not in texts  # irrelevant old turns dropped


def test_short_history_is_kept_whole():
    history = _history(2)
    assert prune(history, "anything") == history
