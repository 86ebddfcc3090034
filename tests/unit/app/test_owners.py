"""Who a conversation belongs to: the Redis record answers, the checkpoint stays the authority."""

from __future__ import annotations

from types import SimpleNamespace

import fakeredis
import pytest
from redis.exceptions import ConnectionError as RedisConnectionError

from app import owners


class Graph:
    """A graph whose checkpointer holds the threads in `started` (thread -> user); counts its reads."""

    def __init__(self, started: dict[str, str] | None = None) -> None:
        self.started = started or {}
        self.reads = 0

    async def aget_state(self, config):
        self.reads += 1
        user = self.started.get(config["configurable"]["thread_id"])
        return SimpleNamespace(values={"user": user} if user else {})


class DownRedis:
    async def get(self, key):
        raise RedisConnectionError("down")

    async def set(self, *a, **kw):
        raise RedisConnectionError("down")


@pytest.fixture
def redis():
    return fakeredis.FakeAsyncRedis()


async def test_a_new_thread_is_claimed_by_its_first_caller_and_refused_to_the_next(redis):
    graph = Graph()
    assert await owners.owner_of(graph, redis, "t1", "E1001") == "E1001"
    assert await owners.owner_of(graph, redis, "t1", "E1002") == "E1001"
    assert await owners.owner_of(graph, redis, "t1", "E1001") == "E1001"
    assert graph.reads == 1, "once recorded, the checkpoint is not read again"


async def test_a_thread_without_a_record_is_looked_up_in_its_checkpoint_and_recorded(redis):
    graph = Graph({"old": "E1001"})
    assert await owners.owner_of(graph, redis, "old", "E1002") == "E1001"
    assert await owners.owner_of(graph, redis, "old", "E1002") == "E1001" and graph.reads == 1
    assert await owners.owner_of(graph, redis, "old", "E1001") == "E1001"


async def test_of_two_first_turns_at_once_only_one_starts_the_thread(redis):
    assert await owners.claim(redis, "t2", "E1001") == "E1001"
    assert await owners.claim(redis, "t2", "E1002") == "E1001"


async def test_without_redis_the_checkpoint_decides():
    graph = Graph({"t3": "E1001"})
    assert await owners.owner_of(graph, DownRedis(), "t3", "E1002") == "E1001"
    assert await owners.owner_of(graph, DownRedis(), "new", "E1002") is None
    assert await owners.owner_of(graph, None, "t3", "E1001") == "E1001" and graph.reads == 3
