"""A handbook answer noted beside its search's cache entry goes out as soon as the router decides, and only while
the entry holds the result it was drawn from (graph/held_answers.py).
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from app.turn import run_turn
from graph import held_answers
from graph.context import Context
from graph.early import start
from graph.graph import build_desk
from graph.paths import Decision
from tests.unit.conftest import make_deps

CTX = Context(today="2026-11-29")
QUESTION = "Where is the fire exit policy?"  # the fake router's handbook question
RESULT = {"passages": [{"title": "Safety", "text": "Fire exits are marked in green.", "score": 0.8}]}


def _held(deps, answer: str = "Fire exits are marked in green.", result=RESULT, ctx: Context = CTX) -> tuple[str, str]:
    entry, note = held_answers.keys(deps, QUESTION, "E1001")
    deps.cache.store[entry] = result
    deps.cache.store[note] = held_answers._note(result, answer, ctx)
    return entry, note


def test_a_note_holds_only_for_the_result_threshold_and_recipe_it_was_drawn_from():
    deps = make_deps()
    entry, note = _held(deps)
    assert held_answers.kept(deps.cache.store, entry, note, CTX) == "Fire exits are marked in green."
    changed = {**deps.cache.store, entry: {"passages": [{**RESULT["passages"][0], "text": "Use the stairs."}]}}
    assert held_answers.kept(changed, entry, note, CTX) is None  # the entry was written again since
    assert held_answers.kept(deps.cache.store, entry, note, replace(CTX, kb_answer_threshold=0.9)) is None
    assert held_answers.kept({note: deps.cache.store[note]}, entry, note, CTX) is None  # the entry is gone
    assert held_answers.kept({entry: RESULT}, entry, note, CTX) is None  # nothing noted
    stale = {**deps.cache.store, note: {**deps.cache.store[note], "recipe": held_answers.RECIPE - 1}}
    assert held_answers.kept(stale, entry, note, CTX) is None


@pytest.mark.parametrize(("decision", "ctx", "applies"), [
    (Decision("handbook", "handbook", 0.9), CTX, True),
    (Decision("handbook", "handbook", 0.9), replace(CTX, cache_enabled=False), False),  # the graph asks afresh
    (Decision("handbook", "handbook", 0.9), replace(CTX, templates_enabled=False), False),  # the LLM answers
    (Decision("llm", "handbook", 0.4), CTX, False),  # not sure: the LLM path's answer
    (Decision("handbook", "handbook", 0.9, faq_candidate="payday"), CTX, False),  # offered as the closest FAQ
])
def test_only_a_lone_handbook_answer_from_the_cache_is_noted_or_sent(decision, ctx, applies):
    assert held_answers.applies(decision, ctx) is applies


async def _sent(deps, ctx: Context = CTX) -> list[list[str]]:
    sent: list[list[str]] = []
    early = start(deps, QUESTION, "E1001", ctx, sent.append)
    assert early is not None
    await early.task
    return sent


async def test_the_noted_answer_goes_early_read_with_the_read_ahead():
    deps = make_deps()
    entry, note = _held(deps, "Fire exits are marked in green. Ask facilities.")
    sent = await _sent(deps)
    assert sent == [["Fire exits are marked in green. ", "Ask facilities."]]  # as the graph streams it
    assert [k for k in deps.cache.peeked if entry in k] == [deps.cache.peeked[0]]  # one read, the read-ahead's
    assert note in deps.cache.peeked[0]


async def test_without_the_read_ahead_it_is_read_after_the_decision():
    deps = make_deps()
    entry, note = _held(deps)
    assert await _sent(deps, replace(CTX, early_read_ahead=False)) == [["Fire exits are marked in green."]]
    assert deps.cache.peeked == [[entry, note]]


async def test_a_note_the_entry_no_longer_holds_for_sends_nothing():
    deps = make_deps()
    entry, _ = _held(deps)
    deps.cache.store[entry] = {"passages": []}  # the search's result was written again since
    asked: list[str] = []
    deps.prefetch_search_embedding = asked.append  # type: ignore[method-assign]
    assert await _sent(deps) == []
    assert asked == [QUESTION]  # the graph's search and answer still need the shared embedding


async def test_the_graph_notes_its_handbook_answer_and_the_same_words_get_it_early():
    deps = make_deps()
    desk = build_desk(deps, InMemorySaver())
    first = await run_turn(desk, QUESTION, "E1001", None, CTX)
    assert first["answered_by"] == "not_in_handbook" and first["tools"][0]["name"] == "kb_search"
    entry, note = held_answers.keys(deps, QUESTION, "E1001")
    assert held_answers.kept(deps.cache.store, entry, note, CTX) == first["answer"]
    order: list[str] = []
    again = await run_turn(desk, QUESTION, "E1001", None, CTX, on_delta=lambda _t: order.append("text"),
                           on_update=lambda node, _u: order.append(node))
    assert again["answer"] == first["answer"] and order[0] == "text"  # before the graph's first step ended


async def test_a_compound_requests_handbook_part_is_not_noted():
    deps = make_deps()
    await run_turn(build_desk(deps, InMemorySaver()), QUESTION + " And what is my salary this month?", "E1001",
                   None, CTX)
    assert not [k for k in deps.cache.store if k.endswith(":a")]
