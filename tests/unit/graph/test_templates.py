from datetime import date

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
    settle_months,
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


def _slip(month, net, bonus=0.0):
    return {"month": month, "base": 2500.0, "overtime_pay": 20.0, "bonus": bonus, "gross": 2520.0 + bonus,
            "tax": 700.0, "pension": 125.0, "net": net}


def _month_result(call_id, name, month, data):
    return {"id": call_id, "name": name, "args": {"employee": "E1001", "month": month}, "ok": True, "data": data,
            "error": None, "ms": 1.0, "cache": "miss"}


Q1 = {"question": "How much bonus did I get in Q1 2026?", "months": ["2026-01", "2026-02", "2026-03"],
      "period": "Q1 2026"}


def test_a_period_fetches_every_month_and_answers_with_the_total_and_each_month():
    plan = plan_parts([{"intent": "salary", "slots": Q1}], "E1001")
    assert [(c["id"], c["args"]["month"]) for c in plan] == [
        ("salary@2026-01", "2026-01"), ("salary@2026-02", "2026-02"), ("salary@2026-03", "2026-03")]
    assert per_month({"intent": "salary", "slots": Q1}) == [{"intent": "salary", "slots": Q1}]  # one answer
    results = [_month_result(c["id"], "salary", c["args"]["month"], _slip(c["args"]["month"], 1700.0 + i,
                                                                          96.0 if i == 2 else 0.0))
               for i, c in enumerate(plan)]
    text = compose([{"intent": "salary", "slots": Q1}], results)
    assert text.startswith("Your payslips for January to March 2026 (3 months):")
    assert "bonus EUR 96.00), " in text and "net pay EUR 5,103.00 in total" in text
    assert ("January net EUR 1,700.00, bonus EUR 0.00; February net EUR 1,701.00, bonus EUR 0.00; "
            "March net EUR 1,702.00, bonus EUR 96.00.") in text
    assert compose([{"intent": "salary", "slots": Q1}], results[:2]) is None  # a month missing: no total claimed


def test_a_period_with_a_month_that_failed_answers_the_months_that_came_and_names_the_rest():
    plan = plan_parts([{"intent": "salary", "slots": Q1}], "E1001")
    results = [_month_result(c["id"], "salary", c["args"]["month"], _slip(c["args"]["month"], 1700.0))
               for c in plan[:2]]
    results.append({**_failed(plan[2]["id"], "salary"), "args": plan[2]["args"]})
    text = render_partial([{"intent": "salary", "slots": Q1}], results)
    assert text.startswith("Your payslips for January and February 2026 (2 months):")
    assert text.endswith("I could not fetch everything (salary: unavailable). Please try again shortly.")


def test_months_of_a_period_whose_payslip_is_not_out_are_left_out_and_named():
    ytd = {"question": "my pay this year so far", "months": [f"2026-{m:02d}" for m in range(1, 13)],
           "period": "this year so far", "sources": {}}
    settled = settle_months({"intent": "salary", "slots": ytd}, date(2026, 12, 2))["slots"]
    assert settled["months"][-1] == "2026-11" and settled["not_out"] == ["2026-12"]
    results = [_month_result(f"salary@{m}", "salary", m, _slip(m, 1700.0)) for m in settled["months"]]
    text = render("salary", settled, results)
    assert "January to November 2026 (11 months)" in text
    assert text.endswith("The payslip for December 2026 is not out yet (it appears in MyHR on 22 December).")
    december = {"question": "q", "month": "2026-12", "sources": {"month": "question"}}
    assert settle_months({"intent": "salary", "slots": december}, date(2026, 12, 2))["slots"] == december  # asked


def test_attendance_over_a_week_is_its_months_figures_and_says_they_are_monthly():
    slots = {"question": "Was I late at all the week before last?", "month": "2026-11",
             "span": ["2026-11-16", "2026-11-22"]}
    data = {"working_days": 21, "present_days": 20, "absent_days": 1, "late_arrivals": 2, "overtime_hours": 4.0}
    text = render("attendance", slots, [_month_result("attendance", "attendance", "2026-11", data)])
    assert text.startswith("Your attendance for November 2026: present 20 of 21 working days")
    assert text.endswith("Attendance is recorded by month, so these figures cannot show what happened in the week "
                         "of 16-22 November 2026.")
    across = {"question": "q", "months": ["2026-11", "2026-12"], "period": "last week",
              "span": ["2026-11-30", "2026-12-06"]}
    dec = {**data, "working_days": 2, "present_days": 2, "absent_days": 0, "late_arrivals": 0, "overtime_hours": 0.5,
           "through": "2026-12-02"}
    text = render("attendance", across, [_month_result("attendance@2026-11", "attendance", "2026-11", data),
                                         _month_result("attendance@2026-12", "attendance", "2026-12", dec)])
    assert "present 22 of 23 working days, 1 absent, 2 late arrivals, 4.5 overtime hours in total" in text
    assert "December (to 2 December) present 2 of 2" in text and "between 30 November and 6 December 2026" in text


def test_a_time_nobody_could_read_steps_aside_from_every_dated_template_only():
    slots = {"question": "my pay the fortnight before last", "unread_time": "fortnight", "city": "Rome"}
    for intent in ("salary", "attendance", "weather"):
        assert instantiate(intent, {**slots, "month": "2026-11", "date": "2026-11-20"}, "E1001") is None
    assert instantiate("leave_balance", slots, "E1001") is not None  # no date in it to get wrong
    assert plan_parts([{"intent": "salary", "slots": slots}], "E1001") is None  # the full path plans instead


def test_the_full_paths_figures_are_named_for_the_month_fetched_and_an_unread_time_is_asked_back():
    slots = {"question": "my pay the fortnight before last", "unread_time": "fortnight"}
    fetched = _month_result("salary", "salary", "2026-10", _slip("2026-10", 1700.0))
    assert render("salary", slots, [fetched]).startswith("Your payslip for October 2026:")
    undated = {**_failed("salary", "salary"), "args": {"employee": "E1001"},
               "error": "could not call salary: invalid month"}
    text = render_partial([{"intent": "salary", "slots": slots}], [undated])
    assert text == ('I could not tell which month or day "fortnight" means, so I did not look it up: please name it '
                    '(for example "March 2026" or "on 3 March").')
