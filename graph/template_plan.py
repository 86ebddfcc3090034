"""A request's slots and a templated request's plan: what `fill_slots` makes of the router's decision before any
tool runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from graph import templates
from graph.context import Context
from graph.deps import Deps
from graph.kit import today_of
from graph.leave_slots import leave_type_needs_meaning, settle_leave_type
from graph.parts import label_of, template_parts
from graph.paths import Decision, route_of
from graph.slots import fill_slots
from graph.state import Part, State, ToolCall
from tools.registry import INTENTS

# How probable the router's top intent must be to plan a question the served model cannot read: on the languages'
# dev splits, of the questions the shortcut stepped aside for whose top label is an intent, 91% were right at 0.8
# and above (120 of 132), 63% between 0.5 and 0.8. Below it the handbook is searched (quoted, or "not in it").
READING_MIN = 0.8


@dataclass(frozen=True)
class TemplatePlan:
    """What a template path needs before its tools: who asks, the slots, the parts and their calls."""

    profile: dict[str, Any]
    slots: dict[str, Any]
    parts: list[Part]
    plan: list[ToolCall] | None  # None: a part lacks a slot (the LLM plans)


def wants_search_embedding(d: Decision, question: str) -> bool:
    """Whether a later step embeds the question with the shared encoder: a handbook search, or a leave type that
    neither a keyword nor the router's leave-type classifier settles, on a leave-policy part or the LLM path.
    """
    settles_leave = "leave_policy" in d.intents or d.path == "llm"
    return d.path == "handbook" or (settles_leave and leave_type_needs_meaning(question, d.leave_type))


async def slots_of(deps: Deps, d: Decision, question: str, profile: dict[str, Any], previous: dict[str, Any],
                   ctx: Context, lang: str = "en") -> dict[str, Any]:
    """Every slot the question, the conversation's `previous` ones and the profile give (and the answer's language);
    which leave type, by meaning when no keyword names one (on a leave-policy part or the LLM path, in English:
    the leave types' descriptions and classifiers are English; in another language the keywords name it).
    """
    slots = fill_slots(question, today_of(ctx), profile, previous, lang)
    if lang == "en" and ("leave_policy" in d.intents or d.path == "llm"):
        full = deps.router.leave_types.full if deps.router.leave_types is not None and d.leave_question else None
        await settle_leave_type(question, slots, deps.embed_many, d.leave_type, full)
    return slots


def plan_template(deps: Deps, d: Decision, user: str, profile: dict[str, Any], slots: dict[str, Any],
                  ctx: Context) -> TemplatePlan:
    """The template path's parts and their calls (the tool stage reads the cache as it runs them)."""
    parts = template_parts(d, deps.faq, slots, profile, today_of(ctx))
    return TemplatePlan(profile, slots, parts, templates.plan_parts(parts, user))


def update_of(planned: TemplatePlan) -> dict[str, Any]:
    """fill_slots' update for a template path: its plan; the LLM plans when a part lacks a slot."""
    parts = planned.parts
    update: dict[str, Any] = {"profile": planned.profile, "slots": planned.slots, "parts": parts}
    route = route_of("template", settled=planned.plan is not None)  # the LLM plans when a part lacks a slot
    return {**update, **label_of(route, parts), **({"plan": planned.plan} if planned.plan is not None else {})}


def reading_plan(state: State) -> list[ToolCall]:
    """The full path's plan for a question in a language the served model does not read (the bundled SmolLM2 reads
    English): its plan would be noise, so the router's reading plans instead: the parts it found, else its most
    probable intent (`READING_MIN`), else the handbook's look-up. The answer is rendered in the asker's language.
    """
    d = state.get("router")
    top = d.label if d is not None and d.confidence >= READING_MIN else ""
    parts = state.get("parts") or ([Part(intent=top, slots=state["slots"])] if top in INTENTS else None)
    return templates.expected_calls(parts, state["slots"], state["user"])
