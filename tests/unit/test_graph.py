"""The whole graph with fakes: which path each request takes, and what the user sees."""

import json

from langchain_core.messages import HumanMessage

from graph.context import Context
from tests.unit.conftest import make_deps

CTX = Context(today="2026-11-29", faq_threshold=0.8)


async def ask(graph, q, user="E1001", thread="t1", ctx=CTX):
    deltas = []
    final = {}
    async for mode, chunk in graph.astream({"messages": [HumanMessage(q)], "user": user},
                                           {"configurable": {"thread_id": thread}}, context=ctx,
                                           stream_mode=["custom", "values"]):
        if mode == "custom":
            deltas.append(chunk["answer_delta"])
        else:
            final = chunk
    return final, deltas


async def test_faq_question_exits_early_without_llm(graph_for):
    graph = graph_for(make_deps())
    final, deltas = await ask(graph, "When is payday?")
    assert final["route"] == "faq" and final["llm_calls"] == 0
    assert final["answer"] == "Salaries are paid on the 25th of each month."
    assert "".join(deltas) == final["answer"]
    assert set(final["timings_ms"]) == {"start_turn", "match_faq", "answer_faq"}


async def test_faq_switched_off_takes_the_full_path(graph_for):
    graph = graph_for(make_deps(llm_replies=['{"calls": []}', "It is the 25th."]))
    final, _ = await ask(graph, "When is payday?", ctx=Context(today="2026-11-29", faq_enabled=False))
    assert final["route"] == "llm" and final["llm_calls"] == 2


async def test_template_answer_has_the_callers_exact_figures(graph_for):
    deps = make_deps()
    graph = graph_for(deps)
    final, _ = await ask(graph, "What was my salary last month?", user="E1007")
    assert final["route"] == "template" and final["llm_calls"] == 0
    assert deps.tools.calls == [("salary", {"employee": "E1007", "month": "2026-10"})]
    assert "EUR 1,014.00" in final["answer"]  # net = 1007 + 7 from the fake backend


async def test_weather_and_clothing_chain(graph_for):
    deps = make_deps()
    graph = graph_for(deps)
    final, _ = await ask(graph, "What should I wear in Paris tomorrow?")
    assert [r["name"] for r in final["results"]] == ["weather", "clothing_advice"]
    assert final["results"][1]["args"] == {"temperature": 4, "condition": "rain"}
    assert "Paris" in final["answer"] and "coat" in final["answer"]


async def test_unknown_request_plans_with_the_llm_and_streams_tokens(graph_for):
    plan = json.dumps({"calls": [{"tool": "kb_search", "args": {"query": "x"}}]})
    graph = graph_for(make_deps(llm_replies=[plan, "Dogs are welcome on Fridays in the office."]))
    final, deltas = await ask(graph, "Are dogs welcome at work?")
    assert final["route"] == "llm" and final["llm_calls"] == 2
    assert final["plan"][0]["args"] == {"query": "Are dogs welcome at work?"}  # slot-filled, not the model's
    assert len(deltas) > 3 and "".join(deltas) == final["answer"]


async def test_malformed_plan_from_the_llm_does_not_crash(graph_for):
    graph = graph_for(make_deps(llm_replies=["this is not json", "Sorry, I do not know."]))
    final, _ = await ask(graph, "Tell me something nice")
    assert final["route"] == "llm" and final["answer"] and not final.get("error")


async def test_compound_request_prefetches_and_answers_from_templates(graph_for):
    plan = json.dumps({"calls": [{"tool": "weather", "args": {"city": "Nowhere", "date": "bad"}}]})
    deps = make_deps(llm_replies=[plan])
    graph = graph_for(deps)
    final, _ = await ask(graph, "What is my salary this month and the weather in Paris?")
    assert final["route"] == "llm" and final["llm_calls"] == 1  # the plan; the answer is templated
    assert {r["name"] for r in final["results"]} == {"salary", "weather"}
    assert {r["cache"] for r in final["results"]} == {"prefetch"}
    assert final["prefetch"]["used"] == 2 and final["prefetch"]["wasted"] == 0
    assert "Paris" in final["answer"] and "EUR" in final["answer"]


async def test_other_employees_data_is_refused(graph_for):
    deps = make_deps()
    graph = graph_for(deps)
    final, _ = await ask(graph, "What is E1002's salary?", user="E1001")
    assert final["route"] == "refused" and "your own" in final["answer"]
    assert deps.tools.calls == []


async def test_bad_input_gets_a_sentence(graph_for):
    graph = graph_for(make_deps())
    final, _ = await ask(graph, "   \x00\x07  ")
    assert final["route"] == "invalid" and "empty" in final["answer"]
    final, _ = await ask(graph, "x" * 100_000)
    assert final["route"] == "invalid" and "characters" in final["answer"]
    final, _ = await ask(graph, "hello", user="nobody")
    assert final["route"] == "invalid" and "employee id" in final["answer"]


async def test_follow_up_uses_the_conversation(graph_for):
    deps = make_deps()
    graph = graph_for(deps)
    await ask(graph, "What was my salary in March?", thread="f")
    final, _ = await ask(graph, "and last month?", thread="f")
    assert final["route"] == "template" and final["slots"]["month"] == "2026-10"
    assert len(final["messages"]) == 4  # history kept by the checkpointer


async def test_every_node_reports_its_duration(graph_for):
    graph = graph_for(make_deps())
    final, _ = await ask(graph, "How many leave days do I have left?")
    assert set(final["timings_ms"]) == {"start_turn", "match_faq", "route_intent", "call_tools", "write_answer"}
    assert all(v >= 0 for v in final["timings_ms"].values())


async def test_oversized_message_is_not_kept_whole_in_the_conversation(graph_for):
    graph = graph_for(make_deps())
    final, _ = await ask(graph, "y" * 50_000, thread="big")
    assert final["route"] == "invalid"
    assert all(len(str(m.content)) < 1000 for m in final["messages"])
