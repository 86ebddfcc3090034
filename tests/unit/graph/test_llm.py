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


class _Tokens:
    """A chat model streaming the given pieces, then failing when `fail` says so (a server that went away)."""

    def __init__(self, pieces: list[str], fail: bool = False) -> None:
        self.pieces, self.fail = pieces, fail

    def bind(self, **_kw):
        return self

    def with_config(self, **_kw):
        return self

    async def astream(self, _messages):
        for piece in self.pieces:
            yield AIMessage(piece)
        if self.fail:
            raise ConnectionError("server went away")


def _tokens(text: str) -> list[str]:
    """The text as a model streams it: a few characters a piece, words split across pieces."""
    return [text[i:i + 3] for i in range(0, len(text), 3)]


@pytest.mark.parametrize("reply", [
    "  Yes, yes, yes, yes, yes, yes, yes, yes, yes, yes, yes, yes, yes, yes",
    "You can ask HR in the portal for the form. You can ask HR in the portal for the form. You can ask",
    "Paternity leave is 4 weeks at full pay. Agree the dates with your manager.  ",
    "是的 是的 是的 是的 是的 是的 是的 是的 是的 是的 是的 是的",
    "您的工资单在门户网站的工资栏目下。您的工资单在门户网站的工资栏目下。您的工资单",
    "One two."])
async def test_what_streams_is_exactly_the_answer_even_when_it_is_cut(reply):
    from graph.llm import write_answer

    shown: list[str] = []
    text = await write_answer(_Tokens(_tokens(reply)), [HumanMessage("q")], 200, shown.append,  # type: ignore[arg-type]
                              lead="Note: ")
    assert "".join(shown) == text and text.startswith("Note: ") and repeat_start(text) is None
    assert reply.strip().startswith(text.removeprefix("Note: "))


async def test_an_answer_the_model_stops_sending_says_so_and_keeps_what_streamed():
    from graph.llm import LLMUnavailable, write_answer

    shown: list[str] = []
    text = await write_answer(_Tokens(_tokens("Your payslip is in the portal under Pay"), fail=True),  # type: ignore[arg-type]
                              [HumanMessage("q")], 200, shown.append, interrupted="[cut short]")
    assert text == "Your payslip is in the portal under Pay [cut short]" == "".join(shown)
    shown.clear()
    with pytest.raises(LLMUnavailable):  # nothing came: nothing was sent, the node explains
        await write_answer(_Tokens([], fail=True), [HumanMessage("q")], 200, shown.append,  # type: ignore[arg-type]
                           lead="Note: ")
    assert shown == []
