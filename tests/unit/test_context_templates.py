import pytest

from graph.context import Context
from graph.templates import instantiate, render


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


def test_rendered_figures_are_the_tool_figures():
    data = {"base": 2770.0, "overtime_pay": 75.55, "bonus": 0.0, "gross": 2845.55, "tax": 796.75,
            "pension": 138.5, "net": 1910.3}
    text = render("salary", {"month": "2026-10"},
                  [{"id": "salary", "name": "salary", "args": {}, "ok": True, "data": data, "error": None,
                    "ms": 1.0, "cache": "miss"}])
    assert "October 2026" in text and "EUR 1,910.30" in text and "EUR 2,845.55" in text
