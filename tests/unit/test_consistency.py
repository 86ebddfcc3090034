"""Every tool and intent is whole: a tool has the slot arguments the LLM path fills, a fake and a backend route; an
intent has a renderer (and a summary, when it takes a month), labelled utterances and calls its tools can take;
LABELS.md's routes table says what the registry says. `gaps` is what a new intent's module is checked against
(tests/unit/tools/test_registry.py).
"""

from __future__ import annotations

import glob
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import yaml

from tests.unit.conftest import FAKES
from tools.registry import INTENTS, QUESTION, TOOLS, USER, IntentSpec
from tools.specs import Fake

ROOT = Path(__file__).resolve().parents[2]


def backend_routes() -> set[str]:
    """The GET routes the demo backend serves."""
    from tools.demo_backend import server

    return {r.path for r in server.app.routes if "GET" in (getattr(r, "methods", None) or ())}


def utterances(spec: IntentSpec) -> list[str]:
    """The labelled questions of an intent, from the files its entry names."""
    files = sorted(glob.glob(str(ROOT / spec.utterances)))
    items = [it for f in files for it in yaml.safe_load(Path(f).read_text(encoding="utf-8")) or []]
    return [it["q"] for it in items if it.get("route") == spec.name]


def _refs_ok(args: dict[str, str] | Any, calls: set[str]) -> bool:
    return all(v in (USER, QUESTION) or re.fullmatch(r"\$\w+", v) or v.startswith("@") and v[1:].split(".")[0] in calls
               for v in args.values())


def gaps(fakes: dict[str, Fake] | None = None, routes: set[str] | None = None) -> list[str]:
    """What the registered tools and intents lack, one line each; empty when every entry is whole."""
    fakes = FAKES if fakes is None else fakes
    routes = backend_routes() if routes is None else routes
    found: list[str] = []
    for name, tool in TOOLS.items():
        needed = {f for f, info in tool.args.model_fields.items() if info.is_required()}
        if missing := sorted(needed - tool.slot_args.keys()):
            found.append(f"{name}: the LLM path fills no {missing}")
        if not _refs_ok(tool.slot_args, set(TOOLS)) or tool.slot_args.keys() - tool.args.model_fields.keys():
            found.append(f"{name}: slot arguments {dict(tool.slot_args)} do not fit its arguments")
        if name not in fakes:
            found.append(f"{name}: no fake")
        elif lacking := sorted(tool.required - fakes[name]({}).keys()):
            found.append(f"{name}: its fake lacks {lacking}")
        if tool.path not in routes:
            found.append(f"{name}: the backend serves no {tool.path}")
    for name, intent in INTENTS.items():
        if intent.renderer is None:
            found.append(f"intent {name}: no renderer")
        if "month" in intent.required and intent.summary is None:
            found.append(f"intent {name}: takes a month but has no summary for a period")
        if not utterances(intent):
            found.append(f"intent {name}: no utterances labelled {name} in {intent.utterances}")
        if not intent.description or not intent.covers:
            found.append(f"intent {name}: no description or no phrase of what the desk covers")
        for call_id, tool_name, args in intent.calls:
            spec = TOOLS.get(tool_name)
            needed = {f for f, info in spec.args.model_fields.items() if info.is_required()} if spec else set()
            if spec is None or needed - args.keys() or not _refs_ok(args, {c for c, _, _ in intent.calls}):
                found.append(f"intent {name}: call {call_id} does not fit tool {tool_name}")
    return found


def test_every_tool_and_intent_is_whole():
    assert gaps() == []


def test_a_tool_the_llm_path_cannot_fill_or_fake_is_caught(monkeypatch):
    """The gap `employee_details` had: an LLM-planned call to it got no arguments, and the fakes had no answer."""
    monkeypatch.setitem(TOOLS, "employee_details", replace(TOOLS["employee_details"], slot_args={}))
    fakes = {k: v for k, v in FAKES.items() if k != "employee_details"}
    assert gaps(fakes) == ["employee_details: the LLM path fills no ['employee']", "employee_details: no fake"]
    assert gaps(routes=backend_routes() - {"/employee/details"}) == [
        "employee_details: the LLM path fills no ['employee']", "employee_details: the backend serves no "
        "/employee/details"]


def test_an_intent_without_renderer_or_data_is_caught(monkeypatch):
    lonely = IntentSpec("payroll_export", (("salary", "salary", {"employee": USER}),), ("month",),
                        description="a payroll export", covers="exports")
    monkeypatch.setitem(INTENTS, lonely.name, lonely)
    assert gaps() == ["intent payroll_export: no renderer",
                      "intent payroll_export: takes a month but has no summary for a period",
                      "intent payroll_export: no utterances labelled payroll_export in data/router/train*.yaml",
                      "intent payroll_export: call salary does not fit tool salary"]


def test_the_labels_table_lists_the_registrys_intents_with_their_descriptions():
    rows = [[c.strip() for c in line.strip().strip("|").split("|")]
            for line in (ROOT / "data" / "router" / "LABELS.md").read_text(encoding="utf-8").splitlines()
            if line.startswith("| `")]
    table = {route.strip("`"): (meaning, path) for route, meaning, path in rows if path.startswith("template:")}
    assert table == {name: (spec.description, f"template: {' + '.join(spec.tools)} tool{'s' * (len(spec.tools) > 1)}")
                     for name, spec in INTENTS.items()}
