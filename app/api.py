"""The HTTP API: `POST /v1/chat`, the caller named by a verified credential, the answer streamed as SSE.

Request body: `{"q": "...", "thread": "..."}` (thread optional: a new, unguessable one is made). Any
`user` field is ignored: who is asking comes from the bearer token (or the trusted proxy header, or the
chat's session cookie), see `app/auth.py`. Events:

- `step`: a node finished (`{"node", "ms", "route"?}`);
- `delta`: a piece of the answer (`{"text"}`);
- `error`: the turn could not run (someone else's conversation, it failed): `{"kind", "status", "message"}`,
  the message in the asker's language (app/failures.py), before the `final` event;
- `final`: the row `ask --json` prints (answer, route, tools, timings, thread).

401 with a one-line reason when the credential is missing or bad; 429 "slow down" over the rate limit (in the
question's language, with Retry-After).
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from contextlib import aclosing
from typing import Annotated, Any

from fastapi import APIRouter, Depends, HTTPException, Request
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, Field

from app.auth import AuthError, Identity
from app.failures import Failure
from app.resources import Resources
from app.runtime import reload_company
from app.stream import stream_turn
from tools.company import CompanyError

log = logging.getLogger(__name__)
router = APIRouter()


class ChatRequest(BaseModel):
    """One question; the thread continues a conversation the caller started."""

    q: str = Field(..., min_length=1, max_length=4000)
    thread: str | None = Field(None, min_length=8, max_length=128, pattern=r"^[A-Za-z0-9_\-]+$")


async def resources_of(request: Request) -> Resources:
    """The server's resources (app/web.py:build_app keeps them on `app.state`). A coroutine: FastAPI runs a plain
    function dependency on its thread pool, a hand-off per request for one attribute read.
    """
    return request.app.state.resources


async def caller(request: Request) -> Identity:
    """The verified identity of a request, or a 401 whose detail is the reason."""
    verifier = (await resources_of(request)).verifier
    try:
        return await verifier.identify(request.headers, request.cookies,
                                       request.client.host if request.client else None)
    except AuthError as exc:
        log.info("401 on %s: %s", request.url.path, exc)
        raise HTTPException(401, str(exc), headers={"WWW-Authenticate": f'Bearer error="invalid_token", '
                                                                        f'error_description="{exc}"'}) from exc


async def admit(who: Identity, resources: Resources, question: str, preferred: str | None) -> None:
    """Count the request against the caller's limit; 429 beyond it, said in the question's language."""
    if refused := await resources.rate_limit.refuse(who.user, question, preferred):
        raise HTTPException(refused.status, refused.message, headers=refused.headers)


def _sse(event: str, data: dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode()


def _step(node: str, update: dict[str, Any]) -> dict[str, Any]:
    """A `step` event: the node, its duration, and the route once the router has chosen it."""
    step: dict[str, Any] = {"node": node, "ms": round((update.get("timings_ms") or {}).get(node, 0.0), 1)}
    if update.get("route"):
        step["route"] = update["route"]
    return step


@router.post("/v1/chat")
async def chat(body: ChatRequest, who: Annotated[Identity, Depends(caller)],
               resources: Annotated[Resources, Depends(resources_of)], request: Request) -> StreamingResponse:
    """Answer one question for the verified caller, streamed (the credential is checked before the body)."""
    ctx = resources.request_context(request.headers.get("accept-language"))
    await admit(who, resources, body.q, ctx.language)
    try:
        desk = await resources.serving(body.q, ctx.language)
    except Failure as why:
        raise HTTPException(why.status, why.message, headers=why.headers) from why

    async def stream() -> AsyncIterator[bytes]:
        # The client going away closes this stream, which stops the turn (vLLM aborts the request).
        async with aclosing(stream_turn(desk, body.q, who.user, body.thread, ctx)) as events:
            async for kind, data in events:
                if kind == "delta":
                    yield _sse("delta", {"text": data})
                elif kind == "update":
                    yield _sse("step", _step(*data))
                else:
                    if data.get("failure"):  # the turn could not run (app/failures.py)
                        yield _sse("error", data["failure"])
                    yield _sse("final", data)

    return StreamingResponse(stream(), media_type="text/event-stream",
                             headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})


@router.post("/v1/admin/company/reload")
async def reload_company_folder(who: Annotated[Identity, Depends(caller)],
                                resources: Annotated[Resources, Depends(resources_of)]) -> dict[str, Any]:
    """Serve the company's folder as it is now, without a restart (`app/runtime.py:reload_company`): for the
    employees `ADMIN_EMPLOYEES` names (403 for anyone else), 422 naming every problem of a folder that cannot be
    served (the running one stays).
    """
    admins = {u.strip().upper() for u in resources.settings.admin_employees.split(",") if u.strip()}
    if who.user.upper() not in admins:
        raise HTTPException(403, "reloading the company's folder is for the employees ADMIN_EMPLOYEES names")
    desk = await resources.get()
    try:
        return await reload_company(desk.deps, resources.settings)
    except CompanyError as exc:
        raise HTTPException(422, str(exc)) from exc
