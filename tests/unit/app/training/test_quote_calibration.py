"""The handbook quote's threshold: the same walk-down under a 1% wrong-quote limit as the router's."""

from app.training.quote_calibration import Quoted, choose_threshold, stats


def row(score, doc, docs=("a",), split="dev"):
    return Quoted(q=f"q{score}", split=split, docs=list(docs), score=score, doc=doc)


def test_threshold_stops_before_wrong_quotes_pile_up():
    rows = [row(0.9, "a"), row(0.8, "a"), row(0.7, "b"), row(0.6, "a")]  # one wrong of three is 33%
    assert choose_threshold(rows) == 0.8


def test_one_wrong_in_a_hundred_is_allowed_and_the_threshold_ends_on_a_right_quote():
    rows = [row(1 - i / 1000, "a") for i in range(99)] + [row(0.5, "b"), row(0.49, "a"), row(0.48, "b")]
    # 1 wrong of 101 at 0.49 is under 1%; the wrong one below it is never the threshold
    assert choose_threshold(rows) == 0.49


def test_nothing_quotable_never_counts_and_a_silent_handbook_makes_any_quote_wrong():
    rows = [row(-1.0, None, docs=()), row(0.7, "a", docs=())]
    assert choose_threshold(rows) == 1.01
    s = stats(rows, 0.5)
    assert s["quoted"] == 1 and s["wrong"] == 1 and s["answerable"] == 0
    assert s["wrong_examples"][0]["answers"] == []


def test_stats_count_coverage_over_every_item():
    rows = [row(0.9, "a"), row(0.6, "a"), row(0.4, "a")]
    s = stats(rows, 0.55)
    assert s["quoted"] == 2 and s["coverage"] == round(2 / 3, 4) and s["answerable_quoted_right"] == 2
    assert s["wrong"] == 0 and 0 < s["wrong_rate_upper95"] < 1


def test_every_handbook_question_of_the_splits_has_its_documents_labelled():
    from app.training.quote_calibration import KB_DIR, labelled

    items = labelled()  # raises on a handbook item the gold file lacks
    stems = {p.stem for p in KB_DIR.glob("*.md")}
    assert {d for _, _, docs in items for d in docs} <= stems
    assert {split for _, split, docs in items if docs} == {"train", "dev", "test"}
