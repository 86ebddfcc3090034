"""The nodes of the help-desk graph. Each returns a partial state update and its own duration."""

from __future__ import annotations

import functools
import re
import time
import unicodedata
import uuid
from collections.abc import Awaitable, Callable
from datetime import date
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage
from langgraph.config import get_stream_writer
from langgraph.runtime import Runtime

from graph import extract, llm, templates
from graph.context import Context
from graph.deps import Deps
from graph.executor import Prefetcher, run_plan
from graph.faq_match import decide
from graph.intents import detect, tool_evidence
from graph.prompts import answer_messages, planner_messages
from graph.pruning import history_of, prune
from graph.slots import fill_slots
from graph.state import RESET, State
from graph.tracing import annotate, node_span

Node = Callable[[State, Runtime[Context]], Awaitable[dict[str, Any]]]
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def timed(fn: Callable[..., Awaitable[dict[str, Any]]]) -> Callable[..., Awaitable[dict[str, Any]]]:
    """Record the node's wall time in `timings_ms` under its name."""

    @functools.wraps(fn)
    async def wrapper(self: Nodes, state: State, runtime: Runtime[Context]) -> dict[str, Any]:
        t0 = time.perf_counter()
        with node_span(fn.__name__):
            update = await fn(self, state, runtime)
        timings = dict(update.get("timings_ms") or {})
        timings[fn.__name__] = (time.perf_counter() - t0) * 1000
        return {**update, "timings_ms": timings}

    return wrapper


def emit(text: str) -> None:
    """Stream a piece of the answer (custom stream mode)."""
    try:
        get_stream_writer()({"answer_delta": text})
    except RuntimeError:  # not running inside a streaming graph (plain ainvoke)
        pass


def emit_chunked(text: str) -> None:
    """Stream a text that is ready at once, sentence by sentence."""
    for piece in re.findall(r"[^.!?]+[.!?]*\s*", text) or [text]:
        emit(piece)


def today_of(ctx: Context) -> date:
    """The run's date: the context override, or the real one."""
    return date.fromisoformat(ctx.today) if ctx.today else date.today()


def normalize(text: str) -> str:
    """Printable, NFC-normalized, whitespace collapsed."""
    text = unicodedata.normalize("NFC", text.encode("utf-8", "replace").decode("utf-8", "replace"))
    return " ".join(_CONTROL.sub(" ", text).split())


class Nodes:
    """Node functions bound to the process's resources."""

    def __init__(self, deps: Deps) -> None:
        self.deps = deps

    @timed
    async def start_turn(self, state: State, runtime: Runtime[Context]) -> dict[str, Any]:
        """Read the new question, pin who is asking, reset the per-turn fields."""
        ctx = runtime.context or Context()
        last = state["messages"][-1] if state.get("messages") else None
        raw = str(last.content) if isinstance(last, HumanMessage) else ""
        question = normalize(raw)
        fresh: dict[str, Any] = {
            "turn_id": uuid.uuid4().hex, "question": question, "route": "", "intent": None, "slots": {},
            "faq": None, "plan": [], "results": [], "prefetch": {}, "answer": "", "llm_calls": 0,
            "tool_rounds": 0, "error": None, "timings_ms": {RESET: 0.0},
        }
        if not question:
            return {**fresh, "route": "invalid", "answer": "Please type a question: the message was empty."}
        if len(question) > ctx.max_question_chars:
            # Keep only a stub of it in the conversation, so later prompts stay small.
            stub = HumanMessage(f"{question[:200]}… [{len(question):,} characters, not processed]")
            replace = [RemoveMessage(id=last.id), stub] if getattr(last, "id", None) else []
            return {**fresh, "route": "invalid", "messages": replace, "answer": (
                f"That message is {len(question):,} characters long; please keep questions under "
                f"{ctx.max_question_chars:,} characters.")}
        user = (state.get("user") or "").strip().upper()
        if not re.fullmatch(r"E\d{4}", user):
            return {**fresh, "route": "invalid", "answer": f"I don't know the employee id {user[:12]!r}; "
                    "please sign in with your own id (E1001 to E1020 in the demo)."}
        # The caller's profile is loaded later, only on paths that need it: FAQ answers do not.
        return {**fresh, "user": user}

    @timed
    async def match_faq(self, state: State, runtime: Runtime[Context]) -> dict[str, Any]:
        """Nearest FAQ entry by vector search; accepted only above the threshold and past the guard."""
        ctx = runtime.context or Context()
        vec = await self.deps.embed(state["question"])
        try:
            nearest = await self.deps.faq.nearest(vec, k=10)
        except Exception:  # noqa: BLE001 - Redis down: no shortcut, the full path answers
            return {"faq": {"accepted": False, "reason": "FAQ index unavailable"}}
        best: dict[str, tuple] = {}
        for entry, hit in nearest:  # best phrasing per entry, so the margin compares entries
            best.setdefault(entry.id, (entry, hit.score))
        d = decide(state["question"], list(best.values()), ctx.faq_threshold)
        faq = {"id": d.entry.id if d.entry else None, "score": round(d.score, 4), "accepted": d.accepted,
               "reason": d.reason}
        annotate(faq_hit=d.accepted, faq_score=faq["score"])
        if d.accepted and d.entry:
            annotate(route="faq")
            return {"faq": faq, "route": "faq", "answer": d.entry.answer}
        return {"faq": faq}

    @timed
    async def answer_faq(self, state: State, runtime: Runtime[Context]) -> dict[str, Any]:
        """Early exit: the FAQ answer, no LLM call."""
        emit_chunked(state["answer"])
        return {"messages": [AIMessage(state["answer"])]}

    @timed
    async def route_intent(self, state: State, runtime: Runtime[Context]) -> dict[str, Any]:
        """Detect the intent, fill slots, and build the plan from a template when one fits."""
        ctx = runtime.context or Context()
        profile = await self._profile(state)
        if profile is None:
            return {"route": "invalid", "answer": f"I don't know the employee id {state['user']!r}; please sign "
                    "in with your own id (E1001 to E1020 in the demo)."}
        det = detect(state["question"], state["user"], state.get("last_intent"))
        previous = state.get("last_slots") if det.follow_up else None
        slots = fill_slots(state["question"], today_of(ctx), profile, previous)
        if det.refusal:
            annotate(route="refused", intent=det.label)
            return {"route": "refused", "intent": det.label, "slots": slots, "answer": det.refusal,
                    "profile": profile}
        if ctx.templates_enabled and len(det.intents) == 1:
            plan = templates.instantiate(det.intents[0], slots, state["user"])
            if plan is not None:
                annotate(route="template", intent=det.label)
                return {"route": "template", "intent": det.label, "slots": slots, "plan": plan, "profile": profile}
        annotate(route="llm", intent=det.label)
        return {"route": "llm", "intent": det.label, "slots": slots, "profile": profile}

    async def _profile(self, state: State) -> dict[str, Any] | None:
        """Pinned facts about the caller (cached in Redis); None when the backend does not know them."""
        kept = state.get("profile") or {}
        if kept.get("id") == state["user"]:
            return kept
        try:
            return await self.deps.profile(state["user"])
        except Exception:  # noqa: BLE001 - backend down: carry on without city/department
            return {"id": state["user"]}

    @timed
    async def prefetch_tools(self, state: State, runtime: Runtime[Context]) -> dict[str, Any]:
        """Start likely, cheap, idempotent tools now; planning with the LLM takes seconds."""
        ctx = runtime.context or Context()
        predicted: list[tuple[str, dict[str, Any]]] = []
        for intent in (state.get("intent") or "policy_lookup").split("+"):
            for call in templates.instantiate(intent, state["slots"], state["user"]) or []:
                if not call["depends_on"]:
                    predicted.append((call["name"], call["args"]))
        started = Prefetcher.start(state["turn_id"], self.deps, predicted, state["user"], ctx)
        return {"prefetch": {"started": started, "used": 0, "wasted": 0}}

    @timed
    async def plan_tools(self, state: State, runtime: Runtime[Context]) -> dict[str, Any]:
        """LLM tool plan with structured outputs, repaired by slot filling."""
        ctx = runtime.context or Context()
        history = self._history(state, ctx)
        question = state["question"]
        if state.get("results"):  # a later round: show what failed so the model can re-plan
            question += "\n\nEarlier tool results:\n" + llm.results_text(state["results"])
        messages = planner_messages(state["profile"], today_of(ctx).isoformat(), history, question)
        try:
            raw = await llm.plan_tools(self.deps.llm, messages, ctx.plan_max_tokens, ctx.plan_arguments,
                                       self.deps.llm_gate)
        except llm.LLMUnavailable as exc:
            self._cancel_prefetch(state)
            return {"error": str(exc), "llm_calls": state.get("llm_calls", 0) + 1}
        plan = llm.repair_plan(raw, state["slots"], state["user"], state["question"])
        if ctx.plan_evidence:
            plan = [c for c in plan if tool_evidence(c["name"], state["question"])]
            plan = [c for c in plan if all(d in {p["id"] for p in plan} for d in c["depends_on"])]
        wanted = (state.get("intent") or "policy_lookup").split("+")  # unknown requests consult the handbook
        for intent in wanted:  # what the question plainly asks is kept
            for call in templates.instantiate(intent, state["slots"], state["user"]) or []:
                if all(c["name"] != call["name"] for c in plan):
                    plan.append(call)
        return {"plan": plan, "llm_calls": state.get("llm_calls", 0) + 1,
                "tool_rounds": state.get("tool_rounds", 0) + 1}

    @timed
    async def call_tools(self, state: State, runtime: Runtime[Context]) -> dict[str, Any]:
        """Run the plan: parallel, cached, taking prefetched results that match."""
        ctx = runtime.context or Context()
        prefetched = Prefetcher.take(state["turn_id"]) if state.get("prefetch") else {}
        started = len(prefetched)
        results = await run_plan(self.deps, state.get("plan", []), state["user"], ctx, prefetched)
        for task in prefetched.values():  # what the plan did not take is wasted: stop it
            task.cancel()
        annotate(cache=",".join(f"{r['name']}:{r['cache']}" for r in results), tools=len(results))
        update: dict[str, Any] = {"results": results}
        if started:
            update["prefetch"] = {**state["prefetch"], "used": started - len(prefetched), "wasted": len(prefetched)}
        return update

    @timed
    async def write_answer(self, state: State, runtime: Runtime[Context]) -> dict[str, Any]:
        """Template answer from the results when possible; otherwise the LLM writes it (streamed)."""
        ctx = runtime.context or Context()
        results = state.get("results") or []
        answer = None
        if state.get("error"):
            answer = state["error"]
        elif state["route"] == "template" or (ctx.templates_enabled and state["route"] == "llm"):
            answer = templates.compose(state["route"], state.get("intent"), state["slots"], results)
            unknown = state["route"] == "llm" and not state.get("intent")
            if answer is None and ctx.templates_enabled and (unknown or all(r["name"] == "kb_search" for r in results)):
                # A sure handbook answer beats whatever else a small model planned for an unknown question.
                answer = await self._extract(state, results, ctx)
        if answer is not None:
            emit_chunked(answer)
            return self._finish(state, answer, state.get("llm_calls", 0))
        messages = answer_messages(state["profile"], today_of(ctx).isoformat(), self._history(state, ctx),
                                   state["question"], llm.results_text(results))
        try:
            answer = await llm.write_answer(self.deps.llm, messages, ctx.answer_max_tokens, emit, self.deps.llm_gate)
        except llm.LLMUnavailable as exc:
            answer = templates.render_partial(state["route"], state["slots"], results) or str(exc)
            emit_chunked(answer)
            return {**self._finish(state, answer, state.get("llm_calls", 0) + 1), "error": str(exc)}
        return self._finish(state, answer, state.get("llm_calls", 0) + 1)

    @timed
    async def refuse(self, state: State, runtime: Runtime[Context]) -> dict[str, Any]:
        """Invalid input or a request for someone else's data: say why, in one sentence."""
        emit_chunked(state["answer"])
        return {"messages": [AIMessage(state["answer"])]}

    # ------------------------------------------------------------------ helpers
    def _history(self, state: State, ctx: Context) -> list:
        history = history_of(state.get("messages") or [])
        if ctx.pruning_enabled:
            history = prune(history, state["question"], ctx.history_keep_turns, ctx.history_relevant_turns)
        # Every message is capped, so one long turn cannot crowd the model's context window.
        return [m if len(str(m.content)) <= 1500 else m.model_copy(update={"content": str(m.content)[:1500] + "…"})
                for m in history]

    def _finish(self, state: State, answer: str, llm_calls: int) -> dict[str, Any]:
        update: dict[str, Any] = {"answer": answer, "llm_calls": llm_calls, "messages": [AIMessage(answer)]}
        if state.get("intent") and state["route"] in ("template", "llm"):
            update["last_intent"] = state["intent"]
            keep = ("month", "date", "city", "leave_type")
            update["last_slots"] = {k: v for k, v in state["slots"].items() if k in keep}
        return update

    async def _extract(self, state: State, results: list, ctx: Context) -> str | None:
        """Quote the knowledge-base sentences that answer the question, when they clearly do."""
        kb = next((r for r in results if r["name"] == "kb_search" and r["ok"]), None)
        pairs = extract.sentences(((kb or {}).get("data") or {}).get("passages", [])[:3])
        if not pairs:
            return None
        qvec = await self.deps.embed(state["question"])
        vecs = await self.deps.embed_many([s for _, s in pairs])
        answer, _ = extract.extract(state["question"], qvec, vecs, pairs, ctx.kb_answer_threshold)
        return answer

    @staticmethod
    def _cancel_prefetch(state: State) -> None:
        for task in Prefetcher.take(state.get("turn_id", "")).values():
            task.cancel()
