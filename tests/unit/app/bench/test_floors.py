"""Floor probes: which floor a row is measured against, and how the floors add up (on a virtual clock)."""

import asyncio
from types import SimpleNamespace

import pytest

from app.bench import floors


def _row(route, tools=(), llm_calls=0, **kw):
    return {"route": route, "tools": list(tools), "llm_calls": llm_calls, "q": "q", **kw}


def _tool(name, cache="miss", ms=100.0, ok=True):
    return {"name": name, "args": {}, "cache": cache, "ms": ms, "ok": ok}


def test_each_route_is_measured_against_its_own_floor():
    assert floors.kind_of(_row("faq")) == "faq"
    assert floors.kind_of(_row("template", [_tool("weather", "hit")])) == "cache_hit"
    assert floors.kind_of(_row("template", [_tool("weather", "hit"), _tool("salary")])) == "template"
    assert floors.kind_of(_row("llm", [_tool("kb_search")], llm_calls=2)) == "llm"
    assert floors.kind_of(_row("refused")) is None
    assert floors.kind_of(_row("template", [_tool("salary", ok=False)])) is None  # a failed call has no floor


class VirtualTimeLoop(asyncio.SelectorEventLoop):
    """An event loop whose clock only moves when every task waits on a timer: it jumps to the next one.

    `asyncio.sleep(0.05)` then takes exactly 50 ms of loop time and no time at all on the machine.
    """

    def __init__(self) -> None:
        super().__init__()
        self.now = 0.0
        select = self._selector.select

        def jump(timeout):
            if timeout:  # nothing is ready: the next timer is due `timeout` from now
                self.now += timeout
            return select(0)

        self._selector.select = jump

    def time(self) -> float:
        return self.now


def test_clothing_advice_waits_for_the_forecast_so_its_floor_adds_up(monkeypatch):
    assert floors.DEPENDENT == {"clothing_advice"}
    took = {"weather": 0.05, "clothing_advice": 0.03, "salary": 0.02}
    log = []

    class Tools:
        async def call(self, name, args):
            log.append(("start", name))
            await asyncio.sleep(took[name])
            log.append(("end", name))

    class D:
        tools = Tools()

    with asyncio.Runner(loop_factory=VirtualTimeLoop) as runner:
        monkeypatch.setattr(floors, "time", SimpleNamespace(perf_counter=runner.get_loop().time))
        ms = runner.run(floors._backend_ms(D(), [_tool("weather"), _tool("salary"), _tool("clothing_advice")]))
    assert ms == pytest.approx(80)  # weather and salary at once (50), then clothing advice (30)
    assert log[:2] == [("start", "weather"), ("start", "salary")]  # both before either returned
    assert log[2:] == [("end", "salary"), ("end", "weather"), ("start", "clothing_advice"),
                       ("end", "clothing_advice")]  # the dependent call after the forecast, alone


def test_floor_summary_and_compound_first_token():
    rows = [{**_row("faq"), "total_ms": 30.0, "floor_kind": "faq", "floor_ms": 25.0},
            {**_row("faq"), "total_ms": 60.0, "floor_kind": "faq", "floor_ms": 20.0},
            {**_row("refused"), "total_ms": 5.0, "floor_kind": None, "floor_ms": None}]
    s = floors.floor_summary(rows)
    assert list(s) == ["faq"] and s["faq"]["n"] == 2 and abs(s["faq"]["median"] - 2.1) < 1e-9
    assert 2.9 < s["faq"]["p95"] <= 3.0
    compound = [{"router_label": "compound", "ttft_ms": 660.0, "tools": [_tool("leave_balance", ms=600.0),
                                                                        _tool("weather", ms=1200.0)]},
                {"router_label": "salary", "ttft_ms": 10.0, "tools": [_tool("salary", ms=5.0)]},
                # its fastest part came from the cache in 1 ms: its first token is counted, not a 40x ratio
                {"router_label": "compound", "ttft_ms": 40.0, "tools": [_tool("leave_balance", "hit", ms=1.0),
                                                                       _tool("weather", ms=1200.0)]}]
    c = floors.compound_ttft(compound)
    assert (c["n"], c["n_backend"]) == (2, 1) and abs(c["ttft_over_fastest_tool"] - 1.1) < 1e-9
    assert c["ttft_ms"] == 350.0  # the median first token of both
    assert floors.compound_ttft(compound[1:])["ttft_over_fastest_tool"] is None  # no backend part: no ratio



def test_first_text_ratios_and_the_overhead_budget():
    rows = [{**_row("faq"), "total_ms": 30.0, "ttft_ms": 24.0, "floor_kind": "faq", "floor_ms": 20.0,
             "timings_ms": {"route_question": 20.0, "answer_faq": 0.5}},
            {**_row("template", [_tool("weather", "hit")]), "total_ms": 40.0, "ttft_ms": 35.0,
             "floor_kind": "cache_hit", "floor_ms": 25.0, "timings_ms": {"call_tools": 30.0}},
            {**_row("faq"), "total_ms": 30.0, "ttft_ms": None, "floor_kind": "faq", "floor_ms": 20.0}]
    s = floors.floor_summary(rows)
    assert s["faq"]["n"] == 2 and s["faq"]["median"] == pytest.approx(1.5)  # to the end: both rows
    assert s["faq"]["first_text_median"] == pytest.approx(1.2)  # to the first text: the row that streamed
    assert "warm_first_text_median" not in s["faq"]  # no warm probe: none summarized
    rows[0]["floor_warm_ms"] = 16.0
    assert floors.floor_summary(rows)["faq"]["warm_first_text_p95"] == pytest.approx(1.5)  # beside the matched one
    b = floors.overhead_budget(rows)
    assert list(b) == ["faq", "cache_hit"]  # no template row: no template budget
    assert b["faq"]["n"] == 1 and b["faq"]["framework_ms_p50"] == pytest.approx(9.5)  # 30 less 20.5 in nodes
    assert b["faq"]["after_first_text_ms_p95"] == pytest.approx(6.0)
    assert b["cache_hit"]["first_text_over_floor_p50"] == pytest.approx(1.4)
    assert b["cache_hit"]["total_over_floor_p95"] == pytest.approx(1.6)


def test_the_budget_names_the_turns_furthest_over_their_floor_and_their_waits():
    rows = [{**_row("faq"), "id": f"q{i}", "total_ms": 5.0, "ttft_ms": ttft, "floor_kind": "faq", "floor_ms": 3.0,
             "queued_ms": queued} for i, (ttft, queued) in enumerate([(3.0, 0.0), (9.0, 5.5), (4.0, None), (6.0, 0.2)])]
    b = floors.overhead_budget(rows)["faq"]
    assert [r["id"] for r in b["slowest"]] == ["q1", "q3", "q2"]  # furthest over the floor first, three of them
    assert b["slowest"][0]["queued_ms"] == 5.5
    assert b["queued_ms_p95"] == pytest.approx(4.705)  # a row that did not say counts as no wait

