"""The first question after start against the same question asked again, in a fresh process.

`python -m app.bench.coldstart` starts the graph the way a serving process does (`app/shared.py`:
build, then warm up), asks a question it has not seen on a new thread, then the same question on
another new thread with its embedding forgotten (the same work, in a warm process: what start-up costs
is the difference), then the same question again as it comes (its embedding memoized, reported beside),
then another question of the same kind it has not seen, and prints the times to first text as JSON.
`make bench` runs it as a child process, so "cold" really is a process that has served nothing but its
own warm-up.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from typing import Any

QUESTION = "How do I reset my password?"  # an FAQ answer: the path where start-up costs show most
# The same path with a text the process has not embedded: asked as it comes, QUESTION's embedding is memoized,
# so that ratio also counts the embedding the memo saves, not only what start-up costs.
UNSEEN = "How many days a week can I work from home?"


async def _measure(question: str) -> dict[str, Any]:
    from app import shared
    from app.turn import new_thread_id, run_turn
    from graph.context import Context
    from graph.kit import normalize

    t0 = time.perf_counter()
    await shared.warm()
    warm_up_s = time.perf_counter() - t0
    desk = await shared.process_resources().get()
    rows = []
    for q, forget in ((question, False), (question, True), (question, False), (UNSEEN, False)):
        if forget:
            desk.forget_embedding(normalize(q))
        rows.append(await run_turn(desk, q, "E1001", new_thread_id(), Context()))
    await shared.process_resources().close()
    cold, warm, memo, unseen = (r["ttft_ms"] or r["total_ms"] for r in rows)
    return {"question": question, "route": rows[0]["route"], "warm_up_s": round(warm_up_s, 2),
            "cold_first_request_ms": cold, "warm_first_request_ms": warm, "cold_over_warm": cold / warm,
            "warm_memo_hit_ms": memo, "cold_over_memo_hit": cold / memo,
            "warm_unseen_request_ms": unseen, "cold_over_warm_unseen": cold / unseen}


def run_child(timeout_s: float = 300) -> dict[str, Any]:
    """Run the measurement in a fresh Python process; {} when it fails (the benchmark carries on)."""
    try:
        out = subprocess.run([sys.executable, "-m", "app.bench.coldstart"], capture_output=True, text=True,
                             timeout=timeout_s, check=True).stdout
        return json.loads(out.strip().splitlines()[-1])
    except (subprocess.SubprocessError, ValueError, IndexError):
        return {}


if __name__ == "__main__":
    print(json.dumps(asyncio.run(_measure(QUESTION))))
