"""The nodes of the help-desk graph. Each returns a partial state update and its own duration."""

from __future__ import annotations

import asyncio
from typing import Any, cast

from langchain_core.messages import AIMessage
from langgraph.runtime import Runtime

from graph import drafts, llm, outcomes, templates
from graph.context import Context
from graph.deps import Deps
from graph.executor import TurnPrefetches, run_plan
from graph.intake import had_turns, new_turn
from graph.kit import context_of, current_context, emit, emit_chunked, thread_of, timed, today_of
from graph.next_turn import NextTurn
from graph.parts import label_of, llm_parts
from graph.paths import AnsweredBy, Route, route_of
from graph.prompts import answer_messages, planner_messages, writing_messages
from graph.pruning import prompt_history
from graph.replies import faq_answer, refusal, unknown_employee
from graph.slots import reusable
from graph.state import Part, State, pinned_profile
from graph.template_plan import plan_template, reading_plan, slots_of, update_of, wants_search_embedding
from graph.tracing import annotate
from tools.i18n import english_name, say, sentences, spoken
from tools.registry import INTENTS, carried_slots


class Nodes:
    """Node functions bound to the process's resources, and the tasks a node leaves for a later one: this
    turn's prefetches (started before planning, taken by the tool stage) and next-turn prefetch's, per
    conversation. One `Nodes` per compiled graph.
    """

    def __init__(self, deps: Deps) -> None:
        self.deps = deps
        self.prefetches = TurnPrefetches()
        self.next_turn = NextTurn(deps)

    @timed
    async def route_question(self, state: State, runtime: Runtime[Context]) -> dict[str, Any]:
        """Start the turn (read the new question, pin who is asking, reset the per-turn fields) and let the
        learned router decide the path. It writes nothing: the node its edge leads to does. The last turn's
        next-turn offers, when the conversation had a turn, are read from Redis while the question is embedded.
        """
        ctx = context_of(runtime)
        thread = thread_of() if had_turns(state) else None  # a first question has no offers to collect
        offers = asyncio.ensure_future(self.next_turn.collect(thread)) if thread else None
        try:
            fresh, problem = new_turn(state, ctx.max_question_chars, ctx.language)
            update = (self._route({}, route_of(None, valid=False), problem) if problem is not None
                      else await self._decide(cast(State, {**state, **fresh}), ctx))
        finally:
            fresh_offers = await offers if offers is not None else {}
        return {**fresh, "next_turn": fresh_offers, **update}

    async def _decide(self, state: State, ctx: Context) -> dict[str, Any]:
        """The router's decision; a sure FAQ entry or a question in another language needs nothing more."""
        question = state["question"]
        d = await self.deps.router.decide(question, state["user"], state.get("last_intents"), ctx.faq_enabled,
                                          ctx.templates_enabled, state["lang"])
        annotate(router_label=d.label, router_confidence=round(d.confidence, 3), faq_hit=d.path == "faq",
                 language=d.lang)
        update: dict[str, Any] = {"router": d, "lang": d.lang}  # the router may read a short message's language
        if d.path == "foreign":
            return self._route(update, route_of(d.path), say("unsupported_language", "en", languages=spoken("en")))
        if d.path == "faq" and d.faq_id in self.deps.faq:
            update["faq"] = {"id": d.faq_id, "score": round(d.confidence, 4), "accepted": True, "reason": d.reason}
            return self._route(update, route_of(d.path), "")
        if ctx.early_embedding and wants_search_embedding(d, question):  # a later step searches by meaning:
            self.deps.prefetch_search_embedding(question)  # its embedding starts now, beside the profile's read
        return update

    @timed
    async def fill_slots(self, state: State, runtime: Runtime[Context]) -> dict[str, Any]:
        """Who is asking (the profile), what the request names (its slots, from the question, then the
        conversation, then the profile), the parts it asks and, on the template path, the calls to make.
        """
        ctx = context_of(runtime)
        d, question, user, lang = state["router"], state["question"], state["user"], state.get("lang", "en")
        assert d is not None  # route_question decided
        profile = await self._profile(state)
        if profile is None:
            return self._route({}, route_of(d.path, valid=False), unknown_employee(user, lang))
        update: dict[str, Any] = {"profile": profile}
        if d.path == "refuse":
            return self._route(update, route_of(d.path), refusal(question, user, lang))
        previous = reusable(state.get("last_slots") or {}, question, d.label, state.get("last_intents") or [])
        slots = await slots_of(self.deps, d, question, profile, previous, ctx, lang)
        update["slots"] = slots
        if d.path == "template":
            return {**update, **update_of(plan_template(self.deps, d, user, profile, slots, ctx))}
        if d.path in ("handbook", "chat"):  # quoted from the handbook, or "not in the handbook"
            parts = [Part(intent="policy_lookup", slots=slots)]  # chat: sure it is no company matter, so no
            plan = (templates.plan_parts(parts, user) or []) if d.path == "handbook" else []  # search to misquote
            return {**update, **label_of(route_of(d.path), parts), "parts": parts, "plan": plan}
        # A writing request's own words make an English draft; in another language the LLM writes it.
        drafted = ctx.templates_enabled and not ctx.llm_drafts and lang == "en"
        if (drafting := drafts.drafts_it(d.path, d.label, question, drafted)) is not None:
            return {**update, "route": route_of("write", settled=drafting), "intent": "free_writing", "parts": []}
        parts = llm_parts(d, self.deps.faq, slots, profile, today_of(ctx))
        return {**update, **label_of(route_of("llm"), parts), "parts": parts}

    @timed
    async def answer_faq(self, state: State, runtime: Runtime[Context]) -> dict[str, Any]:
        """Early exit: the FAQ entry's answer, streamed and recorded, with no LLM call and no tool."""
        answer = faq_answer(self.deps.faq[(state.get("faq") or {})["id"]], state.get("lang", "en"))
        emit_chunked(answer)
        return {"answer": answer, "messages": [AIMessage(answer)]}

    @staticmethod
    def _route(update: dict[str, Any], route: Route, answer: str) -> dict[str, Any]:
        """A path that needs no tools: the FAQ entry, or a refusal whose sentence `refuse` writes."""
        annotate(route=route)
        return {**update, "route": route, "answer": answer}

    async def _profile(self, state: State) -> dict[str, Any] | None:
        """Pinned facts about the caller (cached in Redis); None when the backend does not know them."""
        if (kept := pinned_profile(state, state["user"])) is not None:
            return kept
        try:
            return await self.deps.profile(state["user"])
        except Exception:  # noqa: BLE001 - backend down: carry on without city/department
            return {"id": state["user"]}

    @timed
    async def prefetch_tools(self, state: State, runtime: Runtime[Context]) -> dict[str, Any]:
        """Start likely, cheap, idempotent tools now; planning with the LLM takes seconds."""
        ctx = context_of(runtime)
        calls = templates.expected_calls(state.get("parts"), state["slots"], state["user"])
        predicted = [(c["name"], c["args"]) for c in calls if not c["depends_on"]]
        started = self.prefetches.start(state["turn_id"], self.deps, predicted, state["user"], ctx)
        return {"prefetch": {"started": started, "used": 0, "wasted": 0}}

    @timed
    async def plan_tools(self, state: State, runtime: Runtime[Context]) -> dict[str, Any]:
        """LLM tool plan with structured outputs, repaired by slot filling."""
        ctx = context_of(runtime)
        if state.get("lang", "en") not in self.deps.llm_languages:  # the model cannot read it: the router's reading
            return {"plan": reading_plan(state), "tool_rounds": state.get("tool_rounds", 0) + 1}
        history = prompt_history(state.get("messages") or [], state["question"], ctx)
        question = state["question"]
        if state.get("results"):  # a later round: show what failed so the model can re-plan
            question += "\n\nEarlier tool results:\n" + llm.results_text(state["results"])
        messages = planner_messages(state["profile"], today_of(ctx).isoformat(), history, question)
        try:
            raw = await llm.plan_tools(self.deps.llm, messages, ctx.plan_max_tokens, ctx.plan_arguments,
                                       self.deps.llm_gate)
        except llm.LLMUnavailable as exc:
            for task in self.prefetches.take(state.get("turn_id", "")).values():
                task.cancel()
            return {"error": say(exc.key, state.get("lang", "en")), "llm_calls": state.get("llm_calls", 0) + 1}
        plan = llm.repair_plan(raw, state["slots"], state["user"], state["question"])
        if ctx.plan_evidence:  # a small model's plan adds tools at random: keep those the router saw a hint of
            hinted = set(d.hinted_tools if (d := state.get("router")) else []) | {"kb_search"}
            plan = [c for c in plan if c["name"] in hinted]
            plan = [c for c in plan if all(d in {p["id"] for p in plan} for d in c["depends_on"])]
        for call in templates.expected_calls(state.get("parts"), state["slots"], state["user"]):  # the router's: kept
            if all(c["id"] != call["id"] for c in plan):  # ids: a period's months are one call each
                plan.append(call)
        return {"plan": plan, "llm_calls": state.get("llm_calls", 0) + 1,
                "tool_rounds": state.get("tool_rounds", 0) + 1}

    @timed
    async def call_tools(self, state: State, runtime: Runtime[Context]) -> dict[str, Any]:
        """Run the plan: parallel, cached, taking prefetched results that match."""
        ctx = context_of(runtime)
        prefetched = self.prefetches.take(state["turn_id"]) if state.get("prefetch") else {}
        started = len(prefetched)
        prefetched, ahead = self.next_turn.join(thread_of(), prefetched)  # the last turn's, still running
        parts = state.get("parts") or []
        streamed: list[int] = []
        arrived: list[Any] = []
        said = [state.get("streamed") or ""]

        def stream_ready_parts(result: Any = None) -> None:
            """Progressive answers: each part of a compound request as soon as its own tools returned."""
            if result is not None:
                arrived.append(result)
            said.append(templates.stream_parts(parts, arrived, streamed))

        # Each part as soon as its tools returned; a one-part answer too, a LangGraph step before compose_answer.
        progressive = ctx.progressive_enabled and state["route"] == "template" and bool(parts)
        if progressive:
            stream_ready_parts()  # FAQ parts need no tool
        results = await run_plan(self.deps, state.get("plan", []), state["user"], ctx, prefetched,
                                 stream_ready_parts if progressive else None)
        left_ahead = len(ahead & prefetched.keys())
        for task in prefetched.values():  # what the plan did not take is wasted: stop it
            task.cancel()
        update: dict[str, Any] = {"streamed_parts": streamed, "streamed": "".join(said)}
        if (nt := state.get("next_turn") or {}).get("offered") or nt.get("in_flight"):  # the last turn's prefetch
            results, update["next_turn"] = await self.next_turn.settle(thread_of(), nt, results, left_ahead)
        update["results"] = results
        annotate(cache=",".join(f"{r['name']}:{r['cache']}" for r in results), tools=len(results))
        if started:
            mine = len(prefetched) - left_ahead
            update["prefetch"] = {**state["prefetch"], "used": started - mine, "wasted": mine}
        return update

    @timed
    async def compose_answer(self, state: State, runtime: Runtime[Context]) -> dict[str, Any]:
        """Every answer the LLM does not write, under the name of the outcome that wrote it (graph/outcomes.py), or
        "llm" when only the LLM can answer.
        """
        how, answer = await outcomes.first_outcome(state, context_of(runtime), self.deps)
        return self._said(state, answer, how) if answer is not None else {"answered_by": "llm"}

    @timed
    async def write_answer(self, state: State, runtime: Runtime[Context]) -> dict[str, Any]:
        """Writing requests (a draft of the request's words, or the LLM's); with templates off, all answers."""
        ctx = context_of(runtime)
        if state.get("intent") == "free_writing" and state["route"] == "template":
            return self._said(state, drafts.draft(state["question"], (state.get("profile") or {}).get("name")), "draft")
        results = state.get("results") or []
        history = prompt_history(state.get("messages") or [], state["question"], ctx)
        lang = state.get("lang", "en")  # a model that writes English only answers in English, introduced so
        writes, note = (lang, "") if lang in self.deps.llm_languages else ("en", say("llm_english_only", lang))
        today, language = today_of(ctx).isoformat(), english_name(writes)
        messages = writing_messages(state["profile"], today, history, state["question"], language) \
            if state.get("intent") == "free_writing" else \
            answer_messages(state["profile"], today, history, state["question"], llm.results_text(results), language)
        try:
            answer = await llm.write_answer(self.deps.llm, messages, ctx.answer_max_tokens, emit, self.deps.llm_gate,
                                            lead=f"{note} " if note else "", interrupted=say("answer_cut_short", lang))
        except llm.LLMUnavailable as exc:  # nothing was sent: what the tools fetched, else why there is no answer
            said = say(exc.key, lang)
            answer = sentences(lang, templates.render_partial(state.get("parts") or [], results) or "", said)
            return {**self._said(state, answer, "error", state.get("llm_calls", 0) + 1), "error": said}
        return {**self._finish(state, answer, state.get("llm_calls", 0) + 1), "answered_by": "llm"}

    @timed
    async def refuse(self, state: State, runtime: Runtime[Context]) -> dict[str, Any]:
        """Bad input, someone else's data, an unknown caller or another language: the deciding node's reason."""
        emit_chunked(state["answer"])
        return {"messages": [AIMessage(state["answer"])]}

    def _said(self, state: State, answer: str, how: AnsweredBy, llm_calls: int | None = None) -> dict[str, Any]:
        """Stream an answer written without the LLM after what this turn already streamed (call_tools' parts),
        which it continues: the answer recorded is the text the reader has.
        """
        answer = continued(state.get("streamed") or "", answer, state.get("lang", "en"))
        emit_chunked(answer[len(state.get("streamed") or ""):])
        calls = state.get("llm_calls", 0) if llm_calls is None else llm_calls
        return {**self._finish(state, answer, calls), "answered_by": how}

    def _finish(self, state: State, answer: str, llm_calls: int) -> dict[str, Any]:
        update: dict[str, Any] = {"answer": answer, "llm_calls": llm_calls, "messages": [AIMessage(answer)]}
        parts = state.get("parts") or []
        if not parts and state["route"] == "llm":  # what the full path fetched is what a follow-up continues
            parts = templates.parts_from_results(state.get("slots") or {}, state.get("results") or [])
        intents = [p["intent"] for p in parts if p["intent"] in INTENTS]
        if intents and state["route"] in ("template", "llm"):
            update["last_intents"] = intents
            said = parts[0]["slots"] if len(parts) == 1 else state["slots"]  # a settled month is the one answered
            update["last_slots"] = {k: v for k, v in said.items() if k in carried_slots()}
            if thread := thread_of():  # learn what followed what, and prefetch the likely next request
                self.next_turn.launch(thread, state["user"], state.get("last_intents") or [], intents, said,
                                      current_context())
        return update


def continued(streamed: str, answer: str, lang: str) -> str:
    """The answer as its reader has it: one that starts with what already streamed is that; another one follows it."""
    return answer if answer.startswith(streamed) else sentences(lang, streamed, answer)
