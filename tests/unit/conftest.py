"""Fakes for unit tests: no services. The real ones are exercised in tests/integration."""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from fakeredis import FakeAsyncRedis as FakeRedis
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage

from app.router_train import build
from graph.deps import Deps
from graph.graph import build_graph
from graph.router import Router, group_of
from tools.faq import FaqEntry


class FakeEmbedder:
    """Bag-of-words hashing embedder: identical texts embed identically, related texts overlap."""

    name = "fake"
    dim = 64

    def embed_one(self, text: str) -> np.ndarray:
        v = np.zeros(self.dim, dtype=np.float32)
        for w in text.lower().split():
            v[int(hashlib.md5(w.strip("?.!,").encode()).hexdigest(), 16) % self.dim] += 1
        n = np.linalg.norm(v)
        return v / n if n else v

    def embed(self, texts: list[str]) -> np.ndarray:
        return np.stack([self.embed_one(t) for t in texts])

    def run(self, fn, *args):
        """A future, as the real embedder's thread gives: a prefetch attaches callbacks to it."""
        fut = asyncio.get_running_loop().create_future()
        fut.set_result(fn(*args))
        return fut

    def submit(self, texts: list[str], then=None):
        fut = self.run(self.embed, texts)
        if then is not None:
            fut.add_done_callback(then)
        return fut


class FakeCache:
    """In-memory stand-in for ToolCache with the same key rules."""

    namespace = ""

    def __init__(self) -> None:
        self.store: dict[str, Any] = {}
        self.peeked: list[list[str]] = []  # the keys of each look ahead
        self.gets = 0  # single reads

    def key_of(self, spec, args, user):
        from tools.cache import cache_key

        return cache_key(spec, args, user) + json.dumps(args, sort_keys=True)

    async def peek(self, keys):
        self.peeked.append(list(keys))
        return {k: self.store[k] for k in keys if k in self.store}

    async def get(self, spec, args, user, text_vec=None, threshold=None, count=True):
        self.gets += 1
        hit = self.store.get(self.key_of(spec, args, user))
        return hit, "hit" if hit is not None else "miss"

    def count_hit(self, tool):
        pass

    async def put(self, spec, args, user, result, text_vec=None):
        self.store[self.key_of(spec, args, user)] = result

    def entry_of(self, spec, args, user):  # a similarity tool's result is kept per exact text here already
        return self.key_of(spec, args, user)

    def note_of(self, spec, args, user):
        return self.entry_of(spec, args, user) + ":a"

    async def annotate(self, spec, args, user, note):
        self.store[self.note_of(spec, args, user)] = note


def _emp(args: dict[str, Any]) -> int:
    return int(args.get("employee", "E1000")[1:]) if "employee" in args else 0


# Each tool's fake answer (per-employee figures); tests/unit/test_consistency.py checks every registered tool has
# one that carries the fields its entry requires.
FAKES: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "salary": lambda a: {"base": _emp(a), "overtime_pay": 10.0, "bonus": 0.0, "gross": _emp(a) + 10.0, "tax": 1.0,
                         "pension": 2.0, "net": _emp(a) + 7.0, "currency": "EUR"},
    "attendance": lambda a: {"working_days": 21, "present_days": 20, "absent_days": 1, "late_arrivals": _emp(a) % 5,
                             "overtime_hours": 2.0},
    "leave_balance": lambda a: {"annual_entitled": 25, "annual_taken": 3, "annual_pending": 1, "carried_over": 2,
                                "annual_remaining": _emp(a) - 1000, "sick_used": 1, "sick_remaining": 11},
    "employee_details": lambda a: {"id": a.get("employee"), "name": f"Person {a.get('employee')}", "role": "Analyst",
                                   "department": "IT", "city": "Berlin"},
    "leave_policy": lambda a: {"leave_type": a.get("leave_type"), "entitlement": "5 days", "pay": "full pay",
                               "notice": "ask", "notes": ""},
    "weather": lambda a: {"city": a.get("city"), "date": a.get("date"), "temperature_c": 4, "condition": "rain",
                          "wind_kmh": 10},
    "clothing_advice": lambda a: {"advice": f"Wear a coat ({a.get('temperature')} C)."},
    "kb_search": lambda a: {"passages": [{"title": "Doc", "text": "Nothing relevant here at all.", "score": 0.2}]},
}


class FakeTools:
    """Tool backend with per-tool latency and per-employee figures (`FAKES`)."""

    def __init__(self, latency: dict[str, float] | None = None) -> None:
        self.latency = latency or {}
        self.calls: list[tuple[str, dict]] = []
        self.in_flight = 0
        self.max_in_flight = 0  # how many calls ran at once: parallel fan-out without reading a clock

    async def call(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        self.calls.append((tool, args))
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            await asyncio.sleep(self.latency.get(tool, 0.0))
        finally:
            self.in_flight -= 1
        return FAKES[tool](args)

    async def get_employee(self, user: str):
        return {"id": user, "name": f"Person {user}", "city": "Berlin", "department": "IT"}

    async def aclose(self) -> None:
        pass


class FakeDeps(Deps):
    """Deps with a profile that needs no Redis."""

    async def profile(self, user: str):
        return await self.tools.get_employee(user)


FAQ = {
    "payday": FaqEntry("payday", "When is payday?", "Salaries are paid on the 25th of each month.",
                       ["What day do we get paid?", "When do salaries arrive?", "Which day is payday?"]),
    "apply-leave": FaqEntry("apply-leave", "How do I apply for annual leave?",
                            "Request it in MyHR at least 2 weeks ahead.",
                            ["How can I request annual leave?", "How do I book annual leave?",
                             "Where do I apply for annual leave?"]),
}


# The router's examples for graph tests: the real model is tested in test_router.py on the real data.
ROUTES = [
    ("When is payday?", "faq:payday"), ("What day do we get paid?", "faq:payday"),
    ("How do I apply for annual leave?", "faq:apply-leave"), ("How do I book annual leave?", "faq:apply-leave"),
    ("What was my salary last month?", "salary"), ("What was my salary in March?", "salary"),
    ("What is my salary this month", "salary"), ("my payslip please", "salary"),
    ("How many leave days do I have left?", "leave_balance"), ("my leave balance", "leave_balance"),
    ("What is the weather in Paris?", "weather"), ("the weather in Rome tomorrow", "weather"),
    ("What should I wear in Paris tomorrow?", "weather_clothing"), ("do I need a coat in Oslo", "weather_clothing"),
    ("What is E1002's salary?", "other_person"), ("show me Anna's payslip", "other_person"),
    ("and last month?", "follow_up"), ("what about Berlin?", "follow_up"),
    ("Draft a note to my team", "free_writing"), ("rewrite this e-mail politely", "free_writing"),
    ("Tell me something nice", "other"), ("tell me a joke", "other"),
    ("Where is the fire exit policy?", "handbook"),
    ("my salary and the weather in Rome", "compound"), ("my leave balance and what to wear in Oslo", "compound"),
    ("What is my salary this month and how many leave days do I have left", "compound"),
]


def fake_router(emb: FakeEmbedder) -> Router:
    """A router trained on `ROUTES` over the fake embeddings; every route taken at probability >= 0.5."""
    vecs = emb.embed([q for q, _ in ROUTES])
    labels = [lab for _, lab in ROUTES]
    model = build(vecs, labels, 100.0, {"thresholds": {group_of(lab): 0.5 for lab in labels}, "support_floors": {}})
    return Router(model)


def make_deps(llm_replies: list[str] | None = None, latency: dict[str, float] | None = None) -> FakeDeps:
    emb = FakeEmbedder()
    replies = iter([AIMessage(r) for r in (llm_replies or [])] + [AIMessage("fallback answer")] * 20)
    return FakeDeps(embedder=emb, redis=FakeRedis(), faq=FAQ, router=fake_router(emb), cache=FakeCache(),  # type: ignore[arg-type]
                    tools=FakeTools(latency), llm=GenericFakeChatModel(messages=replies))


@pytest.fixture
def deps() -> FakeDeps:
    return make_deps()


@pytest.fixture
def graph_for():
    """Build a graph (with an in-memory checkpointer) around given deps."""
    from langgraph.checkpoint.memory import InMemorySaver

    return lambda deps: build_graph(deps, checkpointer=InMemorySaver())
