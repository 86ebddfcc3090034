from app.bench.items import Item
from app.bench.sessions import interleaved, next_turn_summary


def _tool(name, cache="miss", ms=100.0, ok=True):
    return {"name": name, "args": {}, "cache": cache, "ms": ms, "ok": ok}


def test_next_turn_summary_counts_later_personal_requests_of_each_session():
    rows = [{"session": "p1", "tools": [_tool("salary")], "next_turn": {}},
            {"session": "p1", "tools": [_tool("attendance", cache="next_turn")], "next_turn": {"used": 1, "wasted": 0}},
            {"session": "p2", "tools": [_tool("salary")], "next_turn": {}},
            {"session": "p2", "tools": [_tool("leave_balance")], "next_turn": {"used": 0, "wasted": 1}},
            {"session": "p3", "tools": [], "next_turn": {}}]
    for r in rows[:2]:
        r["kind"] = "session"
    s = next_turn_summary(rows)
    assert s["later_personal_requests"] == 2 and s["served_share"] == 0.5
    assert (s["used"], s["wasted"], s["sessions"]) == (1, 1, 3)
    assert (s["slice_later_personal_requests"], s["slice_served_share"], s["slice_sessions"]) == (1, 1.0, 1)


def test_sessions_are_interleaved_so_a_turn_never_follows_its_own_answer_at_once():
    items = [Item(f"{s}.{t}", s, t, "E1001", f"{s}{t}", "session", ["template"]) for s, n in
             (("a", 3), ("b", 1), ("c", 2)) for t in range(n)]
    assert [i.id for i in interleaved(items)] == ["a.0", "b.0", "c.0", "a.1", "c.1", "a.2"]
    assert [i.id for i in interleaved(items, window=2)] == ["a.0", "b.0", "a.1", "c.0", "a.2", "c.1"]
