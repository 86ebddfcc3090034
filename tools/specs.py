"""What a tool and an intent are: the two kinds of entry the registry holds (`tools/registry.py`), each declared in
its intent's module (`tools/intents/`).

A tool's entry holds its arguments, backend route, the fields a valid answer carries, its cache policy (how long a
result lives, whether it is personal: scoped to the caller, never shared; which argument, if any, is free text
matched by similarity rather than exactly) and the arguments the LLM path fills from slots. An intent's entry holds
its router label's description, where its utterances live, its calls, the slots it cannot do without, the month it
means when none is said, its renderer (and, for a monthly intent, its answer over a period) and its phrase in the
desk's "I answer questions about ...".

Slot mapping, for intents' calls and tools' slot arguments alike: `$user` is the caller, `$question` the question,
`$<slot>` a slot read from it (`graph/slots.py`), `@<call>.<field>` a field of another call's result.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel

USER, QUESTION = "$user", "$question"
TRAIN_DATA = "data/router/train*.yaml"  # the labelled utterances the router learns from (dev and test: held out)
# An intent's answer from its slots and its calls' results (call id -> result data).
Renderer = Callable[[dict[str, Any], dict[str, dict[str, Any]]], str]
# A monthly intent's answer over a period ("Q1 2026") from its slots and every month's results (month -> call id ->
# result data).
Summary = Callable[[dict[str, Any], dict[str, dict[str, dict[str, Any]]]], str]
# A tool's answer in the unit tests' fake backend (`tests/unit/conftest.py:FAKES`), from the call's arguments.
Fake = Callable[[dict[str, Any]], dict[str, Any]]


@dataclass(frozen=True)
class ToolSpec:
    """Everything about one tool: its arguments, where the backend serves it, what a valid answer holds,
    its cache policy, whether it is personal (answers only the caller, cached per caller) and what slot
    filling supplies when the LLM plans it (the model's own argument values are unreliable).
    """

    name: str
    description: str  # what the LLM planner reads
    args: type[BaseModel]
    path: str  # backend route; the arguments go as query parameters of the same names
    required: frozenset[str]  # fields a response must carry, or it is "malformed"
    ttl_s: int
    personal: bool = False
    similarity_arg: str | None = None
    idempotent: bool = True
    prefetchable: bool = True
    slot_args: Mapping[str, str] = field(default_factory=dict)  # argument -> slot mapping, for the LLM path


@dataclass(frozen=True)
class IntentSpec:
    """A known intent the router sends straight to tools: the calls its template makes and the slots it cannot do
    without, its router label's meaning (`data/router/LABELS.md`), where its labelled utterances live, its renderer
    (and its summary, when it takes a month and so can be asked about a period) and its phrase in what the desk
    says it covers (a personal intent's phrase follows "your own").
    """

    name: str
    calls: tuple[tuple[str, str, Mapping[str, str]], ...]  # (call id, tool, argument -> slot mapping)
    required: tuple[str, ...] = ()
    unsaid_month: Literal["this", "latest_payslip"] = "this"  # the month when the question names none
    description: str = ""  # what the route means, as LABELS.md's table says
    utterances: str = TRAIN_DATA  # glob from the repository root of YAML items `{q, route: <name>}`
    renderer: Renderer | None = None
    summary: Summary | None = None  # the answer over several months, for an intent that requires a month
    covers: str = ""

    @property
    def tools(self) -> tuple[str, ...]:
        """The tools the intent calls."""
        return tuple(tool for _, tool, _ in self.calls)


def tool(name: str, description: str, args: type[BaseModel], path: str, required: set[str], ttl_s: int,
         **policy: object) -> ToolSpec:
    """A tool's entry, its required fields given as a set."""
    return ToolSpec(name, description, args, path, frozenset(required), ttl_s, **policy)  # type: ignore[arg-type]
