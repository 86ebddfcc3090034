"""Load through the HTTP API of a served help desk: N sessions x M requests, each session one signed-in user.

`python -m app bench --http URL [--sessions 32 --per-session 10]` sends the benchmark's session questions
(the same items and the same judge as the in-process load test) through `POST /v1/chat` and reports
throughput, latency per route, errors, accuracy and how the requests spread over the replicas. Run it
against `make cluster` with different replica and vLLM counts to size a deployment (docs/scale-out.md).
"""

from __future__ import annotations

import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Any

from app.bench import metrics
from app.bench.items import Item
from app.bench.workload import load
from app.remote import RemoteAsker
from app.settings import Settings


def session_items(sessions: int, per_session: int) -> list[list[Item]]:
    """Each session's questions in turn, from the workload's sessions (threads made unique per run)."""
    pool = [i for i in load() if i.session.startswith("s")]
    run = f"{int(time.time())}"
    work = [pool[(s * per_session + i) % len(pool)] for s in range(sessions) for i in range(per_session)]
    return [[replace(it, session=f"http{run}-{s}-{it.session}") for it in work[s * per_session:(s + 1) * per_session]]
            for s in range(sessions)]


def run(url: str, settings: Settings, sessions: int = 32, per_session: int = 10) -> dict[str, Any]:
    """The load run's summary (one signed-in client per session, sessions concurrent)."""
    groups = session_items(sessions, per_session)
    clients = [RemoteAsker(url, settings) for _ in groups]
    for client, group in zip(clients, groups, strict=True):  # sign-in is not part of the measured load
        client.token(group[0].user)

    def session(k: int) -> list[dict[str, Any]]:
        rows = []
        for it in groups[k]:
            t0 = time.perf_counter()
            row = clients[k].ask({"q": it.q, "user": it.user, "thread": it.session})
            row["wall_ms"] = (time.perf_counter() - t0) * 1000
            row.update(metrics.score_row(row.get("answer") or "", row.get("route"), it.facts, it.forbidden,
                                         it.expect_routes))
            rows.append(row)
        return rows

    t0 = time.perf_counter()
    with ThreadPoolExecutor(len(groups)) as pool:
        rows = [r for rs in pool.map(session, range(len(groups))) for r in rs]
    wall = time.perf_counter() - t0
    for client in clients:
        client.close()
    lat = [r["wall_ms"] for r in rows]
    by_route = {route: metrics.latency_summary([r["wall_ms"] for r in rows if r.get("route") == route])
                for route in sorted({r.get("route") or "error" for r in rows}) if route != "error"}
    return {"url": url, "sessions": sessions, "requests": len(rows), "wall_s": wall,
            "throughput_rps": len(rows) / wall, **metrics.latency_summary(lat),
            "errors": sum(1 for r in rows if r.get("error")),
            "accuracy": sum(r["correct"] for r in rows) / len(rows),
            "routes": dict(Counter(r.get("route") or "error" for r in rows)), "route_latency": by_route,
            "served_by": dict(Counter(r.get("served_by", "?").rsplit("#", 1)[-1] for r in rows)),
            "rows": [{k: r.get(k) for k in ("q", "user", "route", "intent", "correct", "wall_ms", "error",
                                            "served_by", "answer")} for r in rows]}
