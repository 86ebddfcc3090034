"""Thresholds chosen on the dev split: tool intents pooled, every FAQ entry pooled, other routes alone."""

from app.router_thresholds import Outcome, choose_thresholds, shortcut_stats


def test_tool_intents_share_the_threshold_their_pooled_dev_items_allow():
    results = [
        Outcome("attendance", "attendance", 0.99, 0.9),
        Outcome("attendance", "attendance", 0.98, 0.9),  # attendance alone would stop at 0.98
        Outcome("salary", "salary", 0.70, 0.9),
        Outcome("handbook", "salary", 0.60, 0.9),  # the first wrong tool-intent item, pooled
        Outcome("handbook", "handbook", 0.90, 0.9),
        Outcome("faq:payday", "handbook", 0.80, 0.9),  # handbook's own walk-down stops here
        Outcome("faq:payday", "faq:payday", 0.95, 0.9),
    ]
    th = choose_thresholds(results, 0.0)
    assert th["attendance"] == th["salary"] == 0.70
    assert th["handbook"] == 0.90 and th["faq"] == 0.95
    assert shortcut_stats(results, th, 0.0)["wrong"] == 0


def test_a_family_wrong_at_its_top_confidence_is_never_taken():
    results = [Outcome("other", "free_writing", 0.9, 0.9), Outcome("free_writing", "free_writing", 0.8, 0.9)]
    th = choose_thresholds(results, 0.0)
    assert th["free_writing"] == 1.01
