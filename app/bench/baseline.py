"""The baselines the benchmark compares against: what a user builds without this project.

1. The plain agent (the reference case's pre-optimization architecture): an LLM call picks the
   tools and their arguments (structured outputs, since the small model emits no tool calls on its
   own), the tools run one after another with no cache, and an LLM call writes the answer from the
   results with the full history. No FAQ shortcut, templates, prefetch or pruning. Only the
   employee id is taken from the session, as any deployment would do for personal data.
2. LangChain's `create_agent` with the same tools, what a LangChain user reaches for first.
Both use the same vLLM server, model, prompts' static prefix, tools and timeouts.
"""

from __future__ import annotations

import time
from typing import Annotated, Any, TypedDict

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.runtime import Runtime
from langgraph.types import Overwrite

from app.bench.lc_tools import make_tools
from graph import llm
from graph.context import Context
from graph.deps import Deps
from graph.executor import fetch
from graph.kit import emit, today_of
from graph.prompts import answer_messages, answer_system, planner_messages
from graph.pruning import history_of
from graph.state import ToolCall, ToolResult, merge_timings
from tools.registry import TOOLS

NO_SHORTCUTS = Context(faq_enabled=False, templates_enabled=False, parallel_enabled=False, cache_enabled=False,
                       prefetch_enabled=False, pruning_enabled=False, tool_retries=0)


class PlainState(TypedDict, total=False):
    """State of the plain agent."""

    messages: Annotated[list[AnyMessage], add_messages]
    user: str
    profile: dict[str, Any]
    plan: list[ToolCall]
    results: list[ToolResult]
    answer: str
    llm_calls: int
    route: str
    timings_ms: Annotated[dict[str, float], merge_timings]


def build_plain_agent(deps: Deps, checkpointer: Any = None):
    """Plan (LLM) -> run tools sequentially -> answer (LLM), every request."""

    async def plan(state: PlainState, runtime: Runtime[Context]) -> dict[str, Any]:
        t0 = time.perf_counter()
        ctx = runtime.context or Context()
        profile = await deps.tools.get_employee(state["user"]) or {"id": state["user"]}
        question = str(state["messages"][-1].content)
        raw = await llm.plan_tools(deps.llm, planner_messages(profile, today_of(ctx).isoformat(),
                                                              history_of(state["messages"]), question),
                                   ctx.plan_max_tokens, with_args=True, gate=deps.llm_gate)
        calls: list[ToolCall] = []
        for i, c in enumerate(raw[:4]):
            name = c.get("tool") if isinstance(c, dict) else None
            if name in TOOLS:
                args = dict(c.get("args") or {})
                if TOOLS[name].personal:
                    args["employee"] = state["user"]  # identity from the session, arguments from the model
                calls.append(ToolCall(id=f"{name}{i}", name=name, args=args, depends_on=[]))
        return {"plan": calls, "profile": profile, "llm_calls": 1, "route": "plain", "results": [],
                "timings_ms": Overwrite({"plan": (time.perf_counter() - t0) * 1000})}

    async def run_tools(state: PlainState, runtime: Runtime[Context]) -> dict[str, Any]:
        t0 = time.perf_counter()
        ctx = NO_SHORTCUTS
        results = []
        for call in state["plan"]:  # one after another
            out = await fetch(deps, call["name"], call["args"], state["user"], ctx)
            results.append(ToolResult(id=call["id"], name=call["name"], args=call["args"], ok=out.error is None,
                                      data=out.data, error=out.error, ms=round(out.ms, 1), cache="off"))
        return {"results": results, "timings_ms": {"run_tools": (time.perf_counter() - t0) * 1000}}

    async def answer(state: PlainState, runtime: Runtime[Context]) -> dict[str, Any]:
        t0 = time.perf_counter()
        ctx = runtime.context or Context()
        msgs = answer_messages(state["profile"], today_of(ctx).isoformat(), history_of(state["messages"]),
                               str(state["messages"][-1].content), llm.results_text(state["results"]))
        try:
            text = await llm.write_answer(deps.llm, msgs, ctx.answer_max_tokens, emit, deps.llm_gate)
        except llm.LLMUnavailable as exc:
            text = str(exc)
        return {"answer": text, "messages": [AIMessage(text)], "llm_calls": state["llm_calls"] + 1,
                "timings_ms": {"answer": (time.perf_counter() - t0) * 1000}}

    builder = StateGraph(PlainState, context_schema=Context)
    builder.add_node("plan", plan)
    builder.add_node("run_tools", run_tools)
    builder.add_node("answer", answer)
    builder.add_edge(START, "plan")
    builder.add_edge("plan", "run_tools")
    builder.add_edge("run_tools", "answer")
    builder.add_edge("answer", END)
    return builder.compile(checkpointer=checkpointer, name="plain_agent")


async def run_create_agent(deps: Deps, question: str, user: str, history: list[AnyMessage],
                           ctx: Context, on_delta: Any = None) -> dict[str, Any]:
    """One turn through LangChain's `create_agent` with the same tools (bound to the caller)."""
    model = deps.llm.model_copy(update={"max_tokens": ctx.answer_max_tokens})  # bind() is lost by bind_tools
    agent = create_agent(model, tools=make_tools(deps.tools, user), system_prompt=answer_system())
    t0 = time.perf_counter()
    text, tools_called, llm_calls = "", [], 0
    async for part in agent.astream({"messages": [*history, HumanMessage(question)]},
                                    stream_mode=["messages", "updates"], version="v2"):
        if part["type"] == "messages":
            msg, meta = part["data"]
            if meta.get("langgraph_node") == "model" and msg.content and on_delta:
                on_delta(str(msg.content))
        elif part["type"] == "updates":
            for _node, update in part["data"].items():
                for m in (update or {}).get("messages", []):
                    if isinstance(m, AIMessage):
                        llm_calls += 1
                        tools_called += [tc["name"] for tc in m.tool_calls]
                        text = str(m.content) or text
    return {"answer": text, "tools": tools_called, "llm_calls": llm_calls,
            "total_ms": (time.perf_counter() - t0) * 1000}
