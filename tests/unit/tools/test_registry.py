"""Adding a tool is one table entry (tools/registry.py), its route examples and its renderer: a toy
canteen-menu tool is routed, called through the real HTTP client, cached and rendered, no other code changed."""

from __future__ import annotations

import httpx
import pytest
from pydantic import BaseModel, Field

from app.router_train import build
from graph import templates
from graph.router import Router, group_of
from tests.unit.conftest import ROUTES, make_deps
from tests.unit.graph.test_graph import ask
from tools import registry
from tools.client import ToolClient
from tools.domain import DATE_PATTERN


class CanteenArgs(BaseModel):
    """Arguments of `canteen_menu`."""

    date: str = Field(pattern=DATE_PATTERN)


CANTEEN = registry.ToolSpec("canteen_menu", "The staff canteen's menu on a day.", CanteenArgs, "/canteen",
                            frozenset({"dishes"}), ttl_s=3600)
INTENT = registry.IntentSpec("canteen_menu", (("menu", "canteen_menu", {"date": "$date"}),), ("date",))
EXAMPLES = [("What is the canteen serving tomorrow?", "canteen_menu"), ("canteen menu today", "canteen_menu"),
            ("what's for lunch in the canteen on Friday", "canteen_menu")]


def render_menu(slots, r):
    return f"On {slots['date']} the canteen serves {', '.join(r['menu']['dishes'])}."


@pytest.fixture
def toy(monkeypatch):
    monkeypatch.setitem(registry.TOOLS, CANTEEN.name, CANTEEN)
    monkeypatch.setitem(registry.INTENTS, INTENT.name, INTENT)
    monkeypatch.setitem(templates.RENDERERS, INTENT.name, render_menu)
    requests: list[httpx.Request] = []

    def backend(request: httpx.Request) -> httpx.Response:
        if request.url.path.startswith("/employees/"):  # the caller's profile
            return httpx.Response(200, json={"id": "E1001", "name": "Ann", "city": "Berlin", "department": "IT"})
        requests.append(request)
        assert request.url.path == "/canteen"
        return httpx.Response(200, json={"date": request.url.params["date"], "dishes": ["lentil soup", "risotto"]})

    deps = make_deps()
    client = ToolClient("http://backend.test")
    client._http = httpx.AsyncClient(base_url="http://backend.test", transport=httpx.MockTransport(backend))
    deps.tools = client
    routes = ROUTES + EXAMPLES
    vecs = deps.embedder.embed([q for q, _ in routes])
    labels = [lab for _, lab in routes]
    deps.router = Router(build(vecs, labels, 100.0, {"thresholds": {group_of(lab): 0.5 for lab in labels},
                                                      "support_floor": 0.0}), embed=deps.embed_many)
    return deps, requests


async def test_a_toy_tool_is_routed_called_cached_and_rendered(toy, graph_for):
    deps, requests = toy
    graph = graph_for(deps)
    final, deltas = await ask(graph, "What is the canteen serving tomorrow?", thread="a")
    assert final["router"]["label"] == "canteen_menu" and final["route"] == "template"
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
