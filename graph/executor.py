"""The cached, parallel tool stage and the prefetcher that starts tools before the plan is done.

Independent calls run at once under a concurrency limit, so the stage waits max(t), not sum(t);
a call whose arguments come from another's result (`@weather.temperature_c`) waits only for that
one. Every call goes through the Redis cache, has a timeout, and is retried (idempotent calls
only, with backoff) on transient errors; a failure becomes a result, never an exception.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from graph.context import Context
from graph.deps import Deps
from graph.state import ToolCall, ToolResult
from tools.client import ToolError
from tools.registry import TOOLS, ToolSpec

log = logging.getLogger(__name__)


@dataclass
class Outcome:
    """What one fetch produced."""

    data: dict[str, Any] | None
    error: str | None
    cache: str
    ms: float


def signature(name: str, args: dict[str, Any]) -> str:
    """Identity of a call, to match a prefetched call with a planned one."""
    return name + json.dumps(args, sort_keys=True, default=str)


def _checked(name: str, args: dict[str, Any], user: str) -> tuple[ToolSpec | None, dict[str, Any], str | None]:
    """(spec, validated arguments, None), or the reason the call cannot be made (personal data: the caller's only)."""
    spec = TOOLS.get(name)
    if spec is None:
        return None, args, f"there is no tool called {name!r}"
    try:
        clean = spec.args(**args).model_dump()
    except ValidationError as exc:
        bad = ", ".join(str(e["loc"][0]) for e in exc.errors() if e["loc"])
        return None, args, f"could not call {name}: invalid {bad or 'arguments'}"
    if spec.personal and clean.get("employee") != user:
        return None, clean, f"{name} only answers for the caller"
    return spec, clean, None


async def fetch(deps: Deps, name: str, args: dict[str, Any], user: str, ctx: Context) -> Outcome:
    """Validate, look in the cache, call the backend with timeout and retries, store the result."""
    t0 = time.perf_counter()
    spec, clean, problem = _checked(name, args, user)
    if spec is None:
        return Outcome(None, problem, "off", 0.0)
    vec = await deps.embed(str(clean[spec.similarity_arg])) if spec.similarity_arg and ctx.cache_enabled else None
    outcome = "off"
    if ctx.cache_enabled:
        hit, outcome = await deps.cache.get(spec, clean, user, vec, ctx.kb_cache_threshold)
        if hit is not None:
            return Outcome(hit, None, "hit", (time.perf_counter() - t0) * 1000)
    error = None
    for attempt in range(1 + (ctx.tool_retries if spec.idempotent else 0)):
        try:
            data = await asyncio.wait_for(deps.tools.call(name, clean), ctx.tool_timeout_s)
        except TimeoutError:
            error = f"the {name} service did not answer within {ctx.tool_timeout_s:g} s"
        except ToolError as exc:
            error = str(exc)
            if not exc.retryable:
                break
        else:
            if outcome == "miss":
                await deps.cache.put(spec, clean, user, data, vec)
            return Outcome(data, None, outcome, (time.perf_counter() - t0) * 1000)
        await asyncio.sleep(0.2 * 2**attempt)  # backoff before the retry
    return Outcome(None, error, outcome, (time.perf_counter() - t0) * 1000)


def _resolve(args: dict[str, Any], done: dict[str, ToolResult]) -> tuple[dict[str, Any], str | None]:
    """Fill `@call.field` arguments from finished results."""
    out = {}
    for k, v in args.items():
        if isinstance(v, str) and v.startswith("@"):
            call_id, _, fld = v[1:].rpartition(".")  # ids of compound parts hold a dot: "p1.weather"
            dep = done.get(call_id)
            if dep is None or not dep["ok"] or fld not in (dep["data"] or {}):
                return args, f"needs the {call_id} result, which is missing"
            out[k] = (dep["data"] or {})[fld]
        else:
            out[k] = v
    return out, None


async def run_plan(deps: Deps, plan: list[ToolCall], user: str, ctx: Context,
                   prefetched: dict[str, asyncio.Task[Outcome]] | None = None,
                   on_result: Callable[[ToolResult], None] | None = None) -> list[ToolResult]:
    """Run the plan; independent calls concurrently (when enabled), dependents after their inputs.

    Prefetched tasks the plan uses are popped from `prefetched`; what is left there was not needed.
    `on_result` sees each result as it arrives (progressive answers stream a part as soon as it can).
    """
    prefetched = prefetched if prefetched is not None else {}
    sem = asyncio.Semaphore(max(1, ctx.max_tool_concurrency))
    done: dict[str, ToolResult] = {}
    tasks: dict[str, asyncio.Task[ToolResult]] = {}

    async def one(call: ToolCall) -> ToolResult:
        for dep in call["depends_on"]:
            if dep in tasks:
                await asyncio.shield(tasks[dep])
        args, missing = _resolve(call["args"], done)
        if missing:
            res = ToolResult(id=call["id"], name=call["name"], args=args, ok=False, data=None,
                             error=f"could not call {call['name']}: {missing}", ms=0.0, cache="off")
        else:
            t0 = time.perf_counter()
            task = prefetched.pop(signature(call["name"], args), None)
            if task is not None:
                out = await task
                out = Outcome(out.data, out.error, "prefetch" if out.cache != "hit" else "hit",
                              (time.perf_counter() - t0) * 1000)
            else:
                async with sem:
                    out = await fetch(deps, call["name"], args, user, ctx)
            res = ToolResult(id=call["id"], name=call["name"], args=args, ok=out.error is None, data=out.data,
                             error=out.error, ms=round(out.ms, 1), cache=out.cache)
        done[call["id"]] = res
        if on_result is not None:
            on_result(res)
        return res

    if ctx.parallel_enabled:
        for call in plan:
            tasks[call["id"]] = asyncio.create_task(one(call))
        try:
            await asyncio.gather(*tasks.values())
        finally:
            for t in tasks.values():
                t.cancel()
    else:
        for call in plan:
            await one(call)
    return [done[c["id"]] for c in plan]


class TurnPrefetches:
    """This process's prefetch tasks of each turn, by turn id: started by prefetch_tools before planning, taken
    (once) or cancelled by the tool stage. Only transient tasks live here, never results (Redis has those); the
    tasks of turns that never reached the tool stage (aborted runs) are cancelled after `max_age_s`.
    """

    def __init__(self, max_age_s: float = 120.0) -> None:
        self.max_age_s = max_age_s
        self._by_turn: dict[str, tuple[float, dict[str, asyncio.Task[Outcome]]]] = {}

    def start(self, turn_id: str, deps: Deps, calls: list[tuple[str, dict[str, Any]]], user: str,
              ctx: Context) -> list[str]:
        """Start the calls in the background; returns their signatures."""
        self._sweep()
        for task in self._by_turn.pop(turn_id, (0.0, {}))[1].values():  # a restarted turn: drop the old ones
            task.cancel()
        unique = {signature(n, a): (n, a) for n, a in calls  # the same call twice is fetched once
                  if TOOLS.get(n) and TOOLS[n].prefetchable and TOOLS[n].idempotent}
        tasks = {sig: asyncio.create_task(fetch(deps, n, a, user, ctx)) for sig, (n, a) in unique.items()}
        self._by_turn[turn_id] = (time.monotonic(), tasks)
        return list(tasks)

    def take(self, turn_id: str) -> dict[str, asyncio.Task[Outcome]]:
        """Hand this turn's prefetches to the tool stage (at most once)."""
        return self._by_turn.pop(turn_id, (0.0, {}))[1]

    def turns(self) -> set[str]:
        """The turns whose prefetches are waiting for their tool stage."""
        return set(self._by_turn)

    def _sweep(self) -> None:
        """Cancel prefetches of turns that never reached the tool stage (aborted runs)."""
        now = time.monotonic()
        for tid in [t for t, (ts, _) in self._by_turn.items() if now - ts > self.max_age_s]:
            for task in self._by_turn.pop(tid)[1].values():
                task.cancel()
