"""A turn that cannot run is said once, in the asker's language, and carried alike to every entry point."""

from app.failures import failure, failure_of
from tools.i18n import say


def test_a_failure_is_said_in_the_questions_language_with_its_status_and_wait():
    slow = failure("rate_limited", "Wann bekomme ich mein Gehalt überwiesen?", None, retry_after=12, amount=30,
                   period="minute")
    assert slow.message == say("rate_limited", "de", amount=30, period="minute", seconds=12)
    assert slow.status == 429 and slow.headers == {"Retry-After": "12"}
    assert slow.openai_type == ("rate_limit_error", "rate_limit_exceeded")


def test_a_question_too_short_to_tell_takes_the_callers_preferred_language():
    assert failure("not_your_conversation", "ok", "fr").message == say("not_your_conversation", "fr")


def test_a_rows_failure_reads_back_as_it_was_made_and_a_row_that_ran_has_none():
    broke = failure("turn_failed", "When is payday?", kind="TimeoutError")
    assert "TimeoutError" in broke.message and broke.status == 500
    assert failure_of({"failure": broke.as_dict()}) == broke
    assert failure_of({"answer": "Payday is the 25th.", "error": None}) is None
