import asyncio

from app.bench.items import Item


def test_the_optimized_turn_and_its_floor_each_follow_the_same_variants_llm_answer():
    from app.bench.runner import finish, run_item

    class Ordered:
        def __init__(self):
            self.steps = []

        async def run(self, variant, item):
            self.steps.append(f"{variant}:{item.id}")
            return {"variant": variant, "id": item.id}

        async def probe(self, variant, row, item, key="floor_ms"):
            self.steps.append(f"{key}:{item.id}")
            row[key] = 1.0

    items = [Item(f"s{i}", f"s{i}", 0, "E1001", "q", "session", ["faq"]) for i in range(5)]
    runner, rows, earlier = Ordered(), [], None

    async def whole_run():
        nonlocal earlier
        for i, item in enumerate(items):
            done, earlier = await run_item(runner, i, item, earlier)
            rows.extend(done)
        await finish(runner, len(items) - 1, earlier)

    asyncio.run(whole_run())
    steps = runner.steps
    assert [r["variant"] for r in rows] == ["baseline", "optimized", "create_agent", "create_agent", "optimized",
                                             "baseline"] * 2 + ["baseline", "optimized", "create_agent"]
    for item in items:
        turn, matched = steps.index(f"optimized:{item.id}"), steps.index(f"floor_ms:{item.id}")
        before_turn, before_probe = steps[turn - 1].split(":")[0], steps[matched - 1].split(":")[0]
        assert before_turn in ("baseline", "create_agent") and before_probe == before_turn  # the same variant's
        assert steps[turn + 1] == f"floor_warm_ms:{item.id}"  # the warm probe right after its turn
        assert not steps[matched + 1:matched + 2] or not steps[matched + 1].startswith("optimized")  # nor warms one
    assert all(r["floor_ms"] == 1.0 and r["floor_warm_ms"] == 1.0 for r in rows if r["variant"] == "optimized")


def test_the_run_keeps_its_conversations_as_the_app_does_and_leaves_no_file():
    from pathlib import Path

    from app.bench.runner import conversation_store
    from app.sqlite_saver import LoopSqliteSaver

    async def opened() -> Path:
        async with conversation_store() as saver:
            assert isinstance(saver, LoopSqliteSaver)  # the saver the app keeps conversations with
            path = Path(saver.conn.execute("PRAGMA database_list").fetchall()[0][2])
            assert path.exists()
            assert saver.conn.execute("PRAGMA journal_mode").fetchall()[0][0] == "wal"
            return path

    assert not asyncio.run(opened()).parent.exists()
