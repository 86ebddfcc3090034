"""The process's resources, built by one factory that every entry point shares: the chat and the HTTP API
(app/web.py), the CLI (app/ask.py, through app/turn.py:open_graph), LangGraph Studio (app/studio.py) and each
Ray Serve replica (app/stack/serving.py).

`build_resources(settings)` makes a `Resources`, which builds nothing yet; `get()` builds the help desk (the
graph, its checkpointer, the clients of vLLM, Redis, the tool backend and the encoders) on first use, inside
the event loop that serves it, and `close()` closes them. The token verifier, the rate limits and the HTTP
client for the process's own calls are built on first use too. Everything here holds clients only (the
conversations live in the checkpointer, the counters in Redis), so replicas can run side by side.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from functools import cached_property
from typing import Any

from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from app.auth import Verifier
from app.failures import failure
from app.ratelimit import RateLimit
from app.runtime import build_deps
from app.settings import Settings
from app.sqlite_saver import sqlite_saver as loop_sqlite_saver
from graph.context import Context
from graph.graph import Desk, build_desk
from graph.paths import STATE_TYPES
from tools.i18n import LANGUAGES

log = logging.getLogger(__name__)


class Resources:
    """What one process answers with; `async with` opens it (lazily) and closes it."""

    def __init__(self, settings: Settings, *, persistent: bool = True) -> None:
        self.settings = settings
        self.persistent = persistent  # False: no checkpointer (LangGraph Studio's server brings its own)
        self.ready = asyncio.Event()  # set once a server's warm-up ended (app/shared.py): /healthz says ready then
        self._desk: Desk | None = None
        self._stack: AsyncExitStack | None = None
        self._lock = asyncio.Lock()

    async def get(self) -> Desk:
        """The help desk: the compiled graph and its resources (built on the first call; a failed build is
        tried again on the next one).
        """
        async with self._lock:
            if self._desk is None:
                stack = AsyncExitStack()
                try:
                    self._desk = await stack.enter_async_context(open_desk(self.settings, self.persistent))
                except BaseException:
                    await stack.aclose()
                    raise
                self._stack = stack
            return self._desk

    async def serving(self, question: str, preferred: str | None) -> Desk:
        """The desk for a request. One that cannot be built now (a service down at start, a store not reachable) is
        the asker's `desk_unavailable` failure, a 503 with a sentence in their language, its cause in the log; the
        next request tries the build again.
        """
        try:
            return await self.get()
        except Exception as exc:
            log.exception("the help desk could not be built")
            raise failure("desk_unavailable", question, preferred, retry_after=30, kind=type(exc).__name__) from exc

    async def close(self) -> None:
        """Close the checkpointer and the clients (a later `get()` builds them again)."""
        async with self._lock:
            stack, self._stack, self._desk = self._stack, None, None
            if stack is not None:
                await stack.aclose()
            if "http_client" in self.__dict__:
                await self.__dict__.pop("http_client").aclose()

    async def __aenter__(self) -> Resources:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def request_context(self, accept_language: str | None = None) -> Context:
        """The knobs of a served request: the defaults, who writes drafts (settings: LLM_DRAFTS), and the language
        the caller's browser or client prefers (its Accept-Language header), for questions too short to tell.
        """
        return Context(llm_drafts=self.settings.llm_drafts, language=preferred_language(accept_language))

    @cached_property
    def verifier(self) -> Verifier:
        """The token verifier (its JWKS cache is per process; keys are public)."""
        return Verifier(self.settings)

    @cached_property
    def rate_limit(self) -> RateLimit:
        """The per-identity limit, counted in Redis."""
        return RateLimit(self.settings)

    @cached_property
    def login_limit(self) -> RateLimit:
        """Sign-in attempts, per employee id and per client address (password guessing)."""
        return RateLimit(self.settings, self.settings.login_rate_limit, scope="helpdesk-login-limit")

    @cached_property
    def http_client(self) -> Any:
        """One HTTP client for the process's own calls (the sign-in service, the chat's signed-in line): a new
        client builds a TLS context each time, ~70 ms of one core, which every sign-in and page load paid.
        """
        import httpx

        return httpx.AsyncClient(timeout=10)


def build_resources(settings: Settings, *, persistent: bool = True) -> Resources:
    """The one factory of a process's resources (nothing is opened until `get()`)."""
    return Resources(settings, persistent=persistent)


@asynccontextmanager
async def open_desk(settings: Settings, persistent: bool = True) -> AsyncIterator[Desk]:
    """The help desk built from the settings (with its conversation store unless `persistent` is False), and
    its clients closed afterwards.
    """
    deps = await build_deps(settings)
    try:
        if not persistent:
            yield build_desk(deps, checkpointer=None)
            return
        # Off the event loop: LangGraph's dev server (Studio) fails a run on any blocking call in it.
        await asyncio.to_thread(settings.run_dir.mkdir, parents=True, exist_ok=True)  # SQLite's folder
        async with checkpointer(settings) as saver:  # its tables made
            yield build_desk(deps, checkpointer=saver)
    finally:
        await deps.aclose()


def checkpointer(settings: Settings) -> Any:
    """The conversation store: LangGraph's SQLite saver under run_dir by default, its Postgres saver when
    DATABASE_URL says so.
    """
    url = settings.database_url or ""
    if url.startswith(("postgres://", "postgresql://")):
        try:
            from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
        except ImportError as exc:
            raise SystemExit("DATABASE_URL points at Postgres: install the extra with "
                             "`.venv/bin/pip install -e '.[postgres]'`") from exc
        return _postgres_saver(AsyncPostgresSaver, url)
    return sqlite_saver(url.removeprefix("sqlite:///") or str(settings.checkpoint_db))


def serializer() -> JsonPlusSerializer:
    """LangGraph's serializer with the state's own types (the router's Decision) named: read back as they were
    written, and nothing else outside LangGraph's safe list (its default allows any type, with an "unregistered
    type" warning; `with_allowlist` cannot narrow that default).
    """
    return JsonPlusSerializer(allowed_msgpack_modules=STATE_TYPES)


def sqlite_saver(path: str) -> AbstractAsyncContextManager[Any]:
    """LangGraph's SQLite checkpointer on a file, a turn's read and write run inline (app/sqlite_saver.py)."""
    return loop_sqlite_saver(path, serializer())


@asynccontextmanager
async def _postgres_saver(saver_cls: Any, url: str) -> AsyncIterator[Any]:
    """A Postgres checkpointer on a connection pool: concurrent turns do not queue on one connection, and a
    connection that died with a Postgres restart is checked and replaced before a turn gets it.
    """
    from psycopg.rows import dict_row
    from psycopg_pool import AsyncConnectionPool

    async with AsyncConnectionPool(url, min_size=1, max_size=8, open=False, check=AsyncConnectionPool.check_connection,
                                   kwargs={"autocommit": True, "prepare_threshold": 0,
                                           "row_factory": dict_row}) as pool:
        saver = saver_cls(pool, serde=serializer())
        await saver.setup()
        yield saver


def preferred_language(accept_language: str | None) -> str | None:
    """The first language of an Accept-Language header ("de-AT,de;q=0.9,en;q=0.8") that the desk speaks."""
    for tag in (accept_language or "").split(","):
        code = tag.split(";")[0].strip().split("-")[0].lower()
        if code in LANGUAGES:
            return code
    return None
