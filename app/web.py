"""The server: the chat at `/` (sign-in required), the API at `/v1/chat` and its OpenAI-compatible twin at
`/v1/chat/completions` (app/openai_api.py), `/login`, `/healthz`, `/metrics`.

The chat's sign-in form checks the password at the identity provider (the demo backend's
`/auth/login`, or `AUTH_LOGIN_URL`), verifies the token it returns like any bearer token, and keeps it in
an HttpOnly cookie: the session is the signed token itself, so no replica holds login state.
Behind an SSO proxy (`AUTH_TRUSTED_HEADER`) the form is never needed.
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import logging
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import httpx
from fastapi import FastAPI, Form, Request, Response
from fastapi.responses import HTMLResponse, RedirectResponse

from app.api import router as api_router
from app.auth import SESSION_COOKIE, AuthError, Verifier
from app.observability import metrics_text, setup_otel
from app.openai_api import router as openai_router
from app.resources import Resources, preferred_language
from app.settings import get_settings
from app.shared import process_resources, warm
from graph.replies import desk_covers
from tools.i18n import say

log = logging.getLogger(__name__)

_LOGIN_PAGE = """<!doctype html><html lang="{lang}"><head><meta charset="utf-8">
<title>{sign_in} · {title}</title><meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{{font-family:system-ui,sans-serif;max-width:24rem;margin:4rem auto;padding:0 1rem}}
label{{display:block;margin-top:1rem}}input{{width:100%;padding:.5rem;font-size:1rem;box-sizing:border-box}}
button{{margin-top:1.5rem;padding:.6rem 1.2rem;font-size:1rem}}.error{{color:#b00020}}</style></head>
<body><h2>{title}</h2><p>{intro}</p>{error}
<form method="post" action="login"><label>{employee_id} <input name="user" id="user" autocomplete="username"
 required maxlength="64" placeholder="E1001"></label>
<label>{password} <input name="password" id="password" type="password" autocomplete="current-password" required
 maxlength="256"></label><button type="submit" id="sign-in">{sign_in}</button></form></body></html>"""


def login_page(error: str = "", status: int = 200, lang: str = "en") -> HTMLResponse:
    """The sign-in form in the browser's language, with a one-line error (a catalog key) when the last attempt
    failed.
    """
    note = f'<p class="error" id="error">{html.escape(say(error, lang))}</p>' if error else ""
    words = {k: html.escape(say(f"ui_{k}", lang)) for k in ("title", "sign_in", "employee_id", "password")}
    intro = html.escape(say("ui_sign_in_intro", lang, covers=desk_covers(lang)))
    return HTMLResponse(_LOGIN_PAGE.format(error=note, intro=intro, lang=lang, **words), status_code=status,
                        headers={"Cache-Control": "no-store"})


async def session_user(verifier: Verifier, request: Request) -> str | None:
    """The signed-in employee of a chat request, or None."""
    try:
        who = await verifier.identify(request.headers, request.cookies,
                                        request.client.host if request.client else None)
    except AuthError:
        return None
    return who.user


class SignInFirst:
    """The chat page itself sends a visitor without a valid session to the sign-in form. A plain ASGI middleware:
    every other request (an API answer's stream above all) passes straight through, with none of the per-chunk
    cost a `BaseHTTPMiddleware` adds to a streamed response.
    """

    def __init__(self, app: Any, signed_in: Callable[[Request], Awaitable[str | None]]) -> None:
        self.app, self.signed_in = app, signed_in

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        """Answer `GET /` for a visitor without a session; hand everything else on untouched."""
        if (scope["type"] == "http" and scope["method"] == "GET" and scope["path"] == "/"
                and await self.signed_in(Request(scope)) is None):
            await RedirectResponse("login", status_code=303)(scope, receive, send)
            return
        await self.app(scope, receive, send)


def build_app(resources: Resources) -> Any:
    """The FastAPI app with the chat mounted on it, serving with `resources` (kept on `app.state`)."""
    import gradio as gr

    from app.ui import build_ui, translations

    settings = resources.settings

    @contextlib.asynccontextmanager
    async def warming(_: FastAPI) -> AsyncIterator[None]:
        """Warm up while the server starts (/healthz says ready when done): the first question is not cold."""
        task = asyncio.create_task(warm(resources))
        yield
        task.cancel()

    async def signed_in(request: Request) -> str | None:
        """Gradio's auth dependency: the signed-in employee, or None."""
        return await session_user(resources.verifier, request)

    app = FastAPI(title="help desk", lifespan=warming)
    app.state.resources = resources  # the API's handlers read them here (app/api.py:resources_of)
    app.include_router(api_router)
    app.include_router(openai_router)  # /v1/models, /v1/chat/completions for OpenAI clients (app/openai_api.py)

    @app.get("/metrics")
    def metrics() -> Response:
        body, ctype = metrics_text()
        return Response(body, media_type=ctype)

    @app.get("/healthz")
    async def healthz() -> Response:
        ready = resources.ready.is_set()
        return Response(f'{{"ok": {str(ready).lower()}, "ready": {str(ready).lower()}}}',
                        status_code=200 if ready else 503, media_type="application/json")

    def language(request: Request) -> str:
        return preferred_language(request.headers.get("accept-language")) or "en"

    @app.get("/login")
    def login_form(request: Request) -> HTMLResponse:
        return login_page(lang=language(request))

    @app.post("/login")
    async def login(request: Request, user: str = Form("", max_length=64),
                    password: str = Form("", max_length=256)) -> Response:
        limit, peer = resources.login_limit, request.client.host if request.client else "unknown"
        if not (await limit.allow(f"user:{user.strip().upper()}") and await limit.allow(f"addr:{peer}")):
            log.warning("sign-in attempts over the limit for %s from %s", user[:12], peer)
            return login_page("login_too_many", 429, language(request))
        try:
            r = await resources.http_client.post(settings.login_url, json={"user": user, "password": password})
        except httpx.HTTPError:
            log.exception("sign-in service unreachable at %s", settings.login_url)
            return login_page("login_unreachable", 503, language(request))
        if r.status_code != 200:
            return login_page("login_wrong", 401, language(request))
        token = r.json().get("access_token", "")
        try:
            who = resources.verifier.verify(token)
        except AuthError as exc:
            log.error("the sign-in service returned a token that does not verify: %s", exc)
            return login_page("login_failed", 502, language(request))
        log.info("signed in: %s", who[:1] + "…")
        resp = RedirectResponse("./", status_code=303)
        resp.set_cookie(SESSION_COOKIE, token, max_age=int(r.json().get("expires_in", 3600)), httponly=True,
                        samesite="strict", secure=settings.session_cookie_secure, path="/")
        return resp

    @app.get("/logout")
    def logout() -> Response:
        resp = RedirectResponse("login", status_code=303)
        resp.delete_cookie(SESSION_COOKIE, path="/")
        return resp

    app.add_middleware(SignInFirst, signed_in=signed_in)

    return gr.mount_gradio_app(app, build_ui(resources).queue(default_concurrency_limit=16), path="/",
                               auth_dependency=signed_in, i18n=translations())


def serve(host: str | None = None, port: int | None = None) -> None:
    """Serve the chat and the API (blocking)."""
    import uvicorn

    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    setup_otel()
    settings = get_settings()
    uvicorn.run(build_app(process_resources()), host=host or settings.ui_host, port=port or settings.ui_port,
                log_level="warning")
