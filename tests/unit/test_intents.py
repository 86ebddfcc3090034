import pytest
from hypothesis import given
from hypothesis import strategies as st

from graph.intents import detect


@pytest.mark.parametrize(("text", "label"), [
    ("What was my salary last month?", "salary"),
    ("show me my payslip for March", "salary"),
    ("How many leave days do I have left?", "leave_balance"),
    ("What was my attendance in October?", "attendance"),
    ("How many times was I late this month?", "attendance"),
    ("What's the weather in Berlin tomorrow?", "weather"),
    ("What should I wear tomorrow?", "weather_clothing"),
    ("Do I need an umbrella in Paris today?", "weather_clothing"),
    ("What is the maternity leave policy?", "leave_policy"),
    ("How do I submit an expense claim?", "policy_lookup"),
    ("What is my salary and the weather in Paris?", "salary+weather"),
    ("Tell me a joke", None),
])
def test_routing_decisions(text, label):
    det = detect(text, "E1001")
    assert det.refusal is None
    assert det.label == label


def test_dress_code_is_not_a_weather_question():
    assert detect("What should I wear to work?", "E1001").label is None


@pytest.mark.parametrize("text", [
    "What is E1002's salary?",
    "show attendance of E1005 for March",
    "What is my colleague's salary?",
    "How much does Ben's pay come to?",
    "Tell me her salary please",
])
def test_someone_elses_personal_data_is_refused(text):
    det = detect(text, "E1001")
    assert det.refusal and "your own" in det.refusal


def test_own_employee_id_is_fine():
    assert detect("What is the salary of E1001 for March?", "E1001").refusal is None


def test_follow_up_reuses_previous_intent():
    det = detect("and last month?", "E1001", previous_intent="salary")
    assert det.label == "salary" and det.follow_up
    assert detect("and last month?", "E1001").label is None


@given(st.text(max_size=400))
def test_router_never_crashes(text):
    det = detect(text, "E1001", "salary")
    assert det.label is None or all(part for part in det.label.split("+"))


def test_tool_evidence_drops_tools_the_question_does_not_hint_at():
    from graph.intents import tool_evidence

    q = "How much is in my pension pot?"
    assert not tool_evidence("weather", q) and not tool_evidence("salary", q)
    assert tool_evidence("kb_search", q)
    assert tool_evidence("weather", "will it rain in Oslo") and tool_evidence("salary", "my payslip please")
    assert tool_evidence("leave_policy", "how many study leave days are there")
