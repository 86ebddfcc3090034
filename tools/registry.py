"""The tools: argument schemas, the docstrings the model reads, and each tool's cache policy.

The cache policy travels with the tool: how long a result lives, whether it is personal (scoped
to the caller, never shared), and which argument, if any, is free text matched by similarity
rather than exactly.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, Field

from tools.domain import DATE_PATTERN, EMPLOYEE_ID_PATTERN, MONTH_PATTERN, LeaveType

EMPLOYEE = Field(pattern=EMPLOYEE_ID_PATTERN, description="employee id, e.g. E1001 (always the caller)")
MONTH = Field(pattern=MONTH_PATTERN, description="month as YYYY-MM")


class AttendanceArgs(BaseModel):
    """Arguments of `attendance`."""

    employee: str = EMPLOYEE
    month: str = MONTH


class SalaryArgs(BaseModel):
    """Arguments of `salary`."""

    employee: str = EMPLOYEE
    month: str = MONTH


class EmployeeArgs(BaseModel):
    """Arguments of `employee_details`."""

    employee: str = EMPLOYEE


class LeaveBalanceArgs(BaseModel):
    """Arguments of `leave_balance`."""

    employee: str = EMPLOYEE


class LeavePolicyArgs(BaseModel):
    """Arguments of `leave_policy`."""

    leave_type: LeaveType


class WeatherArgs(BaseModel):
    """Arguments of `weather`."""

    city: str = Field(min_length=2, max_length=40, pattern=r"^[A-Za-z][A-Za-z .'-]*$")
    date: str = Field(pattern=DATE_PATTERN, description="day as YYYY-MM-DD")


class ClothingArgs(BaseModel):
    """Arguments of `clothing_advice`."""

    temperature: float = Field(ge=-60, le=60, description="degrees Celsius")
    condition: str = Field(min_length=1, max_length=40)


class KbSearchArgs(BaseModel):
    """Arguments of `kb_search`."""

    query: str = Field(min_length=1, max_length=500)


@dataclass(frozen=True)
class ToolSpec:
    """Everything about one tool: its arguments, where the backend serves it, what a valid answer holds,
    its cache policy and whether it is personal (answers only the caller, cached per caller).
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


@dataclass(frozen=True)
class IntentSpec:
    """A known intent the router sends straight to tools: the calls its template makes (slot mapping:
    `$slot` from the question, `$user` the caller, `@call.field` another call's result) and the
    slots it cannot do without. Its answer is rendered by `graph/templates.py:RENDERERS[name]`.
    """

    name: str
    calls: tuple[tuple[str, str, dict[str, str]], ...]  # (call id, tool, args)
    required: tuple[str, ...] = ()
    unsaid_month: Literal["this", "latest_payslip"] = "this"  # the month when the question names none

    @property
    def tools(self) -> tuple[str, ...]:
        """The tools the intent calls."""
        return tuple(tool for _, tool, _ in self.calls)


def _spec(name: str, description: str, args: type[BaseModel], path: str, required: set[str], ttl_s: int,
          **policy: object) -> ToolSpec:
    return ToolSpec(name, description, args, path, frozenset(required), ttl_s, **policy)  # type: ignore[arg-type]


TOOLS: dict[str, ToolSpec] = {t.name: t for t in [
    _spec("attendance", "Attendance of the calling employee for one month: working days, days present, "
          "absences, late arrivals and overtime hours.", AttendanceArgs, "/attendance",
          {"present_days", "working_days"}, ttl_s=3600, personal=True),
    _spec("salary", "Payslip of the calling employee for one month: gross, overtime pay, bonus, tax, "
          "pension and net pay in EUR.", SalaryArgs, "/salary", {"net", "gross", "base"}, ttl_s=3600, personal=True),
    _spec("leave_balance", "Leave balance of the calling employee: annual days entitled, taken, pending, "
          "carried over and remaining; sick days used and remaining.", LeaveBalanceArgs, "/leave/balance",
          {"annual_remaining"}, ttl_s=300, personal=True),
    _spec("employee_details", "The calling employee's record: employee id, name, role, department and the "
          "city they work in.", EmployeeArgs, "/employee/details", {"id", "name", "role"}, ttl_s=86400,
          personal=True),
    _spec("leave_policy", "Company rules for one type of leave: entitlement, pay, notice and notes.",
          LeavePolicyArgs, "/leave/policy", {"entitlement"}, ttl_s=86400),
    _spec("weather", "Weather forecast for a city on a day: temperature in Celsius, condition, wind.",
          WeatherArgs, "/weather", {"temperature_c", "condition"}, ttl_s=600),
    _spec("clothing_advice", "What to wear for a temperature (Celsius) and a weather condition.",
          ClothingArgs, "/clothing", {"advice"}, ttl_s=86400),
    _spec("kb_search", "Search the company knowledge base (handbook, policies, procedures); returns "
          "the most relevant passages.", KbSearchArgs, "/kb/search", {"passages"}, ttl_s=3600,
          similarity_arg="query"),
]}

# The intents the router can send straight to tools (router labels of the same names).
INTENTS: dict[str, IntentSpec] = {i.name: i for i in [
    IntentSpec("salary", (("salary", "salary", {"employee": "$user", "month": "$month"}),), ("month",),
               unsaid_month="latest_payslip"),  # "my salary" on 1 December: November's, December's is not out
    IntentSpec("attendance", (("attendance", "attendance", {"employee": "$user", "month": "$month"}),), ("month",)),
    IntentSpec("leave_balance", (("leave_balance", "leave_balance", {"employee": "$user"}),)),
    IntentSpec("my_details", (("employee_details", "employee_details", {"employee": "$user"}),)),
    IntentSpec("leave_policy", (("leave_policy", "leave_policy", {"leave_type": "$leave_type"}),), ("leave_type",)),
    IntentSpec("weather", (("weather", "weather", {"city": "$city", "date": "$date"}),), ("city", "date")),
    IntentSpec("weather_clothing", (
        ("weather", "weather", {"city": "$city", "date": "$date"}),
        ("clothing_advice", "clothing_advice", {"temperature": "@weather.temperature_c",
                                                "condition": "@weather.condition"}),
    ), ("city", "date")),
]}


def tools_of(intent: str) -> tuple[str, ...]:
    """The tools a known intent calls (none for anything else)."""
    spec = INTENTS.get(intent)
    return spec.tools if spec else ()


def is_personal(intent: str) -> bool:
    """True when the intent reads the caller's own data (asked about someone else, it is refused)."""
    return any(TOOLS[t].personal for t in tools_of(intent))


def register(*specs: ToolSpec | IntentSpec) -> None:
    """Add tools and intents (a deployment's own, or a test's): every layer reads these two tables."""
    for spec in specs:
        if isinstance(spec, ToolSpec):
            TOOLS[spec.name] = spec
        else:
            INTENTS[spec.name] = spec
