"""Fakes for unit tests: no services. The real ones are exercised in tests/integration."""

from __future__ import annotations

import asyncio
import hashlib
import json
from typing import Any

import numpy as np
import pytest
from fakeredis import FakeAsyncRedis as FakeRedis
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage

from app.training.router_train import build
from graph.deps import Deps
from graph.graph import build_graph
from graph.router import Router, group_of
from tools.faq import FaqEntry
from tools.registry import MODULES
from tools.specs import Fake


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
        self.gets = 0  # single reads

    def key_of(self, spec, args, user):
        from tools.cache import cache_key

        return cache_key(spec, args, user) + json.dumps(args, sort_keys=True)

    async def get(self, spec, args, user, text_vec=None, threshold=None):
        self.gets += 1
        hit = self.store.get(self.key_of(spec, args, user))
        return hit, "hit" if hit is not None else "miss"

    async def put(self, spec, args, user, result, text_vec=None):
        self.store[self.key_of(spec, args, user)] = result


# Each tool's fake answer (per-employee figures), from its intent's module (tools/intents/);
# tests/unit/test_consistency.py checks every registered tool has one that carries the fields its entry requires.
FAKES: dict[str, Fake] = {tool: fake for module in MODULES for tool, fake in module.FAKES.items()}


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
