import pytest

from graph.context import Context
from graph.templates import (
    compose,
    expected_calls,
    instantiate,
    parts_from_results,
    per_month,
    plan_parts,
    render,
    render_partial,
)


def test_options_are_typed_and_unknown_ones_refused():
    ctx = Context.from_options(["faq_enabled=false", "kb_answer_threshold=0.7", "max_tool_concurrency=2"])
    assert ctx.faq_enabled is False and ctx.kb_answer_threshold == 0.7 and ctx.max_tool_concurrency == 2
    with pytest.raises(ValueError, match="unknown option"):
        Context.from_options(["warp_speed=1"])


def test_template_steps_aside_without_its_required_slot():
    assert instantiate("leave_policy", {"question": "q"}, "E1001") is None
    plan = instantiate("salary", {"month": "2026-10"}, "E1009")
    assert plan == [{"id": "salary", "name": "salary", "args": {"employee": "E1009", "month": "2026-10"},
                     "depends_on": []}]


def test_a_part_whose_slot_nobody_filled_looks_in_the_handbook_instead():
    slots = {"question": "how much leave do I get for it?"}
    calls = expected_calls([{"intent": "leave_policy", "slots": slots}, {"intent": "leave_policy", "slots": slots}],
                           slots, "E1001")
    assert [(c["name"], c["args"]) for c in calls] == [("kb_search", {"query": "how much leave do I get for it?"})]
    sure = expected_calls([{"intent": "leave_policy", "slots": {**slots, "leave_type": "sick"}}], slots, "E1001")
    assert [c["name"] for c in sure] == ["leave_policy"]


def test_rendered_figures_are_the_tool_figures():
    data = {"base": 2770.0, "overtime_pay": 75.55, "bonus": 0.0, "gross": 2845.55, "tax": 796.75,
            "pension": 138.5, "net": 1910.3}
    text = render("salary", {"month": "2026-10"},
                  [{"id": "salary", "name": "salary", "args": {}, "ok": True, "data": data, "error": None,
                    "ms": 1.0, "cache": "miss"}])
    assert "October 2026" in text and "EUR 1,910.30" in text and "EUR 2,845.55" in text


def _ok(call_id, name, data):
    return {"id": call_id, "name": name, "args": {}, "ok": True, "data": data, "error": None, "ms": 1.0,
            "cache": "miss"}


def _failed(call_id, name):
    return {"id": call_id, "name": name, "args": {}, "ok": False, "data": None, "error": "unavailable", "ms": 1.0,
            "cache": "miss"}


WEATHER = {"city": "Rome", "date": "2026-11-30", "temperature_c": 12, "condition": "rain", "wind_kmh": 9}
BALANCE = {"annual_entitled": 25, "carried_over": 2, "annual_taken": 5, "annual_pending": 1, "annual_remaining": 21,
           "sick_remaining": 10}


def test_compose_answers_every_part_in_the_order_asked():
    parts = [{"intent": "leave_balance", "slots": {}}, {"intent": "faq:payday", "slots": {}, "answer": "The 25th."},
             {"intent": "weather", "slots": {"city": "Rome", "date": "2026-11-30"}}]
    results = [_ok("p2.weather", "weather", WEATHER), _ok("p0.leave_balance", "leave_balance", BALANCE)]
    text = compose(parts, results)
    assert text.index("21 days") < text.index("The 25th.") < text.index("Rome")
    assert compose(parts, results[:1]) is None  # a part without its result: not templatable


def test_leave_balance_says_the_sick_days_used_and_the_entitlement_from_the_backend():
    used = {**BALANCE, "sick_used": 3, "sick_remaining": 9}
    text = compose([{"intent": "leave_balance", "slots": {}}], [_ok("leave_balance", "leave_balance", used)])
    assert text.endswith("and 9 of 12 paid sick days remaining (3 used).")
    without = compose([{"intent": "leave_balance", "slots": {}}], [_ok("leave_balance", "leave_balance", BALANCE)])
    assert without.endswith("and 10 paid sick days remaining.")  # no count of used days: no entitlement guessed


RECORD = {"id": "E1001", "name": "Anna de Vries", "role": "Sales Associate", "department": "Store Operations",
          "city": "Amsterdam"}


@pytest.mark.parametrize(("question", "unrecorded"), [
    ("what is my employee id", None),
    ("who is my line manager", "Your manager is not in the records"),
    ("Who's my HR business partner?", "Your HR contact is not in the records"),
    ("what's my role and who do I report to in HR", "Your manager and HR contact are not in the records"),
])
def test_my_details_gives_the_record_and_says_which_contact_it_lacks(question, unrecorded):
    text = compose([{"intent": "my_details", "slots": {"question": question}}],
                   [_ok("employee_details", "employee_details", RECORD)])
    assert text.startswith("Your record: employee id E1001, Anna de Vries, Sales Associate in Store Operations, "
                           "based in Amsterdam.")
    if unrecorded:  # never a made-up name: where to ask instead
        assert unrecorded in text and "MyHR" in text
    else:
        assert "not in the records" not in text


def test_plan_parts_keeps_call_ids_apart_and_steps_aside_without_a_slot():
    parts = [{"intent": "weather", "slots": {"city": "Rome", "date": "2026-11-30"}},
             {"intent": "weather_clothing", "slots": {"city": "Oslo", "date": "2026-12-01"}}]
    plan = plan_parts(parts, "E1001")
    assert [c["id"] for c in plan] == ["p0.weather", "p1.weather", "p1.clothing_advice"]
    assert plan[2]["depends_on"] == ["p1.weather"] and plan[2]["args"]["temperature"] == "@p1.weather.temperature_c"
    assert plan_parts([{"intent": "leave_policy", "slots": {}}], "E1001") is None


def test_render_partial_gives_what_came_back_and_names_what_failed():
    parts = [{"intent": "weather_clothing", "slots": {"city": "Rome", "date": "2026-11-30"}}]
    text = render_partial(parts, [_ok("weather", "weather", WEATHER), _failed("clothing_advice", "clothing_advice")])
    assert "Rome" in text and "12°C" in text and "could not fetch everything (clothing advice: unavailable)" in text
    assert render_partial(parts, [_ok("weather", "weather", WEATHER)]) is None  # nothing failed


def test_parts_from_an_llm_plan_prefer_the_intent_that_uses_every_tool():
    results = [_ok("weather", "weather", WEATHER), _ok("clothing_advice", "clothing_advice", {"advice": "Coat."}),
               _ok("leave_balance", "leave_balance", BALANCE)]
    assert [p["intent"] for p in parts_from_results({}, results)] == ["leave_balance", "weather_clothing"]


def test_a_monthly_intent_asked_about_several_months_is_one_part_per_month():
    slots = {"month": "2026-04", "months": ["2026-04", "2026-03"], "question": "q"}
    parts = per_month({"intent": "salary", "slots": slots})
    assert [p["slots"]["month"] for p in parts] == ["2026-04", "2026-03"]
    assert [c["id"] for c in plan_parts(parts, "E1001")] == ["p0.salary", "p1.salary"]
    assert per_month({"intent": "leave_balance", "slots": slots}) == [{"intent": "leave_balance", "slots": slots}]
