"""The help-desk graph: every request takes the cheapest path that answers it correctly.

START -> route_question -> answer_faq -> END                                    FAQ early exit, no LLM
                        -> refuse -> END                                         bad input, another language
                        -> fill_slots -> call_tools -> compose_answer -> END     templates, handbook quotes
                                      -> prefetch_tools -> plan_tools -> call_tools -> ...   LLM plans
                                      -> write_answer -> END                     free writing (a draft)
                                      -> refuse -> END                           someone else's data, unknown caller
route_question decides; the node its edge leads to writes. The edges read the turn's route, which route_question
and fill_slots settle through one function (graph/paths.py:route_of). compose_answer ends the turn with a named outcome
(error, template, partial, closest_faq, handbook_quote, not_in_handbook) or hands over to write_answer ("llm")
when only the LLM can answer. Every answer is written by a node and leaves through LangGraph's own stream
(custom `answer_delta` events, graph/kit.py:emit): the chat, the API, the CLI, Studio and a notebook read the
same one, and the final state records it.

`build_desk` returns the compiled graph in a `Desk`, beside what the entry points do around a turn with the
same resources (start the question's embedding early, seed next-turn prefetch at a server's warm-up).
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from typing import Literal

from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime
from langgraph.types import Checkpointer, TimeoutPolicy

from graph.context import Context
from graph.deps import Deps
from graph.kit import context_of, normalize
from graph.language import written_in
from graph.next_turn import NextTurn
from graph.nodes import Nodes
from graph.outcomes import OUTCOMES
from graph.paths import AnsweredBy
from graph.state import InputState, State

HelpdeskGraph = CompiledStateGraph[State, Context, InputState, State]
# An LLM node that runs longer than this is stuck (a stream that stopped sending but never closed): LangGraph
# cancels it, the turn fails with a sentence for the user, and nothing hangs. The other nodes' calls each have a
# deadline of their own (tools: `Context.tool_timeout_s` with retries; Redis: socket timeouts), and a node timer
# costs the shortcut paths about 0.4 ms a step (measured on FAQ turns), so they carry none.
STUCK = TimeoutPolicy(run_timeout=120.0)

# The edges below are coroutines though they never await: LangGraph runs a plain function's edge on the thread pool,
# one hop out and back per edge, and under 32 conversations at once that hop queued behind the pool's other work
# (checkpoint reads and writes, token checks) on every turn's way to its answer.

async def route_after_router(state: State) -> Literal["answer_faq", "refuse", "fill_slots"]:
    """A sure FAQ entry is answered; bad input and another language are refused; the rest needs its slots."""
    if state["route"] == "faq":
        return "answer_faq"
    if state["route"] in ("refused", "invalid"):
        return "refuse"
    return "fill_slots"


async def route_after_slots(
    state: State, runtime: Runtime[Context]
) -> Literal["refuse", "call_tools", "prefetch_tools", "plan_tools", "write_answer"]:
    """Someone else's data (or an unknown caller) is refused; templates (and handbook quotes) run their calls;
    a writing request is written; the rest is planned by the LLM.
    """
    if state["route"] in ("refused", "invalid"):
        return "refuse"
    if state.get("intent") == "free_writing":  # drafted from the request (route "template") or by the LLM
        return "write_answer"
    if state["route"] == "template":
        return "call_tools"
    return "prefetch_tools" if context_of(runtime).prefetch_enabled else "plan_tools"


async def route_after_plan(state: State) -> Literal["call_tools", "compose_answer"]:
    """An unreachable LLM skips the tools and explains; otherwise run the plan."""
    return "compose_answer" if state.get("error") else "call_tools"


async def route_after_tools(state: State, runtime: Runtime[Context]) -> Literal["plan_tools", "compose_answer"]:
    """Bounded tool loop: on the LLM path, failed calls may be re-planned while rounds remain."""
    ctx = context_of(runtime)
    failed = any(not r["ok"] for r in state.get("results") or [])
    if state["route"] == "llm" and failed and state.get("tool_rounds", 0) < ctx.max_tool_rounds:
        return "plan_tools"
    return "compose_answer"


async def how_answered(state: State) -> AnsweredBy:
    """The outcome compose_answer reached: each is a named edge below."""
    return state.get("answered_by") or "llm"


# compose_answer's outcomes (graph/outcomes.py, in the order they are tried) each end the turn with an answer written
# without the LLM; "llm" hands over to write_answer.
ANSWER_OUTCOMES: dict[Hashable, str] = {**{how: END for how, _ in OUTCOMES}, "llm": "write_answer"}


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
        route_question needs, so it is computed while LangGraph loads the conversation instead of after it
        (`Context.early_embedding`). Side-effect free: it only fills the embedding memo route_question reads.
        """
        if ctx.early_embedding and len(question) <= ctx.max_question_chars and (text := normalize(question)):
            self.deps.prefetch_embedding(text, written_in(text) or "en")

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
    # Retries stay inside the tool stage (graph/executor.py), per call and for idempotent tools only: LangGraph's
    # RetryPolicy would run a whole node again, every call of the plan with it. Its CachePolicy keys a node's
    # whole input, which holds the conversation, so no two turns would match; the tool cache (tools/cache.py)
    # matches per call, scoped per caller, with each tool's own lifetime.
    builder.add_node("route_question", nodes.route_question)
    builder.add_node("fill_slots", nodes.fill_slots)
    builder.add_node("answer_faq", nodes.answer_faq)
    builder.add_node("prefetch_tools", nodes.prefetch_tools)
    builder.add_node("plan_tools", nodes.plan_tools, timeout=STUCK)
    builder.add_node("call_tools", nodes.call_tools)
    builder.add_node("compose_answer", nodes.compose_answer)
    builder.add_node("write_answer", nodes.write_answer, timeout=STUCK)
    builder.add_node("refuse", nodes.refuse)

    builder.add_edge(START, "route_question")  # every turn: read the question, pin the caller, reset, decide
    builder.add_conditional_edges("route_question", route_after_router)  # FAQ / refuse / the rest needs slots
    builder.add_conditional_edges("fill_slots", route_after_slots)  # refuse / template / write / LLM plan
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
