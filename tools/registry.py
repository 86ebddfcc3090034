"""The tools and the intents, one declarative entry each. Everything that lists tools or intents reads them:
the planner's tool names and schema, the LLM path's slot arguments, the router's labels, the templates, the
follow-up slots, the sentence saying what the desk covers, and the tests' fakes and name sets.

A tool's entry holds its arguments, backend route, the fields a valid answer carries, its cache policy (how long a
result lives, whether it is personal: scoped to the caller, never shared; which argument, if any, is free text
matched by similarity rather than exactly) and the arguments the LLM path fills from slots. An intent's entry holds
its router label's description, where its utterances live, its calls, the slots it cannot do without, the month it
means when none is said, its renderer and its phrase in the desk's "I answer questions about ...".

Slot mapping, for intents' calls and tools' slot arguments alike: `$user` is the caller, `$question` the question,
`$<slot>` a slot read from it (`graph/slots.py`), `@<call>.<field>` a field of another call's result.

Intents are declared here, not in graph/, because dependencies point one way (app -> graph -> tools) and the
router, its calibration and the tool layer all read them. The one part of an intent that is code in graph/, its
renderer, is named by key (`graph/renderers.py:RENDERERS`); an intent added by a deployment or a test may carry
the function itself.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel

from tools.args import (
    AttendanceArgs,
    ClothingArgs,
    EmployeeArgs,
    KbSearchArgs,
    LeaveBalanceArgs,
    LeavePolicyArgs,
    SalaryArgs,
    WeatherArgs,
)

USER, QUESTION = "$user", "$question"
TRAIN_DATA = "data/router/train*.yaml"  # the labelled utterances the router learns from (dev and test: held out)
# An intent's answer from its slots and its calls' results (call id -> result data).
Renderer = Callable[[dict[str, Any], dict[str, dict[str, Any]]], str]


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
    and its phrase in what the desk says it covers (a personal intent's phrase follows "your own").
    """

    name: str
    calls: tuple[tuple[str, str, Mapping[str, str]], ...]  # (call id, tool, argument -> slot mapping)
    required: tuple[str, ...] = ()
    unsaid_month: Literal["this", "latest_payslip"] = "this"  # the month when the question names none
    description: str = ""  # what the route means, as LABELS.md's table says
    utterances: str = TRAIN_DATA  # glob from the repository root of YAML items `{q, route: <name>}`
    renderer: str | Renderer = ""  # a key of graph/renderers.py:RENDERERS, or the function
    covers: str = ""

    @property
    def tools(self) -> tuple[str, ...]:
        """The tools the intent calls."""
        return tuple(tool for _, tool, _ in self.calls)


def _spec(name: str, description: str, args: type[BaseModel], path: str, required: set[str], ttl_s: int,
          **policy: object) -> ToolSpec:
    return ToolSpec(name, description, args, path, frozenset(required), ttl_s, **policy)  # type: ignore[arg-type]


_MINE = {"employee": USER}
_MONTHLY = {"employee": USER, "month": "$month"}
_FORECAST = {"city": "$city", "date": "$date"}
_DRESS = {"temperature": "@weather.temperature_c", "condition": "@weather.condition"}

TOOLS: dict[str, ToolSpec] = {t.name: t for t in [
    _spec("attendance", "Attendance of the calling employee for one month: working days, days present, "
          "absences, late arrivals and overtime hours.", AttendanceArgs, "/attendance",
          {"present_days", "working_days"}, ttl_s=3600, personal=True, slot_args=_MONTHLY),
    _spec("salary", "Payslip of the calling employee for one month: gross, overtime pay, bonus, tax, "
          "pension and net pay in EUR.", SalaryArgs, "/salary", {"net", "gross", "base"}, ttl_s=3600, personal=True,
          slot_args=_MONTHLY),
    _spec("leave_balance", "Leave balance of the calling employee: annual days entitled, taken, pending, "
          "carried over and remaining; sick days used and remaining.", LeaveBalanceArgs, "/leave/balance",
          {"annual_remaining"}, ttl_s=300, personal=True, slot_args=_MINE),
    _spec("employee_details", "The calling employee's record: employee id, name, role, department and the "
          "city they work in.", EmployeeArgs, "/employee/details", {"id", "name", "role"}, ttl_s=86400,
          personal=True, slot_args=_MINE),
    _spec("leave_policy", "Company rules for one type of leave: entitlement, pay, notice and notes.",
          LeavePolicyArgs, "/leave/policy", {"entitlement"}, ttl_s=86400, slot_args={"leave_type": "$leave_type"}),
    _spec("weather", "Weather forecast for a city on a day: temperature in Celsius, condition, wind.",
          WeatherArgs, "/weather", {"temperature_c", "condition"}, ttl_s=600, slot_args=_FORECAST),
    _spec("clothing_advice", "What to wear for a temperature (Celsius) and a weather condition.",
          ClothingArgs, "/clothing", {"advice"}, ttl_s=86400, slot_args=_DRESS),
    _spec("kb_search", "Search the company knowledge base (handbook, policies, procedures); returns "
          "the most relevant passages.", KbSearchArgs, "/kb/search", {"passages"}, ttl_s=3600,
          similarity_arg="query", slot_args={"query": QUESTION}),
]}

_WEATHER = "the weather (and what to wear) for your trips"  # one phrase covers the forecast and the clothing
# The intents the router can send straight to tools (router labels of the same names).
INTENTS: dict[str, IntentSpec] = {i.name: i for i in [
    IntentSpec("salary", (("salary", "salary", _MONTHLY),), ("month",),
               unsaid_month="latest_payslip",  # "my salary" on 1 December: November's, December's is not out
               renderer="render_salary", covers="pay",
               description="the caller's OWN pay: payslip, net/gross, what they earned or were paid in a month, "
                           "their overtime pay, their bonus on a payslip, tax or pension deducted from their pay"),
    IntentSpec("attendance", (("attendance", "attendance", _MONTHLY),), ("month",),
               renderer="render_attendance", covers="attendance",
               description="the caller's OWN attendance record for a month: days present or absent, days missed, "
                           "late arrivals, overtime HOURS worked, days worked"),
    IntentSpec("leave_balance", (("leave_balance", "leave_balance", _MINE),),
               renderer="render_leave_balance", covers="leave",
               description="the caller's OWN leave balance: annual/vacation/PTO days left, taken, pending, carried "
                           "over; sick days used or left"),
    IntentSpec("my_details", (("employee_details", "employee_details", _MINE),),
               renderer="render_my_details", covers="employee record",
               description="what the company's records say about the caller: their employee id, name, job title, "
                           "department, work location; who their manager or HR contact is (not on record: the "
                           "reply says so and where to ask)"),
    IntentSpec("leave_policy", (("leave_policy", "leave_policy", {"leave_type": "$leave_type"}),), ("leave_type",),
               renderer="render_leave_policy", covers="company policies and the handbook",
               description="company rules for ONE leave type (annual, sick, maternity, paternity/partner, parental, "
                           "bereavement/compassionate, study, unpaid): how many days or weeks employees get, "
                           "whether it is paid, how much notice"),
    IntentSpec("weather", (("weather", "weather", _FORECAST),), ("city", "date"),
               renderer="render_weather", covers=_WEATHER,
               description="a forecast: temperature, rain, sun, wind, snow for a city and/or a day"),
    IntentSpec("weather_clothing", (("weather", "weather", _FORECAST),
                                    ("clothing_advice", "clothing_advice", _DRESS)), ("city", "date"),
               renderer="render_weather_clothing", covers=_WEATHER,
               description="what to wear / bring given the weather (coat, umbrella, raincoat, layers, shorts) for a "
                           "city and/or a day"),
]}


def tools_of(intent: str) -> tuple[str, ...]:
    """The tools a known intent calls (none for anything else)."""
    spec = INTENTS.get(intent)
    return spec.tools if spec else ()


def is_personal(intent: str) -> bool:
    """True when the intent reads the caller's own data (asked about someone else, it is refused)."""
    return any(TOOLS[t].personal for t in tools_of(intent))


def depends_on(args: Mapping[str, str]) -> list[str]:
    """The calls whose results a slot mapping waits for (`@weather.condition`: weather)."""
    return sorted({v[1:].split(".")[0] for v in args.values() if v.startswith("@")})


def carried_slots() -> frozenset[str]:
    """The slots the intents' calls read: what a follow-up ("and last month?") can keep from the turn before."""
    return frozenset(v[1:] for spec in INTENTS.values() for _, _, args in spec.calls for v in args.values()
                     if v.startswith("$") and v not in (USER, QUESTION))


def register(*specs: ToolSpec | IntentSpec) -> None:
    """Add tools and intents (a deployment's own, or a test's): every layer reads these two tables."""
    for spec in specs:
        if isinstance(spec, ToolSpec):
            TOOLS[spec.name] = spec
        else:
            INTENTS[spec.name] = spec
