"""The help-desk graph: every request takes the cheapest path that answers it correctly.

START -> start_turn -> route_question -> answer_faq -> END                      FAQ early exit, no LLM
                                      -> call_tools -> write_answer -> END       templates, handbook quotes
                                      -> prefetch_tools -> plan_tools -> call_tools -> ...   LLM plans
                                      -> write_answer -> END                     free writing (LLM)
                                      -> refuse -> END                           someone else's data, not English
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


def route_after_start(state: State) -> Literal["refuse", "route_question"]:
    """Bad input is answered at once; everything else goes to the learned router."""
    return "refuse" if state["route"] == "invalid" else "route_question"


def route_after_router(
    state: State, runtime: Runtime[Context]
) -> Literal["answer_faq", "refuse", "call_tools", "prefetch_tools", "plan_tools", "write_answer"]:
    """The router's path: FAQ, refusal, templates (and handbook quotes), free writing, or an LLM plan."""
    if state["route"] == "faq":
        return "answer_faq"
    if state["route"] in ("refused", "invalid"):
        return "refuse"
    if state["route"] == "template":
        return "call_tools"
    if state.get("intent") == "free_writing":
        return "write_answer"
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
    builder.add_node("route_question", nodes.route_question)
    builder.add_node("answer_faq", nodes.answer_faq)
    builder.add_node("prefetch_tools", nodes.prefetch_tools)
    builder.add_node("plan_tools", nodes.plan_tools)
    builder.add_node("call_tools", nodes.call_tools)
    builder.add_node("write_answer", nodes.write_answer)
    builder.add_node("refuse", nodes.refuse)

    builder.add_edge(START, "start_turn")  # every turn: read the question, pin the caller, reset
    builder.add_conditional_edges("start_turn", route_after_start)  # bad input / the router
    builder.add_conditional_edges("route_question", route_after_router)  # FAQ / refuse / template / write / LLM
    builder.add_edge("answer_faq", END)  # FAQ answers need no LLM and no tools
    builder.add_edge("prefetch_tools", "plan_tools")  # predicted tools run while the LLM plans
    builder.add_conditional_edges("plan_tools", route_after_plan)  # run the plan, or explain failure
    builder.add_conditional_edges("call_tools", route_after_tools)  # bounded re-plan on failures
    builder.add_edge("write_answer", END)  # template or LLM answer, streamed
    builder.add_edge("refuse", END)  # one-sentence refusal
    return builder.compile(checkpointer=checkpointer, name=name)
