"""The help-desk graph: every request takes the cheapest path that answers it correctly.

START -> start_turn -> match_faq -> answer_faq -> END                   (FAQ early exit, no LLM)
-> route_intent -> call_tools -> write_answer -> END   (template)
-> prefetch_tools -> plan_tools -> call_tools ...  (LLM)
-> refuse -> END
"""

from __future__ import annotations

from typing import Literal

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.types import Checkpointer

from graph.context import Context
from graph.deps import Deps
from graph.nodes import Nodes
from graph.state import InputState, State


def route_after_start(state: State, runtime: Runtime[Context]) -> Literal["refuse", "match_faq", "route_intent"]:
    """Bad input is answered at once; otherwise try the FAQ first when it is on."""
    if state["route"] == "invalid":
        return "refuse"
    return "match_faq" if (runtime.context or Context()).faq_enabled else "route_intent"


def route_after_faq(state: State) -> Literal["answer_faq", "route_intent"]:
    """A sure FAQ match answers; anything else continues to intent routing."""
    return "answer_faq" if state["route"] == "faq" else "route_intent"


def route_after_intent(
    state: State, runtime: Runtime[Context]
) -> Literal["refuse", "call_tools", "prefetch_tools", "plan_tools"]:
    """Refuse other people's data; templates go straight to the tools; the rest plans with the LLM."""
    if state["route"] in ("refused", "invalid"):
        return "refuse"
    if state["route"] == "template":
        return "call_tools"
    return "prefetch_tools" if (runtime.context or Context()).prefetch_enabled else "plan_tools"


def route_after_plan(state: State) -> Literal["call_tools", "write_answer"]:
    """An unreachable LLM skips the tools and explains; otherwise run the plan."""
    return "write_answer" if state.get("error") else "call_tools"


def route_after_tools(state: State, runtime: Runtime[Context]) -> Literal["plan_tools", "write_answer"]:
    """Bounded tool loop: on the LLM path, failed calls may be re-planned while rounds remain."""
    ctx = runtime.context or Context()
    failed = any(not r["ok"] for r in state.get("results") or [])
    if state["route"] == "llm" and failed and state.get("tool_rounds", 0) < ctx.max_tool_rounds:
        return "plan_tools"
    return "write_answer"


def build_graph(deps: Deps, checkpointer: Checkpointer = None, name: str = "helpdesk"):
    """Compile the graph around the process's resources (no checkpointer for LangGraph Studio)."""
    nodes = Nodes(deps)
    builder = StateGraph(State, context_schema=Context, input_schema=InputState)
    builder.add_node("start_turn", nodes.start_turn)
    builder.add_node("match_faq", nodes.match_faq)
    builder.add_node("answer_faq", nodes.answer_faq)
    builder.add_node("route_intent", nodes.route_intent)
    builder.add_node("prefetch_tools", nodes.prefetch_tools)
    builder.add_node("plan_tools", nodes.plan_tools)
    builder.add_node("call_tools", nodes.call_tools)
    builder.add_node("write_answer", nodes.write_answer)
    builder.add_node("refuse", nodes.refuse)

    builder.add_edge(START, "start_turn")  # every turn: read the question, pin the caller, reset
    builder.add_conditional_edges("start_turn", route_after_start)  # bad input / FAQ / intents
    builder.add_conditional_edges("match_faq", route_after_faq)  # sure FAQ hit exits early
    builder.add_edge("answer_faq", END)  # FAQ answers need no LLM and no tools
    builder.add_conditional_edges("route_intent", route_after_intent)  # refuse / template / LLM
    builder.add_edge("prefetch_tools", "plan_tools")  # predicted tools run while the LLM plans
    builder.add_conditional_edges("plan_tools", route_after_plan)  # run the plan, or explain failure
    builder.add_conditional_edges("call_tools", route_after_tools)  # bounded re-plan on failures
    builder.add_edge("write_answer", END)  # template or LLM answer, streamed
    builder.add_edge("refuse", END)  # one-sentence refusal
    return builder.compile(checkpointer=checkpointer, name=name)
