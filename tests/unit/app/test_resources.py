"""The process's resources: built once by one factory, on first use; closed and built again; the server says it is
ready only after its warm-up, which seeds next-turn prefetch; the API and the chat read them from the app.
"""

from __future__ import annotations

from contextlib import asynccontextmanager

import pytest

from app import resources as res_mod
from app import shared
from app.settings import get_settings


class FakeDesk:
    """A help desk that counts the seeding of next-turn prefetch."""

    def __init__(self) -> None:
        self.seeded = 0

    async def seed_next_turn(self) -> int:
        self.seeded += 1
        return 3


@pytest.fixture
def opened(monkeypatch):
    """`open_desk` replaced: the desks built and the ones closed, in order."""
    log: dict[str, list] = {"built": [], "closed": [], "fail": []}

    @asynccontextmanager
    async def open_desk(settings, persistent=True):
        if log["fail"]:
            log["fail"].pop()
            raise ConnectionError("redis is down")
        desk = FakeDesk()
        log["built"].append((desk, persistent))
        try:
            yield desk
        finally:
            log["closed"].append(desk)

    monkeypatch.setattr(res_mod, "open_desk", open_desk)
    return log


async def test_the_desk_is_built_once_and_closed_then_built_again(opened):
    resources = res_mod.build_resources(get_settings())
    assert opened["built"] == []  # the factory opens nothing
    first = await resources.get()
    assert await resources.get() is first and len(opened["built"]) == 1
    await resources.close()
    assert opened["closed"] == [first]
    assert await resources.get() is not first


async def test_a_failed_build_is_tried_again_and_studio_has_no_checkpointer(opened):
    opened["fail"].append(True)
    resources = res_mod.build_resources(get_settings(), persistent=False)
    with pytest.raises(ConnectionError):
        await resources.get()
    async with resources:
        await resources.get()
    assert [p for _, p in opened["built"]] == [False] and len(opened["closed"]) == 1


async def test_a_request_while_the_desk_cannot_be_built_gets_a_503_sentence_not_a_stack_trace(opened, caplog):
    from app.failures import Failure

    opened["fail"].append(True)
    resources = res_mod.build_resources(get_settings())
    with pytest.raises(Failure) as refused:
        await resources.serving("¿Cuántos días de vacaciones me quedan?", None)
    assert refused.value.status == 503 and refused.value.headers == {"Retry-After": "30"}
    assert refused.value.message.startswith("El servicio de ayuda no puede responder ahora")
    assert "ConnectionError" in refused.value.message and "redis is down" in caplog.text  # the cause, in the log
    assert isinstance(await resources.serving("When is payday?", None), FakeDesk)  # tried again: built


async def test_warm_up_seeds_next_turn_then_says_ready_once(opened, monkeypatch):
    asked: list[str] = []

    async def nothing(*_args, **_kwargs):
        return None

    async def run_turn(desk, q, user, thread, ctx):
        asked.append(thread)
        return {"error": None}

    class Limit:
        class limiter:  # noqa: N801 - the shape of limits' limiter
            class storage:  # noqa: N801
                check = staticmethod(nothing)

    monkeypatch.setattr(shared, "warm_prefix_cache", nothing)
    monkeypatch.setattr(shared, "warm_gradio", lambda: None)
    monkeypatch.setattr(shared, "run_turn", run_turn)
    resources = res_mod.build_resources(get_settings())
    resources.__dict__["rate_limit"] = Limit()
    assert not resources.ready.is_set()
    await shared.warm(resources)
    desk = await resources.get()
    assert resources.ready.is_set() and desk.seeded == 1
    assert len(asked) == len(shared.WARM_QUESTIONS) and all(t.startswith("warmup-") for t in asked)
    await shared.warm(resources)  # a Ray Serve replica's lifespan after its constructor: nothing twice
    assert desk.seeded == 1 and len(asked) == len(shared.WARM_QUESTIONS)


async def test_a_warm_up_that_fails_still_says_ready(opened):
    opened["fail"].append(True)
    resources = res_mod.build_resources(get_settings())
    await shared.warm(resources)  # the desk could not be built: served cold, and said so in the log
    assert resources.ready.is_set()


def test_healthz_is_ready_only_after_the_warm_up(opened):
    from fastapi.testclient import TestClient

    from app.web import build_app

    resources = res_mod.build_resources(get_settings())
    app = build_app(resources)
    assert app.state.resources is resources  # the API's handlers read them there
    client = TestClient(app)  # no lifespan: the warm-up does not run
    assert client.get("/healthz").status_code == 503
    resources.ready.set()
    assert client.get("/healthz").json() == {"ok": True, "ready": True}
    assert client.post("/v1/chat", json={"q": "When is payday?"}).status_code == 401  # its verifier, no credential
    assert opened["built"] == []  # refused before the desk is asked for


def test_the_server_process_has_one_resources():
    first = shared.process_resources()
    assert isinstance(first, res_mod.Resources)
    assert shared.process_resources() is first  # the warm-up and the app's handlers share one set of clients
