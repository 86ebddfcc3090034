"""The Gradio chat: answers stream as they are produced, and each answer shows the path it took.

Who is asking is the signed-in employee (`app/web.py` verifies the session on every request and
Gradio hands it over as `request.username`); there is no picker. Each conversation is a thread in the
checkpointer with an unguessable id, bound to the employee who started it.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator
from contextlib import aclosing
from typing import Any

import gradio as gr

from app.resources import Resources
from app.stream import stream_turn
from app.turn import new_thread_id
from graph.paths import Decision
from graph.replies import desk_covers

log = logging.getLogger(__name__)
SIGN_IN = "Your session has ended: please [sign in](login) again."


def step_lines(node: str, update: dict[str, Any]) -> list[str]:
    """One node's update as lines of the collapsible steps panel."""
    ms = (update.get("timings_ms") or {}).get(node)
    head = f"{node} {ms:.0f} ms" if ms is not None else node
    decision: Decision | None = update.get("router")
    lines = [head]
    if node == "route_question" and decision:
        parts = f", parts {' + '.join(decision.intents)}" if decision.label == "compound" else ""
        path = f" -> {update['route']} path" if update.get("route") else ""  # else fill_slots settles it
        lines = [f"{head}: router chose {decision.label} (confidence {round(decision.confidence, 3):.2f}"
                 f"{parts}){path}"]
        if decision.path == "llm" and decision.reason.startswith("not sure"):
            lines.append("  - not sure enough for a shortcut: the full path answers")
    elif node == "fill_slots" and update.get("route"):
        said = (update.get("slots") or {}).items()
        slots = ", ".join(f"{k} {v}" for k, v in said if k != "question" and isinstance(v, str | int) and v)
        lines = [f"{head}: -> {update['route']} path" + (f" ({slots})" if slots else "")]
    elif node == "prefetch_tools" and update.get("prefetch"):
        lines = [f"{head}: prefetching {len(update['prefetch'].get('started', []))} tool(s)"]
    elif node == "plan_tools":
        lines = [f"{head}: LLM plan -> {', '.join(c['name'] for c in update.get('plan', [])) or 'no tools'}"]
    elif node == "compose_answer":
        how = update.get("answered_by") or "llm"
        lines = [f"{head}: {how.replace('_', ' ')}" + (" (the LLM writes)" if how == "llm" else " answer")]
    elif node == "write_answer":
        lines = [f"{head}: LLM answer"]
    for r in update.get("results") or []:
        status = "ok" if r["ok"] else f"failed: {r['error']}"
        lines.append(f"  - {r['name']} {r['ms']:.0f} ms, cache {r['cache']}, {status}")
    return lines


async def respond(resources: Resources, message: str, history: list, thread: str,
                  request: gr.Request) -> AsyncGenerator[tuple[list, str], None]:
    """Stream one answer into the chat, with a collapsible list of the steps taken.

    If the user leaves or stops the stream, the turn is stopped (app/stream.py): the LLM request is
    closed (vLLM aborts it) and so are the tool calls nobody waits for.
    """
    history = list(history or [])
    history.append(gr.ChatMessage(role="user", content=message))
    employee = request.username
    if not employee:  # the session expired between the page load and this message
        yield [*history, gr.ChatMessage(role="assistant", content=SIGN_IN)], message
        return
    limit = resources.rate_limit
    if not await limit.allow(employee):
        reply = limit.message(await limit.retry_after(employee))
        yield [*history, gr.ChatMessage(role="assistant", content=reply)], message
        return
    steps = gr.ChatMessage(role="assistant", content="", metadata={"title": "Working…", "status": "pending"})
    answer = gr.ChatMessage(role="assistant", content="")
    history += [steps, answer]
    yield history, ""
    lines: list[str] = []
    row: dict[str, Any] = {}
    text = ""  # the answer so far (the message's content, typed as a plain string)
    desk = await resources.get()
    async with aclosing(stream_turn(desk, message, employee, thread, resources.request_context())) as events:
        async for kind, payload in events:
            if kind == "final":
                row = payload
                continue
            if kind == "delta":
                text += payload
                answer.content = text
            else:
                lines += step_lines(*payload)
                steps.content = "\n".join(lines)
            yield history, ""
    if row.get("answer"):  # the final text (an answer cut for repeating itself is shorter than its stream)
        text = row["answer"]
    if row.get("error") and row["error"] not in text:
        text = (text + "\n\n" if text else "") + row["error"]
    answer.content = text
    first = f", first token {row['ttft_ms']:.0f} ms" if row.get("ttft_ms") is not None else ""
    steps.metadata = {"title": f"Path: {row.get('route')} · {row['total_ms']:.0f} ms{first}", "status": "done",
                      "duration": round(row["total_ms"] / 1000, 2)}
    yield history, ""


def new_thread() -> tuple[list, str]:
    """A fresh conversation (its id is unguessable; it belongs to whoever sends the first message)."""
    return [], new_thread_id()


async def whoami(resources: Resources, request: gr.Request) -> str:
    """The signed-in line at the top of the page."""
    user = request.username or "nobody"
    try:
        p = (await resources.http_client.get(f"{resources.settings.backend}/employees/{user}", timeout=3)).json()
        name = f"{user} · {p['name']}"
    except Exception:  # noqa: BLE001 - the id alone is enough
        name = user
    return f"Signed in as **{name}** · [Sign out](logout)"


def build_ui(resources: Resources) -> gr.Blocks:
    """The chat page, answering with the server's resources."""

    async def answer(message: str, history: list, thread: str,
                     request: gr.Request) -> AsyncGenerator[tuple[list, str], None]:
        async with aclosing(respond(resources, message, history, thread, request)) as updates:  # a stop stops it
            async for out in updates:
                yield out

    async def signed_in_line(request: gr.Request) -> str:
        return await whoami(resources, request)

    with gr.Blocks(title="Brightmart help desk") as demo:
        gr.Markdown(f"## Brightmart help desk\nAsk about {desk_covers()}.")
        with gr.Row():
            signed_in = gr.Markdown(elem_id="signed-in")
            new = gr.Button("New conversation", scale=0)
        thread = gr.State(new_thread_id)
        chatbot = gr.Chatbot(height=520, label="Help desk", elem_id="chat")
        box = gr.Textbox(placeholder="e.g. How many leave days do I have left?", show_label=False,
                         submit_btn=True, elem_id="question")
        gr.Examples(["When is payday?", "What was my salary last month?",
                     "What should I wear in Paris tomorrow?", "How many leave days do I have left?"], box)
        box.submit(answer, [box, chatbot, thread], [chatbot, box], api_name="respond")
        new.click(new_thread, [], [chatbot, thread])
        demo.load(signed_in_line, None, signed_in)
    return demo
