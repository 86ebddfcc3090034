"""How the tool client turns what the backend does into results or into sentences a person can read.

The backend is faked with `httpx.MockTransport`; the client is built as the app builds it.
"""

import json

import httpx
import pytest

from tools.client import ToolClient, ToolError

PAYSLIP = {"employee": "E1001", "month": "2026-10", "base": 3000.0, "gross": 3200.0, "net": 2400.0,
           "currency": "EUR"}


@pytest.fixture
def backend(monkeypatch):
    """Point every ToolClient at a handler; returns a function that installs one and records requests."""
    seen: list[httpx.Request] = []
    real = httpx.AsyncClient

    def install(handler):
        def recording(request):
            seen.append(request)
            return handler(request)

        def client(*args, **kwargs):
            return real(*args, transport=httpx.MockTransport(recording), **kwargs)

        monkeypatch.setattr(httpx, "AsyncClient", client)
        return seen

    return install


async def call(tool, args):
    client = ToolClient("http://backend.test/")
    try:
        return await client.call(tool, args)
    finally:
        await client.aclose()


async def fails(tool, args):
    with pytest.raises(ToolError) as info:
        await call(tool, args)
    return info.value


async def test_a_good_answer_is_returned_and_the_request_follows_the_route(backend):
    seen = backend(lambda r: httpx.Response(200, json=PAYSLIP))
    assert await call("salary", {"employee": "E1001", "month": "2026-10"}) == PAYSLIP
    (req,) = seen
    assert req.method == "GET"
    assert str(req.url).startswith("http://backend.test/salary?")  # base URL and path joined without a double slash
    assert dict(req.url.params) == {"employee": "E1001", "month": "2026-10"}


@pytest.mark.parametrize("tool,args,path,params", [
    ("leave_balance", {"employee": "E1001"}, "/leave/balance", {"employee": "E1001"}),
    ("clothing_advice", {"temperature": -3.5, "condition": "snow"}, "/clothing",
     {"temperature": "-3.5", "condition": "snow"}),
    ("kb_search", {"query": "sick leave & pay?"}, "/kb/search", {"query": "sick leave & pay?"}),
])
async def test_each_tool_calls_its_own_path_with_its_arguments(backend, tool, args, path, params):
    seen = backend(lambda r: httpx.Response(404, json={"detail": "stop here"}))
    await fails(tool, args)
    assert seen[0].url.path == path and dict(seen[0].url.params) == params


async def test_server_errors_are_retryable_and_do_not_leak_the_backends_detail(backend):
    backend(lambda r: httpx.Response(503, json={"detail": "salary backend unavailable (injected fault)"}))
    err = await fails("salary", {"employee": "E1001", "month": "2026-10"})
    assert str(err) == "the salary service is unavailable right now"
    assert err.retryable


async def test_a_server_error_with_a_non_json_body_is_still_unavailable_not_unreadable(backend):
    backend(lambda r: httpx.Response(502, text="<html>Bad Gateway</html>"))
    err = await fails("weather", {"city": "Paris", "date": "2026-11-30"})
    assert str(err) == "the weather service is unavailable right now" and err.retryable


async def test_a_client_error_quotes_the_backends_detail_and_is_final(backend):
    backend(lambda r: httpx.Response(404, json={"detail": "no payslip for 2031-01"}))
    err = await fails("salary", {"employee": "E1001", "month": "2031-01"})
    assert str(err) == "the salary service said: no payslip for 2031-01"
    assert not err.retryable


@pytest.mark.parametrize("body", [{}, {"detail": ""}, ["not", "a", "dict"]])
async def test_a_client_error_without_detail_names_the_status(backend, body):
    backend(lambda r: httpx.Response(422, json=body))
    err = await fails("weather", {"city": "Paris", "date": "2026-13-45"})
    assert str(err) == "the weather service said: 422" and not err.retryable


@pytest.mark.parametrize("response", [
    httpx.Response(200, text="<html>maintenance</html>"),
    httpx.Response(200, content=b'{"net": 24'),
    httpx.Response(200, content=b"\xff\xfe\x00garbage", headers={"content-type": "application/json"}),
])
async def test_an_unreadable_answer_is_reported_as_such_and_not_retried(backend, response):
    backend(lambda r: response)
    err = await fails("salary", {"employee": "E1001", "month": "2026-10"})
    assert str(err) == "the salary service sent an unreadable answer" and not err.retryable
    assert isinstance(err.__cause__, ValueError)


@pytest.mark.parametrize("body", [{"garbage": True}, {"net": 1.0, "gross": 2.0}, [PAYSLIP], "payslip", None, 42])
async def test_json_without_the_fields_the_answer_needs_is_malformed(backend, body):
    backend(lambda r: httpx.Response(200, content=json.dumps(body).encode()))
    err = await fails("salary", {"employee": "E1001", "month": "2026-10"})
    assert str(err) == "the salary service sent malformed data" and not err.retryable


async def test_extra_fields_are_fine(backend):
    backend(lambda r: httpx.Response(200, json={"passages": [], "took_ms": 3}))
    assert await call("kb_search", {"query": "parking"}) == {"passages": [], "took_ms": 3}


async def test_a_timeout_says_the_service_did_not_answer_in_time_and_may_be_retried(backend):
    def slow(request):
        raise httpx.ReadTimeout("timed out", request=request)

    backend(slow)
    err = await fails("attendance", {"employee": "E1001", "month": "2026-10"})
    assert str(err) == "the attendance service did not answer in time" and err.retryable
    assert isinstance(err.__cause__, httpx.TimeoutException)


@pytest.mark.parametrize("exc", [httpx.ConnectError, httpx.RemoteProtocolError, httpx.ReadError])
async def test_a_broken_connection_says_the_service_could_not_be_reached(backend, exc):
    def broken(request):
        raise exc("connection refused", request=request)

    backend(broken)
    err = await fails("leave_policy", {"leave_type": "sick"})
    assert str(err) == "the leave_policy service could not be reached" and err.retryable


async def test_errors_never_show_urls_or_exception_text(backend):
    def broken(request):
        raise httpx.ConnectError("[Errno 111] Connection refused to http://10.0.0.7:8100", request=request)

    backend(broken)
    err = await fails("weather", {"city": "Paris", "date": "2026-11-30"})
    assert "10.0.0.7" not in str(err) and "Errno" not in str(err)


def test_every_tool_has_a_route_and_required_fields():
    from tools.registry import TOOLS

    assert all(spec.path.startswith("/") and spec.required for spec in TOOLS.values())


async def test_get_employee_returns_the_profile_or_none_when_unknown(backend):
    def handler(request):
        if request.url.path == "/employees/E1001":
            return httpx.Response(200, json={"id": "E1001", "name": "Anna", "city": "Berlin"})
        return httpx.Response(404, json={"detail": "unknown employee"})

    backend(handler)
    client = ToolClient("http://backend.test")
    try:
        assert await client.get_employee("E1001") == {"id": "E1001", "name": "Anna", "city": "Berlin"}
        assert await client.get_employee("E9999") is None
    finally:
        await client.aclose()
