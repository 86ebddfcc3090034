"""A request's slots, a templated request's plan with the results the cache already holds, and the routing step's
update made from that plan.

route_question runs it after the router's decision, and so does the early decision beside the graph
(graph/early.py) for a template path, so that a cache hit's answer can reach the caller before LangGraph's start:
one function, so the two cannot plan differently.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from graph import held_answers, templates
from graph.context import Context
from graph.deps import Deps
from graph.executor import cached_ahead, found_in_cache
from graph.kit import today_of
from graph.parts import label_of, part_of, template_parts
from graph.paths import Decision
from graph.slots import fill_slots, settle_leave_type
from graph.state import Part, ToolCall, ToolResult
from tools.registry import INTENTS, TOOLS


@dataclass(frozen=True)
class TemplatePlan:
    """What a template path needs before its tools: who asks, the slots, the parts and their calls."""

    profile: dict[str, Any]
    slots: dict[str, Any]
    parts: list[Part]
    plan: list[ToolCall] | None  # None: a part lacks a slot (the LLM plans)
    found: list[ToolResult] | None  # every call's result, when the cache holds them all (progressive answers)


async def slots_of(deps: Deps, d: Decision, question: str, profile: dict[str, Any], previous: dict[str, Any],
                   ctx: Context, filled: dict[str, Any] | None = None) -> dict[str, Any]:
    """Every slot the question, the conversation's `previous` ones and the profile give; which leave type, by
    meaning when no keyword names one (on a leave-policy part or the LLM path). `filled`: `fill_slots`'s slots for
    the same question, profile and conversation, read already (`ReadAhead`); a copy is completed.
    """
    slots = copy.deepcopy(filled) if filled is not None else fill_slots(question, today_of(ctx), profile, previous)
    if "leave_policy" in d.intents or d.path == "llm":
        full = deps.router.leave_types.full if deps.router.leave_types is not None and d.leave_question else None
        await settle_leave_type(question, slots, deps.embed_many, d.leave_type, full)
    return slots


async def plan_template(deps: Deps, d: Decision, user: str, profile: dict[str, Any], slots: dict[str, Any],
                        ctx: Context, held: Mapping[str, dict[str, Any]] | None = None) -> TemplatePlan:
    """The template path's parts and plan, and the results when the cache holds every one of them (`held`: those
    read ahead, by key, are not read again).
    """
    parts = template_parts(d, deps.faq, slots, profile, today_of(ctx))
    plan = templates.plan_parts(parts, user)
    found = await found_in_cache(deps, plan, user, ctx, held) if plan is not None and ctx.progressive_enabled else None
    return TemplatePlan(profile, slots, parts, plan, found)


# A plan of more calls than this is not read ahead: a period's months, one call each ("my pay this year": twelve),
# whose keys and reads took about 2 ms, as long as the embedding they are meant to hide behind; it reads after the
# decision, as any plan not read ahead.
READ_AHEAD_MAX_CALLS = 4


@dataclass(frozen=True)
class ReadAhead:
    """What a new request's template plan needs that does not depend on which template: read while the question
    is embedded, before the router has decided (graph/early.py). The slots the question and the profile give,
    and what the cache holds for each known intent's plan with those slots, by key.
    """

    slots: dict[str, Any]
    held: dict[str, dict[str, Any]]
    handbook_keys: tuple[str, ...] = ()  # read too: a handbook answer's entry and note (graph/held_answers.py)


async def read_ahead(deps: Deps, question: str, user: str, profile: dict[str, Any], ctx: Context) -> ReadAhead:
    """The slots of a new request (one that points back at no earlier turn) and, for every known intent planned
    alone with them, the results the cache holds (one round trip; two when a call reads another's result). The
    plan the router's decision picks then finds its results at hand when it is among them; any other (a compound
    request, a leave type settled by meaning) reads the cache itself.
    """
    today = today_of(ctx)
    slots = fill_slots(question, today, profile)
    if not (ctx.cache_enabled and ctx.progressive_enabled):
        return ReadAhead(slots, {})
    plans = [plan for intent in INTENTS
             if (plan := templates.plan_parts(templates.per_month(part_of(deps.faq, intent, "", slots, profile, today)),
                                              user)) and len(plan) <= READ_AHEAD_MAX_CALLS]
    handbook_keys = held_answers.keys(deps, question, user) if held_answers.SEARCH in TOOLS else ()
    return ReadAhead(slots, await cached_ahead(deps, plans, user, handbook_keys), handbook_keys)


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
