import asyncio

from app.bench.items import Item
from app.bench.run import load_test


class Runner:
    """Answers each item at once: FAQ items in 10 ms, the rest in 900 ms."""

    def __init__(self):
        self.asked = []

    async def run(self, variant, item):
        self.asked.append(item.session)
        faq = item.expect_routes == ["faq"]
        return {"route": "faq" if faq else "template", "total_ms": 10.0 if faq else 900.0, "correct": True}


def test_load_test_reports_the_faq_answers_it_served_apart():
    items = [Item(f"s{i}", f"s{i}", 0, "E1001", "q", "session", ["faq" if i % 2 else "template"]) for i in range(4)]
    runner = Runner()
    out = asyncio.run(load_test(runner, "optimized", items, sessions=3, per_session=2))
    assert out["requests"] == 6 and out["errors"] == 0
    assert out["faq_ms"] == [10.0, 10.0, 10.0] and out["faq_route_p95_ms"] == 10.0
    assert {s.split("-")[0] for s in runner.asked} == {"load0", "load1", "load2"}  # conversations kept apart


def test_the_speculation_ablation_reports_an_interval_paired_with_the_reference(monkeypatch):
    from app.bench import run as bench_run
    from app.settings import Settings

    started = []
    monkeypatch.setattr(bench_run.services, "stop", lambda settings, name: None)
    monkeypatch.setattr(bench_run.services, "start_vllm", lambda settings: started.append(settings.vllm_speculative))

    class Slower:
        async def run(self, variant, item):
            return {"id": item.id, "route": "template", "total_ms": 2.0 * float(item.id[1:]), "correct": True,
                    "llm_calls": 0, "ttft_ms": None}

    items = [Item(f"s{i}", f"s{i}", 0, "E1001", "q", "session", ["template"]) for i in range(1, 7)]
    ref_by_item = {f"0:s{i}": float(i) for i in range(1, 7)} | {f"1:s{i}": 100.0 for i in range(1, 7)}
    ref = {"mean_ms": 3.5}
    out = asyncio.run(bench_run.speculative_ablation(Settings(), Slower(), items, ref, ref_by_item))
    assert started == [False, True]  # without speculation for the pass, then back as it was
    assert out["slowdown"] == 2.0
    assert out["slowdown_ci95"] == [2.0, 2.0]  # paired with the reference's first round only


def test_the_optimized_turn_and_its_floor_each_follow_the_same_variants_llm_answer():
    from app.bench.run import finish, run_item

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

    from app.bench.run import conversation_store
    from app.checkpoints import SqliteSaver

    async def opened() -> Path:
        async with conversation_store() as saver:
            assert isinstance(saver, SqliteSaver) and saver.reader is not None  # read on the loop's thread
            await saver.setup()
            path = Path(saver.reader.execute("PRAGMA database_list").fetchall()[0][2])
            assert path.exists() and saver.reader.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
            return path

    assert not asyncio.run(opened()).parent.exists()
