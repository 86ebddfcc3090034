"""The routing decision started beside the graph, and the answers sent from it before LangGraph's start.

An FAQ answer depends on the question alone: not on the conversation, not on the caller's profile. Yet in the
graph it is written by the routing step, which runs only after LangGraph has read the conversation and
prepared the step (a few milliseconds on SQLite, about as long as the question's embedding or longer). So the
entry points start route_question's decision beside the graph (`Desk.answer_early`, `start` here): as soon as
the question's embedding arrives, the router decides with the inputs route_question will have (the same checks
of the input, the same embedding, the same router), and when it picks an FAQ entry, the entry's text goes to
the caller at once (app/turn.py holds it until the owner check has passed).

A template path is planned here too, with the caller's profile as Redis holds it (graph/template_plan.py, the
function route_question plans with; a request that points back to an earlier month or place, once the owner
check has read the conversation); when the cache holds every result, the answer's pieces go to the caller. A
conversation answers with the profile it pinned at its start: when the owner check's read shows another one
(`EarlyDecision.pinned`), the plan is void and nothing of it goes. While the question is embedded, the slots it
gives and what the cache holds for every known intent's plan with them are read ahead (one Redis round trip;
`Context.early_read_ahead`), so a cache hit's answer needs no read of its own once the router has decided.

A follow-up ("what about Berlin?") continues the conversation's last request: the router reads it as one, and
the decision waits for the owner check's read of the conversation (`EarlyDecision.pinned`), then decides again
with the last request's intents and plans with its slots, as route_question does. A handbook question asked
again in the same words gets the answer noted beside its search's cache entry (graph/held_answers.py).

route_question then takes that same decision, and that plan, as its own (`taken`, `taken_plan`) instead of
deciding again, so the answer it records is the one the caller already has; a follow-up's only when the turn's
state holds the intents and slots it continued. The decision also starts the shared encoder's embedding of the
question when a later step will need it (a handbook search, a leave type settled by meaning), a LangGraph start
sooner than route_question would.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import HumanMessage

from graph import held_answers
from graph.context import Context
from graph.deps import Deps
from graph.intake import new_turn
from graph.kit import ANSWER_SINK, pieces
from graph.paths import Decision
from graph.slots import leave_type_needs_meaning, refers_back, reusable
from graph.template_plan import ReadAhead, TemplatePlan, plan_template, read_ahead, slots_of
from graph.templates import stream_parts
from tools.faq import FaqEntry


@dataclass(frozen=True)
class EarlyDecision:
    """route_question's decision for one turn, started beside the graph."""

    question: str  # as route_question reads it (normalized)
    user: str
    faq_enabled: bool
    templates_enabled: bool
    decided: asyncio.Future[Decision | None]  # None: it could not decide (route_question decides itself)
    planned: asyncio.Future[TemplatePlan | None]  # a template path's plan; None: route_question plans itself
    task: asyncio.Task[None]
    # The profile the conversation pinned, once the owner check has read it ("profile": None for a new conversation).
    pin: dict[str, Any] = field(default_factory=dict)
    # The conversation's state as the owner check read it ({}: a new one; None: not read, or not as the graph will).
    conversation: asyncio.Future[Mapping[str, Any] | None] | None = None
    # The conversation's last request ({"intents": ..., "slots": ...}) a follow-up, or a request that points back
    # to it ("that month"), was decided or planned with.
    follows: dict[str, Any] = field(default_factory=dict)

    def pinned(self, profile: dict[str, Any] | None, values: Mapping[str, Any] | None = None) -> bool:
        """The owner check read the conversation: `profile` is the one it pinned for this caller (None: none,
        a new conversation), and `values` its state (None: not read as the graph will start from it). A plan made
        with another profile (Redis's changed since the conversation began) is void: nothing of it goes to the
        caller, and route_question plans with the pinned one. False when a plan made already was voided (its
        pieces, held until the owner check, must not go).
        """
        self.pin["profile"] = profile
        if self.conversation is not None and not self.conversation.done():  # a follow-up's decision waits for it
            self.conversation.set_result(values)
        plan = self.planned.result() if self.planned.done() else None
        return plan is None or agrees(self.pin, plan.profile)

    def serves(self, question: str, user: str, ctx: Context) -> bool:
        """Whether it was made for this question, caller and switches."""
        return (self.question, self.user, self.faq_enabled, self.templates_enabled) == (
            question, user, ctx.faq_enabled, ctx.templates_enabled)


# The turn's early decision, for route_question to take (app/turn.py sets it around the graph's run).
EARLY: ContextVar[EarlyDecision | None] = ContextVar("early_decision", default=None)


def agrees(pin: dict[str, Any], profile: dict[str, Any]) -> bool:
    """Whether a plan made with `profile` holds for the conversation: none pinned (or not read yet), or the same."""
    return pin.get("profile") is None or pin["profile"] == profile


def faq_entry(d: Decision, faq: dict[str, FaqEntry]) -> FaqEntry | None:
    """The FAQ entry a decision answers with (None: not the FAQ path, or an entry no longer served)."""
    return faq.get(d.faq_id) if d.path == "faq" and d.faq_id else None


def wants_search_embedding(d: Decision, question: str) -> bool:
    """Whether a later step embeds the question with the shared encoder: a handbook search, or a leave type that
    neither a keyword nor the router's leave-type classifier settles, on a leave-policy part or the LLM path.
    """
    settles_leave = "leave_policy" in d.intents or d.path == "llm"
    return d.path == "handbook" or (settles_leave and leave_type_needs_meaning(question, d.leave_type))


def start(deps: Deps, question: str, user: str, ctx: Context,
          send: Callable[[list[str]], None]) -> EarlyDecision | None:
    """Start route_question's decision for `question` from `user` now; `send` gets the answer's pieces the moment
    they are known: the FAQ entry's text when the router picks one, a template answer's when the cache holds
    every result. None when route_question will not decide at all (bad input: it says what is wrong).
    """
    fresh, problem = new_turn({"messages": [HumanMessage(question)], "user": user}, ctx.max_question_chars)
    if problem is not None:
        return None
    question, user = fresh["question"], fresh["user"]
    loop = asyncio.get_running_loop()
    decided: asyncio.Future[Decision | None] = loop.create_future()
    planned: asyncio.Future[TemplatePlan | None] = loop.create_future()
    pin: dict[str, Any] = {}  # the conversation's pinned profile, once the owner check has read it

    # The caller's profile, read while the question is embedded (a template plan needs it; Redis has it for a day).
    # Not cancelled when unused: a Redis command cancelled in flight costs its connection.
    profile = asyncio.ensure_future(deps.profile(user)) if ctx.templates_enabled else None
    if profile is not None:  # a failed read is route_question's to meet again, not an unretrieved error
        profile.add_done_callback(lambda f: f.cancelled() or f.exception())

    async def look_ahead() -> ReadAhead | None:
        """While the question is embedded: the slots, and what the cache holds for the plans the decision may pick
        (graph/template_plan.py:read_ahead). None when there is no point: the decision came first, or the caller
        is unknown to the backend.
        """
        assert profile is not None  # started only beside the profile's read
        known = await asyncio.shield(profile)
        if not known or decided.done():
            return None
        return await read_ahead(deps, question, user, known, ctx)

    async def decide() -> None:
        try:
            d = await deps.router.decide(question, user, None, ctx.faq_enabled, ctx.templates_enabled)
            if d.label == "follow_up":  # it continues the conversation's last request, once the owner check read it
                d = await follow(d)
            elif d.path == "template" and refers_back(question):  # "that month": the slots it points back to
                await last_request()
            if not decided.done():
                decided.set_result(d)
            if d.label == "follow_up" and not follows:  # nothing to continue: the graph decides it again
                return
            if held_answers.applies(d, ctx):
                await handbook()
                return
            if ctx.early_embedding and wants_search_embedding(d, question):
                deps.prefetch_search_embedding(question)
            if (entry := faq_entry(d, deps.faq)) is not None:
                send(pieces(entry.answer))  # in the same step as the decision: no turn of the event loop between
            elif d.path == "template" and (follows or not refers_back(question)):  # the slots it needs are at hand
                await plan(d)
        finally:
            settle()  # it failed: route_question decides itself, and meets the error there

    async def handbook() -> None:
        """A handbook question: the answer noted beside its search's entry for these words, when the entry still
        holds the result it was drawn from (graph/held_answers.py), read with the read-ahead or now. The shared
        encoder's embedding starts after it: the graph's search and answer still need it.
        """
        entry, note = held_answers.keys(deps, question, user)
        read = await asyncio.shield(ahead) if ahead is not None else None  # see above: never cancelled
        held = read.held if read is not None and entry in read.handbook_keys else await deps.cache.peek([entry, note])
        if (said := held_answers.kept(held, entry, note, ctx)) is not None:
            send(pieces(said))
        if ctx.early_embedding:
            deps.prefetch_search_embedding(question)

    async def last_request() -> list[str]:
        """The conversation's last request (its intents; its slots into `follows`), once the owner check has read
        the conversation; nothing when it was not read as the graph will start from it.
        """
        values = await asyncio.shield(conversation)
        if values is None:
            return []
        follows.update(intents=list(values.get("last_intents") or []), slots=dict(values.get("last_slots") or {}))
        return follows["intents"]

    async def follow(d: Decision) -> Decision:
        """A follow-up ("what about Berlin?"): decided again with the last request's intents, as route_question
        decides it (the embedding is memoized: none is made again). `d` as it is when there is nothing to
        continue.
        """
        last = await last_request()
        if not last:
            follows.clear()
            return d
        return await deps.router.decide(question, user, last, ctx.faq_enabled, ctx.templates_enabled)

    async def plan(d: Decision) -> None:
        """The template path's plan, from the caller's profile as the conversation pinned it or, for a new one,
        as Redis holds it (route_question takes it, profile and all); the answer's pieces go when the cache holds
        every result. A follow-up's slots start from the last request's, as route_question's do.
        """
        known = await asyncio.shield(profile) if profile is not None else None  # see above: never cancelled
        if follows and pin.get("profile") is not None:
            known = pin["profile"]
        if not known:  # unknown to the backend: route_question says so
            return
        read = await asyncio.shield(ahead) if ahead is not None else None  # made with the same profile
        filled = read.slots if read and not follows else None  # the read-ahead's slots know no earlier turn
        previous = reusable(follows.get("slots") or {}, question, d.label == "follow_up")
        slots = await slots_of(deps, d, question, known, previous, ctx, filled)
        tp = await plan_template(deps, d, user, known, slots, ctx, read.held if read else None)
        if not agrees(pin, known):  # the conversation pinned another profile: route_question plans with it
            return
        if not planned.done():
            planned.set_result(tp)
        if tp.found:
            written: list[str] = []
            token = ANSWER_SINK.set(written.append)  # the same pieces route_question streams
            try:
                stream_parts(tp.parts, tp.found, [])
            finally:
                ANSWER_SINK.reset(token)
            send(written)

    def settle() -> None:
        """Whatever was not decided or planned is route_question's to do."""
        for future in (decided, planned):
            if not future.done():
                future.set_result(None)

    def ended(task: asyncio.Task[None]) -> None:
        settle()  # cancelled before it began: route_question decides itself
        if not task.cancelled():
            task.exception()  # its error is the graph's to meet

    conversation: asyncio.Future[Mapping[str, Any] | None] = loop.create_future()  # set by `pinned`
    follows: dict[str, Any] = {}
    ahead = asyncio.ensure_future(look_ahead()) if profile is not None and ctx.early_read_ahead and (
        not refers_back(question)) else None  # not cancelled either: it ends in a Redis round trip
    if ahead is not None:  # a failure is met again where it matters (the plan reads the cache itself)
        ahead.add_done_callback(lambda f: f.cancelled() or f.exception())
    task = asyncio.ensure_future(decide())
    task.add_done_callback(ended)
    return EarlyDecision(question, user, ctx.faq_enabled, ctx.templates_enabled, decided, planned, task, pin,
                         conversation, follows)


async def taken_plan(d: Decision, last_slots: dict[str, Any] | None = None) -> TemplatePlan | None:
    """The template path's plan the early decision made, when route_question took that decision (`d`) and it
    planned one, with the last request's slots that the turn's state holds (`last_slots`) where it read them;
    None: route_question plans itself.
    """
    early = EARLY.get()
    if early is None or not early.decided.done() or early.decided.result() is not d or (
            early.planned.get_loop() is not asyncio.get_running_loop()):
        return None
    if early.follows and early.follows.get("slots") != dict(last_slots or {}):
        return None
    planned = await asyncio.shield(early.planned)
    return planned if planned is not None and agrees(early.pin, planned.profile) else None  # else void


async def taken(question: str, user: str, ctx: Context, last_intents: list[str] | None = None,
                last_slots: dict[str, Any] | None = None) -> Decision | None:
    """The turn's early decision, when route_question may take it as its own: made for this question, caller and
    switches, and, for a follow-up, with the last request's intents and slots that the turn's state holds. None:
    route_question decides itself.
    """
    early = EARLY.get()
    if early is None or not early.serves(question, user, ctx) or early.decided.get_loop() is not (
            asyncio.get_running_loop()):
        return None
    d = await asyncio.shield(early.decided)  # this step cancelled: the turn's decision stays for a retry of it
    if d is None or d.label != "follow_up":
        return d
    continued = {"intents": list(last_intents or []), "slots": dict(last_slots or {})}
    return d if early.follows and early.follows == continued else None
