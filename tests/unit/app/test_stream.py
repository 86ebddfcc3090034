"""The stream bridge the chat and the API share: a turn's pieces arrive in order, and leaving stops the turn."""

from __future__ import annotations

import asyncio
from contextlib import aclosing

import pytest

from app import stream
from graph.context import Context


@pytest.fixture
def turn(monkeypatch):
    """A fake `run_turn`: two pieces of answer around a node's update, then it waits until released."""
    state = {"release": asyncio.Event(), "cancelled": asyncio.Event()}

    async def run_turn(graph, question, user, thread, ctx, on_delta=None, on_update=None):
        on_delta("Hello")
        on_update("route_question", {"route": "faq"})
        on_delta(" there.")
        try:
            await state["release"].wait()
        except asyncio.CancelledError:
            state["cancelled"].set()
            raise
        return {"q": question, "user": user, "answer": "Hello there."}

    monkeypatch.setattr(stream, "run_turn", run_turn)
    return state


async def test_events_arrive_in_order_and_end_with_the_row(turn):
    turn["release"].set()
    events = [e async for e in stream.stream_turn(None, "hi", "E1001", None, Context())]
    assert events == [("delta", "Hello"), ("update", ("route_question", {"route": "faq"})), ("delta", " there."),
                      ("final", {"q": "hi", "user": "E1001", "answer": "Hello there."})]


async def test_leaving_the_stream_early_stops_the_turn(turn):
    async with aclosing(stream.stream_turn(None, "hi", "E1001", None, Context())) as events:
        async for kind, _ in events:
            if kind == "update":
                break  # the user went away mid-answer
    await asyncio.wait_for(turn["cancelled"].wait(), 1)  # an event, not a sleep: the turn saw its cancellation
