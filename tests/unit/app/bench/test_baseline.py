"""The plain agent baseline: LLM plan with arguments, tools one after another, LLM answer."""

import json

from langchain_core.messages import HumanMessage

from app.bench.baseline import build_plain_agent
from graph.context import Context
from tests.unit.conftest import make_deps


async def test_plain_agent_runs_the_models_plan_sequentially_and_answers_with_the_llm():
    plan = json.dumps({"calls": [{"tool": "weather", "args": {"city": "Rome", "date": "2026-12-01"}},
                                 {"tool": "salary", "args": {"employee": "E1999", "month": "2026-01"}}]})
    deps = make_deps(llm_replies=[plan, "It is sunny."])
    graph = build_plain_agent(deps)
    out = await graph.ainvoke({"messages": [HumanMessage("weather and pay?")], "user": "E1003"},
                              context=Context(today="2026-11-29"))
    assert out["llm_calls"] == 2 and out["answer"] == "It is sunny."
    # arguments come from the model, except the employee, which comes from the session
    assert deps.tools.calls == [("weather", {"city": "Rome", "date": "2026-12-01"}),
                                ("salary", {"employee": "E1003", "month": "2026-01"})]
    assert deps.tools.max_in_flight == 1  # one after another
    assert all(r["cache"] == "off" for r in out["results"])
