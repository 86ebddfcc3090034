from fakeredis import FakeAsyncRedis, FakeServer

from tools.cache import ToolCache, cache_key, exact_args, scope_of
from tools.registry import TOOLS, USER


def test_personal_results_are_scoped_to_the_caller():
    salary = TOOLS["salary"]
    args = {"employee": "E1001", "month": "2026-10"}
    assert scope_of(salary, "E1001") == "u:E1001"
    assert cache_key(salary, args, "E1001") != cache_key(salary, args, "E1002")


def test_shared_results_are_shared():
    weather = TOOLS["weather"]
    args = {"city": "Paris", "date": "2026-11-30"}
    assert cache_key(weather, args, "E1001") == cache_key(weather, args, "E1002")


def test_structured_arguments_match_exactly_after_normalizing():
    weather = TOOLS["weather"]
    assert cache_key(weather, {"city": "Paris", "date": "2026-11-30"}, "u") == \
        cache_key(weather, {"date": "2026-11-30", "city": " paris "}, "u")
    assert cache_key(weather, {"city": "Paris", "date": "2026-11-30"}, "u") != \
        cache_key(weather, {"city": "Paris", "date": "2026-12-01"}, "u")


def test_free_text_argument_is_left_to_similarity():
    kb = TOOLS["kb_search"]
    assert exact_args(kb, {"query": "hotel limit"}) == {}
    assert cache_key(kb, {"query": "hotel limit"}, "u") == cache_key(kb, {"query": "something else"}, "u")


def test_every_tool_has_a_lifetime_and_personal_tools_are_those_called_with_the_callers_id():
    assert all(spec.ttl_s > 0 for spec in TOOLS.values())
    assert {n for n, s in TOOLS.items() if s.personal} == {n for n, s in TOOLS.items() if USER in s.slot_args.values()}
    assert {n for n, s in TOOLS.items() if s.personal} >= {"salary", "leave_balance"}
    assert TOOLS["weather"].ttl_s < TOOLS["leave_policy"].ttl_s


async def test_a_look_ahead_returns_what_is_held_counts_nothing_and_steps_aside_without_redis():
    redis = FakeAsyncRedis()
    cache = ToolCache(redis, namespace="ns:")
    salary, weather = TOOLS["salary"], TOOLS["weather"]
    october = {"employee": "E1001", "month": "2026-10"}
    await cache.put(salary, october, "E1001", {"net": 1.0})
    held = cache.key_of(salary, october, "E1001")
    absent = cache.key_of(weather, {"city": "Paris", "date": "2026-11-30"}, "E1001")
    assert held.startswith("ns:") and await cache.peek([held, absent]) == {held: {"net": 1.0}}
    assert await cache.stats() == {}  # a look ahead decides nothing: no hit or miss is counted
    assert await cache.peek([]) == {}
    server = FakeServer()
    server.connected = False  # Redis is down
    assert await ToolCache(FakeAsyncRedis(server=server)).peek([held]) == {}


async def test_a_note_lives_beside_the_entry_for_exactly_that_text():
    import numpy as np

    cache = ToolCache(FakeAsyncRedis(server=FakeServer()))
    kb = TOOLS["kb_search"]
    args = {"query": "Hotel limit in Paris?"}
    await cache.put(kb, args, "E1001", {"passages": []}, np.ones(4, np.float32) / 2)  # its vector set: a fake's gap
    assert cache.entry_of(kb, {"query": " hotel limit in paris? "}, "E1002") == cache.entry_of(kb, args, "E1001")
    await cache.annotate(kb, args, "E1001", {"answer": "EUR 150"})
    held = await cache.peek([cache.entry_of(kb, args, "E1001"), cache.note_of(kb, args, "E1001")])
    assert list(held.values()) == [{"passages": []}, {"answer": "EUR 150"}]
    assert cache.note_of(kb, {"query": "Hotel limit in Rome?"}, "E1001") != cache.note_of(kb, args, "E1001")
