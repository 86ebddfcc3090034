"""Thresholds chosen on the dev split: tool intents pooled, every FAQ entry pooled, other routes alone."""

from app.training.router_thresholds import Outcome, choose_floor_and_thresholds, choose_thresholds, shortcut_stats


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
    assert shortcut_stats(results, th, {})["wrong"] == 0


def test_a_family_wrong_at_its_top_confidence_is_never_taken():
    results = [Outcome("other", "free_writing", 0.9, 0.9), Outcome("free_writing", "free_writing", 0.8, 0.9)]
    th = choose_thresholds(results, 0.0)
    assert th["free_writing"] == 1.01


def test_a_rate_budget_lets_a_rare_wrong_item_in_only_behind_enough_right_ones():
    from app.training.router_thresholds import FAMILY_WRONG_RATE

    right = [Outcome("other", "other", 0.99 - i * 0.0001, 0.9) for i in range(300)]
    results = [Outcome("salary", "other", 0.995, 0.9), *right]  # the most confident one is wrong
    assert choose_thresholds(results, 0.0)["other"] == 1.01  # no budget: never taken
    assert choose_thresholds(results, 0.0, FAMILY_WRONG_RATE)["other"] == round(right[-1].confidence, 4)


def test_an_item_with_two_right_labels_is_right_with_either():
    assert Outcome("weather", "weather_clothing", 0.9, 0.9, ("weather_clothing",)).right
    assert not Outcome("weather", "salary", 0.9, 0.9, ("weather_clothing",)).right


def test_temperature_scaling_tempers_an_over_sure_model_and_ece_shows_it():
    import numpy as np

    from app.training.router_thresholds import expected_calibration_error, fit_temperature

    rng = np.random.default_rng(0)
    gold = rng.integers(0, 3, 400)
    logits = rng.normal(0, 1, (400, 3))
    logits[np.arange(400), gold] += 1.0  # right about 60% of the time ...
    logits *= 8  # ... but sure of itself
    t = fit_temperature(logits, gold)
    assert t > 2

    def conf(z):
        p = np.exp(z - z.max(1, keepdims=True))
        return (p / p.sum(1, keepdims=True)).max(1)

    right = list(logits.argmax(1) == gold)
    assert expected_calibration_error(list(conf(logits / t)), right) < expected_calibration_error(list(conf(logits)),
                                                                                                  right)


def test_each_family_gets_the_support_floor_that_keeps_its_own_far_off_queries_out():
    # Tool intents: right ones sit near their training examples, a public query read as a payslip does not;
    # the handbook's right paraphrases sit far from theirs, so one floor for both would cost the handbook.
    dev = [*(Outcome("salary", "salary", 0.95 - i * 0.001, 0.9) for i in range(20)),
           *(Outcome("handbook", "handbook", 0.9 - i * 0.001, 0.45) for i in range(20))]
    val = [Outcome("other", "salary", 0.97, 0.65), Outcome("other", "salary", 0.96, 0.62),
           Outcome("other", "salary", 0.955, 0.7), Outcome("other", "salary", 0.951, 0.61),
           *(Outcome("salary", "salary", 0.94 - i * 0.001, 0.88) for i in range(10))]
    floors, th, stats = choose_floor_and_thresholds(dev, val)
    assert floors["salary"] > 0.7 and floors["handbook"] <= 0.4
    assert stats["dev"]["coverage"] >= 0.95 and stats["val"]["wrong"] == 0 and stats["val"]["shortcuts"] >= 9


def test_a_router_that_reads_only_dev_like_questions_gets_the_floor_that_serves_them():
    # The other languages' router: most of its dev questions sit 0.6-0.7 from their training examples, the English
    # val questions (which it never reads) nearer. Counted on val too, the floor that suits val wins; counted on dev
    # alone, the lower one, with val's far-off wrong reads still holding the threshold over all but the few allowed.
    dev = [*(Outcome("faq:payday", "faq:payday", 0.9999, 0.62 + i * 0.005) for i in range(10)),
           *(Outcome("faq:payday", "faq:payday", 0.98, 0.85) for _ in range(5))]
    val = [*(Outcome("faq:payday", "faq:payday", 0.985 - i * 0.001, 0.8) for i in range(20)),
           *(Outcome("other", "faq:payday", 0.9994 - i * 0.0001, 0.61) for i in range(5))]
    pooled, _, _ = choose_floor_and_thresholds(dev, val)
    floors, th, stats = choose_floor_and_thresholds(dev, val, count_val=False)
    assert pooled["faq"] >= 0.7 and floors["faq"] == 0.6
    assert stats["dev"]["shortcuts"] == 10 and stats["dev"]["wrong"] == 0 and stats["val"]["wrong"] <= 3
    assert th["faq"] > 0.999


def test_a_first_reader_takes_what_the_reader_after_it_would_not():
    # Near their training examples and read with middling confidence: only this reader would take these five.
    # Far off and read with near certainty: ten the reader after it takes right anyway. Counted alone, this
    # reader would choose the ten (the low floor); in turn with the next reader, the five it adds.
    mine = [Outcome("salary", "salary", 0.7, 0.9) for _ in range(5)]
    theirs = [Outcome("salary", "salary", 0.999, 0.55) for _ in range(10)]
    wrong = [Outcome("other", "salary", 0.75, 0.55) for _ in range(2)]
    dev = [*mine, *theirs, *wrong]
    alone, _, _ = choose_floor_and_thresholds(dev, [], count_val=False)
    floors, th, stats = choose_floor_and_thresholds(dev, [], count_val=False, covered=[False] * 5 + [True] * 10 +
                                                    [False] * 2)
    assert alone["salary"] <= 0.5 and floors["salary"] >= 0.6
    assert th["salary"] <= 0.7 and stats["dev"]["shortcuts"] == 5 and stats["dev"]["wrong"] == 0
