"""A request's slots, a templated request's plan with the results the cache already holds, and the routing step's
update made from that plan.

route_question runs it after the router's decision, and so does the early decision beside the graph
(graph/early.py) for a template path, so that a cache hit's answer can reach the caller before LangGraph's start:
one function, so the two cannot plan differently.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from graph import templates
from graph.context import Context
from graph.deps import Deps
from graph.executor import found_in_cache
from graph.kit import today_of
from graph.parts import label_of, template_parts
from graph.paths import Decision
from graph.slots import fill_slots, settle_leave_type
from graph.state import Part, ToolCall, ToolResult


@dataclass(frozen=True)
class TemplatePlan:
    """What a template path needs before its tools: who asks, the slots, the parts and their calls."""

    profile: dict[str, Any]
    slots: dict[str, Any]
    parts: list[Part]
    plan: list[ToolCall] | None  # None: a part lacks a slot (the LLM plans)
    found: list[ToolResult] | None  # every call's result, when the cache holds them all (progressive answers)


async def slots_of(deps: Deps, d: Decision, question: str, profile: dict[str, Any], previous: dict[str, Any],
                   ctx: Context) -> dict[str, Any]:
    """Every slot the question, the conversation's `previous` ones and the profile give; which leave type, by
    meaning when no keyword names one (on a leave-policy part or the LLM path).
    """
    slots = fill_slots(question, today_of(ctx), profile, previous)
    if "leave_policy" in d.intents or d.path == "llm":
        await settle_leave_type(question, slots, deps.embed_many)
    return slots


async def plan_template(deps: Deps, d: Decision, user: str, profile: dict[str, Any], slots: dict[str, Any],
                        ctx: Context) -> TemplatePlan:
    """The template path's parts and plan, and the results when the cache holds every one of them."""
    parts = template_parts(d, deps.faq, slots, profile, today_of(ctx))
    plan = templates.plan_parts(parts, user)
    found = await found_in_cache(deps, plan, user, ctx) if plan is not None and ctx.progressive_enabled else None
    return TemplatePlan(profile, slots, parts, plan, found)


def update_of(planned: TemplatePlan) -> dict[str, Any]:
    """route_question's update for a template path: its plan, and the answer streamed when the cache holds every
    result; the LLM plans when a part lacks a slot.
    """
    parts = planned.parts
    update: dict[str, Any] = {"profile": planned.profile, "slots": planned.slots, "parts": parts}
    if planned.plan is None:
        return {**update, **label_of("llm", parts)}
    update = {**update, **label_of("template", parts), "plan": planned.plan}
    if planned.found:
        update["results"] = planned.found  # the tool stage runs what is left of the plan: nothing
        update["streamed_parts"] = templates.stream_parts(parts, planned.found, [])
    return update
