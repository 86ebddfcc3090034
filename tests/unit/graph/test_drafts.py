"""Writing requests drafted from their own words: nothing in a draft comes from anywhere else."""

import re

import pytest

from graph.drafts import draft, parse

REQUESTS = [
    "draft a note to my team about the store closing early on 24 December",
    "Can you write an email to my manager asking for Friday off?",
    "Help me write a short welcome message for a new colleague joining on Monday",
    "write a reminder for my staff to submit their expenses before the end of the month",
    "compose a thank-you message to the warehouse crew for finishing the stock count",
    "email my manager that I will be late tomorrow",
    "let my team know the store opens at 8 on Saturday",
    "pls draft a quick message inviting everyone to the Christmas lunch on 18 December",
    "Write an apology email to a customer for the late delivery",
    "I need a quick text to my store team thanking them for a busy Black Friday",
    "can you draft a msg to my team saying I'll be out sick today",
    "could you write me an out-of-office reply for my holiday 12-23 August",
    "can u help me write an OOO message, off 12-19 Aug",
    "need a short thank-you note to my team for covering my shifts while I was out",
]
# The draft's own wording: the frame, greetings, lead sentences, placeholders and sign-offs.
FRAME = set(re.findall(r"[a-z']+", """here is a draft to adapt the parts in brackets are for you to fill in subject
hi hello team manager's name dear customers customer's a quick note about i would like ask for to if let know that
friendly reminder thank you welcome we look forward having with us starting are invited am sorry add the details
dates times what need from them reason and any cover or handover have arranged it made possible where go whom on
first day time place tell come happened doing thanks best wishes your yourselves hr it out of office when back
meanwhile contact"""))


@pytest.mark.parametrize("request_text", REQUESTS)
def test_every_word_of_a_draft_is_the_requests_or_the_frames(request_text):
    text = draft(request_text, "Carla Moreau")
    allowed = FRAME | set(re.findall(r"[a-z0-9']+", request_text.lower())) | {"carla", "moreau"}
    assert set(re.findall(r"[a-z0-9']+", text.lower())) <= allowed, text
    assert text.rstrip().endswith("Carla Moreau") and re.search(r"\[Add [^\]]+\.\]", text)  # what to fill in


def test_the_parts_of_a_request_are_pulled_out():
    r = parse("Could you please write a short e-mail to my boss requesting a day off on the 12th?")
    assert (r.kind, r.recipient, r.lead, r.subject) == ("e-mail", "boss", "requesting", "a day off on the 12th")
    assert parse("remind the team to clock in on time").lead == "to remind"
    assert parse("a quick text to my store team thanking them").recipient == "store team"  # the longest name


def test_an_out_of_office_reply_says_when_and_leaves_the_rest_to_fill_in():
    text = draft("could you write me an out-of-office reply for my holiday 12-23 August", "Ana")
    assert "Hello," in text and "I am out of the office for my holiday 12-23 August." in text
    away = draft("write an out of office message while I'm away 3-7 March", "Ana")
    assert "I am out of the office 3-7 March." in away
    assert parse("can you draft a msg to my team saying I'll be out sick today").kind == "message"


def test_greeting_subject_and_body_follow_the_request():
    text = draft("Can you write an email to my manager asking for Friday off?", None)
    assert "Subject: Friday off" in text and "Hi [manager's name]," in text
    assert "I would like to ask for Friday off." in text and text.endswith("[Your name]")
    reminder = draft("write a reminder for my staff to submit their expenses before the end of the month", "Ana")
    assert "Hi team," in reminder and "A friendly reminder to submit your expenses before the end of the month." \
        in reminder  # the recipients are addressed: "their" becomes "your"


@pytest.mark.parametrize("request_text", ["Write a long story about a cheerful Monday at the store.", "make it shorter",
                                          "write a poem about the warehouse"])
def test_what_is_not_a_workplace_text_gets_what_the_desk_can_do(request_text):
    text = draft(request_text, "Ana")
    assert "whom it is for and what it is about" in text and "Hi " not in text


def test_a_writing_request_is_drafted_when_sure_or_when_it_reads_as_one():
    from graph.drafts import drafts_it
    from graph.paths import route_of
    assert drafts_it("write", "free_writing", "write a poem", drafted=True) is True
    assert drafts_it("write", "free_writing", "write a poem", drafted=False) is False  # the LLM drafts
    assert drafts_it("llm", "free_writing", "email my manager that I am late", drafted=True) is True
    assert drafts_it("llm", "free_writing", "write a poem about the warehouse", drafted=True) is None
    assert drafts_it("llm", "handbook", "email my manager that I am late", drafted=True) is None
    assert route_of("write", settled=True) == "template" and route_of("write", settled=False) == "llm"


def test_the_route_is_decided_in_one_place_from_the_path_and_what_fill_slots_found():
    from graph.paths import ROUTE_OF, route_of
    assert route_of(None) == "" and route_of(None, valid=False) == route_of("faq", valid=False) == "invalid"
    assert route_of("template") == "template" and route_of("template", settled=False) == "llm"
    assert all(route_of(p) == r for p, r in ROUTE_OF.items() if p != "template")
