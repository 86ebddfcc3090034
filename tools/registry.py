"""The tools: argument schemas, the docstrings the model reads, and each tool's cache policy.

The cache policy travels with the tool: how long a result lives, whether it is personal (scoped
to the caller, never shared), and which argument, if any, is free text matched by similarity
rather than exactly.
"""

from __future__ import annotations

from dataclasses import dataclass

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
    """A tool and its cache policy."""

    name: str
    description: str
    args: type[BaseModel]
    ttl_s: int
    personal: bool = False
    similarity_arg: str | None = None
    idempotent: bool = True
    prefetchable: bool = True


TOOLS: dict[str, ToolSpec] = {t.name: t for t in [
    ToolSpec("attendance", "Attendance of the calling employee for one month: working days, days present, "
             "absences, late arrivals and overtime hours.", AttendanceArgs, ttl_s=3600, personal=True),
    ToolSpec("salary", "Payslip of the calling employee for one month: gross, overtime pay, bonus, tax, "
             "pension and net pay in EUR.", SalaryArgs, ttl_s=3600, personal=True),
    ToolSpec("leave_balance", "Leave balance of the calling employee: annual days entitled, taken, pending, "
             "carried over and remaining; sick days used and remaining.", LeaveBalanceArgs, ttl_s=300,
             personal=True),
    ToolSpec("leave_policy", "Company rules for one type of leave: entitlement, pay, notice and notes.",
             LeavePolicyArgs, ttl_s=86400),
    ToolSpec("weather", "Weather forecast for a city on a day: temperature in Celsius, condition, wind.",
             WeatherArgs, ttl_s=600),
    ToolSpec("clothing_advice", "What to wear for a temperature (Celsius) and a weather condition.",
             ClothingArgs, ttl_s=86400),
    ToolSpec("kb_search", "Search the company knowledge base (handbook, policies, procedures); returns "
             "the most relevant passages.", KbSearchArgs, ttl_s=3600, similarity_arg="query"),
]}

# The intents the router can send straight to tools, and the tools each one calls.
INTENT_TOOLS: dict[str, tuple[str, ...]] = {
    "salary": ("salary",), "attendance": ("attendance",), "leave_balance": ("leave_balance",),
    "leave_policy": ("leave_policy",), "weather": ("weather",), "weather_clothing": ("weather", "clothing_advice"),
}
TEMPLATE_INTENTS = frozenset(INTENT_TOOLS)
PERSONAL_INTENTS = frozenset(i for i, tools in INTENT_TOOLS.items() if any(TOOLS[t].personal for t in tools))
