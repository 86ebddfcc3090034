"""Each path end to end on the real services."""

import yaml

from app.settings import ROOT
from app.turn import new_thread_id, run_turn
from graph.context import Context

FAQ = {e["id"]: e for e in yaml.safe_load((ROOT / "data" / "companies" / "brightmart" / "faq.yaml").read_text())}


def _eur(x):
    return f"EUR {x:,.2f}"


async def test_faq_paraphrase_answers_from_the_faq_without_llm(ask):
    entry = FAQ["payday"]
    row = await ask(entry["paraphrases"][0])
    assert row["route"] == "faq" and row["llm_calls"] == 0 and row["tools"] == []
    assert row["answer"] == entry["answer"]


async def test_near_miss_does_not_take_the_faq_shortcut(ask):
    for q in ["Can I sell my unused annual leave days for cash?", "Is payday on the 15th in Lisbon?",
              "How many annual leave days do I have left?"]:
        row = await ask(q)
        assert row["route"] != "faq", (q, row["faq"])


async def test_template_answer_contains_the_backends_exact_figures(ask, backend):
    row = await ask("What was my salary in October 2026?", user="E1004")
    expected = backend.get("/salary", params={"employee": "E1004", "month": "2026-10"}).json()
    assert row["route"] == "template" and row["llm_calls"] == 0
    assert _eur(expected["net"]) in row["answer"] and _eur(expected["gross"]) in row["answer"]


async def test_two_employees_get_their_own_figures(ask, backend, fresh_cache):
    q = "How many leave days do I have left?"
    a = await ask(q, user="E1005")
    b = await ask(q, user="E1012")
    for row, emp in ((a, "E1005"), (b, "E1012")):
        expected = backend.get("/leave/balance", params={"employee": emp}).json()
        assert f"You have {expected['annual_remaining']} days" in row["answer"]
    assert a["answer"] != b["answer"]
    assert b["tools"][0]["cache"] == "miss"  # E1005's cached result is never E1012's


async def test_repeated_question_hits_the_cache(ask, fresh_cache):
    q = "What should I wear in Lisbon tomorrow?"
    first = await ask(q, user="E1002")
    second = await ask(q, user="E1003")
    assert [t["cache"] for t in first["tools"]] == ["miss", "miss"]
    assert [t["cache"] for t in second["tools"]] == ["hit", "hit"]
    assert second["answer"] == first["answer"]  # how much faster a hit is: the benchmark measures it


async def test_compound_request_answers_both_parts_from_templates_with_no_llm(ask, backend):
    row = await ask("How many leave days do I have left and what's the weather in Madrid tomorrow?", user="E1008")
    assert row["route"] == "template" and row["llm_calls"] == 0 and row["router"]["label"] == "compound"
    assert {t["name"] for t in row["tools"]} == {"leave_balance", "weather"}
    expected = backend.get("/leave/balance", params={"employee": "E1008"}).json()
    assert str(expected["annual_remaining"]) in row["answer"] and "Madrid" in row["answer"]


async def test_natural_phrasings_get_the_callers_own_figures(ask, backend):
    row = await ask("How much money did I make in September?", user="E1013", today="2026-11-29")
    pay = backend.get("/salary", params={"employee": "E1013", "month": "2026-09"}).json()
    assert row["route"] == "template" and _eur(pay["net"]) in row["answer"]
    row = await ask("Was I marked absent on any day last month?", user="E1013", today="2026-11-29")
    att = backend.get("/attendance", params={"employee": "E1013", "month": "2026-10"}).json()
    assert row["route"] == "template" and f"{att['absent_days']} absent" in row["answer"]
    row = await ask("What's my remaining PTO?", user="E1013")
    bal = backend.get("/leave/balance", params={"employee": "E1013"}).json()
    assert row["route"] == "template" and f"You have {bal['annual_remaining']} days" in row["answer"]


async def test_a_later_turn_that_asks_something_else_gets_that_for_the_month_it_points_back_to(ask, backend):
    thread = new_thread_id()
    first = await ask("How many days was I absent in August?", user="E1006", thread=thread, today="2026-11-29")
    assert first["route"] == "template" and first["intent"] == "attendance"
    second = await ask("what about my pay that month", user="E1006", thread=thread, today="2026-11-29")
    pay = backend.get("/salary", params={"employee": "E1006", "month": "2026-08"}).json()
    assert second["intent"] == "salary" and _eur(pay["net"]) in second["answer"]  # not August's attendance again
    third = await ask("and in September?", user="E1006", thread=thread, today="2026-11-29")
    pay = backend.get("/salary", params={"employee": "E1006", "month": "2026-09"}).json()
    assert third["intent"] == "salary" and _eur(pay["net"]) in third["answer"]


async def test_question_the_handbook_does_not_answer_gets_where_to_ask_not_an_invention(ask):
    row = await ask("Are pets allowed in the office?")
    assert "couldn't find a clear answer" in row["answer"] and "MyHR" in row["answer"]
    assert row["llm_calls"] <= 1  # at most a plan: no LLM-written answer


async def test_small_talk_gets_what_the_desk_covers_without_the_llm(ask):
    for question in ("thanks!", "What can you do?"):
        row = await ask(question)
        assert row["router"]["label"] == "other" and row["llm_calls"] == 0, question
        assert "your own pay, attendance, leave" in row["answer"] and "MyHR" in row["answer"], question
        assert "can't help" not in row["answer"], question  # a thank-you is not refused


async def test_a_language_the_desk_does_not_speak_gets_one_sentence_naming_those_it_does(ask):
    row = await ask("Ile dni urlopu zostało mi w tym roku?")  # Polish
    assert row["route"] == "refused" and row["llm_calls"] == 0 and row["tools"] == []
    assert "Chinese" in row["answer"] and "Portuguese" in row["answer"]


async def test_policy_lookup_quotes_the_knowledge_base(ask):
    row = await ask("What is the policy on public holidays in Spain?")
    assert row["router"]["label"] == "handbook"  # sure or not, the handbook is where the answer is
    assert "kb_search" in {t["name"] for t in row["tools"]} and row["llm_calls"] <= 1  # at most a plan
    assert "Epiphany" in row["answer"]


async def test_a_handbook_question_asked_again_by_someone_else_is_quoted_from_the_shared_cache(helpdesk):
    q = "What is the policy on public holidays in Spain?"
    first = await run_turn(helpdesk, q, "E1003", None, Context())
    again = await run_turn(helpdesk, q, "E1001", None, Context())
    assert again["answer"] == first["answer"] and "Epiphany" in again["answer"]  # the same quote, shared
    assert [t["cache"] for t in again["tools"] if t["name"] == "kb_search"] == ["hit"]  # the handbook is not personal


async def test_writing_request_gets_a_draft_of_its_own_words_without_the_llm(ask):
    row = await ask("Can you write an email to my manager asking for Friday off?", user="E1004")
    assert row["route"] == "template" and row["answered_by"] == "draft" and row["llm_calls"] == 0
    assert "Subject: Friday off" in row["answer"] and "I would like to ask for Friday off." in row["answer"]
    assert not row["answer"].rstrip().endswith("[Your name]")  # signed with the caller's name from their profile


async def test_a_writing_request_the_router_is_not_sure_of_still_gets_its_draft(ask):
    row = await ask("email my manager that I will be late tomorrow", user="E1004")
    assert row["router"]["label"] == "free_writing"  # its top label, sure or not
    assert row["answered_by"] == "draft" and row["llm_calls"] == 0
    assert "I would like to let you know that I will be late tomorrow." in row["answer"]
    poem = await ask("write a poem about the warehouse", user="E1004")  # not a workplace text: nothing made up.
    # Sure of it, the draft says what it can set out; not sure (the router trained on public data is more often),
    # the full path finds nothing to quote and says so, with where to ask: no poem either way.
    assert poem["llm_calls"] <= 1  # at most a plan, never a written text
    assert poem["answer"].startswith(("I can set out a draft from a request", "I couldn't find a clear answer"))


async def test_writing_request_is_answered_by_the_llm_streaming_when_it_drafts(ask):
    deltas = []
    row = await ask("Write a short cheerful note to my team about Monday's stand-up.", deltas=deltas, llm_drafts=True)
    assert row["route"] == "llm" and row["intent"] == "free_writing" and row["llm_calls"] == 1 and row["answer"]
    assert len(deltas) > 3 and "".join(deltas).strip().startswith(row["answer"][:20])
    assert row["ttft_ms"] < row["total_ms"]


async def test_refusal_for_someone_elses_salary(ask):
    row = await ask("What is E1002's salary for October?", user="E1001")
    assert row["route"] == "refused" and row["tools"] == [] and "your own" in row["answer"]


async def test_questions_about_the_callers_own_record_get_it_not_a_refusal(ask, backend):
    """"Who is my manager?" is about the caller: their record, and where to ask for what it lacks."""
    for q, user in (("what is my employee id", "E1003"), ("Who is my HR contact?", "E1007"),
                    ("who is my manager", "E1011")):
        row = await ask(q, user=user)
        record = backend.get("/employee/details", params={"employee": user}).json()
        assert row["route"] == "template" and row["llm_calls"] == 0, (q, row["router"])
        assert f"employee id {user}, {record['name']}, {record['role']}" in row["answer"], (q, row["answer"])
    assert "not in the records" in row["answer"] and "MyHR" in row["answer"]
    other = await ask("who is E1004's manager", user="E1011")
    assert other["route"] == "refused" and "E1004" in other["answer"]
