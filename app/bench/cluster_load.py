"""Load through the HTTP API of a served help desk: N sessions x M requests, each session one signed-in employee.

`python -m app bench --http URL [--sessions 32 --per-session 10]` asks, for each session, requests of the
workload's short-session kinds in its mix (FAQ, pay, weather and clothing, leave and attendance, handbook,
compound, near misses; app/bench/asks.py), for that session's own employee (E1001, E1002, ...: the demo backend
holds 64), through `POST /v1/chat`. A 429 is then a session over its own limit, reported apart from errors.

Before the load, a few sessions of other employees are asked one request at a time: each route's latency alone,
in the same run, beside its latency under load (the ratio). It reports throughput, latency per route, errors,
429s, accuracy and how the requests spread over the replicas. Run it against `make cluster` with different
replica and vLLM counts to size a deployment (docs/scale-out.md).
"""

from __future__ import annotations

import random
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from datetime import date, timedelta
from typing import Any

from app.bench import metrics
from app.bench.asks import CITIES, KB_QUESTIONS, Asks
from app.bench.items import FACTS_DB, Facts, Item
from app.remote import RemoteAsker, RemoteError
from app.settings import Settings
from tools.demo_backend.db import EMPLOYEES

# The workload's short sessions, kind by kind (app/bench/workload.py:generate): 14 FAQ, 5 pay, 4 weather,
# 4 leave or attendance, 3 handbook, 3 compound, 6 near misses.
MIX = {"faq": 14, "salary": 5, "weather": 4, "other_tool": 4, "kb": 3, "compound": 3, "near_miss": 6}
ALONE_SESSIONS = 2


def session_items(sessions: int, per_session: int, first: int = 0, seed: int = 5) -> list[list[Item]]:
    """Each session's requests: session k is employee E{1001 + first + k}, asking `per_session` requests drawn
    from MIX, each in a thread of its own (made unique per run).
    """
    if first + sessions > EMPLOYEES:
        raise RemoteError(f"the demo backend holds {EMPLOYEES} employees; {first + sessions} sessions need one each")
    rng, run = random.Random(seed + first), int(time.time())
    out: list[list[Item]] = []
    mine: list[Item] = []

    def add(session: str, user: str, q: str, kind: str, routes: list[str], f: list[str] | None = None,
            bad: list[str] | None = None) -> None:
        mine.append(Item(f"{session}.0", session, 0, user, q, kind, routes, f or [], bad or []))

    # A served desk answers for its own today (the in-process benchmark pins the workload's).
    asks = Asks(rng, Facts(FACTS_DB), add, date.today() + timedelta(days=1))
    for k in range(first, first + sessions):
        user, other = f"E{1001 + k}", f"E{1001 + (k + 1) % EMPLOYEES}"
        mine = []
        for i, kind in enumerate(rng.choices(list(MIX), weights=list(MIX.values()), k=per_session)):
            thread = f"http{run}-{k}-{i}"
            if kind in ("salary", "other_tool"):
                getattr(asks, kind)(thread, user, other)
            elif kind == "weather":
                asks.weather(thread, user, rng.random() < 0.5)
            elif kind == "kb":
                asks.kb(thread, user, rng.randrange(len(KB_QUESTIONS)))
            elif kind == "compound":
                asks.compound(thread, user, rng.choice(CITIES))
            elif kind == "near_miss":
                asks.near_miss(thread, user, asks.near_misses(1)[0])
            else:
                asks.faq(thread, user)
        out.append(mine)
    return out


def _asked(client: RemoteAsker, it: Item) -> dict[str, Any]:
    """One request through the API, timed and scored: to its first text (what a reader sees) and to its end (the
    `final` event, sent once the turn is recorded).
    """
    t0, first = time.perf_counter(), list[float]()

    def text(_: str) -> None:
        if not first:
            first.append(time.perf_counter())

    row = client.ask({"q": it.q, "user": it.user, "thread": it.session}, on_delta=text)
    row["wall_ms"] = (time.perf_counter() - t0) * 1000
    row["text_ms"] = (first[0] - t0) * 1000 if first else None
    row.update(metrics.score_row(row.get("answer") or "", row.get("route"), it.facts, it.forbidden, it.expect_routes))
    return row


def _limited(row: dict[str, Any]) -> bool:
    """Answered 429: the session's identity was over its rate limit."""
    return str(row.get("error") or "").startswith("HTTP 429")


def _by_route(rows: list[dict[str, Any]], key: str = "wall_ms") -> dict[str, dict[str, float]]:
    return {route: metrics.latency_summary([r[key] for r in rows if r.get("route") == route and r.get(key)])
            for route in sorted({r.get("route") or "error" for r in rows}) if route not in ("error", "denied")}


def run(url: str, settings: Settings, sessions: int = 32, per_session: int = 10,
        alone_sessions: int = ALONE_SESSIONS) -> dict[str, Any]:
    """The load run's summary (one signed-in client per session, sessions concurrent), after `alone_sessions`
    sessions of other employees asked one request at a time.
    """
    groups = session_items(sessions, per_session)
    clients = [RemoteAsker(url, settings) for _ in groups]
    for client, group in zip(clients, groups, strict=True):  # sign-in is not part of the measured load
        client.token(group[0].user)
    alone: list[dict[str, Any]] = []
    if alone_sessions:
        solo = RemoteAsker(url, settings)
        alone = [{**_asked(solo, it), "alone": True}
                 for group in session_items(alone_sessions, per_session, first=sessions) for it in group]
        solo.close()

    t0 = time.perf_counter()
    with ThreadPoolExecutor(len(groups)) as pool:
        rows = [r for rs in pool.map(lambda k: [_asked(clients[k], it) for it in groups[k]], range(len(groups)))
                for r in rs]
    wall = time.perf_counter() - t0
    for client in clients:
        client.close()
    answered = [r for r in rows if not r.get("error")]
    under, by_itself = _by_route(rows), _by_route(alone)
    ratio = {route: {q: lat[f"{q}_ms"] / by_itself[route][f"{q}_ms"] for q in ("p50", "p95")}
             for route, lat in under.items() if route in by_itself}
    return {"url": url, "sessions": sessions, "requests": len(rows), "wall_s": wall,
            "throughput_rps": len(rows) / wall, **metrics.latency_summary([r["wall_ms"] for r in rows]),
            "errors": sum(1 for r in rows if r.get("error") and not _limited(r)),
            "rate_limited": sum(1 for r in rows if _limited(r)),
            "accuracy": sum(r["correct"] for r in answered) / len(answered) if answered else 0.0,
            "routes": dict(Counter(r.get("route") or "error" for r in rows)), "route_latency": under,
            "route_latency_alone": by_itself, "route_latency_ratio": ratio,
            "route_text_latency": _by_route(rows, "text_ms"),
            "served_by": dict(Counter(r.get("served_by", "?").rsplit("#", 1)[-1] for r in rows)),
            "rows": [{k: r.get(k) for k in ("q", "user", "route", "intent", "correct", "wall_ms", "text_ms", "error",
                                            "served_by", "answer", "alone")} for r in [*rows, *alone]]}
