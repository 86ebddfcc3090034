"""Conversations in the benchmark: the session slice of the workload, the order sessions are run in, and
what next-turn prefetch did for them.
"""

from __future__ import annotations

import random
from typing import Any

from app.bench.items import FACTS_DB, MONTHS, Facts, Item
from tools.formatting import month_name
from tools.registry import TOOLS


def personal_sessions(add: Any, session_id: Any, facts: Facts, rng: random.Random, users: list[str]) -> None:
    """The session slice: an employee looks at their own figures, one question after another, often pointing
    back at the month just asked about. Which request follows which is drawn from a mix, so a predictor of
    the next request is right only as often as the mix allows.
    """
    def pay(s: str, u: str, month: str, q: str) -> None:
        add(s, u, q, "session", ["template"], [facts.net(u, month)])

    def attendance(s: str, u: str, month: str, q: str) -> None:
        a = facts.row("attendance", u, month)
        add(s, u, q, "session", ["template"], [f"{a['present_days']} of {a['working_days']}"])

    def balance(s: str, u: str) -> None:
        add(s, u, rng.choice(["And how much leave have I got left?", "how many holiday days remain for me?"]),
            "session", ["template"], [f"have {facts.remaining(u)} days"])

    for _ in range(12):
        s, u, month = session_id("p"), rng.choice(users), rng.choice(MONTHS)
        m = month_name(month, with_year=False)
        first = rng.choice(["pay", "pay", "attendance"])
        if first == "pay":
            pay(s, u, month, rng.choice([f"What was my net pay in {m}?", f"payslip for {m} please"]))
        else:
            attendance(s, u, month, rng.choice([f"How was my attendance in {m}?", f"my attendance record for {m}"]))
        nxt = rng.choices(["other", "balance", "faq"], weights=[6, 3, 1])[0]
        if nxt == "other" and first == "pay":
            attendance(s, u, month, rng.choice(["and how was my attendance in that month?",
                                                "what about my absences for that same month?"]))
        elif nxt == "other":
            pay(s, u, month, rng.choice(["and what did my payslip say for that month?",
                                         "and my net pay for that same month?"]))
        elif nxt == "balance":
            balance(s, u)
        else:
            add(s, u, "When do we get paid?", "session", ["faq"], ["25th"])
        if rng.random() < 0.5 and nxt != "balance":
            balance(s, u)


def training_sessions(seed: int = 20261201) -> list[Item]:
    """Conversations of the session slice's kind drawn with another seed, run before the measured pass in a
    namespace of their own: what next-turn prefetch learns from (`NextTurn.seed_from_history`), as a server
    learns from the conversations its checkpointer kept. They are never the measured ones, and the tool cache
    they fill is not the measured variants'.
    """
    rng = random.Random(seed)
    items: list[Item] = []

    def add(session: str, user: str, q: str, kind: str, routes: list[str], f: list[str] | None = None) -> None:
        turn = sum(1 for it in items if it.session == session)
        items.append(Item(f"{session}.{turn}", session, turn, user, q, kind, routes, f or []))

    count = iter(range(1, 1000))
    personal_sessions(add, lambda prefix: f"train-{prefix}{next(count):02d}",
                      Facts(FACTS_DB), rng, [f"E{1001 + i}" for i in range(20)])
    return items


def interleaved(items: list[Item], window: int = 4) -> list[Item]:
    """Sessions as users hold them: a few at a time (`window`), taken in turn, one request each, so a
    session's next question comes after other people's, never straight after its own answer; when one
    ends, the next session starts. Sessions still start one after another, as over a working day.
    """
    waiting: dict[str, list[Item]] = {}
    for it in items:
        waiting.setdefault(it.session, []).append(it)
    pending = list(waiting)
    active: list[str] = []
    out: list[Item] = []
    while pending or active:
        while pending and len(active) < window:
            active.append(pending.pop(0))
        for session in list(active):
            out.append(waiting[session].pop(0))
            if not waiting[session]:
                active.remove(session)
    return out


def next_turn_summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Next-turn prefetch: calls used and wasted, and the share of later personal requests it served, over
    every conversation and over the session slice alone (`slice_*`: the conversations written to measure it).
    """
    out = _served(rows)
    sliced = _served([r for r in rows if r.get("kind") == "session"])
    return {**out, **{f"slice_{k}": v for k, v in sliced.items()}}


def _served(rows: list[dict[str, Any]]) -> dict[str, Any]:
    personal = {name for name, spec in TOOLS.items() if spec.personal}
    later: list[dict[str, Any]] = []
    seen: set[str] = set()
    for r in rows:  # rows are in order; a session's first request has nothing before it
        if r["session"] in seen and any(t["name"] in personal for t in r["tools"] or []):
            later.append(r)
        seen.add(r["session"])
    served = [r for r in later if any(t.get("cache") == "next_turn" for t in r["tools"] or [])]
    used = sum((r.get("next_turn") or {}).get("used", 0) for r in rows)
    wasted = sum((r.get("next_turn") or {}).get("wasted", 0) for r in rows)
    return {"used": used, "wasted": wasted, "sessions": len(seen), "wasted_per_session": wasted / max(1, len(seen)),
            "later_personal_requests": len(later), "served_share": len(served) / len(later) if later else None}
