"""The OpenAI-compatible API: `GET /v1/models` and `POST /v1/chat/completions`, so that any OpenAI client (Open
WebUI, LibreChat, LiteLLM, the `openai` SDK) can talk to the desk with its identity checks intact.

The same turn as `POST /v1/chat` (app/api.py): the caller from the bearer token (`caller`; the request's `user`
field is never an identity), the same rate limit (`admit`), the answer from `stream_turn`. Only the shapes
differ: OpenAI's responses, chunks and errors (app/openai_wire.py). Which thread a request continues: an
`X-Thread-Id` header pins one; otherwise the history sent finds it (app/openai_threads.py). Every response
names its thread in an `X-Thread-Id` header, and carries what the chat's Path panel shows (route, intent,
tools, timings) in an extra `helpdesk` field of the response or of the last chunk.

Someone else's thread is a 403 (`permission_error`, code `conversation_not_yours`), decided by `run_turn`'s
owner check before anything of the thread is read; a turn that failed is a 500 before the answer started, or an
`error` event after it (the `openai` SDK raises both).
"""

from __future__ import annotations

import logging
import re
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import aclosing
from dataclasses import replace
from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse

from app.api import admit, caller, resources_of
from app.auth import Identity
from app.failures import Failure, failure_of
from app.openai_threads import find_thread, remember
from app.openai_wire import MODEL_ID, Ask, OpenAIError, Reply, path_of, read_request, sse
from app.stream import stream_turn
from app.turn import new_thread_id
from graph.context import Context

log = logging.getLogger(__name__)
router = APIRouter()
THREAD_HEADER = "X-Thread-Id"
_THREAD_ID = re.compile(r"^[A-Za-z0-9_\-]{8,128}$")  # as app/api.py:ChatRequest.thread
_STREAM_HEADERS = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}
Events = AsyncGenerator[tuple[str, Any], None]
_HTTP_ERRORS = {401: ("authentication_error", "invalid_api_key"), 429: ("rate_limit_error", "rate_limit_exceeded")}


def _from_http(exc: HTTPException) -> OpenAIError:
    """`caller`'s 401 and `admit`'s 429 in OpenAI's error shape, with their headers (Retry-After...)."""
    type_, code = _HTTP_ERRORS.get(exc.status_code, ("invalid_request_error", None))
    return OpenAIError(exc.status_code, str(exc.detail), type_, code=code, headers=dict(exc.headers or {}))


def _refused(row: dict[str, Any]) -> OpenAIError | None:
    """A turn that could not run (app/failures.py): someone else's thread (403), or one that failed (500)."""
    return _as_openai(why) if (why := failure_of(row)) is not None else None


def _as_openai(why: Failure) -> OpenAIError:
    """A failure (app/failures.py) in OpenAI's error shape."""
    type_, code = why.openai_type
    return OpenAIError(why.status, why.message, type_, param=THREAD_HEADER if why.status == 403 else None,
                       code=code, headers=why.headers)


@router.get("/v1/models")
async def models(request: Request) -> Response:
    """The desk, as the one model a client can pick (the same credential as a completion)."""
    try:
        await caller(request)
    except HTTPException as exc:
        return _from_http(exc).response()
    return JSONResponse({"object": "list", "data": [{"id": MODEL_ID, "object": "model", "created": 0,
                                                     "owned_by": "helpdesk"}]})


@router.post("/v1/chat/completions")
async def completions(request: Request) -> Response:
    """Answer the last user message for the verified caller, as a completion or a stream of chunks."""
    resources = await resources_of(request)
    ctx = resources.request_context(request.headers.get("accept-language"))
    try:
        who = await caller(request)  # the credential before the body, as /v1/chat
        ask = read_request(await request.body(), ctx.max_question_chars)
        pinned = request.headers.get(THREAD_HEADER)
        if pinned is not None and not _THREAD_ID.fullmatch(pinned):
            raise OpenAIError(400, f"`{THREAD_HEADER}` must be 8-128 letters, digits, '-' or '_'.",
                              param=THREAD_HEADER, code="invalid_value")
        await admit(who, resources, ask.question, ctx.language)
    except HTTPException as exc:
        return _from_http(exc).response()
    except OpenAIError as exc:
        return exc.response()
    try:
        desk = await resources.serving(ask.question, ctx.language)
    except Failure as why:
        return _as_openai(why).response()
    thread = pinned or await find_thread(desk, who.user, ask.history) or new_thread_id()
    events: Events = stream_turn(desk, ask.question, who.user, thread, _context(ctx, ask))
    reply, headers = Reply(), {THREAD_HEADER: thread}
    try:
        first = await anext(events)  # a refusal or a failure comes first and alone: answered with a status
    except BaseException:
        await events.aclose()
        raise
    if first[0] == "final" and (error := _refused(first[1])):
        await events.aclose()
        return error.response()
    if ask.stream:
        return StreamingResponse(_chunks(first, events, reply, ask, who, desk),
                                 media_type="text/event-stream", headers={**_STREAM_HEADERS, **headers})
    sent: list[str] = []
    row: dict[str, Any] = {}
    async with aclosing(events):
        async for kind, data in _from(first, events):
            if kind == "delta":
                sent.append(data)
            elif kind == "final":
                row = data
    if error := _refused(row):
        return error.response()
    answer = "".join(sent)  # what the graph streamed is the answer (graph/nodes.py writes it so)
    await remember(desk, who.user, [*ask.history, ("user", ask.question), ("assistant", answer)], thread)
    return JSONResponse(reply.completion(answer, ask.question, row), headers=headers)


async def _from(first: tuple[str, Any], events: Events) -> AsyncIterator[tuple[str, Any]]:
    """The turn's events from the one already read, through its `final` row."""
    kind, data = first
    yield kind, data
    while kind != "final":
        kind, data = await anext(events)
        yield kind, data


def _context(ctx: Context, ask: Ask) -> Context:
    """The served request's knobs; `max_tokens` can shorten LLM-written answers, never lengthen them."""
    if not ask.max_tokens:
        return ctx
    return replace(ctx, answer_max_tokens=min(ask.max_tokens, ctx.answer_max_tokens))


async def _chunks(first: tuple[str, Any], events: Events, reply: Reply, ask: Ask,
                  who: Identity, desk: Any) -> AsyncIterator[bytes]:
    """The answer as OpenAI streams it: the role, the text as the graph writes it, the finish with the Path
    fields, the usage when asked for, `[DONE]`. The client going away closes this, which stops the turn.
    """
    async with aclosing(events):
        yield reply.chunk({"role": "assistant", "content": ""})
        sent: list[str] = []
        row: dict[str, Any] = {}
        async for kind, data in _from(first, events):
            if kind == "delta":
                sent.append(data)
                yield reply.chunk({"content": data})
            elif kind == "final":
                row = data
    if error := _refused(row):  # failed after the answer began: OpenAI's mid-stream error event
        yield sse(error.body())
        yield sse("[DONE]")
        return
    shown = "".join(sent)  # the answer: the graph writes each answer as it streams it
    await remember(desk, who.user, [*ask.history, ("user", ask.question), ("assistant", shown)], row["thread"])
    yield reply.chunk({}, "stop", helpdesk=path_of(row))
    if ask.include_usage:
        yield reply.usage_chunk(ask.question, shown)
    yield sse("[DONE]")
