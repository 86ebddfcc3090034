"""The tools and the intents, collected from their modules (`tools/intents/`, one per intent). Everything that lists
tools or intents reads these two tables: the planner's tool names and schema, the LLM path's slot arguments, the
router's labels, the templates, the follow-up slots, the sentence saying what the desk covers, and the tests' fakes
and name sets. What an entry holds is `tools/specs.py`.

The modules are listed, not discovered: their order is the tables' order, and that is behaviour. It is the order of
the desk's "I answer questions about your own pay, attendance, ..." and of the tools in the planner's prompt, whose
static part must stay byte-identical between requests; a directory listing would reorder both whenever a file is
added. An intent is declared in tools/, not graph/, because dependencies point one way (app -> graph -> tools) and
the router, its calibration and the tool layer all read it.
"""

from __future__ import annotations

from collections.abc import Mapping

from tools.intents import attendance, handbook, leave_balance, leave_policy, my_details, salary, weather
from tools.specs import QUESTION, TRAIN_DATA, USER, IntentSpec, Renderer, Summary, ToolSpec

__all__ = ["INTENTS", "MODULES", "QUESTION", "TOOLS", "TRAIN_DATA", "USER", "IntentSpec", "Renderer", "Summary",
           "ToolSpec", "carried_slots", "depends_on", "is_personal", "register", "tools_of"]

# The intents' modules, each exporting SPECS and FAKES (`tools/intents/__init__.py`), in the tables' order.
MODULES = (salary, attendance, leave_balance, my_details, leave_policy, weather, handbook)

TOOLS: dict[str, ToolSpec] = {}
# The intents the router can send straight to tools (router labels of the same names).
INTENTS: dict[str, IntentSpec] = {}


def register(*specs: ToolSpec | IntentSpec) -> None:
    """Add tools and intents (a module's `SPECS`, a deployment's own, or a test's): every layer reads these tables."""
    for spec in specs:
        if isinstance(spec, ToolSpec):
            TOOLS[spec.name] = spec
        else:
            INTENTS[spec.name] = spec


for _module in MODULES:
    register(*_module.SPECS)


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
