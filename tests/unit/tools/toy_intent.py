"""A toy intent, the whole of it in one module as each of tools/intents/ is: what the staff canteen serves on a day.

Its labelled questions are data beside it (`canteen_menu.yaml`); its backend route, `/canteen`, is the test's own
(`test_registry.py`), which registers the module through `tools.registry.register(*SPECS)`.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from tools.domain import DATE_PATTERN
from tools.specs import Fake, IntentSpec, tool


class CanteenArgs(BaseModel):
    """Arguments of `canteen_menu`."""

    date: str = Field(pattern=DATE_PATTERN)


def render_menu(slots: dict[str, Any], r: dict[str, dict[str, Any]]) -> str:
    """The day's dishes."""
    return f"On {slots['date']} the canteen serves {', '.join(r['menu']['dishes'])}."


def fake_menu(args: dict[str, Any]) -> dict[str, Any]:
    """The same two dishes every day: the fake backend's answer, and the test's HTTP backend's."""
    return {"date": args.get("date"), "dishes": ["lentil soup", "risotto"]}


CANTEEN = tool("canteen_menu", "The staff canteen's menu on a day.", CanteenArgs, "/canteen", {"dishes"}, ttl_s=3600,
               slot_args={"date": "$date"})
INTENT = IntentSpec("canteen_menu", (("menu", "canteen_menu", {"date": "$date"}),), ("date",),
                    description="what the staff canteen serves on a day",
                    utterances="tests/unit/tools/canteen_menu.yaml", renderer=render_menu,
                    covers="the canteen's menu")

SPECS = (CANTEEN, INTENT)
FAKES: dict[str, Fake] = {"canteen_menu": fake_menu}
