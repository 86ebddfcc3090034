"""The help-desk graph: every request takes the cheapest path that answers it correctly.

START -> route_question -> answer_faq -> END                                    FAQ early exit, no LLM
                        -> call_tools -> compose_answer -> END                   templates, handbook quotes
                        -> prefetch_tools -> plan_tools -> call_tools -> ...     LLM plans
                        -> write_answer -> END                                   free writing (a draft)
                        -> refuse -> END                                         bad input, someone else's data,
                                                                                 not English
compose_answer ends the turn with a named outcome (error, template, partial, closest_faq,
handbook_quote, not_in_handbook) or hands over to write_answer ("llm") when only the LLM can answer.
route_question starts the turn (reads the question, pins the caller, resets the per-turn fields) and routes it in
one step. An answer written before its last step (the FAQ entry, a refusal, a template answer whose every
call the cache holds) is streamed by route_question, the step that wrote it; answer_faq and refuse record
it in the conversation, call_tools and compose_answer the template's.

`build_desk` returns the compiled graph in a `Desk`, beside what the entry points do around a turn with the
same resources (start the question's embedding early, seed next-turn prefetch at a server's warm-up).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Literal

from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime
from langgraph.types import Checkpointer

from graph import early
from graph.context import Context
from graph.deps import Deps
from graph.early import EarlyDecision
from graph.kit import context_of, normalize
from graph.next_turn import NextTurn
from graph.nodes import Nodes
from graph.paths import AnsweredBy
from graph.state import InputState, State

HelpdeskGraph = CompiledStateGraph[State, Context, InputState, State]


def route_after_router(
    state: State, runtime: Runtime[Context]
) -> Literal["answer_faq", "refuse", "call_tools", "prefetch_tools", "plan_tools", "write_answer"]:
    """The router's path: FAQ, refusal (bad input too), templates (and handbook quotes), free writing, or an LLM
    plan.
    """
    if state["route"] == "faq":
        return "answer_faq"
    if state["route"] in ("refused", "invalid"):
        return "refuse"
    if state.get("intent") == "free_writing":  # drafted from the request (route "template") or by the LLM
        return "write_answer"
    if state["route"] == "template":
        return "call_tools"
    return "prefetch_tools" if context_of(runtime).prefetch_enabled else "plan_tools"


def route_after_plan(state: State) -> Literal["call_tools", "compose_answer"]:
    """An unreachable LLM skips the tools and explains; otherwise run the plan."""
    return "compose_answer" if state.get("error") else "call_tools"


def route_after_tools(state: State, runtime: Runtime[Context]) -> Literal["plan_tools", "compose_answer"]:
    """Bounded tool loop: on the LLM path, failed calls may be re-planned while rounds remain."""
    ctx = context_of(runtime)
    failed = any(not r["ok"] for r in state.get("results") or [])
    if state["route"] == "llm" and failed and state.get("tool_rounds", 0) < ctx.max_tool_rounds:
        return "plan_tools"
    return "compose_answer"


def how_answered(state: State) -> AnsweredBy:
    """The outcome compose_answer reached: each is a named edge below."""
    return state.get("answered_by") or "llm"


# compose_answer's outcomes: every one but "llm" is a finished answer written without the LLM.
ANSWER_OUTCOMES: dict[Hashable, str] = {  # keys: graph.paths.AnsweredBy, but write_answer's "draft"
    "error": END,  # the LLM or a service was unreachable: the reason, in one sentence
    "template": END,  # every part rendered from its tools' results
    "partial": END,  # some tools failed: what could be fetched, and what could not
    "closest_faq": END,  # the likely FAQ entry, offered as the closest answer with where to ask otherwise
    "handbook_quote": END,  # the handbook sentences that answer the question, quoted
    "not_in_handbook": END,  # nothing sure: say so and name where to ask (or what the desk covers)
    "llm": "write_answer",  # templates off, and no quote: the LLM writes from the results
}


@dataclass(frozen=True)
class Desk:
    """The compiled graph and what an entry point does around its turns with the same resources. The compiled
    graph stays a plain LangGraph graph (Studio serves `graph` as it is); nothing is attached to it.
    """

    graph: HelpdeskGraph  # the turns: astream / ainvoke / aget_state, with its checkpointer
    deps: Deps  # the process's clients it was built around
    next_turn: NextTurn  # the graph's next-turn prefetcher (the one its nodes use)

    def start_early(self, question: str, ctx: Context) -> None:
        """Before the graph runs (app/turn.py:run_turn calls it): start the question's embedding, which
        route_question needs, so it is computed in the encoder's process (or on its thread) while LangGraph
        loads the conversation, instead of after it (idle, FAQ answers ~20% sooner: docs/benchmark.md;
        `Context.early_embedding`).
        """
        if ctx.early_embedding and len(question) <= ctx.max_question_chars and (text := normalize(question)):
            self.deps.prefetch_embedding(text)

    def answer_early(self, question: str, user: str, ctx: Context,
                     send: Callable[[list[str]], None]) -> EarlyDecision | None:
        """Beside the graph (app/turn.py:run_turn starts it with the turn): route_question's decision, started as the
        question's embedding is, and `send` gets the answer's pieces when the decision alone gives them (an FAQ
        entry's text, a template answer whose every result the cache holds), instead of after LangGraph's start
        (graph/early.py; `Context.early_answer`). None when it is off.
        """
        if not ctx.early_answer:
            return None
        return early.start(self.deps, question, user, ctx, send)

    def forget_embedding(self, text: str) -> None:
        """Drop a text's memoized embeddings, so that its next turn does the same work again (the probes)."""
        self.deps.forget_embedding(text)

    async def seed_next_turn(self) -> int:
        """At a server's warm-up: next-turn prefetch learns from the conversations the checkpointer holds
        (the pairs counted; 0 when this Redis namespace has learned before, or there is no checkpointer).
        """
        return await self.next_turn.seed_from_history(self.graph.checkpointer)


def build_desk(deps: Deps, checkpointer: Checkpointer = None, name: str = "helpdesk") -> Desk:
    """Compile the graph around the process's resources (no checkpointer for LangGraph Studio)."""
    nodes = Nodes(deps)
    builder = StateGraph(State, context_schema=Context, input_schema=InputState)
    builder.add_node("route_question", nodes.route_question)
    builder.add_node("answer_faq", nodes.answer_faq)
    builder.add_node("prefetch_tools", nodes.prefetch_tools)
    builder.add_node("plan_tools", nodes.plan_tools)
    builder.add_node("call_tools", nodes.call_tools)
    builder.add_node("compose_answer", nodes.compose_answer)
    builder.add_node("write_answer", nodes.write_answer)
    builder.add_node("refuse", nodes.refuse)

    builder.add_edge(START, "route_question")  # every turn: read the question, pin the caller, reset, route
    builder.add_conditional_edges("route_question", route_after_router)  # FAQ / refuse / template / write / LLM
    builder.add_edge("answer_faq", END)  # FAQ answers need no LLM and no tools
    builder.add_edge("prefetch_tools", "plan_tools")  # predicted tools run while the LLM plans
    builder.add_conditional_edges("plan_tools", route_after_plan)  # run the plan, or explain failure
    builder.add_conditional_edges("call_tools", route_after_tools)  # bounded re-plan on failures
    builder.add_conditional_edges("compose_answer", how_answered, ANSWER_OUTCOMES)  # named outcomes
    builder.add_edge("write_answer", END)  # the LLM's answer, streamed
    builder.add_edge("refuse", END)  # one-sentence refusal: bad input, someone else's data, not English
    return Desk(builder.compile(checkpointer=checkpointer, name=name), deps, nodes.next_turn)


def build_graph(deps: Deps, checkpointer: Checkpointer = None, name: str = "helpdesk") -> HelpdeskGraph:
    """The compiled graph alone, for callers that only run turns through it (LangGraph Studio, tests)."""
    return build_desk(deps, checkpointer, name).graph
