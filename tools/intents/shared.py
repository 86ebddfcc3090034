"""What several intents' modules share: the caller's id and a month as tool arguments, the slot mappings that fill
them, and the per-employee figure their fakes vary by.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from tools.domain import EMPLOYEE_ID_PATTERN, MONTH_PATTERN
from tools.specs import USER

EMPLOYEE = Field(pattern=EMPLOYEE_ID_PATTERN, description="employee id, e.g. E1001 (always the caller)")
MONTH = Field(pattern=MONTH_PATTERN, description="month as YYYY-MM")

MINE = {"employee": USER}  # a personal tool's one argument: the caller
MONTHLY = {"employee": USER, "month": "$month"}  # the caller's figures for the month asked about


def employee_number(args: dict[str, Any]) -> int:
    """E1007 -> 1007 (0 without an employee): fakes give each employee figures of their own."""
    return int(args.get("employee", "E1000")[1:]) if "employee" in args else 0
