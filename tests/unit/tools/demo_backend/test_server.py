"""The demo backend follows the demo's date: this month to date, no month still to come, no payslip before it
is out. Served through the app itself and read back by the desk's own tool client.
"""

from datetime import date

import httpx
import pytest

from graph.templates import render, render_partial
from tools.client import ToolClient, ToolError
from tools.demo_backend import db, server

ON = date(2026, 12, 2)  # a Wednesday: December has had two working days


@pytest.fixture(scope="module")
def database(tmp_path_factory):
    con = db.connect(tmp_path_factory.mktemp("demo") / "demo-backend.sqlite")
    yield con
    con.close()


@pytest.fixture
def backend(database, monkeypatch):
    """Ask the backend as the desk does, on a given day."""
    monkeypatch.setattr(server.app.state, "db", database, raising=False)
    for tool in list(server.LATENCY):
        monkeypatch.setitem(server.LATENCY, tool, 0.0)

    async def ask(tool: str, on: date = ON, **args):
        monkeypatch.setattr(server.SETTINGS, "today", on)
        client = ToolClient("http://backend")
        await client._http.aclose()
        client._http = httpx.AsyncClient(transport=httpx.ASGITransport(app=server.app), base_url="http://backend")
        try:
            return await client.call(tool, {"employee": "E1004", **args})
        finally:
            await client.aclose()

    return ask


def _result(tool, month, data=None, error=None):
    return {"id": tool, "name": tool, "args": {"employee": "E1004", "month": month}, "ok": error is None,
            "data": data, "error": error, "ms": 1.0, "cache": "miss"}


async def test_this_months_attendance_counts_only_the_working_days_so_far(backend):
    december = await backend("attendance", month="2026-12")
    assert december["working_days"] == 2 and december["through"] == "2026-12-02"
    assert december["present_days"] + december["absent_days"] == 2
    text = render("attendance", {"month": "2026-12"}, [_result("attendance", "2026-12", december)])
    assert "December 2026 so far (to 2 December): present" in text and "of 2 working days" in text
    november = await backend("attendance", month="2026-11")
    assert november["working_days"] == 21 and "through" not in november  # a past month is the whole month


async def test_the_month_to_date_is_the_same_every_time_and_grows_into_the_whole_month(backend):
    first = await backend("attendance", on=date(2026, 11, 13), month="2026-11")
    assert first == await backend("attendance", on=date(2026, 11, 13), month="2026-11")  # deterministic
    later = await backend("attendance", on=date(2026, 11, 20), month="2026-11")
    assert first["working_days"] == 10 and later["working_days"] == 15
    for key in ("absent_days", "late_arrivals", "overtime_hours"):
        assert first[key] <= later[key]
    whole = await backend("attendance", on=date(2026, 12, 2), month="2026-11")
    end = await backend("attendance", on=date(2026, 11, 30), month="2026-11")
    assert {k: end[k] for k in whole} == whole  # on the last day, the month to date is the month's record


async def test_a_month_still_to_come_has_no_attendance_and_the_desk_says_so_plainly(backend):
    with pytest.raises(ToolError) as info:
        await backend("attendance", month="2027-01")
    assert "no attendance record for January 2027: that month has not started yet" in str(info.value)
    text = render_partial([{"intent": "attendance", "slots": {"month": "2027-01"}}],
                          [_result("attendance", "2027-01", error=str(info.value))])
    assert text == ("I could not fetch everything (attendance: the attendance service said: no attendance record "
                    "for January 2027: that month has not started yet).")  # no "try again shortly": it would not help


async def test_a_payslip_is_served_once_it_is_out_and_not_before(backend):
    with pytest.raises(ToolError) as info:
        await backend("salary", month="2026-12")  # out on Tuesday 22 December, payday being Friday the 25th
    assert "no payslip for December 2026 yet: it appears in MyHR on 22 December 2026" in str(info.value)
    assert (await backend("salary", on=date(2026, 12, 22), month="2026-12"))["month"] == "2026-12"
    assert (await backend("salary", month="2026-11"))["net"] > 0
    with pytest.raises(ToolError, match="no payslip for March 2027 yet"):
        await backend("salary", month="2027-03")
