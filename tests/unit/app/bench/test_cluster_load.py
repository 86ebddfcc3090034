"""The HTTP load's sessions: one employee each, asking the workload's kinds of request with that employee's facts."""

import pytest

from app.bench.cluster_load import MIX, session_items
from app.bench.items import FACTS_DB, Facts
from app.remote import RemoteError
from tools.demo_backend.db import EMPLOYEES


def test_each_session_is_one_employee_of_its_own_with_that_employees_figures():
    groups = session_items(32, 10)
    assert [{it.user for it in g} for g in groups] == [{f"E{1001 + k}"} for k in range(32)]
    assert all(len(g) == 10 for g in groups) and len({it.session for g in groups for it in g}) == 320
    facts = Facts(FACTS_DB)
    pay = [it for g in groups for it in g if it.q.startswith(("What was my salary", "Show me my payslip"))]
    assert pay and all(any(f == facts.net(it.user, m) for m in ("2026-03", "2026-06", "2026-08", "2026-09",
                                                                  "2026-10")) for it in pay for f in it.facts)
    kinds = {it.kind for g in groups for it in g}
    assert {"faq", "tool", "kb", "compound", "near_miss"} <= kinds and len(MIX) == 7


def test_the_alone_pass_asks_other_employees_and_too_many_sessions_are_refused_by_name():
    assert {it.user for g in session_items(2, 5, first=32) for it in g} == {"E1033", "E1034"}
    with pytest.raises(RemoteError, match=f"holds {EMPLOYEES} employees"):
        session_items(EMPLOYEES + 1, 1)
