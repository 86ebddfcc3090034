"""The router's decision travels through the state as its frozen dataclass: the checkpointers give it back as
it was (LangGraph strict about types or not), rows and traces get its plain-dict form, and the names of paths,
routes and outcomes agree with the graph's edges.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import get_args

import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langsmith._internal._serde import dumps_json

from app.resources import sqlite_saver
from app.turn import run_turn
from graph.context import Context
from graph.graph import ANSWER_OUTCOMES, build_desk, build_graph
from graph.paths import ROUTE_OF, AnsweredBy, Decision, Path, Route
from tests.unit.conftest import make_deps

CTX = Context(today="2026-11-29")
COMPOUND = "What is my salary this month and the weather in Paris?"
CFG = {"configurable": {"thread_id": "t"}}


async def _kept_decision(saver) -> tuple[Decision, Decision]:
    """A turn's decision as the run ended, and as the checkpointer gives it back."""
    graph = build_graph(make_deps(), checkpointer=saver)
    final = await graph.ainvoke({"messages": [HumanMessage(COMPOUND)], "user": "E1001"}, CFG, context=CTX)
    return final["router"], (await graph.aget_state(CFG)).values["router"]


async def test_the_decision_comes_back_from_the_checkpointer_as_it_was(tmp_path):
    ran, kept = await _kept_decision(InMemorySaver())
    assert isinstance(kept, Decision) and kept == ran and (kept.path, kept.label) == ("template", "compound")
    async with sqlite_saver(str(tmp_path / "turns.sqlite")) as saver:  # the app's
        ran, kept = await _kept_decision(saver)
    assert isinstance(kept, Decision) and kept == ran and kept.intents == ["salary", "weather"]


async def test_a_checkpointer_strict_about_types_keeps_the_decision_lang_graph_reads_from_the_state(monkeypatch):
    from langgraph._internal import _serde

    monkeypatch.setattr(_serde, "STRICT_MSGPACK_ENABLED", True)  # as LANGGRAPH_STRICT_MSGPACK=true does
    strict = InMemorySaver(serde=JsonPlusSerializer(allowed_msgpack_modules=None))  # nothing beyond the safe types
    ran, kept = await _kept_decision(strict)
    assert isinstance(kept, Decision) and kept == ran


async def test_rows_and_traces_get_the_decision_as_a_plain_dict():
    no_early_start = replace(CTX, early_embedding=False)  # the fake embedder has no thread to start it on
    row = await run_turn(build_desk(make_deps(), InMemorySaver()), COMPOUND, "E1001", None, no_early_start)
    assert row["router"] == {"path": "template", "label": "compound", "confidence": row["router"]["confidence"],
                             "intents": ["salary", "weather"], "faq_id": None, "reason": "every part is known",
                             "hinted_tools": [], "faq_candidate": None, "faq_parts": {}, "leave_type": None,
                             "lang": "en"}
    assert json.loads(json.dumps(row))["router"] == row["router"]  # `ask --json` prints it as it is
    traced = json.loads(dumps_json({"router": Decision("faq", "faq:payday", 0.9, faq_id="payday")}))
    assert traced["router"]["path"] == "faq" and traced["router"]["faq_id"] == "payday"


def test_every_path_but_writing_has_its_route_and_every_outcome_its_edge():
    assert set(ROUTE_OF) == set(get_args(Path)) - {"write"}  # a writing request is drafted or written by the LLM
    assert set(ROUTE_OF.values()) <= set(get_args(Route))
    assert set(ANSWER_OUTCOMES) == set(get_args(AnsweredBy)) - {"draft"}  # write_answer's own outcome


@pytest.mark.parametrize(("label", "small_talk"), [("other", True), ("handbook", False), ("compound", False)])
def test_small_talk_is_the_models_reading_sure_or_not(label, small_talk):
    for path in ("chat", "llm"):
        assert Decision(path, label, 0.5).small_talk is small_talk
