"""The LLM steps' safety nets: plans repaired by slot filling, answers cut when they start repeating."""

import re

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage

from graph.llm import plan_names_regex, plan_tools, repair_plan, repeat_start

SLOTS = {"month": "2026-10", "date": "2026-11-30", "city": "Rome", "leave_type": "sick"}


def test_repair_plan_keeps_known_tools_once_and_fills_their_arguments():
    raw = [{"tool": "salary", "args": {"employee": "E1999", "month": "last"}}, {"tool": "salary"},
           "not a call", {"tool": "clothing_advice"}, {"tool": "launch_rockets"}]  # at most 4 calls are read
    plan = repair_plan(raw, SLOTS, "E1001", "pay and what to wear")
    assert [c["name"] for c in plan] == ["weather", "salary", "clothing_advice"]  # its input comes first
    assert plan[1]["args"] == {"employee": "E1001", "month": "2026-10"}  # the caller, never the model's id
    assert plan[0]["args"] == {"city": "Rome", "date": "2026-11-30"}
    assert plan[2]["depends_on"] == ["weather"] and plan[2]["args"]["temperature"] == "@weather.temperature_c"


def test_repair_plan_of_nothing_is_an_empty_plan():
    assert repair_plan([], SLOTS, "E1001", "hi") == []


def test_an_answer_that_starts_repeating_is_cut_where_the_repeat_begins():
    loop = "You can ask HR in MyHR for the form. " * 4
    cut = repeat_start(loop)
    assert cut is not None and loop[:cut].strip() == "You can ask HR in MyHR for the form."
    assert repeat_start("Paternity leave is 4 weeks at full pay. Agree the dates with your manager.") is None
    assert repeat_start("") is None


@pytest.mark.parametrize("reply, tools", [("weather, clothing_advice", ["weather", "clothing_advice"]),
                                          ("none", []), ("kb_search", ["kb_search"]),
                                          ('{"calls": [{"tool": "salary"}]}', ["salary"]),  # JSON still read
                                          ("this is not a plan", [])])
async def test_a_plan_of_tool_names_is_read_as_calls(reply, tools):
    llm = GenericFakeChatModel(messages=iter([AIMessage(reply)]))
    calls = await plan_tools(llm, [HumanMessage("q")], 40, with_args=False)
    assert [c["tool"] for c in calls] == tools


def test_the_names_constraint_allows_up_to_three_known_tools_or_none():
    assert re.fullmatch(plan_names_regex(), "weather, clothing_advice, kb_search")
    assert re.fullmatch(plan_names_regex(), "none")
    assert not re.fullmatch(plan_names_regex(), "weather, payroll_dump")
    assert not re.fullmatch(plan_names_regex(), "salary, salary, salary, salary")


async def test_a_cut_answer_closes_its_stream_before_it_returns():
    """A cut answer's request is aborted in vLLM only when its stream is closed: closed before the answer goes
    back, the server stops decoding for nobody (left to the garbage collector, it went on for 50-100 ms).
    """
    from graph.llm import write_answer

    closed: list[bool] = []
    sentence = "Your leave request goes to your manager first. "

    class Streamed:
        def bind(self, **_kw):
            return self

        def with_config(self, **_kw):
            return self

        async def astream(self, _messages):
            try:
                for _ in range(50):
                    yield AIMessage(sentence)
            finally:
                closed.append(True)

    shown: list[str] = []
    text = await write_answer(Streamed(), [HumanMessage("leave?")], 200, shown.append)  # type: ignore[arg-type]
    assert closed == [True]  # the request's stream was closed by the time the answer came back
    assert text.startswith(sentence.strip()) and text.count(sentence.strip()) < 5  # the repeat was cut off
