import asyncio

from app.bench.items import Item
from app.bench.run import load_test


class Runner:
    """Answers each item at once: FAQ items in 10 ms, the rest in 900 ms."""

    def __init__(self):
        self.asked = []
        self.settled = []

    async def run(self, variant, item, settle=True):
        self.asked.append(item.session)
        self.settled.append(settle)
        faq = item.expect_routes == ["faq"]
        return {"route": "faq" if faq else "template", "total_ms": 10.0 if faq else 900.0, "correct": True}


def test_load_test_reports_the_faq_answers_it_served_apart():
    items = [Item(f"s{i}", f"s{i}", 0, "E1001", "q", "session", ["faq" if i % 2 else "template"]) for i in range(4)]
    runner = Runner()
    out = asyncio.run(load_test(runner, "optimized", items, sessions=3, per_session=2))
    assert out["requests"] == 6 and out["errors"] == 0
    assert out["faq_ms"] == [10.0, 10.0, 10.0] and out["faq_route_p95_ms"] == 10.0
    assert {s.split("-")[0] for s in runner.asked} == {"load0", "load1", "load2"}  # conversations kept apart
    assert not any(runner.settled)  # side by side, no request waits for the others to finish


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
