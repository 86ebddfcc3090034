"""Quoting handbook sentences: which sentences `extract` picks, in what order, and when it declines."""

import numpy as np
import pytest

from graph.extract import LEXICAL_WEIGHT, extract, sentences
from tools.text import idf_overlaps

# Content words that appear in none of the sentences below, so only the dense scores decide.
QUESTION = "Reimbursement rules?"


def vectors(scores: list[float]) -> tuple[np.ndarray, np.ndarray]:
    """A unit question vector and unit sentence vectors whose dot products with it are exactly `scores`."""
    n = len(scores)
    q = np.zeros(n + 1, dtype=np.float32)
    q[0] = 1.0
    rows = np.zeros((n, n + 1), dtype=np.float32)
    for i, s in enumerate(scores):
        rows[i, 0] = s
        rows[i, i + 1] = np.sqrt(1.0 - s * s)
    return q, rows


def run(pairs, scores, threshold=0.55, **kw):
    assert idf_overlaps(QUESTION, [p[1] for p in pairs]) == [0.0] * len(pairs)  # no lexical bonus anywhere
    q, rows = vectors(scores)
    return extract(QUESTION, q, rows, pairs, threshold, **kw)


EXPENSES = [("Expenses", "Keep every receipt for six months."),
            ("Expenses", "Claims are submitted in MyHR by the fifth of the month."),
            ("Expenses", "Late claims are paid with the following payroll."),
            ("Expenses", "Taxis are covered only after ten in the evening.")]


def test_no_sentences_means_no_quote():
    q, _ = vectors([0.9])
    assert extract(QUESTION, q, np.zeros((0, 2), dtype=np.float32), [], 0.55) == (None, 0.0)


def test_best_sentence_below_the_threshold_is_not_quoted_and_its_score_is_reported():
    answer, score = run(EXPENSES, [0.2, 0.5, 0.3, 0.1], threshold=0.55)
    assert answer is None
    assert score == pytest.approx(0.5)


def test_a_score_exactly_at_the_threshold_is_quoted():
    answer, score = run(EXPENSES, [0.1, 0.5, 0.1, 0.1], threshold=0.5)
    assert answer == 'Claims are submitted in MyHR by the fifth of the month. (from "Expenses")'
    assert score == pytest.approx(0.5)


def test_two_close_sentences_are_quoted_in_document_order_with_the_title():
    # The best is the third sentence, the runner-up the first: the quote reads in the handbook's order.
    answer, score = run(EXPENSES, [0.78, 0.2, 0.8, 0.1])
    assert answer == ('Keep every receipt for six months. Late claims are paid with the following payroll. '
                      '(from "Expenses")')
    assert score == pytest.approx(0.8)


def test_runner_up_far_below_the_best_is_left_out():
    answer, _ = run(EXPENSES, [0.7, 0.2, 0.8, 0.1])  # 0.1 below the best: not close enough to add
    assert answer == 'Late claims are paid with the following payroll. (from "Expenses")'


def test_k_limits_how_many_sentences_are_quoted():
    answer, _ = run(EXPENSES, [0.8, 0.79, 0.78, 0.1], k=1)
    assert answer == 'Keep every receipt for six months. (from "Expenses")'


def test_a_close_sentence_from_another_document_is_never_mixed_in():
    pairs = [("Expenses", "Claims are submitted in MyHR by the fifth of the month."),
             ("Travel", "Book trains through the travel desk two weeks ahead.")]
    answer, _ = run(pairs, [0.79, 0.8])
    assert answer == 'Book trains through the travel desk two weeks ahead. (from "Travel")'
    assert "Expenses" not in answer and "MyHR" not in answer


def test_a_lead_in_brings_the_list_that_follows_it_but_not_the_next_document():
    pairs = [("Leave", "Annual leave is booked in MyHR."),
             ("Leave", "You may carry over unused leave when:"),
             ("Leave", "your manager cancelled your leave for business reasons."),
             ("Leave", "you were on sick leave for most of December."),
             ("Other", "The canteen closes early on Fridays in summer.")]
    answer, _ = run(pairs, [0.1, 0.8, 0.2, 0.2, 0.2])
    assert answer == ('You may carry over unused leave when: your manager cancelled your leave for business reasons. '
                      'you were on sick leave for most of December. (from "Leave")')


def test_a_lead_in_brings_at_most_three_following_sentences():
    pairs = [("Docs", "Bring the following documents on your first day:")] + [
        ("Docs", f"item number {n} of the list.") for n in range(1, 6)]
    answer, _ = run(pairs, [0.9, 0.1, 0.1, 0.1, 0.1, 0.1])
    assert "item number 3" in answer and "item number 4" not in answer


def test_a_short_section_is_quoted_whole_with_its_heading_said_once():
    pairs = sentences([{"title": "Annual leave", "text": (
        "This page explains your annual leave and the main rules.\n## Requesting leave\n"
        "- Request leave in MyHR at least 2 weeks ahead.\n- For requests of 2 days or fewer, 1 week ahead is enough.\n"
        "## Peak season\n- Store staff cannot take leave from 15 November to 31 December.\n")}])
    answer, _ = run(pairs, [0.1, 0.6, 0.8, 0.3])  # the exception is closest; the rule it qualifies comes too
    assert answer == ('Requesting leave: Request leave in MyHR at least 2 weeks ahead. For requests of 2 days or '
                      'fewer, 1 week ahead is enough. (from "Annual leave")')
    long_section = [("T", f"Rules: rule number {n} applies here.", "Rules") for n in range(4)]
    assert run(long_section, [0.8, 0.1, 0.1, 0.1])[0] == 'Rules: rule number 0 applies here. (from "T")'


def test_in_a_long_section_the_best_sentence_comes_with_the_rule_before_it_not_the_page_intro():
    pairs = sentences([{"title": "Annual leave", "text": (
        "This page explains your annual leave and the main rules.\n## Requesting leave\n"
        "- Request leave in MyHR at least 2 weeks ahead.\n- For requests of 2 days or fewer, 1 week ahead is enough.\n"
        "- Your manager approves or declines the request in MyHR.\n- See the MyHR guide for the steps to follow.\n")}])
    # The exception is closest and the page's intro is a close runner-up: the intro is another section.
    answer, _ = run(pairs, [0.78, 0.6, 0.8, 0.3, 0.2])
    assert answer == ('Requesting leave: Request leave in MyHR at least 2 weeks ahead. For requests of 2 days or '
                      'fewer, 1 week ahead is enough. (from "Annual leave")')
    # The intro is closest and the exception a close runner-up: the exception still comes with its rule.
    answer, _ = run(pairs, [0.8, 0.6, 0.78, 0.3, 0.2])
    assert answer.startswith('This page explains your annual leave and the main rules. Requesting leave: Request '
                             'leave in MyHR at least 2 weeks ahead. For requests of 2 days or fewer')


def test_distinctive_question_words_lift_the_specific_sentence_over_a_generic_one():
    passages = [{"title": "Public holidays", "text": (
        "## France (Paris)\nNew Year's Day and Bastille Day are paid holidays.\n"
        "## Spain (Madrid)\nNew Year's Day and Epiphany are paid holidays.")}]
    pairs = sentences(passages)
    assert [p[1] for p in pairs] == ["France (Paris): New Year's Day and Bastille Day are paid holidays.",
                                     "Spain (Madrid): New Year's Day and Epiphany are paid holidays."]
    question = "Which holidays do we get in Spain?"
    q, rows = vectors([0.72, 0.70])  # the embedding alone slightly prefers the French line
    answer, score = extract(question, q, rows, pairs, 0.55, k=1)
    assert answer == 'Spain (Madrid): New Year\'s Day and Epiphany are paid holidays. (from "Public holidays")'
    lexical = idf_overlaps(question, [p[1] for p in pairs])[1]
    assert lexical > 0
    assert score == pytest.approx(0.70 + LEXICAL_WEIGHT * lexical, abs=1e-6)


def test_lexical_bonus_can_lift_a_sentence_over_the_threshold():
    pairs = [("Parking", "Staff in Madrid park in the basement of the store.")]
    q, rows = vectors([0.5])
    assert extract("parking rules?", q, rows, pairs, 0.55)[0] is None
    assert extract("Where do staff in Madrid park?", q, rows, pairs, 0.55)[0] is not None


# -------------------------------------------------------------------- what extract relies on


def test_sentences_carry_their_heading_and_lose_list_markers_and_bold():
    passages = [{"title": "Leave", "text": (
        "Intro text that has no heading yet.\n"
        "## Requesting leave\n"
        "1. Log in to **MyHR** with your id.\n"
        "- Pick the days you want off. Then press Submit now please.\n"
        "* Wait for it.\n")}]
    assert sentences(passages) == [
        ("Leave", "Intro text that has no heading yet.", ""),
        ("Leave", "Requesting leave: Log in to MyHR with your id.", "Requesting leave"),
        ("Leave", "Requesting leave: Pick the days you want off.", "Requesting leave"),
        ("Leave", "Requesting leave: Then press Submit now please.", "Requesting leave"),
    ]  # "Wait for it." is a fragment: too short to quote on its own


def test_headings_do_not_leak_into_the_next_passage():
    passages = [{"title": "A", "text": "## Spain\nOffices close at noon on Fridays."},
                {"title": "B", "text": "Offices open at eight every weekday."}]
    assert sentences(passages) == [("A", "Spain: Offices close at noon on Fridays.", "Spain"),
                                   ("B", "Offices open at eight every weekday.", "")]


def test_passages_without_text_or_title_are_tolerated():
    assert sentences([{}, {"text": "A sentence without any title."}]) == [("", "A sentence without any title.", "")]


def test_idf_overlap_weights_rare_words_and_ignores_generic_ones():
    texts = ["Spain has six paid holidays.", "France has five paid holidays.", "Italy has seven paid holidays."]
    spain, france, _ = idf_overlaps("What are the holidays in Spain?", texts)
    assert spain > france > 0  # "spain" is rare and decides; "holidays" is everywhere and counts little
    assert idf_overlaps("what is the policy?", texts) == [0.0, 0.0, 0.0]  # only generic words
    assert idf_overlaps("Spain", []) == []


def test_a_quote_about_another_place_or_leave_type_is_not_an_answer():
    from graph.extract import names_another
    from graph.router import entities

    quote = 'Hotels: In Paris, Amsterdam and Dublin the limit is EUR 200 a night. (from "Business travel")'
    assert names_another("hotel limit for a trip to Lisbon", quote, entities)
    assert not names_another("hotel limit for a trip to Paris", quote, entities)
    assert not names_another("what is the hotel limit", quote, entities)  # names no place: the quote may do
    assert names_another("how long is paternity leave", "Maternity leave: 16 weeks at full pay.", entities)
