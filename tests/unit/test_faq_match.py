import pytest

from graph.faq_match import critical_words, decide, guard
from tools.faq import FaqEntry

APPLY = FaqEntry("apply", "How do I apply for annual leave?", "Request it in MyHR at least 2 weeks ahead.",
                 ["How can I request annual leave?", "How do I book a vacation?"])
CANCEL = FaqEntry("cancel", "How do I cancel approved leave?", "MyHR > My requests > Cancel.",
                  ["Can I withdraw a leave request?"])
PAYDAY = FaqEntry("payday", "When is payday?", "Salaries are paid on the 25th of each month.",
                  ["What day do we get paid?"])


@pytest.mark.parametrize(("question", "entry"), [
    ("How do I cancel my annual leave?", APPLY),  # opposite action
    ("How do I apply for sick leave?", APPLY),  # another entity
    ("Is payday on the 15th?", PAYDAY),  # another number
    ("What was my salary in October?", PAYDAY),  # a date, a personal figure
    ("Why don't we get paid on the 25th?", PAYDAY),  # negation
    ("How many annual leave days do I have left?", APPLY),  # personal balance
])
def test_near_misses_are_caught_by_the_guard(question, entry):
    assert guard(question, entry) is not None


@pytest.mark.parametrize(("question", "entry"), [
    ("how do I request some annual leave", APPLY),
    ("Is payday on the 25th?", PAYDAY),  # the answer states the 25th
    ("Can I withdraw my leave request?", CANCEL),
])
def test_true_paraphrases_pass_the_guard(question, entry):
    assert guard(question, entry) is None


def test_decide_needs_threshold_margin_and_guard():
    assert decide("when is payday", [(PAYDAY, 0.9), (APPLY, 0.3)], 0.7).accepted
    assert not decide("when is payday", [(PAYDAY, 0.6)], 0.7).accepted
    ambiguous = decide("leave question", [(APPLY, 0.80), (CANCEL, 0.79)], 0.7)
    assert not ambiguous.accepted and "ambiguous" in ambiguous.reason
    assert not decide("How do I cancel annual leave?", [(APPLY, 0.9)], 0.7).accepted


def test_critical_words_normalize_synonyms():
    assert "annual" in critical_words("book a vacation")
    assert "cancel" in critical_words("withdraw my request")
    assert "#15" in critical_words("on the 15th")
