"""Which leave type a question is about: the types it names by keyword (in every language: their words files), and,
when it names none or several, the chain that settles one by meaning (the router's classifier, the full classifier,
the descriptions). `graph/slots.py` fills the slot from here; the template plan settles it before its calls.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Awaitable, Callable
from typing import Any

import numpy as np

from graph.leave_model import NONE, LeaveTypeModel, settles
from tools.domain import LEAVE_DESCRIPTIONS, LEAVE_PATTERNS, LEAVE_PRIORITY

LEAVE_MIN_SIMILARITY = 0.4  # below this a question is about leave in general, not one type
LEAVE_MIN_MARGIN = 0.05  # and a type must stand out from the next one, or the question steps aside


def leave_type_slot(text: str) -> str | None:
    """The kind of leave a question names (the domain's priority decides between several)."""
    return next(iter(leave_types_named(text)), None)


@functools.cache
def _partner_birth() -> re.Pattern[str]:
    """The one giving birth is the caller's partner ("my wife is due in June", "meine Frau ist schwanger", "我老婆怀孕
    了"): the birth words describe her, and the caller's own leave is partner (paternity) leave. Each language's
    phrasing is its words file's `partner_birth`.
    """
    from tools.i18n import in_every_language

    return re.compile("|".join(in_every_language("partner_birth")), re.IGNORECASE)


def leave_types_named(text: str) -> list[str]:
    """Every leave type a question names by keyword, in the domain's priority order (a partner's pregnancy
    names the caller's partner leave, not maternity leave).
    """
    spans = {kind: [m.span() for m in LEAVE_PATTERNS[kind].finditer(text)] for kind in LEAVE_PRIORITY}
    found = [(b, kind) for kind, bs in spans.items() for b in bs]

    def within_longer(a: tuple[int, int], kind: str) -> bool:  # "产假" (maternity) inside "陪产假" (paternity)
        return any(k != kind and b[0] <= a[0] and a[1] <= b[1] and b[1] - b[0] > a[1] - a[0] for b, k in found)

    named = [kind for kind in LEAVE_PRIORITY if any(not within_longer(a, kind) for a in spans[kind])]
    if _partner_birth().search(text):
        named = list(dict.fromkeys("paternity" if kind == "maternity" else kind for kind in named)) or ["paternity"]
    return named


def leave_type_needs_meaning(text: str, sure: str | None = None) -> bool:
    """Whether settling the question's leave type embeds it with the shared encoder: it names no type by keyword,
    or several, and the router's leave-type classifier has not settled it (`sure`: `Decision.leave_type`).
    """
    named = leave_types_named(text)
    return len(named) != 1 and not settles(sure, named)


async def settle_leave_type(text: str, slots: dict[str, Any], embed: Callable[[list[str]], Awaitable[np.ndarray]],
                            sure: str | None = None, full: LeaveTypeModel | None = None) -> None:
    """Set the leave-type slot from the question's meaning, unless the conversation set it and the question
    names none; a question naming several with none standing out keeps no slot (no template guesses one).
    """
    named = leave_types_named(text)
    if slots.get("sources", {}).get("leave_type") == "conversation" and not named:
        return
    if kind := await resolve_leave_type(text, embed, named, sure, full):
        slots["leave_type"] = kind
        slots.setdefault("sources", {})["leave_type"] = "question"
    elif named:
        slots.pop("leave_type", None)
        slots.get("sources", {}).pop("leave_type", None)


async def resolve_leave_type(text: str, embed: Callable[[list[str]], Awaitable[np.ndarray]],
                             named: list[str] | None = None, sure: str | None = None,
                             full: LeaveTypeModel | None = None) -> str | None:
    """The leave type a question is about: the one it names.

    When it names none or several, the first of these that settles it (graph/leave_model.py), among the types named
    when there are several:

    - `sure`, what the router's classifier read from its own vector (`Decision.leave_type`);
    - the `full` classifier over the shared encoder's embedding of the question;
    - the type whose description (`tools.domain.LEAVE_DESCRIPTIONS`) is closest in meaning.

    None when it is about no particular type ("how do I book time off") or two types are about as close.
    """
    named = leave_types_named(text) if named is None else named
    if len(named) == 1:
        return named[0]
    if settles(sure, named):
        return None if sure == NONE else sure
    if full is not None and (kind := full.pick((await embed([text]))[0], named)) is not None:
        return None if kind == NONE else kind
    pool = described(named)
    return closest_description(pool, await embed([text, *(LEAVE_DESCRIPTIONS[k] for k in pool)]), bool(named))


def described(named: list[str]) -> list[str]:
    """The leave types whose descriptions a question naming `named` (none or several) is matched to."""
    return named or list(LEAVE_DESCRIPTIONS)


def closest_description(pool: list[str], vecs: np.ndarray, named: bool) -> str | None:
    """The type of `pool` whose description is closest to the question (`vecs`: the question's embedding, then the
    descriptions'), when it stands out from the next and, among all types (`named` False), is close enough.
    """
    sims = vecs[1:] @ vecs[0]
    order = np.argsort(-sims)
    best, margin = int(order[0]), float(sims[order[0]] - (sims[order[1]] if len(order) > 1 else 0.0))
    if margin < LEAVE_MIN_MARGIN:  # two types about as close: not sure which, so no slot (the question steps aside)
        return None
    return pool[best] if named or sims[best] >= LEAVE_MIN_SIMILARITY else None
