import math

from app.bench.metrics import faq_precision_recall, has_fact, latency_summary, numbers, percentile, score_row


def test_percentiles_interpolate_like_numpy():
    xs = [10, 20, 30, 40, 50]
    assert percentile(xs, 50) == 30
    assert percentile(xs, 95) == 48
    assert percentile([7], 99) == 7
    assert math.isnan(percentile([], 50))


def test_latency_summary():
    s = latency_summary([100.0, 200.0, 300.0, 400.0])
    assert s["mean_ms"] == 250 and s["p50_ms"] == 250 and s["n"] == 4


def test_numbers_ignore_thousands_separators():
    assert numbers("net pay EUR 1,910.30 and 12 days") == {1910.3, 12.0}


def test_fact_matching_by_value_and_words():
    assert has_fact("Your net pay was EUR 1910.3.", "1,910.30")
    assert not has_fact("Your net pay was EUR 1,910.31.", "1,910.30")
    assert has_fact("You have 15 days of annual leave left", "have 15 days")
    assert has_fact("Use BRIGHTCONNECT off-site", "BrightConnect")
    assert not has_fact("present 19 of 21", "20 of 21")


def test_scoring_needs_facts_no_forbidden_and_the_right_route():
    ok = score_row("Net pay EUR 2,765.23.", "template", ["2,765.23"], ["2,232.11"], ["template"])
    assert ok["correct"]
    leak = score_row("Net pay EUR 2,765.23, colleague 2,232.11", "template", ["2,765.23"], ["2,232.11"], ["template"])
    assert not leak["correct"] and not leak["clean"]
    wrong_route = score_row("The 25th.", "faq", [], [], ["template", "llm"])
    assert wrong_route["route_ok"] is False and not wrong_route["correct"]
    baseline = score_row("The 25th.", None, ["25"], [], ["faq"])  # baselines have no route to check
    assert baseline["route_ok"] is None and baseline["correct"]


def test_faq_precision_and_recall():
    rows = [{"route": "faq", "expect_routes": ["faq"], "correct": True},
            {"route": "faq", "expect_routes": ["template", "llm"], "correct": False},
            {"route": "template", "expect_routes": ["faq"], "correct": True},
            {"route": "llm", "expect_routes": ["llm"], "correct": True}]
    pr = faq_precision_recall(rows)
    assert pr["precision"] == 0.5 and pr["recall"] == 0.5 and pr["shortcuts"] == 2


def test_paired_ratio_interval_separates_a_real_slowdown_from_noise():
    from app.bench.metrics import paired_ratio_ci

    ref = {f"i{k}": 100.0 + 10 * (k % 3) for k in range(12)}
    slower = {k: 2 * v for k, v in ref.items()}
    lo, hi = paired_ratio_ci(ref, slower)
    assert lo > 1.99 and lo <= hi < 2.01  # every pair doubled: a tight interval at 2
    noisy = {k: v * (1.3 if i % 2 else 0.7) for i, (k, v) in enumerate(ref.items())}
    lo, hi = paired_ratio_ci(ref, noisy)
    assert lo < 1.0 < hi  # half faster, half slower: not separated from 1
    assert all(math.isnan(x) for x in paired_ratio_ci({"a": 1.0}, {"a": 2.0}))  # one pair: no interval


def test_garbage_collection_pauses_add_up_from_install():
    import gc

    from app.bench.metrics import GcPauses

    pauses = GcPauses()
    gc.collect()
    assert pauses.total_ms == 0.0  # not installed: nothing counted
    pauses.install()
    pauses.install()
    try:
        junk = [[i] for i in range(200_000)]
        gc.collect()
        once = pauses.total_ms
        gc.collect()
        assert 0.0 < once < pauses.total_ms  # each collection adds its pause, counted once
        del junk
    finally:
        gc.callbacks.remove(pauses._on_gc)
    assert pauses._on_gc not in gc.callbacks


def test_core_waits_count_a_process_that_shares_the_cores_with_busier_ones():
    import os
    import subprocess
    import sys
    import time

    from app.bench.metrics import CoreWaits

    waits = CoreWaits()
    if waits.read() is None:
        import pytest
        pytest.skip("this kernel keeps no per-task schedstat")  # nothing to count with: the bench says "-"
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range((os.cpu_count() or 1) + 1)]
    try:
        loop, watched = waits.read([busy[0].pid])
        deadline = time.monotonic() + 30
        while (now := waits.read([busy[0].pid]))[1] - watched <= 50.0:  # one spinner too many: each waits its turn
            assert time.monotonic() < deadline, "a spinner sharing the cores was never counted as waiting"
            time.sleep(0.05)
        assert now[0] - loop < 50.0  # this thread slept meanwhile: it waited for nothing worth counting
        assert waits.read([2 ** 22 + 7])[1] == 0.0  # a pid that is gone counts as no wait
    finally:
        for p in busy:
            p.kill()
            p.wait()
