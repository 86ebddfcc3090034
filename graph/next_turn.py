"""Next-turn prefetch: after an answer, fetch in the background what the caller is likely to ask next.

What follows what is learned from finished turns: every answered tool request adds one to the count of
"intent B asked right after intent A" in Redis (intent names only, never who asked; one table per cache
namespace, so each benchmark variant learns on its own). A namespace with no counts yet starts from the
conversations the checkpointer holds (`seed_from_history`, at a server's warm-up). After a turn answered
A, each B seen after A at least `next_turn_min_seen` times and in at least `next_turn_min_share` of the
cases is planned with this turn's slots (salary for October, then attendance for October), and its calls
start at once, if they are the caller's own, idempotent, prefetchable tools and the conversation's budget
allows.

Results go where every result goes, the tool cache; the next turn finds them there and reports them as
served by `next_turn`. A call that reached the backend and was not asked for is counted as wasted. A new
question in the conversation cancels whatever is still running. The tasks are this process's transient
work only, kept per conversation on the graph's one `NextTurn` (`Ahead`); the counts, the budget and the
offered calls live in Redis.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field
from typing import Any

from redis.exceptions import RedisError

from graph.context import Context
from graph.deps import Deps
from graph.executor import Outcome, fetch, signature
from graph.templates import instantiate
from tools.registry import INTENTS, TOOLS

log = logging.getLogger(__name__)
PREFIX = "hd:next:"
OFFERED_MAX = 1000  # more than any per-session prefetch budget
KEEP_S = 3600  # the budget and the offered calls of a conversation are forgotten after an idle hour
HISTORY_LIMIT = 20_000  # checkpoints read when a namespace is seeded from the conversations kept
WARMUP_PREFIX = "warmup-"  # the threads a server's warm-up asks on (app/shared.py): not conversations
SWEEP_S = 120.0  # a conversation's tasks untouched this long are stopped and forgotten (it was left)


async def tool_turns(checkpointer: Any, limit: int = HISTORY_LIMIT,
                     skip_prefix: str = WARMUP_PREFIX) -> dict[str, list[list[str]]]:
    """Per conversation in the checkpointer (its `limit` newest checkpoints), the intents of its tool turns
    in order, as the live path learns them: a turn's final state carries `last_intents`, which an FAQ
    answer or a refusal leaves as they were, so a repeat is one tool turn, not two.
    """
    finals: dict[str, dict[str, tuple[int, list[str]]]] = {}  # thread -> turn id -> (step, last_intents)
    async for tup in checkpointer.alist(None, limit=limit):
        thread = str((tup.config.get("configurable") or {}).get("thread_id") or "")
        values = tup.checkpoint.get("channel_values") or {}
        turn, intents, step = values.get("turn_id"), values.get("last_intents"), (tup.metadata or {}).get("step", 0)
        if not thread or thread.startswith(skip_prefix) or not turn or not intents:
            continue
        known = finals.setdefault(thread, {})
        if turn not in known or known[turn][0] < step:
            known[turn] = (int(step), [str(i) for i in intents])
    out: dict[str, list[list[str]]] = {}
    for thread, turns in finals.items():
        seq: list[list[str]] = []
        for _, intents in sorted(turns.values()):
            if not seq or seq[-1] != intents:
                seq.append(intents)
        out[thread] = seq
    return out


@dataclass
class Ahead:
    """What next-turn prefetch is doing for one conversation in this process (tasks only; results go to Redis)."""

    since: float  # when it last changed (time.monotonic())
    job: asyncio.Future[None] | None = None  # after_answer, while it learns and decides what to fetch
    calls: dict[str, asyncio.Task[Outcome]] = field(default_factory=dict)  # the calls it started, by signature
    # Calls still running when the next question came: that turn's tool stage waits for them or stops them.
    in_flight: dict[str, asyncio.Task[Outcome]] = field(default_factory=dict)


class NextTurn:
    """Learns which request follows which, and prefetches the likely next one for the caller. One per graph
    (`Nodes.next_turn`): it keeps each conversation's tasks between one turn and the next.
    """

    def __init__(self, deps: Deps) -> None:
        self.deps = deps
        self._ahead: dict[str, Ahead] = {}  # by thread id

    def _key(self, *parts: str) -> str:
        return self.deps.cache.namespace + PREFIX + ":".join(parts)

    async def learn(self, previous: list[str], current: list[str]) -> None:
        """Count that each current intent followed each previous one."""
        await self._count([(previous, current)])

    async def _count(self, turns: list[tuple[list[str], list[str]]]) -> int:
        """Count each (previous, current) pair of tool turns in one round trip; returns the pairs counted.

        The same intent again ("and last month?") is not counted: it is never prefetched (the conversation
        already asked it), and counting it would drown what does follow in long runs of follow-ups.
        """
        pairs = [(a, b) for previous, current in turns for a in previous for b in current
                 if a in INTENTS and b in INTENTS and a != b]
        if pairs:
            pipe = self.deps.redis.pipeline(transaction=False)
            for a, b in pairs:
                pipe.hincrby(self._key("follows", a), b, 1)
            await pipe.execute()
        return len(pairs)

    async def seed_from_history(self, checkpointer: Any, limit: int = HISTORY_LIMIT) -> int:
        """Learn what followed what from the finished conversations the checkpointer holds, once per cache
        namespace: a new Redis (or namespace) starts from them, not from nothing, while later turns keep
        counting live. Returns the pairs counted (0 when the namespace was seeded before).
        """
        if checkpointer is None or not await self.deps.redis.set(self._key("seeded"), "1", nx=True):
            return 0
        try:
            kept = await tool_turns(checkpointer, limit)
            turns = [(a, b) for seq in kept.values() for a, b in zip(seq, seq[1:], strict=False)]
            return await self._count(turns)
        except BaseException:
            await self.deps.redis.delete(self._key("seeded"))  # not seeded after all: the next start tries again
            raise

    async def likely(self, intent: str, min_share: float, min_seen: int) -> list[str]:
        """Intents that followed `intent` often enough, most frequent first."""
        counts = {k.decode() if isinstance(k, bytes) else k: int(v)
                  for k, v in (await self.deps.redis.hgetall(self._key("follows", intent))).items()}
        total = sum(counts.values())
        return sorted((b for b, n in counts.items() if n >= min_seen and n / total >= min_share),
                      key=lambda b: -counts[b])

    def launch(self, thread: str, user: str, previous: list[str], intents: list[str], slots: dict[str, Any],
               ctx: Context) -> None:
        """Run `after_answer` in the background: the answer never waits for it; a new question cancels it."""
        self._sweep()
        job = asyncio.ensure_future(self.after_answer(thread, user, previous, intents, dict(slots), ctx))
        kept = self._ahead.get(thread)  # calls an unplanned turn did not join stay handed to the next question
        self._ahead[thread] = Ahead(time.monotonic(), job=job, in_flight=kept.in_flight if kept else {})

    async def settled(self, thread: str) -> None:
        """Wait until what a conversation's last answer started is done: the choice of what to prefetch, then those
        calls. An event to wait on (an operator's drain, a test), where a window of time would only guess.
        """
        if (ahead := self._ahead.get(thread)) is not None and ahead.job is not None:
            await asyncio.gather(ahead.job, return_exceptions=True)
        if (ahead := self._ahead.get(thread)) is not None and ahead.calls:
            await asyncio.gather(*ahead.calls.values(), return_exceptions=True)

    async def after_answer(self, thread: str, user: str, previous: list[str], intents: list[str],
                           slots: dict[str, Any], ctx: Context) -> None:
        """Learn from this turn, then start the likely next calls (never raises: it runs unawaited)."""
        try:
            await self.learn(previous, intents)
            if ctx.next_turn_enabled and ctx.cache_enabled:
                await self._start(thread, user, intents, slots, ctx)
        except RedisError as exc:
            log.warning("next-turn prefetch skipped (redis: %s)", exc)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("next-turn prefetch failed")

    async def _start(self, thread: str, user: str, intents: list[str], slots: dict[str, Any], ctx: Context) -> None:
        calls: dict[str, tuple[str, dict[str, Any]]] = {}
        for intent in intents:
            for nxt in await self.likely(intent, ctx.next_turn_min_share, ctx.next_turn_min_seen):
                if nxt in intents:
                    continue  # the same request again is a cache hit already
                for call in instantiate(nxt, slots, user) or []:
                    spec = TOOLS.get(call["name"])
                    if spec and spec.personal and spec.idempotent and spec.prefetchable and not call["depends_on"]:
                        calls.setdefault(signature(call["name"], call["args"]), (call["name"], call["args"]))
        if not calls:
            return
        budget = self._key("spent", thread)
        spent = int(await self.deps.redis.incrby(budget, len(calls)))
        await self.deps.redis.expire(budget, KEEP_S)
        allowed = max(0, ctx.next_turn_budget - (spent - len(calls)))
        chosen = list(calls.items())[:allowed]
        tasks = {sig: asyncio.create_task(self._fetch(thread, sig, name, args, user, ctx))
                 for sig, (name, args) in chosen}
        if tasks:
            ahead = self._ahead.setdefault(thread, Ahead(time.monotonic()))
            ahead.since, ahead.job, ahead.calls = time.monotonic(), None, tasks

    async def _fetch(self, thread: str, sig: str, name: str, args: dict[str, Any], user: str,
                     ctx: Context) -> Outcome:
        out = await fetch(self.deps, name, args, user, ctx)
        if out.error is None and out.cache == "miss":  # it reached the backend: used next turn, or wasted
            key = self._key("offered", thread)
            await self.deps.redis.sadd(key, sig)
            await self.deps.redis.expire(key, KEEP_S)
        return out

    async def settle(self, thread: str | None, next_turn: dict[str, Any], results: list[Any],
                     left: int) -> tuple[list[Any], dict[str, Any]]:
        """After the tool stage: mark and count what the last turn's prefetch served (`account`); the calls this
        turn took while still in flight are no longer offered to the next one.
        """
        results, counts = account(next_turn, results, left)
        taken = [signature(r["name"], r["args"]) for r in results if r["cache"] == "next_turn"]
        if thread and (taken := [s for s in taken if s in set(next_turn.get("in_flight") or [])]):
            try:
                await self.deps.redis.srem(self._key("offered", thread), *taken)
            except RedisError:
                pass
        return results, counts

    async def collect(self, thread: str) -> dict[str, Any]:
        """At a new question: take the calls offered to this turn, and keep those still in flight for it.

        `{"offered": [signatures], "in_flight": [signatures], "used": 0, "wasted": n}`: a call that finished
        and reached the backend is offered; one still running is handed to the tool stage (`in_flight`), which
        waits for it if the turn asks it and stops it otherwise. Until the tool stage says which it used, every
        offered call counts as wasted.
        """
        # An earlier turn's calls in flight that no tool stage joined are done by now: offered if useful.
        last = self._ahead.pop(thread, None) or Ahead(0.0)
        if last.job is not None:
            last.job.cancel()  # still deciding what to fetch: too late now
        running = {sig: t for sig, t in last.calls.items() if not t.done()}
        if running:  # the question came before the calls returned: this turn may use them
            self._ahead[thread] = Ahead(time.monotonic(), in_flight=running)
        members: Any = []
        try:
            # Read and remove in one command (atomic, and one key: fine on a Redis Cluster).
            members = await self.deps.redis.spop(self._key("offered", thread), OFFERED_MAX) or []
        except RedisError:
            pass
        offered = sorted(m.decode() if isinstance(m, bytes) else m for m in members)
        return {"offered": offered, "in_flight": sorted(running), "used": 0, "wasted": len(offered)}

    def join(self, thread: str | None, prefetched: dict[str, Any]) -> tuple[dict[str, Any], set[str]]:
        """For the tool stage: this turn's prefetches plus the last turn's next-turn calls still in flight when
        the question came (taken once), and which of them came from the last turn.
        """
        ahead: dict[str, Any] = {}
        if thread and (kept := self._ahead.get(thread)) is not None:
            ahead, kept.in_flight = kept.in_flight, {}
            if kept.job is None and not kept.calls:
                del self._ahead[thread]
        for sig in ahead.keys() & prefetched.keys():  # the same call started twice: keep this turn's
            ahead.pop(sig).cancel()
        return {**ahead, **prefetched}, set(ahead)

    def _sweep(self) -> None:
        """Stop and forget the tasks of conversations untouched for `SWEEP_S` (left, or their turn aborted)."""
        now = time.monotonic()
        for thread in [t for t, a in self._ahead.items() if now - a.since > SWEEP_S]:
            left = self._ahead.pop(thread)
            for task in [left.job, *left.calls.values(), *left.in_flight.values()]:
                if task is not None:
                    task.cancel()


def account(next_turn: dict[str, Any], results: list[Any], left: int = 0) -> tuple[list[Any], dict[str, Any]]:
    """Mark the results the last turn's prefetch served (cache "next_turn") and count used and wasted.

    An offered call is found in the cache ("hit"); one that was still in flight is awaited ("prefetch").
    `left`: in-flight calls the turn did not use, stopped by the tool stage (wasted too).
    """
    offered = set(next_turn.get("offered") or [])
    in_flight = set(next_turn.get("in_flight") or [])
    marked, used, used_offered = [], 0, 0
    for r in results:
        sig = signature(r["name"], r["args"])
        if (r["cache"] == "hit" and sig in offered) or (r["cache"] == "prefetch" and sig in in_flight):
            used_offered += sig in offered and r["cache"] == "hit"
            r = {**r, "cache": "next_turn"}
            used += 1
        marked.append(r)
    wasted = max(0, next_turn.get("wasted", 0) - used_offered) + left
    return marked, {**next_turn, "used": used, "wasted": wasted}
