"""One turn as a stream of events, for the chat (app/ui.py) and the HTTP API (app/api.py).

`run_turn` reports through callbacks; a server wants something to iterate while the turn runs. The turn runs
as a task whose callbacks feed a queue, and the queue is read here: `("delta", text)` for each piece of the
answer, `("update", (node, update))` for each node's state update, then `("final", row)`, the row `ask --json`
prints. Leaving the stream early (the user closed the page, the client went away) cancels the task, which
closes the LLM request (vLLM aborts it) and the tool calls nobody waits for. Use it under
`contextlib.aclosing`, so that leaving is noticed at once and not when the generator is collected.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from typing import Any, Literal

from app.turn import run_turn
from graph.context import Context
from graph.graph import Desk

EventKind = Literal["delta", "update", "final"]
_DONE = object()


async def stream_turn(desk: Desk, question: str, user: str, thread: str | None,
                      ctx: Context) -> AsyncGenerator[tuple[EventKind, Any], None]:
    """The events of one turn as they happen; an exception of the turn is raised after its last event."""
    events: asyncio.Queue[tuple[Any, Any]] = asyncio.Queue()

    async def turn() -> None:
        try:
            row = await run_turn(desk, question, user, thread, ctx,
                                 on_delta=lambda text: events.put_nowait(("delta", text)),
                                 on_update=lambda node, update: events.put_nowait(("update", (node, update))))
            events.put_nowait(("final", row))
        finally:
            events.put_nowait((_DONE, None))

    task = asyncio.create_task(turn())
    try:
        while True:
            kind, payload = await events.get()
            if kind is _DONE:
                break
            yield kind, payload
        await task
    finally:  # left early: stop the turn
        task.cancel()
