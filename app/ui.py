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

from app.failures import Failure, failure, failure_of
from app.resources import Resources
from app.stream import stream_turn
from app.turn import new_thread_id
from graph.language import answer_language
from graph.paths import Decision
from graph.replies import desk_covers
from tools.i18n import LANGUAGES, say

log = logging.getLogger(__name__)


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
    employee = request.username or ""
    ctx = resources.request_context(request.headers.get("accept-language"))
    lang = answer_language(message, None, ctx.language)  # the page's own words: the question's language
    refused = await resources.rate_limit.refuse(employee, message, ctx.language) if employee else \
        failure("session_ended", message, ctx.language)  # it ended between the page's load and this message
    if refused:
        yield [*history, gr.ChatMessage(role="assistant", content=refused.message)], message
        return
    try:
        desk = await resources.serving(message, ctx.language)
    except Failure as unavailable:  # the desk cannot be built now: said, and the message stays in the box
        yield [*history, gr.ChatMessage(role="assistant", content=unavailable.message)], message
        return
    steps = gr.ChatMessage(role="assistant", content="", metadata={"title": say("ui_working", lang),
                                                                    "status": "pending"})
    answer = gr.ChatMessage(role="assistant", content="")
    history += [steps, answer]
    yield history, ""
    lines: list[str] = []
    row: dict[str, Any] = {}
    text = ""  # the answer so far (the message's content, typed as a plain string)
    async with aclosing(stream_turn(desk, message, employee, thread, ctx)) as events:
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
    if why := failure_of(row):  # the turn could not run: why, after what streamed (app/failures.py)
        answer.content = (text + "\n\n" if text else "") + why.message
    lang = (row.get("router") or {}).get("lang") or lang
    first = say("ui_first_token", lang, ms=f"{row['ttft_ms']:.0f}") if row.get("ttft_ms") is not None else ""
    steps.metadata = {"title": say("ui_path", lang, route=row.get("route"), ms=f"{row['total_ms']:.0f}", first=first),
                      "status": "done",
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
    return say("ui_signed_in", resources.request_context(request.headers.get("accept-language")).language or "en",
               name=name)


def translations() -> gr.I18n:
    """The page's own labels in every language the desk speaks, from the message catalogs: the browser's language
    picks them (Gradio's i18n).
    """
    def labels(lang: str) -> dict[str, str]:
        return {"header": f"## {say('ui_title', lang)}\n{say('ui_ask_about', lang, covers=desk_covers(lang))}",
                "new": say("ui_new_conversation", lang), "chat": say("ui_chat_label", lang),
                "placeholder": say("ui_placeholder", lang)}

    table = {lang: labels(lang) for lang in LANGUAGES}
    return gr.I18n(**table, **{"zh-CN": table["zh"], "zh-Hans": table["zh"], "pt-PT": table["pt"],
                               "pt-BR": table["pt"]})


def build_ui(resources: Resources) -> gr.Blocks:
    """The chat page, answering with the server's resources."""

    async def answer(message: str, history: list, thread: str,
                     request: gr.Request) -> AsyncGenerator[tuple[list, str], None]:
        async with aclosing(respond(resources, message, history, thread, request)) as updates:  # a stop stops it
            async for out in updates:
                yield out

    async def signed_in_line(request: gr.Request) -> str:
        return await whoami(resources, request)

    i18n = translations()
    with gr.Blocks(title=say("ui_title")) as demo:
        gr.Markdown(i18n("header"), elem_id="header")
        with gr.Row():
            signed_in = gr.Markdown(elem_id="signed-in")
            new = gr.Button(i18n("new"), scale=0)
        thread = gr.State(new_thread_id)
        chatbot = gr.Chatbot(height=520, label=i18n("chat"), elem_id="chat")
        box = gr.Textbox(placeholder=i18n("placeholder"), show_label=False,
                         submit_btn=True, elem_id="question")
        gr.Examples([say(k) for k in ("ui_example_payday", "ui_example_salary", "ui_example_wear",
                                      "ui_example_leave")], box)
        box.submit(answer, [box, chatbot, thread], [chatbot, box], api_name="respond")
        new.click(new_thread, [], [chatbot, thread])
        demo.load(signed_in_line, None, signed_in)
    return demo
