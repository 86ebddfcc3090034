
from tools.cache import cache_key, exact_args, scope_of
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
