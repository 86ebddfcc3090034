"""Next-turn prefetch on the real graph, Redis and backend: learned from finished conversations."""

import asyncio
import time

from redis.asyncio import Redis

from app.turn import new_thread_id

TODAY = "2026-11-29"
PAY, ATTENDANCE = "What was my net pay in {m}?", "and how was my attendance in that month?"


async def _forget_what_was_learned(redis: Redis) -> None:
    async for key in redis.scan_iter(match="hd:next:*", count=500):
        await redis.delete(key)


async def _prefetched(helpdesk, redis: Redis, thread: str) -> bool:
    """Whether the thread's last answer left a call offered to its next question, once what it started is done."""
    await helpdesk.next_turn.settled(thread)
    return bool(await redis.exists(f"hd:next:offered:{thread}"))


async def test_the_likely_next_request_is_fetched_before_it_is_asked(helpdesk, ask, backend, fresh_cache, settings):
    redis = Redis.from_url(settings.redis)
    await _forget_what_was_learned(redis)
    lone = new_thread_id()  # before anything is learned, nothing is prefetched
    await ask(PAY.format(m="June"), user="E1008", thread=lone, today=TODAY)
    assert not await _prefetched(helpdesk, redis, lone)
    for user, month in (("E1002", "August"), ("E1003", "September"), ("E1004", "June")):
        thread = new_thread_id()
        await ask(PAY.format(m=month), user=user, thread=thread, today=TODAY)
        row = await ask(ATTENDANCE, user=user, thread=thread, today=TODAY)
        assert row["intent"] == "attendance"

    thread = new_thread_id()
    await ask(PAY.format(m="March"), user="E1009", thread=thread, today=TODAY)
    assert await _prefetched(helpdesk, redis, thread)
    row = await ask(ATTENDANCE, user="E1009", thread=thread, today=TODAY)
    att = backend.get("/attendance", params={"employee": "E1009", "month": "2026-03"}).json()
    assert [t["cache"] for t in row["tools"]] == ["next_turn"]
    assert f"{att['present_days']} of {att['working_days']}" in row["answer"]
    assert row["next_turn"] == {"offered": 1, "used": 1, "wasted": 0}

    # Switched off: nothing starts after the answer.
    off = new_thread_id()
    await ask(PAY.format(m="August"), user="E1010", thread=off, today=TODAY, next_turn_enabled=False)
    assert not await _prefetched(helpdesk, redis, off)
    await redis.aclose()


async def test_the_next_request_asked_before_its_prefetch_returned_waits_for_that_call(ask, backend, fresh_cache,
                                                                                       settings):
    redis = Redis.from_url(settings.redis)
    await _forget_what_was_learned(redis)
    for user, month in (("E1002", "May"), ("E1003", "July")):
        thread = new_thread_id()
        await ask(PAY.format(m=month), user=user, thread=thread, today=TODAY)
        await ask(ATTENDANCE, user=user, thread=thread, today=TODAY)
    thread = new_thread_id()
    await ask(PAY.format(m="April"), user="E1012", thread=thread, today=TODAY)
    deadline = time.monotonic() + 10  # the prefetch has started (its budget is spent before its calls go out)
    while not await redis.exists(f"hd:next:spent:{thread}"):
        assert time.monotonic() < deadline, "the next turn's prefetch never started"
        await asyncio.sleep(0.02)
    row = await ask(ATTENDANCE, user="E1012", thread=thread, today=TODAY)  # at once: attendance takes ~1.5 s
    att = backend.get("/attendance", params={"employee": "E1012", "month": "2026-04"}).json()
    assert [t["cache"] for t in row["tools"]] == ["next_turn"]
    assert f"{att['present_days']} of {att['working_days']}" in row["answer"]
    assert row["next_turn"] == {"offered": 1, "used": 1, "wasted": 0}
    await redis.aclose()


async def test_a_prefetch_nobody_asked_for_is_counted_as_wasted(helpdesk, ask, fresh_cache, settings):
    redis = Redis.from_url(settings.redis)
    await _forget_what_was_learned(redis)
    for user in ("E1002", "E1003", "E1004"):
        thread = new_thread_id()
        await ask(PAY.format(m="October"), user=user, thread=thread, today=TODAY)
        await ask(ATTENDANCE, user=user, thread=thread, today=TODAY)
    thread = new_thread_id()
    await ask(PAY.format(m="September"), user="E1011", thread=thread, today=TODAY)
    assert await _prefetched(helpdesk, redis, thread)
    row = await ask("When do we get paid?", user="E1011", thread=thread, today=TODAY)
    assert row["route"] == "faq" and row["next_turn"] == {"offered": 1, "used": 0, "wasted": 1}
    await redis.aclose()


async def test_a_new_redis_learns_what_follows_what_from_the_conversations_the_checkpointer_kept(
        helpdesk, ask, fresh_cache, settings):
    redis = Redis.from_url(settings.redis)
    for user, month in (("E1002", "February"), ("E1003", "March")):
        thread = new_thread_id()
        await ask(PAY.format(m=month), user=user, thread=thread, today=TODAY)
        await ask(ATTENDANCE, user=user, thread=thread, today=TODAY)
    await _forget_what_was_learned(redis)  # a new Redis: nothing learned, never seeded
    lone = new_thread_id()
    await ask(PAY.format(m="June"), user="E1013", thread=lone, today=TODAY)
    assert not await _prefetched(helpdesk, redis, lone)
    assert await helpdesk.seed_next_turn() > 0  # what a server does at its warm-up
    assert await helpdesk.seed_next_turn() == 0  # once: from then on the live turns count
    thread = new_thread_id()
    await ask(PAY.format(m="May"), user="E1014", thread=thread, today=TODAY)
    assert await _prefetched(helpdesk, redis, thread)
    row = await ask(ATTENDANCE, user="E1014", thread=thread, today=TODAY)
    assert [t["cache"] for t in row["tools"]] == ["next_turn"]
    await redis.aclose()
