"""Adding an intent is one module (tests/unit/tools/toy_intent.py, as each of tools/intents/ is) plus data: a toy
canteen-menu intent, registered through the registry, is routed from the utterances its entry names, called through
the real HTTP client, cached, rendered by the function its entry carries, planned by the LLM path with the slot
arguments its entry names, and named in what the desk says it covers; the consistency check finds nothing missing
once its fake and its backend route are there. No other code changed."""

from __future__ import annotations

import httpx
import pytest

from app.training.router_train import build
from graph.llm import repair_plan
from graph.replies import out_of_scope
from graph.router import Router, group_of
from tests.unit.conftest import FAKES, ROUTES, make_deps
from tests.unit.graph.test_graph import ask
from tests.unit.test_consistency import backend_routes, gaps, utterances
from tests.unit.tools import toy_intent
from tools import registry
from tools.client import ToolClient

INTENT = toy_intent.INTENT


@pytest.fixture
def registered():
    """The toy module registered as a deployment would register its own, and taken out again after the test."""
    tools, intents = dict(registry.TOOLS), dict(registry.INTENTS)
    registry.register(*toy_intent.SPECS)
    yield
    for table, before in ((registry.TOOLS, tools), (registry.INTENTS, intents)):
        table.clear()
        table.update(before)


@pytest.fixture
def toy(registered):
    requests: list[httpx.Request] = []

    def backend(request: httpx.Request) -> httpx.Response:
        if request.url.path.startswith("/employees/"):  # the caller's profile
            return httpx.Response(200, json={"id": "E1001", "name": "Ann", "city": "Berlin", "department": "IT"})
        requests.append(request)
        assert request.url.path == "/canteen"
        return httpx.Response(200, json=toy_intent.fake_menu(dict(request.url.params)))

    deps = make_deps()
    client = ToolClient("http://backend.test")
    client._http = httpx.AsyncClient(base_url="http://backend.test", transport=httpx.MockTransport(backend))
    deps.tools = client
    routes = ROUTES + [(q, INTENT.name) for q in utterances(INTENT)]
    vecs = deps.embedder.embed([q for q, _ in routes])
    labels = [lab for _, lab in routes]
    deps.router = Router(build(vecs, labels, 100.0, {"thresholds": {group_of(lab): 0.5 for lab in labels},
                                                      "support_floors": {}}), embed=deps.embed_many)
    return deps, requests


async def test_a_toy_tool_is_routed_called_cached_and_rendered(toy, graph_for):
    deps, requests = toy
    graph = graph_for(deps)
    final, deltas = await ask(graph, "What is the canteen serving tomorrow?", thread="a")
    assert final["router"].label == "canteen_menu" and final["route"] == "template"
    assert final["llm_calls"] == 0
    assert final["answer"] == "On 2026-11-30 the canteen serves lentil soup, risotto."
    assert "".join(deltas) == final["answer"]
    assert [r.url.params["date"] for r in requests] == ["2026-11-30"]
    assert final["results"][0]["cache"] == "miss"

    again, _ = await ask(graph, "What is the canteen serving tomorrow?", thread="b")
    assert again["answer"] == final["answer"] and again["results"][0]["cache"] == "hit"
    assert len(requests) == 1, "the second answer came from the cache"


def test_the_llm_planner_may_choose_the_toy_tool(toy):
    from graph.prompts import plan_schema

    variants = plan_schema()["properties"]["calls"]["items"]["anyOf"]
    assert any(v["properties"]["tool"] == {"const": "canteen_menu"} for v in variants)


def test_the_llm_path_fills_the_toy_tools_arguments_from_slots(toy):
    plan = repair_plan([{"tool": "canteen_menu"}], {"date": "2026-11-30"}, "E1001", "what's on the menu tomorrow?")
    assert plan == [{"id": "canteen_menu", "name": "canteen_menu", "args": {"date": "2026-11-30"}, "depends_on": []}]


def test_the_desk_says_it_covers_the_toy_intent(toy):
    assert "the weather (and what to wear) for your trips, and the canteen's menu, and I can" in out_of_scope()


def test_the_toy_module_and_its_data_are_all_the_check_asks_for(registered):
    assert gaps({**FAKES, **toy_intent.FAKES}, backend_routes() | {"/canteen"}) == []
    assert gaps() == ["canteen_menu: no fake", "canteen_menu: the backend serves no /canteen"]


async def test_registered_intent_reaches_planner():
    """An intent a deployment registers after start-up (after plans were already made) is in the prompt and in the
    structured-output schema and regex that `plan_tools` sends to vLLM: they are built from the registry as it is.
    """
    from langchain_core.messages import AIMessage

    from graph.llm import plan_tools
    from graph.prompts import planner_messages

    sent: list[dict] = []

    class Planner:
        def bind(self, **kw):
            sent.append(kw)
            return self

        def with_config(self, **_kw):
            return self

        async def ainvoke(self, messages):
            sent.append({"prompt": messages[0].content})
            return AIMessage('{"calls": [{"tool": "canteen_menu", "args": {"date": "2026-11-30"}}]}')

    def messages():
        return planner_messages({"id": "E1001", "name": "Ann"}, "2026-11-29", [], "what is for lunch tomorrow?")

    await plan_tools(Planner(), messages(), 80)  # a plan made before the intent exists: nothing cached keeps it out
    assert "canteen_menu" not in sent[-1]["prompt"]
    tools, intents = dict(registry.TOOLS), dict(registry.INTENTS)
    registry.register(*toy_intent.SPECS)
    try:
        sent.clear()
        calls = await plan_tools(Planner(), messages(), 80)
        await plan_tools(Planner(), messages(), 20, with_args=False)
    finally:
        for table, before in ((registry.TOOLS, tools), (registry.INTENTS, intents)):
            table.clear()
            table.update(before)
    schema, prompt, names = sent[0]["extra_body"]["structured_outputs"]["json"], sent[1]["prompt"], sent[2]
    assert calls == [{"tool": "canteen_menu", "args": {"date": "2026-11-30"}}]
    assert "- canteen_menu(" in prompt
    variants = schema["properties"]["calls"]["items"]["anyOf"]
    assert {"const": "canteen_menu"} in [v["properties"]["tool"] for v in variants]
    assert "canteen_menu" in names["extra_body"]["structured_outputs"]["regex"]
