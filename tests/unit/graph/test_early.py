"""The early FAQ answer decides as route_question does: the same entry's text, and nothing for anything else."""

from __future__ import annotations

from dataclasses import replace

import pytest

from graph.context import Context
from graph.early import faq_text
from tests.unit.conftest import FAQ, make_deps

CTX = Context(today="2026-11-29")


@pytest.mark.parametrize("question", ["When is payday?", "  what day do we get   paid? "])
async def test_an_faq_question_gets_its_entrys_text(question):
    assert await faq_text(make_deps(), question, "e1001", CTX) == FAQ["payday"].answer


@pytest.mark.parametrize(("question", "user", "ctx"), [
    ("What was my salary last month?", "E1001", CTX),  # a template path
    ("What is E1002's salary?", "E1001", CTX),  # someone else's data: refused by the graph
    ("When is payday?", "not-an-employee", CTX),  # bad input: the graph says so
    ("When is payday?" + " now" * 2000, "E1001", CTX),  # too long: the graph says so
    ("", "E1001", CTX),
    ("When is payday?", "E1001", replace(CTX, faq_enabled=False)),  # the shortcut is off
    ("Wann ist Zahltag?", "E1001", CTX),  # not English: the graph answers in one sentence
])
async def test_nothing_else_is_answered_early(question, user, ctx):
    assert await faq_text(make_deps(), question, user, ctx) is None
