"""The whole graph with fakes: which path each request takes, and what the user sees."""

import json
from dataclasses import replace
from types import SimpleNamespace

import pytest
from langchain_core.messages import HumanMessage

from graph import kit
from graph.context import Context
from graph.graph import build_desk
from tests.unit.conftest import make_deps

CTX = Context(today="2026-11-29")


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
    assert set(final["timings_ms"]) == {"route_question", "answer_faq"}
    assert final["router"].label == "faq:payday" and final["router"].confidence >= 0.3


async def test_the_question_is_embedded_before_the_graph_runs_unless_switched_off():
    deps = make_deps()
    started: list[str] = []
    # the router's memo, which route_question then awaits
    deps.prefetch_embedding = lambda text, lang="en": started.append(text)
    desk = build_desk(deps)
    desk.start_early("  When is\tpayday? ", Context())  # the text route_question will embed
    desk.start_early("When is payday?", Context(early_embedding=False))
    desk.start_early("x" * 5000, Context())  # refused as too long: never embedded
    assert started == ["When is payday?"]


async def test_a_handbook_question_is_embedded_for_the_search_as_soon_as_the_router_decides(graph_for):
    deps = make_deps()
    started: list[tuple[str, list[str]]] = []  # (question, tools called by then)
    deps.prefetch_search_embedding = lambda text: started.append((text, [c[0] for c in deps.tools.calls]))
    graph = graph_for(deps)
    final, _ = await ask(graph, "Where is the fire exit policy?")
    assert final["route"] == "template" and final["intent"] == "policy_lookup"
    assert started == [("Where is the fire exit policy?", [])]  # before the search, which embeds it again
    assert [c[0] for c in deps.tools.calls] == ["kb_search"]
    await ask(graph, "When is payday?", thread="t2")  # the FAQ answer needs no second embedding
    await ask(graph, "Where is the fire exit policy?", thread="t3", ctx=replace(CTX, early_embedding=False))
    assert len(started) == 1


async def test_faq_switched_off_looks_in_the_handbook_instead(graph_for):
    deps = make_deps()
    graph = graph_for(deps)
    final, _ = await ask(graph, "When is payday?", ctx=Context(today="2026-11-29", faq_enabled=False))
    assert final["route"] == "template" and final["intent"] == "policy_lookup" and final["llm_calls"] == 0
    assert [c[0] for c in deps.tools.calls] == ["kb_search"]
    assert "couldn't find a clear answer" in final["answer"] and "MyHR" in final["answer"]


async def test_template_answer_has_the_callers_exact_figures(graph_for):
    deps = make_deps()
    graph = graph_for(deps)
    final, _ = await ask(graph, "What was my salary last month?", user="E1007")
    assert final["route"] == "template" and final["llm_calls"] == 0
    assert deps.tools.calls == [("salary", {"employee": "E1007", "month": "2026-10"})]
    assert "EUR 1,014.00" in final["answer"]  # net = 1007 + 7 from the fake backend


async def test_salary_without_a_month_is_the_newest_payslip_and_the_conversation_keeps_it(graph_for):
    deps = make_deps()
    graph = graph_for(deps)
    december_1st = replace(CTX, today="2026-12-01")  # December's payslip comes out on the 22nd
    final, _ = await ask(graph, "my payslip please", user="E1007", thread="pay", ctx=december_1st)
    assert deps.tools.calls == [("salary", {"employee": "E1007", "month": "2026-11"})]
    assert final["answer"].startswith("Your payslip for November 2026")
    assert final["last_slots"]["month"] == "2026-11"  # "and my attendance that month?" means November
    await ask(graph, "my payslip please", user="E1007", thread="pay2", ctx=replace(CTX, today="2026-12-22"))
    assert deps.tools.calls[-1] == ("salary", {"employee": "E1007", "month": "2026-12"})  # out that day


async def test_weather_and_clothing_chain(graph_for):
    deps = make_deps()
    graph = graph_for(deps)
    final, _ = await ask(graph, "What should I wear in Paris tomorrow?")
    assert [r["name"] for r in final["results"]] == ["weather", "clothing_advice"]
    assert final["results"][1]["args"] == {"temperature": 4, "condition": "rain"}
    assert "Paris" in final["answer"] and "coat" in final["answer"]


async def test_a_cached_answer_streams_from_the_tool_stage_and_nothing_is_fetched_again(graph_for):
    deps = make_deps()
    graph = graph_for(deps)
    first, _ = await ask(graph, "What should I wear in Paris tomorrow?")
    events = []
    async for mode, chunk in graph.astream({"messages": [HumanMessage("What should I wear in Paris tomorrow?")],
                                            "user": "E1001"}, {"configurable": {"thread_id": "t2"}}, context=CTX,
                                           stream_mode=["custom", "updates"]):
        events.append(("text", chunk["answer_delta"]) if mode == "custom" else ("step", next(iter(chunk))))
    assert len(deps.tools.calls) == 2, "the weather and the advice come from the cache, the backend is not asked"
    steps = [e for e in events if e[0] == "step"]
    assert steps == [("step", n) for n in ("route_question", "fill_slots", "call_tools", "compose_answer")], events
    assert events.index(("step", "call_tools")) == events.index(("step", "fill_slots")) + 2, events  # text first
    assert "".join(t for kind, t in events if kind == "text") == first["answer"], "said once, as before"
    again, _ = await ask(graph, "What should I wear in Paris tomorrow?", thread="t2")
    assert [r["cache"] for r in again["results"]] == ["hit", "hit"] and again["answer"] == first["answer"]
    assert again["answered_by"] == "template" and "call_tools" in again["timings_ms"]

    await ask(graph, "What should I wear in Paris tomorrow?", thread="t3", ctx=replace(CTX, cache_enabled=False))
    assert len(deps.tools.calls) == 4, "with the cache off both are fetched"


async def test_question_the_router_is_unsure_of_plans_with_the_llm_and_invents_nothing(graph_for):
    plan = json.dumps({"calls": [{"tool": "kb_search", "args": {"query": "x"}}, {"tool": "salary"}]})
    deps = make_deps(llm_replies=[plan, "Dogs are welcome on Fridays in the office."])
    graph = graph_for(deps)
    final, _ = await ask(graph, "Are dogs welcome at work?")
    assert final["route"] == "llm" and final["llm_calls"] == 1  # the plan only: nothing for the LLM to write
    assert [c["name"] for c in final["plan"]] == ["kb_search"]  # salary had no weight from the router: dropped
    assert final["plan"][0]["args"] == {"query": "Are dogs welcome at work?"}  # slot-filled, not the model's
    assert final["prefetch"]["used"] == 1 and final["prefetch"]["wasted"] == 0
    assert "Dogs are welcome" not in final["answer"] and "couldn't find a clear answer" in final["answer"]


async def test_a_likely_faq_entry_below_the_shortcut_is_offered_as_the_closest_answer(graph_for):
    plan = json.dumps({"calls": [{"tool": "kb_search", "args": {"query": "x"}}]})
    deps = make_deps(llm_replies=[plan, plan])
    deps.router.model.meta["thresholds"]["faq"] = 1.01  # the shortcut is never sure of an FAQ entry here
    deps.router.model.meta["faq_fallback"] = {"threshold": 0.3}
    graph = graph_for(deps)
    final, deltas = await ask(graph, "When is payday?")
    assert final["route"] == "llm" and final["router"].faq_candidate == "payday"
    assert final["answered_by"] == "closest_faq" and "".join(deltas) == final["answer"]
    assert final["answer"].startswith('The closest answer in our FAQ ("When is payday?"): Salaries are paid')
    assert "MyHR" in final["answer"]  # and where to ask when it is not the one
    final, _ = await ask(graph, "When is payday?", thread="t2",
                         ctx=Context(today="2026-11-29", faq_fallback_enabled=False))
    assert final["answered_by"] != "closest_faq" and "25th" not in final["answer"]


async def test_free_writing_is_drafted_from_the_request_without_the_llm(graph_for):
    graph = graph_for(make_deps(llm_replies=["Hi team, the store is closed for COVID-19."]))
    final, deltas = await ask(graph, "Draft a note to my team about the stock count on Friday")
    assert final["route"] == "template" and final["answered_by"] == "draft" and final["llm_calls"] == 0
    assert "Hi team," in final["answer"] and "A quick note about the stock count on Friday." in final["answer"]
    assert "COVID" not in final["answer"] and "".join(deltas) == final["answer"]


async def test_free_writing_streams_the_llms_tokens_when_the_llm_drafts(graph_for):
    graph = graph_for(make_deps(llm_replies=["Hi team, I am working from home on Friday. Thanks!"]))
    final, deltas = await ask(graph, "Draft a note to my team", ctx=replace(CTX, llm_drafts=True))
    assert final["route"] == "llm" and final["intent"] == "free_writing" and final["llm_calls"] == 1
    assert final.get("plan") == [] and len(deltas) > 3 and "".join(deltas) == final["answer"]


async def test_malformed_plan_from_the_llm_does_not_crash(graph_for):
    graph = graph_for(make_deps(llm_replies=["this is not json"]))
    final, _ = await ask(graph, "Are dogs welcome at work?")
    assert final["route"] == "llm" and final["answer"] and not final.get("error")


async def test_compound_request_runs_each_template_in_parallel_with_no_llm(graph_for):
    deps = make_deps(latency={"salary": 0.05, "weather": 0.05})
    graph = graph_for(deps)
    final, _ = await ask(graph, "What is my salary this month and the weather in Paris?")
    assert final["route"] == "template" and final["llm_calls"] == 0
    assert final["router"].label == "compound" and final["intent"] == "salary+weather"
    assert {r["name"] for r in final["results"]} == {"salary", "weather"}
    assert final["results"][1]["args"]["city"] == "Paris"  # the weather part's own slot
    assert final["answer"].index("EUR") < final["answer"].index("Paris")  # parts in the order asked


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


async def test_only_a_conversation_with_an_earlier_turn_collects_what_that_turn_prefetched(graph_for, monkeypatch):
    from graph.next_turn import NextTurn

    collected = []
    real = NextTurn.collect

    async def collect(self, thread):
        collected.append(thread)
        return await real(self, thread)

    monkeypatch.setattr(NextTurn, "collect", collect)
    graph = graph_for(make_deps())
    await ask(graph, "When is payday?", thread="new")
    assert collected == []  # nothing can have been offered to a conversation's first question
    final, _ = await ask(graph, "How do I reset my password?", thread="new")
    assert collected == ["new"] and final["next_turn"]["wasted"] == 0


async def test_every_node_reports_its_duration(graph_for, monkeypatch):
    now = [0.0]  # the nodes' clock (graph/kit.py:timed); only the backend moves it
    monkeypatch.setattr(kit, "time", SimpleNamespace(perf_counter=lambda: now[0]))
    deps = make_deps()
    backend = deps.tools.call

    async def call(tool, args):
        now[0] += 0.05 if tool == "leave_balance" else 0.0  # the backend takes 50 ms of the fake clock
        return await backend(tool, args)

    deps.tools.call = call
    final, _ = await ask(graph_for(deps), "How many leave days do I have left?")
    assert final["timings_ms"] == {"route_question": 0.0, "fill_slots": 0.0, "call_tools": pytest.approx(50.0),
                                   "compose_answer": 0.0}  # the backend's 50 ms, in the node that waited for it


async def test_oversized_message_is_not_kept_whole_in_the_conversation(graph_for):
    graph = graph_for(make_deps())
    final, _ = await ask(graph, "y" * 50_000, thread="big")
    assert final["route"] == "invalid"
    assert all(len(str(m.content)) < 1000 for m in final["messages"])


async def test_a_compound_answer_streams_each_part_as_soon_as_its_tools_return(graph_for):
    deps = make_deps(latency={"weather": 0.3, "leave_balance": 0.0})
    graph = graph_for(deps)
    final, deltas = await ask(graph, "What is the weather in Paris and my leave balance?")
    assert final["route"] == "template" and final["llm_calls"] == 0, final["router"]
    assert deltas[0].startswith("You have"), deltas  # the fast part first, before the forecast arrived
    assert "".join(deltas) == final["answer"], "what streamed is the answer, nothing repeated"
    assert final["answer"].index("You have") < final["answer"].index("Paris")
    assert final["streamed_parts"] == [1, 0]

    final, deltas = await ask(graph, "What is the weather in Paris and my leave balance?", thread="t2",
                              ctx=Context(today="2026-11-29", progressive_enabled=False))
    assert final["answer"].index("Paris") < final["answer"].index("You have")  # off: the order asked
    assert "".join(deltas) == final["answer"]


async def test_a_compound_part_with_a_dependent_call_gets_its_input(graph_for):
    graph = graph_for(make_deps())
    final, _ = await ask(graph, "my leave balance and what should I wear in Oslo tomorrow")
    assert final["route"] == "template" and final["answered_by"] == "template", final["answer"]
    clothing = next(r for r in final["results"] if r["name"] == "clothing_advice")
    assert clothing["ok"] and clothing["args"]["condition"] == "rain"
    assert "Wear a coat (4.0 C)." in final["answer"]


async def test_a_question_about_two_months_gets_both_months_figures(graph_for):
    deps = make_deps(latency={"salary": 0.05})
    graph = graph_for(deps)
    final, _ = await ask(graph, "What was my salary in April compared to March?", user="E1007")
    assert final["route"] == "template" and final["llm_calls"] == 0 and final["intent"] == "salary"
    assert sorted(c[1]["month"] for c in deps.tools.calls) == ["2026-03", "2026-04"]
    assert final["answer"].index("April 2026") < final["answer"].index("March 2026")  # in the order asked


async def test_what_the_router_is_sure_is_no_brightmart_matter_gets_what_the_desk_covers_without_a_search(graph_for):
    deps = make_deps()
    graph = graph_for(deps)
    final, deltas = await ask(graph, "tell me a joke")
    assert final["router"].path == "chat" and final["answered_by"] == "not_in_handbook"
    assert deps.tools.calls == [] and final["llm_calls"] == 0  # no handbook search to quote on-topic sentences from
    assert "your own pay, attendance, leave" in final["answer"] and "".join(deltas) == final["answer"]


async def test_small_talk_on_the_full_path_is_never_quoted_from_the_handbook(graph_for):
    from graph.router import Decision

    deps = make_deps(llm_replies=[json.dumps({"calls": [{"tool": "kb_search", "args": {"query": "x"}}]})])
    lunch = "You take a 30-minute unpaid lunch break each day."

    async def decide(question, user, previous, faq_enabled=True, templates_enabled=True, lang="en"):
        return Decision("llm", "other", 0.6, reason="not sure")  # read as no Brightmart matter, not sure

    async def on_topic(tool, args):
        return {"passages": [{"title": "Working hours", "text": lunch, "score": 0.9}]}

    deps.router.decide, deps.tools.call = decide, on_topic
    graph = graph_for(deps)
    final, _ = await ask(graph, "Do we take a 30-minute unpaid lunch break each day?")
    assert final["route"] == "llm" and final["results"][0]["name"] == "kb_search"
    assert lunch not in final["answer"] and "your own pay, attendance, leave" in final["answer"]


async def test_a_compound_part_not_sure_of_its_faq_entry_is_offered_as_the_closest_answer(graph_for):
    from graph.router import Decision

    deps = make_deps(llm_replies=[json.dumps({"calls": [{"tool": "salary"}]})])

    async def decide(question, user, previous, faq_enabled=True, templates_enabled=True, lang="en"):
        return Decision("llm", "compound", 0.9, ["salary", "faq:payday"], ["my pay in March", "when is payday"],
                        reason="a part is not sure", hinted_tools=["salary"], faq_parts={"faq:payday": "closest"})

    deps.router.decide = decide
    graph = graph_for(deps)
    final, deltas = await ask(graph, "What was my salary in March, and when is payday?", user="E1007")
    assert final["route"] == "llm" and final["answered_by"] == "template", final["answer"]
    assert final["answer"].startswith("Your payslip for March 2026") and "EUR 1,014.00" in final["answer"]
    assert 'The closest answer in our FAQ ("When is payday?"): Salaries are paid on the 25th' in final["answer"]
    assert "".join(deltas) == final["answer"]


async def test_on_the_full_path_a_sure_faq_part_is_answered_and_a_likely_entry_is_offered_beside_the_figures(graph_for):
    from graph.router import Decision

    deps = make_deps(llm_replies=[json.dumps({"calls": [{"tool": "salary"}]})] * 2)
    decisions = iter([
        Decision("llm", "compound", 0.7, ["salary", "faq:payday", "other_person"], ["a", "b", "c"],
                 reason="a part is not sure", hinted_tools=["salary"], faq_parts={"faq:payday": "sure"}),
        Decision("llm", "faq:payday", 0.7, reason="not sure", hinted_tools=["salary"], faq_candidate="payday"),
    ])

    async def decide(question, user, previous, faq_enabled=True, templates_enabled=True, lang="en"):
        return next(decisions)

    deps.router.decide = decide
    graph = graph_for(deps)
    final, _ = await ask(graph, "my salary in March and payday, on hold with Tom", user="E1007")
    assert final["answer"].startswith("Your payslip for March 2026")
    assert final["answer"].endswith(" Salaries are paid on the 25th of each month.")  # sure: as it is
    assert "closest" not in final["answer"]
    final, _ = await ask(graph, "my salary in March, and when is payday?", user="E1007", thread="t2")
    assert final["answer"].startswith("Your payslip for March 2026")
    assert 'The closest answer in our FAQ ("When is payday?")' in final["answer"]  # likely, not sure: offered


DEC2 = Context(today="2026-12-02")  # November's payslip is out, December's comes on the 22nd


async def test_the_month_before_last_is_that_month_not_the_newest_payslip(graph_for):
    deps = make_deps()
    final, _ = await ask(graph_for(deps), "What was my net pay the month before last?", ctx=DEC2)
    assert final["route"] == "template" and [c[1]["month"] for c in deps.tools.calls] == ["2026-10"]
    assert final["answer"].startswith("Your payslip for October 2026:")


async def test_a_period_is_answered_over_the_months_that_have_a_payslip(graph_for):
    deps = make_deps()
    final, _ = await ask(graph_for(deps), "What is my salary this year so far?", ctx=DEC2)
    assert final["route"] == "template" and final["llm_calls"] == 0
    assert sorted(c[1]["month"] for c in deps.tools.calls) == [f"2026-{m:02d}" for m in range(1, 12)]
    assert final["answer"].startswith("Your payslips for January to November 2026 (11 months):")
    assert "December 2026 is not out yet" in final["answer"]


async def test_a_time_nobody_can_read_is_asked_back_never_answered_with_a_default_month(graph_for):
    deps = make_deps()
    final, _ = await ask(graph_for(deps), "What was my salary the fortnight before last?", ctx=DEC2)
    assert final["route"] == "llm" and not any(c[0] == "salary" for c in deps.tools.calls)
    assert 'which month or day "the fortnight before last" means' in final["answer"]
    assert "payslip" not in final["answer"]


class ReadAs:
    """A router model that reads each text as it is told, (label, probability); any other text as small talk.
    The real `Router` decides from it (thresholds 0.8, no support floor), so compound splitting is its own.
    """

    thresholds = {g: 0.8 for g in ("compound", "leave_balance", "salary", "handbook", "faq", "other")}
    faq_fallback = 1.01

    def support_floor(self, group: str) -> float:
        return 0.0

    def __init__(self, readings: dict[str, tuple[str, float]]) -> None:
        self.readings, self.texts = readings, []

    async def embed(self, texts):
        import numpy as np

        self.texts += texts
        return np.array([[len(self.texts) - len(texts) + i] for i in range(len(texts))], dtype=np.float32)

    def score(self, vec):
        from graph.router_model import Scores

        label, p = self.readings.get(self.texts[int(vec[0])], ("other", 0.9))
        return Scores({label: p, "salary" if label != "salary" else "other": 1 - p}, label, p, 1.0)


def reading(deps, readings: dict[str, tuple[str, float]]) -> None:
    """Route with the real Router over `ReadAs`."""
    from graph.router import Router

    model = ReadAs(readings)
    deps.router = Router(model, model.embed)  # type: ignore[arg-type]


LEAVE_LEFT = "how many days of annual leave do I have left"
DECEMBER = "can store staff take time off in December"
PEAK = "Store staff can take time off in December only before the 1st or after the 24th."


def handbook_says(deps, text: str = PEAK, fail: bool = False) -> list[str]:
    """kb_search answers with one handbook page (or fails); returns the queries it was asked."""
    from tools.client import ToolError

    queries: list[str] = []
    real = deps.tools.call

    async def call(tool, args):
        if tool != "kb_search":
            return await real(tool, args)
        queries.append(args["query"])
        if fail:
            raise ToolError("the kb_search service is down")
        return {"passages": [{"title": "Annual leave", "text": text, "score": 0.8}]}

    deps.tools.call = call
    return queries


async def test_a_sure_handbook_part_is_quoted_beside_the_callers_figures(graph_for):
    deps = make_deps()
    reading(deps, {f"{LEAVE_LEFT}, and {DECEMBER}?": ("compound", 0.99), LEAVE_LEFT: ("leave_balance", 0.99),
                   DECEMBER: ("handbook", 0.95)})
    queries = handbook_says(deps)
    final, deltas = await ask(graph_for(deps), f"{LEAVE_LEFT}, and {DECEMBER}?", user="E1007")
    assert final["router"].path == "template" and final["router"].intents == ["leave_balance", "handbook"]
    assert final["llm_calls"] == 0 and final["answered_by"] == "template", final["answer"]
    assert final["answer"].startswith("You have 7 days of annual leave left")
    assert final["answer"].endswith(f'{PEAK} (from "Annual leave")')
    assert queries == [DECEMBER]  # its own words: the whole message would look up the leave balance too
    assert "".join(deltas) == final["answer"]


async def test_a_handbook_part_the_handbook_does_not_answer_says_so_beside_the_figures(graph_for):
    deps = make_deps()
    reading(deps, {f"{LEAVE_LEFT}, and {DECEMBER}?": ("compound", 0.99), LEAVE_LEFT: ("leave_balance", 0.99),
                   DECEMBER: ("handbook", 0.95)})
    handbook_says(deps, "Uniforms are washed weekly by the store team.")
    final, _ = await ask(graph_for(deps), f"{LEAVE_LEFT}, and {DECEMBER}?", user="E1007")
    assert final["answer"].startswith("You have 7 days of annual leave left")
    assert f'On "{DECEMBER}": I couldn\'t find a clear answer to that in the Brightmart handbook' in final["answer"]
    assert "Uniforms" not in final["answer"] and "MyHR" in final["answer"]


async def test_a_failed_handbook_search_in_a_compound_is_named_not_passed_over(graph_for):
    deps = make_deps()
    reading(deps, {f"{LEAVE_LEFT}, and {DECEMBER}?": ("compound", 0.99), LEAVE_LEFT: ("leave_balance", 0.99),
                   DECEMBER: ("handbook", 0.95)})
    handbook_says(deps, fail=True)
    final, _ = await ask(graph_for(deps), f"{LEAVE_LEFT}, and {DECEMBER}?", user="E1007")
    assert final["answered_by"] == "partial" and final["answer"].startswith("You have 7 days of annual leave left")
    assert "I could not fetch everything (kb search: the kb_search service is down)" in final["answer"]
    assert "couldn't find a clear answer" not in final["answer"]  # the search never ran: that is not "not there"


async def test_a_handbook_part_the_router_is_not_sure_of_takes_the_full_path_and_both_parts_are_answered(graph_for):
    deps = make_deps(llm_replies=[json.dumps({"calls": []})])  # the small model plans nothing useful
    q = "my payslip for October plus the rule on overtime approval"
    reading(deps, {q: ("compound", 0.99), "my payslip for October": ("salary", 0.99),
                   "the rule on overtime approval": ("handbook", 0.6)})
    rule = "Overtime must be approved by your line manager before you work it."
    queries = handbook_says(deps, f"## Overtime approval\n{rule}")
    final, _ = await ask(graph_for(deps), q, user="E1007")
    assert final["router"].path == "llm" and final["router"].reason == "a part is not sure"
    assert final["answer"].startswith("Your payslip for October 2026") and "EUR 1,014.00" in final["answer"]
    assert f'Overtime approval: {rule} (from "Annual leave")' in final["answer"], final["answer"]
    assert queries == ["the rule on overtime approval"]


async def test_two_handbook_questions_beside_a_figure_step_aside_from_the_shortcut(graph_for):
    deps = make_deps(llm_replies=[json.dumps({"calls": []})])
    q = "my leave balance, the rule on overtime approval and the dress code for stores"
    reading(deps, {q: ("compound", 0.99), "my leave balance": ("leave_balance", 0.99),
                   "the rule on overtime approval": ("handbook", 0.95),
                   "the dress code for stores": ("handbook", 0.95)})
    handbook_says(deps)
    final, _ = await ask(graph_for(deps), q, user="E1007")
    assert final["router"].path == "llm" and final["router"].intents == ["leave_balance", "handbook"]


async def test_a_long_message_with_greetings_and_background_still_answers_both_its_questions(graph_for):
    deps = make_deps()
    context = "Hi there. I'm a store assistant in Madrid. I'm trying to plan my holidays"
    q = (f"Hi there, I'm a store assistant in Madrid and I'm trying to plan my holidays. Could you tell me "
         f"{LEAVE_LEFT}, and when is payday? Thanks so much!")  # six clauses: the context travels with the request
    reading(deps, {q: ("compound", 0.99), f"{context}. Could you tell me {LEAVE_LEFT}": ("leave_balance", 0.99),
                   "when is payday": ("faq:payday", 0.95)})
    final, _ = await ask(graph_for(deps), q, user="E1007")
    assert final["router"].path == "template" and final["router"].intents == ["leave_balance", "faq:payday"]
    assert "You have 7 days of annual leave left" in final["answer"]  # the FAQ part, needing no tool, streams first
    assert "Salaries are paid on the 25th of each month." in final["answer"]


async def test_a_forecast_question_after_a_forecast_keeps_its_place_and_day(graph_for):
    graph = graph_for(make_deps())
    await ask(graph, "What's the weather in Amsterdam tomorrow?", user="E1007", thread="w")  # E1007 lives in Vienna
    final, _ = await ask(graph, "what should I wear?", user="E1007", thread="w")
    weather = next(r for r in final["results"] if r["name"] == "weather")
    assert weather["args"] == {"city": "Amsterdam", "date": "2026-11-30"}
