"""The tools' argument schemas: what the planner's JSON schema offers and what a call is validated against.

Their types come from the domain vocabularies (`tools/domain.py`); `tools/registry.py` names one per tool.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from tools.domain import DATE_PATTERN, EMPLOYEE_ID_PATTERN, MONTH_PATTERN, LeaveType

EMPLOYEE = Field(pattern=EMPLOYEE_ID_PATTERN, description="employee id, e.g. E1001 (always the caller)")
MONTH = Field(pattern=MONTH_PATTERN, description="month as YYYY-MM")
QUERY_MAX_CHARS = 500  # a handbook search reads this much of the question


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

    query: str = Field(min_length=1, max_length=QUERY_MAX_CHARS)
