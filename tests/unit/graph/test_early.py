"""The early answer decides and plans as route_question does: an FAQ entry's text, a template answer the cache holds
(the same pieces the graph streams), and nothing for anything else.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import replace

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from graph.context import Context
from graph.early import EARLY, EarlyDecision, start, taken, taken_plan, wants_search_embedding
from graph.graph import build_desk
from graph.paths import Decision
from tests.unit.conftest import FAQ, make_deps

CTX = Context(today="2026-11-29")


async def faq_text(deps, question: str, user: str, ctx: Context) -> str | None:
    """What the early decision sends for a question (None: nothing)."""
    sent: list[list[str]] = []
    early = start(deps, question, user, ctx, sent.append)
    if early is None:
        return None
    early.pinned(None, {})  # the owner check, as for a new conversation
    await early.task
    assert len(sent) <= 1
    return "".join(sent[0]) if sent else None


@pytest.mark.parametrize("question", ["When is payday?", "  what day do we get   paid? "])
async def test_an_faq_question_gets_its_entrys_text(question):
    assert await faq_text(make_deps(), question, "e1001", CTX) == FAQ["payday"].answer


@pytest.mark.parametrize(("question", "user", "ctx"), [
    ("What was my salary last month?", "E1001", CTX),  # a template path the cache does not hold
    ("What is E1002's salary?", "E1001", CTX),  # someone else's data: refused by the graph
    ("When is payday?", "not-an-employee", CTX),  # bad input: the graph says so
    ("When is payday?" + " now" * 2000, "E1001", CTX),  # too long: the graph says so
    ("", "E1001", CTX),
    ("When is payday?", "E1001", replace(CTX, faq_enabled=False)),  # the shortcut is off
    ("Wann ist Zahltag?", "E1001", CTX),  # not English: the graph answers in one sentence
])
async def test_nothing_else_is_answered_early(question, user, ctx):
    assert await faq_text(make_deps(), question, user, ctx) is None


@pytest.mark.parametrize(("question", "ctx", "started"), [
    ("Where is the fire exit policy?", CTX, True),  # a handbook search embeds it with the shared encoder
    ("When is payday?", CTX, False),  # the FAQ entry needs nothing more
    ("what about Berlin?", CTX, False),  # a follow-up: what it continues is the conversation's to say
    ("Where is the fire exit policy?", replace(CTX, early_embedding=False), False),
])
async def test_the_early_decision_starts_the_embedding_a_later_step_needs(question, ctx, started):
    deps = make_deps()
    asked: list[str] = []
    deps.prefetch_search_embedding = asked.append  # type: ignore[method-assign]
    await faq_text(deps, question, "E1001", ctx)
    assert asked == ([question] if started else [])


async def test_an_early_decision_cancelled_before_it_began_leaves_route_question_to_decide():
    early = start(make_deps(), "When is payday?", "E1001", CTX, lambda _text: None)
    early.task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await early.task
    await asyncio.sleep(0)  # its done-callback
    assert early.decided.done() and early.decided.result() is None and early.planned.result() is None
    token = EARLY.set(early)
    try:
        assert await taken(early.question, early.user, CTX) is None  # route_question decides itself
    finally:
        EARLY.reset(token)


async def _answered(deps, question: str, user: str = "E1001") -> dict:
    """One turn through the graph (it fills the cache with the template's results)."""
    from app.turn import run_turn

    return await run_turn(build_desk(deps, InMemorySaver()), question, user, None, CTX)


async def test_a_template_answer_the_cache_holds_goes_early_as_the_graph_streams_it():
    deps = make_deps()
    question = "What is my salary this month and the weather in Paris?"
    first = await _answered(deps, question)
    sent: list[list[str]] = []
    early = start(deps, question, "E1001", CTX, sent.append)
    await early.task
    planned = early.planned.result()
    assert planned is not None and [r["cache"] for r in planned.found] == ["hit", "hit"]
    assert len(sent) == 1 and len(sent[0]) == 2  # a part each, as the graph streams them
    assert "".join(sent[0]).strip() == first["answer"].strip()


def _started_before_the_embedding(deps, question: str, sent: list[list[str]]) -> tuple[EarlyDecision, asyncio.Event]:
    """The early decision for `question`, its router held back as if the question's embedding were on its way:
    set the event to let it decide.
    """
    decide, embedded = deps.router.decide, asyncio.Event()

    async def after_embedding(*args, **kwargs):
        await embedded.wait()
        return await decide(*args, **kwargs)

    deps.router.decide = after_embedding
    return start(deps, question, "E1001", CTX, sent.append), embedded


@pytest.mark.parametrize("question", ["What was my salary last month?", "What should I wear in Paris today?"])
async def test_a_cache_hit_reads_the_cache_while_the_question_is_embedded_and_not_after(question):
    """The results every known intent's plan would use are read before the router has decided (the clothing advice
    after the forecast it reads): once decided, a cache hit's answer needs no read of its own.
    """
    deps = make_deps()
    first = await _answered(deps, question)
    deps.cache.gets, deps.cache.peeked = 0, []
    sent: list[list[str]] = []
    early, embedded = _started_before_the_embedding(deps, question, sent)
    for _ in range(20):
        await asyncio.sleep(0)
    assert not early.decided.done() and len(deps.cache.peeked) == 2  # the independent calls, then the dependent
    embedded.set()
    await early.task
    assert deps.cache.gets == 0 and "".join(sent[0]).strip() == first["answer"].strip()


@pytest.mark.parametrize(("question", "ctx"), [
    ("What was my salary last month?", replace(CTX, early_read_ahead=False)),  # switched off
    ("And what was my salary that month?", CTX),  # points back: the conversation's slots decide what to read
])
async def test_nothing_is_read_ahead_when_off_or_when_the_question_points_back(question, ctx):
    deps = make_deps()
    await _answered(deps, "What was my salary last month?")
    deps.cache.peeked = []
    early = start(deps, question, "E1001", ctx, lambda _pieces: None)
    early.pinned(None, {})  # the owner check, as for a new conversation
    await early.task
    assert all(len(keys) <= 1 for keys in deps.cache.peeked)  # no read ahead: only the plan's own read, if any


async def test_what_the_read_ahead_did_not_find_is_read_after_the_decision():
    """A result stored between the read ahead and the decision (another replica answered the same question) is
    found: the plan reads what was not held.
    """
    question = "What was my salary last month?"
    elsewhere = make_deps()
    first = await _answered(elsewhere, question)
    deps, sent = make_deps(), []
    early, embedded = _started_before_the_embedding(deps, question, sent)
    for _ in range(20):
        await asyncio.sleep(0)
    assert deps.cache.peeked and deps.cache.gets == 0
    deps.cache.store.update(elsewhere.cache.store)
    embedded.set()
    await early.task
    assert deps.cache.gets == 1 and "".join(sent[0]).strip() == first["answer"].strip()


@pytest.mark.parametrize(("question", "known"), [
    ("And what was my salary that month?", True),  # points back to a conversation not read as the graph will
    ("What was my salary last month?", False),  # a caller the backend does not know: the graph says so
])
async def test_a_template_path_that_needs_an_unread_conversation_or_a_profile_is_not_planned_early(question, known):
    deps = make_deps()
    await _answered(deps, "What was my salary last month?")
    if not known:
        async def nobody(user):
            return None

        deps.profile = nobody  # type: ignore[method-assign]
    sent: list[list[str]] = []
    early = start(deps, question, "E1001", CTX, sent.append)
    early.pinned(None, None)  # the owner check's read, not as the graph will start from it (its state snapshot)
    await early.task
    assert early.decided.result() is not None and early.decided.result().path == "template"
    assert early.planned.result() is None and sent == []


async def test_route_question_takes_only_the_plan_of_the_decision_it_took():
    deps = make_deps()
    early = start(deps, "What was my salary last month?", "E1001", CTX, lambda _pieces: None)
    await early.task
    token = EARLY.set(early)
    try:
        d = await taken(early.question, early.user, CTX)
        assert d is not None and await taken_plan(d) is early.planned.result() is not None
        other = await deps.router.decide(early.question, early.user, None, True, True)  # decided again: not its plan
        assert await taken_plan(other) is None
    finally:
        EARLY.reset(token)


async def test_the_callers_profile_is_read_while_the_question_is_decided():
    deps, asked, release = make_deps(), [], asyncio.Event()
    decide, profile = deps.router.decide, deps.profile

    async def slow_decide(*args, **kwargs):
        await release.wait()  # the question's embedding, still on its way
        return await decide(*args, **kwargs)

    async def counted(user):
        asked.append(user)
        return await profile(user)

    deps.router.decide, deps.profile = slow_decide, counted  # type: ignore[method-assign]
    early = start(deps, "What was my salary last month?", "E1001", CTX, lambda _pieces: None)
    for _ in range(10):
        await asyncio.sleep(0)
    assert asked == ["E1001"] and not early.decided.done()
    release.set()
    await early.task
    assert early.planned.result() is not None and early.planned.result().profile["id"] == "E1001"
    assert asked == ["E1001"]  # read once


async def test_a_cancelled_early_decision_leaves_the_profile_read_to_finish():
    """A Redis command cancelled in flight costs its connection: the read is left to end on its own."""
    deps, release, done = make_deps(), asyncio.Event(), []
    profile = deps.profile

    async def slow_profile(user):
        await release.wait()
        done.append(user)
        return await profile(user)

    deps.profile = slow_profile  # type: ignore[method-assign]
    early = start(deps, "What was my salary last month?", "E1001", CTX, lambda _pieces: None)
    for _ in range(10):
        await asyncio.sleep(0)
    early.task.cancel()  # the turn ended (refused, failed, or the caller left) while the plan waited for it
    with contextlib.suppress(asyncio.CancelledError):
        await early.task
    release.set()
    for _ in range(10):
        await asyncio.sleep(0)
    assert done == ["E1001"] and early.planned.result() is None


@pytest.mark.parametrize("pinned_first", [True, False])
async def test_a_plan_made_with_another_profile_than_the_conversations_is_not_taken(pinned_first):
    deps = make_deps()
    question = "What is my salary this month and the weather in Paris?"
    await _answered(deps, question)  # the cache holds both results
    sent: list[list[str]] = []
    early = start(deps, question, "E1001", CTX, sent.append)
    other = {**(await deps.profile("E1001")), "city": "Paris"}  # the conversation began before a move
    if pinned_first:  # the owner check read the conversation before the plan was made: it is not made
        assert early.pinned(other)
        await early.task
        assert early.planned.result() is None and sent == []
    else:  # made and held for the owner check, then void
        await early.task
        assert early.planned.result() is not None and len(sent) == 1
        assert not early.pinned(other)
    token = EARLY.set(early)
    try:
        d = await taken(early.question, early.user, CTX)
        assert d is not None and await taken_plan(d) is None  # route_question plans with the pinned profile
    finally:
        EARLY.reset(token)


async def test_a_plan_made_with_the_conversations_own_profile_stands():
    deps = make_deps()
    question = "What is my salary this month and the weather in Paris?"
    await _answered(deps, question)
    early = start(deps, question, "E1001", CTX, lambda _pieces: None)
    await early.task
    assert early.pinned(await deps.profile("E1001")) and early.pinned(None)
    token = EARLY.set(early)
    try:
        d = await taken(early.question, early.user, CTX)
        assert d is not None and await taken_plan(d) is early.planned.result() is not None
    finally:
        EARLY.reset(token)


def test_the_shared_embedding_is_started_only_for_a_leave_type_the_router_left_unsettled():
    question = "can I take a few months to stay home with my toddler"  # names no leave type
    policy = Decision("template", "leave_policy", 0.9, ["leave_policy"])
    assert wants_search_embedding(policy, question)  # settled by meaning: the shared encoder's classifier
    assert not wants_search_embedding(replace(policy, leave_type="parental"), question)  # the router's vector did
    assert not wants_search_embedding(replace(policy, leave_type="none"), question)  # about no type: settled too
    assert not wants_search_embedding(policy, "parental leave rules?")  # named
    # two named, and the router's classifier sure of neither: the shared encoder decides between them
    assert wants_search_embedding(replace(policy, leave_type="sick"), "unpaid or parental leave for my toddler?")
    assert not wants_search_embedding(replace(policy, leave_type="unpaid"), "unpaid or parental leave for my toddler?")
    assert wants_search_embedding(Decision("handbook", "handbook", 0.9), question)


def test_the_leave_type_classifiers_read_leave_questions_only():
    assert Decision("template", "leave_policy", 0.9, ["leave_policy"]).leave_question
    assert Decision("llm", "leave_policy", 0.5, hinted_tools=["leave_balance", "leave_policy"]).leave_question
    assert not Decision("llm", "other", 0.4, hinted_tools=["weather"]).leave_question  # descriptions, as before
    assert not Decision("template", "compound", 0.9, ["leave_policy", "weather"]).leave_question  # not learned
    assert not Decision("faq", "faq:payday", 0.9, faq_id="payday").leave_question


async def test_a_follow_up_the_cache_holds_goes_early_with_the_conversations_last_request(monkeypatch):
    """The weather in Berlin asked in one conversation (so the cache holds it), then in another "the weather in
    Paris" and the follow-up "what about Berlin?": the early path sends the follow-up's answer.
    """
    from app import turn

    early_sent: list[list[str]] = []
    handed = turn._Delivery.early
    monkeypatch.setattr(turn._Delivery, "early", lambda self, sent: (early_sent.append(sent), handed(self, sent)))
    desk = build_desk(make_deps(), InMemorySaver())
    await turn.run_turn(desk, "What is the weather in Berlin?", "E1001", "t-other", CTX)
    first = await turn.run_turn(desk, "What is the weather in Paris?", "E1001", "t-follow", CTX)
    early_sent.clear()
    seen: list[str] = []
    row = await turn.run_turn(desk, "what about Berlin?", "E1001", "t-follow", CTX, on_delta=seen.append)
    assert row["route"] == "template" and row["tools"][0]["args"]["city"] == "Berlin"
    assert row["tools"][0]["args"]["date"] == first["tools"][0]["args"]["date"]  # the date the last request had
    assert [t["cache"] for t in row["tools"]] == ["hit"]
    assert len(early_sent) == 1 and early_sent[0] == [p for p in seen if p]  # the early path's pieces, each once
    assert "".join(seen).strip() == row["answer"].strip()


async def test_route_question_takes_a_follow_ups_decision_only_for_the_request_it_continued():
    deps = make_deps()
    sent: list[list[str]] = []
    early = start(deps, "what about Berlin?", "E1001", CTX, sent.append)
    last = {"last_intents": ["weather"], "last_slots": {"city": "Paris", "date": "2026-11-29"}}
    early.pinned(None, last)
    await early.task
    token = EARLY.set(early)
    try:
        d = await taken(early.question, "E1001", CTX, ["weather"], last["last_slots"])
        assert d is not None and d.intents == ["weather"] and d.path == "template"
        assert await taken(early.question, "E1001", CTX, ["salary"], last["last_slots"]) is None
        assert await taken(early.question, "E1001", CTX, ["weather"], {"city": "Rome"}) is None
    finally:
        EARLY.reset(token)


@pytest.mark.parametrize("values", [{}, None])  # a new conversation; one not read as the graph will start from it
async def test_a_follow_up_with_nothing_read_to_continue_is_left_to_the_graph(values):
    deps = make_deps()
    sent: list[list[str]] = []
    early = start(deps, "what about Berlin?", "E1001", CTX, sent.append)
    early.pinned(None, values)
    await early.task
    assert sent == [] and early.planned.result() is None
    token = EARLY.set(early)
    try:
        assert await taken(early.question, "E1001", CTX, [], {}) is None
    finally:
        EARLY.reset(token)


async def test_a_request_that_points_back_is_planned_early_with_the_month_it_points_to(monkeypatch):
    """ "And what was my salary that month?" after March's weather: the early plan takes March from the
    conversation's last request, as route_question does, and the cache's answer goes early.
    """
    from app import turn

    early_sent: list[list[str]] = []
    handed = turn._Delivery.early
    monkeypatch.setattr(turn._Delivery, "early", lambda self, sent: (early_sent.append(sent), handed(self, sent)))
    desk = build_desk(make_deps(), InMemorySaver())
    await turn.run_turn(desk, "What was my salary in March?", "E1001", "t-other", CTX)  # the cache holds March
    await turn.run_turn(desk, "What was my salary in March?", "E1001", "t-back", CTX)
    early_sent.clear()
    row = await turn.run_turn(desk, "And what was my salary that month?", "E1001", "t-back", CTX)
    assert row["tools"][0]["args"]["month"].endswith("-03") and row["tools"][0]["cache"] == "hit"
    assert len(early_sent) == 1 and "".join(early_sent[0]).strip() == row["answer"].strip()


async def test_a_plan_made_with_other_last_slots_than_the_turns_state_is_not_taken():
    deps = make_deps()
    early = start(deps, "And what was my salary that month?", "E1001", CTX, lambda _t: None)
    early.pinned(None, {"last_intents": ["salary"], "last_slots": {"month": "2026-03"}})
    await early.task
    d = early.decided.result()
    token = EARLY.set(early)
    try:
        assert await taken_plan(d, {"month": "2026-03"}) is not None
        assert await taken_plan(d, {"month": "2026-04"}) is None  # the state holds another month: planned again
    finally:
        EARLY.reset(token)
