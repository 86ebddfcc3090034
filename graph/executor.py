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
from collections.abc import Callable, Mapping
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


@dataclass(frozen=True)
class _Exact:
    """A call matched in the cache by exact key: its key, its arguments as planned and as validated."""

    key: str
    args: dict[str, Any]
    spec: ToolSpec
    clean: dict[str, Any]


def _exact_key(deps: Deps, call: ToolCall, done: dict[str, ToolResult], user: str) -> _Exact | None:
    """A call's exact cache key, its `@call.field` arguments read from `done`; None when it is not callable as
    asked, reads a result not found, or is matched by meaning (a handbook search).
    """
    args, missing = _resolve(call["args"], done)
    spec, clean, _ = _checked(call["name"], args, user) if not missing else (None, args, missing)
    if spec is None or spec.similarity_arg is not None:
        return None
    return _Exact(deps.cache.key_of(spec, clean, user), args, spec, clean)


def _hit(call: ToolCall, args: dict[str, Any], data: dict[str, Any], ms: float) -> ToolResult:
    return ToolResult(id=call["id"], name=call["name"], args=args, ok=True, data=data, error=None, ms=ms, cache="hit")


def _stages(plan: list[ToolCall]) -> tuple[list[ToolCall], list[ToolCall]]:
    """A plan's independent calls, then those reading another's result."""
    return [c for c in plan if not c["depends_on"]], [c for c in plan if c["depends_on"]]


async def found_in_cache(deps: Deps, plan: list[ToolCall], user: str, ctx: Context,
                         held: Mapping[str, dict[str, Any]] | None = None) -> list[ToolResult] | None:
    """Every result of a plan, when each is in the cache under its exact key; None at the first that is not.

    The routing step answers a cache hit with them, a LangGraph step before the tool stage would. Only exact keys
    are read (a handbook search is matched by meaning, after its text's embedding: the tool stage does that), and
    independent calls at once, then those reading another's result. `held` are results read ahead, by key
    (`cached_ahead`): those are not read again. Nothing is counted unless all were found: on a miss the tool stage
    runs the plan and counts its own looks.
    """
    if not ctx.cache_enabled or not plan:
        return None
    done: dict[str, ToolResult] = {}
    held = held or {}
    for stage in _stages(plan):
        exacts = [e for call in stage if (e := _exact_key(deps, call, done, user)) is not None]
        if len(exacts) < len(stage):
            return None
        # What was read ahead is at hand; the rest is read at once (no await at all when everything was held).
        unread = [e for e in exacts if e.key not in held]
        t0 = time.perf_counter()
        read = await asyncio.gather(*(deps.cache.get(e.spec, e.clean, user, count=False) for e in unread))
        ms = round((time.perf_counter() - t0) * 1000, 1)
        got = {e.key: hit for e, (hit, _) in zip(unread, read, strict=True)}
        for call, e in zip(stage, exacts, strict=True):
            if (data := held[e.key] if e.key in held else got.get(e.key)) is None:
                return None
            done[call["id"]] = _hit(call, e.args, data, 0.0 if e.key in held else ms)
    for res in done.values():
        deps.cache.count_hit(res["name"])
    return [done[c["id"]] for c in plan]


async def cached_ahead(deps: Deps, plans: list[list[ToolCall]], user: str,
                       extra: tuple[str, ...] = ()) -> dict[str, dict[str, Any]]:
    """What the cache holds for the exactly-matched calls of any of `plans`, by key: read before the router has said
    which plan the turn takes (graph/early.py), so that a cache hit's plan finds its results at hand. One round trip
    for the plans' independent calls (and the `extra` keys), one more for the calls that read their results (from
    what was found). Nothing is counted: `found_in_cache` counts what a turn uses.
    """
    held: dict[str, dict[str, Any]] = {}
    done: list[dict[str, ToolResult]] = [{} for _ in plans]
    for n in range(2):
        wanted: dict[str, list[tuple[int, ToolCall, dict[str, Any]]]] = {k: [] for k in (extra if n == 0 else ())}
        for i, plan in enumerate(plans):
            for call in _stages(plan)[n]:
                if (exact := _exact_key(deps, call, done[i], user)) is not None:
                    wanted.setdefault(exact.key, []).append((i, call, exact.args))
        found = await deps.cache.peek(list(wanted))
        held |= found
        for key, data in found.items():
            for i, call, args in wanted[key]:
                done[i][call["id"]] = _hit(call, args, data, 0.0)
    return held


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
