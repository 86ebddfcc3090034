"""The Gradio chat: answers stream as they are produced, and each answer shows the path it took.

Who is asking comes from the sign-in picker (personal tools answer for that employee only); each
conversation is a thread in the checkpointer, so history survives restarts and replicas. The
server also exposes Prometheus metrics on /metrics and a health check on /healthz.
"""

from __future__ import annotations

import asyncio
import logging
import os
import uuid
from collections.abc import AsyncIterator
from typing import Any

import gradio as gr

from app.ask import open_graph, run_turn
from app.observability import metrics_text, setup_otel
from app.settings import get_settings
from graph.context import Context

log = logging.getLogger(__name__)
DEMO_USERS = [f"E{1001 + i}" for i in range(20)]
_DONE = object()


class GraphHolder:
    """Builds the graph on first use inside the server's event loop and keeps it for the process."""

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


def step_lines(node: str, update: dict[str, Any]) -> list[str]:
    """One node's update as lines of the collapsible steps panel."""
    ms = (update.get("timings_ms") or {}).get(node)
    head = f"{node} {ms:.0f} ms" if ms is not None else node
    router = update.get("router") or {}
    lines = [head]
    if node == "route_question" and router:
        parts = f", parts {' + '.join(router['intents'])}" if router.get("label") == "compound" else ""
        lines = [f"{head}: router chose {router.get('label')} (confidence {router.get('confidence', 0):.2f}"
                 f"{parts}) -> {update.get('route')} path"]
        if update.get("route") == "llm" and router.get("reason", "").startswith("not sure"):
            lines.append("  - not sure enough for a shortcut: the full path answers")
    elif node == "prefetch_tools" and update.get("prefetch"):
        lines = [f"{head}: prefetching {len(update['prefetch'].get('started', []))} tool(s)"]
    elif node == "plan_tools":
        lines = [f"{head}: LLM plan -> {', '.join(c['name'] for c in update.get('plan', [])) or 'no tools'}"]
    elif node == "write_answer":
        lines = [f"{head}: {'LLM' if update.get('llm_calls') else 'template'} answer"]
    for r in update.get("results") or []:
        status = "ok" if r["ok"] else f"failed: {r['error']}"
        lines.append(f"  - {r['name']} {r['ms']:.0f} ms, cache {r['cache']}, {status}")
    return lines


async def respond(message: str, history: list, employee: str, thread: str) -> AsyncIterator[tuple[list, str]]:
    """Stream one answer into the chat, with a collapsible list of the steps taken.

    The turn runs as a task feeding a queue; if the user leaves or stops the stream, the task is
    cancelled, which closes the LLM request (vLLM aborts it) and the tool calls nobody waits for.
    """
    history = list(history or [])
    history.append(gr.ChatMessage(role="user", content=message))
    steps = gr.ChatMessage(role="assistant", content="", metadata={"title": "Working…", "status": "pending"})
    answer = gr.ChatMessage(role="assistant", content="")
    history += [steps, answer]
    yield history, ""
    events: asyncio.Queue = asyncio.Queue()
    lines: list[str] = []

    async def turn() -> dict[str, Any]:
        try:
            graph = await HOLDER.get()
            return await run_turn(graph, message, employee, thread, Context(),
                                  on_delta=lambda t: events.put_nowait(("delta", t)),
                                  on_update=lambda n, u: events.put_nowait(("update", (n, u))))
        finally:
            events.put_nowait((_DONE, None))

    task = asyncio.create_task(turn())
    try:
        while True:
            kind, payload = await events.get()
            if kind is _DONE:
                break
            if kind == "delta":
                answer.content += payload
            else:
                lines += step_lines(*payload)
                steps.content = "\n".join(lines)
            yield history, ""
        row = await task
    except BaseException:
        task.cancel()
        raise
    if row.get("answer"):  # the final text (an answer cut for repeating itself is shorter than its stream)
        answer.content = row["answer"]
    if row.get("error") and row["error"] not in answer.content:
        answer.content = (answer.content + "\n\n" if answer.content else "") + row["error"]
    first = f", first token {row['ttft_ms']:.0f} ms" if row.get("ttft_ms") is not None else ""
    steps.metadata = {"title": f"Path: {row.get('route')} · {row['total_ms']:.0f} ms{first}", "status": "done",
                      "duration": round(row["total_ms"] / 1000, 2)}
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


def build_app() -> Any:
    """FastAPI app: the chat at /, Prometheus metrics at /metrics, health at /healthz."""
    from fastapi import FastAPI, Response

    app = FastAPI(title="Brightmart help desk")

    @app.get("/metrics")
    def metrics() -> Response:
        body, ctype = metrics_text()
        return Response(body, media_type=ctype)

    @app.get("/healthz")
    def healthz() -> dict[str, bool]:
        return {"ok": True}

    return gr.mount_gradio_app(app, build_ui().queue(default_concurrency_limit=16), path="/")


def serve(host: str | None = None, port: int | None = None) -> None:
    """Serve the chat (blocking)."""
    import uvicorn

    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    setup_otel()
    settings = get_settings()
    uvicorn.run(build_app(), host=host or settings.ui_host, port=port or settings.ui_port, log_level="warning")
