"""The Gradio chat: answers stream as they are produced, and each answer shows the path it took.

Who is asking comes from the sign-in picker (personal tools answer for that employee only); each
conversation is a thread in the checkpointer, so history survives restarts and replicas.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

import gradio as gr
from langchain_core.messages import HumanMessage

from app.ask import open_graph
from app.settings import get_settings
from graph.context import Context

log = logging.getLogger(__name__)
DEMO_USERS = [f"E{1001 + i}" for i in range(20)]


class GraphHolder:
    """Builds the graph on first use inside Gradio's event loop and keeps it for the process."""

    def __init__(self) -> None:
        self._graph: Any = None
        self._cm: Any = None
        self._lock = asyncio.Lock()

    async def get(self) -> Any:
        """The compiled graph (built on the first call)."""
        async with self._lock:
            if self._graph is None:
                self._cm = open_graph(get_settings())
                self._graph = await self._cm.__aenter__()
            return self._graph


HOLDER = GraphHolder()


def _step_lines(node: str, update: dict[str, Any]) -> list[str]:
    ms = (update.get("timings_ms") or {}).get(node)
    head = f"{node} {ms:.0f} ms" if ms is not None else node
    lines = [head]
    faq = update.get("faq")
    if node == "match_faq" and faq:
        lines = [f"{head}: FAQ {'hit' if faq.get('accepted') else 'no match'} "
                 f"({faq.get('id')}, similarity {faq.get('score')})"]
    if node == "route_intent":
        lines = [f"{head}: {update.get('route')} path, intent {update.get('intent') or 'unknown'}"]
    if node == "prefetch_tools" and update.get("prefetch"):
        lines = [f"{head}: prefetching {len(update['prefetch'].get('started', []))} tool(s)"]
    if node == "plan_tools":
        lines = [f"{head}: LLM plan -> {', '.join(c['name'] for c in update.get('plan', [])) or 'no tools'}"]
    for r in update.get("results") or []:
        status = "ok" if r["ok"] else f"failed: {r['error']}"
        lines.append(f"  - {r['name']} {r['ms']:.0f} ms, cache {r['cache']}, {status}")
    if node == "write_answer":
        lines = [f"{head}: {'LLM' if update.get('llm_calls') else 'template'} answer"]
    return lines


async def respond(message: str, history: list, employee: str, thread: str) -> AsyncIterator[tuple[list, str]]:
    """Stream one answer into the chat, with a collapsible list of the steps taken."""
    history = list(history or [])
    history.append(gr.ChatMessage(role="user", content=message))
    steps = gr.ChatMessage(role="assistant", content="", metadata={"title": "Working…", "status": "pending"})
    answer = gr.ChatMessage(role="assistant", content="")
    history += [steps, answer]
    yield history, ""
    t0 = time.perf_counter()
    ttft = None
    route = "?"
    lines: list[str] = []
    try:
        graph = await HOLDER.get()
        stream = graph.astream({"messages": [HumanMessage(message)], "user": employee},
                               {"configurable": {"thread_id": thread}}, context=Context(),
                               stream_mode=["custom", "updates"])
        async for mode, chunk in stream:
            if mode == "custom" and "answer_delta" in chunk:
                ttft = ttft if ttft is not None else time.perf_counter() - t0
                answer.content += chunk["answer_delta"]
            elif mode == "updates":
                for node, update in chunk.items():
                    if isinstance(update, dict):
                        route = update.get("route") or route
                        lines += _step_lines(node, update)
                steps.content = "\n".join(lines)
            yield history, ""
    except Exception as exc:  # noqa: BLE001 - the user gets a sentence, the log gets the trace
        log.exception("chat turn failed")
        answer.content = (answer.content + "\n\n" if answer.content else "") + (
            f"Sorry, the help desk could not finish this answer ({type(exc).__name__}). "
            "A service may be down; please try again in a moment.")
    total = time.perf_counter() - t0
    first = f", first token {ttft * 1000:.0f} ms" if ttft is not None else ""
    steps.metadata = {"title": f"Path: {route} · {total * 1000:.0f} ms{first}", "status": "done",
                      "duration": round(total, 2)}
    yield history, ""


def new_thread(employee: str) -> tuple[list, str]:
    """A fresh conversation for the signed-in employee."""
    return [], f"{employee}-{uuid.uuid4().hex[:10]}"


def _employee_choices() -> list[tuple[str, str]]:
    """Sign-in choices with names from the backend (ids alone when it is unreachable)."""
    import httpx

    try:
        people = httpx.get(get_settings().backend + "/employees", timeout=3).json()
        return [(f"{p['id']} · {p['name']} ({p['city']})", p["id"]) for p in people]
    except Exception:  # noqa: BLE001 - the chat still works; the picker shows ids
        return [(u, u) for u in DEMO_USERS]


def build_ui() -> gr.Blocks:
    """The chat page."""
    with gr.Blocks(title="Brightmart help desk") as demo:
        gr.Markdown("## Brightmart help desk\nAsk about policies, your pay, attendance and leave, or the weather.")
        with gr.Row():
            employee = gr.Dropdown(_employee_choices(), value=DEMO_USERS[0], label="Signed in as", scale=1,
                                   elem_id="employee")
            new = gr.Button("New conversation", scale=0)
        thread = gr.State(lambda: f"{DEMO_USERS[0]}-{uuid.uuid4().hex[:10]}")
        chatbot = gr.Chatbot(height=520, label="Help desk", elem_id="chat")
        box = gr.Textbox(placeholder="e.g. How many leave days do I have left?", show_label=False,
                         submit_btn=True, elem_id="question")
        gr.Examples(["When is payday?", "What was my salary last month?",
                     "What should I wear in Paris tomorrow?", "How many leave days do I have left?"], box)
        box.submit(respond, [box, chatbot, employee, thread], [chatbot, box])
        new.click(new_thread, [employee], [chatbot, thread])
        employee.change(new_thread, [employee], [chatbot, thread])
    return demo


def serve(host: str | None = None, port: int | None = None) -> None:
    """Serve the chat (blocking)."""
    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    settings = get_settings()
    build_ui().queue(default_concurrency_limit=16).launch(
        server_name=host or settings.ui_host, server_port=port or settings.ui_port, show_error=False)
