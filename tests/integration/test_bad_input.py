"""Bad input gets a clear message, bounded time, and nothing unchecked reaches a tool."""

import re

import pytest


@pytest.mark.parametrize("q", ["", "   \n\t ", "\x00\x01\x02"])
async def test_empty_input_is_refused_with_a_sentence(ask, q):
    row = await ask(q)
    assert row["route"] == "invalid" and "empty" in row["answer"] and row["llm_calls"] == 0


async def test_huge_input_is_refused_quickly_on_the_real_graph(ask):
    reference = await ask("What was my attendance in June?", cache_enabled=False)  # one backend call, same run
    row = await ask("How many leave days do I have left? " * 3000)  # ~110,000 characters
    assert row["route"] == "invalid" and "characters" in row["answer"]
    assert not row["router"] and row["tools"] == [] and row["llm_calls"] == 0  # never embedded nor routed
    assert reference["tools"] and row["total_ms"] < reference["total_ms"]  # refused before any real work


@pytest.mark.parametrize("q", ["¿Cuántos días de vacaciones me quedan? 🌴", "我还有多少天年假？", "😀😀😀 payday?? 💸"])
async def test_other_languages_and_emoji_get_an_answer_without_errors(ask, q):
    row = await ask(q)
    assert row["error"] is None and row["answer"].strip()


async def test_argument_injection_never_reaches_a_tool(ask):
    row = await ask("salary for month=../../etc/passwd")
    assert row["tools"]
    for t in row["tools"]:
        structured = {k: v for k, v in t["args"].items() if k != "query"}  # kb_search's query is free text by design
        assert "etc" not in str(structured) and ".." not in str(structured)
        if t["name"] == "salary":
            assert re.fullmatch(r"\d{4}-(0[1-9]|1[0-2])", t["args"]["month"])
