"""Any OpenAI client can talk to the desk: the official `openai` package against a served app on the real
services, signed in as demo employees. Their own figures from the backend, streamed and not; a follow-up sent
as history continues the conversation; identity and thread ownership hold as on `/v1/chat`."""

from __future__ import annotations

import os
import sys
import time

import openai
import pytest

from app.openai_wire import MODEL_ID
from tests.integration.servers import serving
from tests.integration.test_auth import login, net, passwords, signed  # noqa: F401 - passwords is a fixture
from tools.i18n import say

PORT = 17863
LEAVE = "How many leave days do I have left?"
OCTOBER, SEPTEMBER = "What was my net salary in October 2026?", "and in September 2026?"


@pytest.fixture(scope="module")
def base_url(running):
    env = {**os.environ, "GRADIO_ANALYTICS_ENABLED": "False", "RATE_LIMIT": "120/minute"}
    url = f"http://127.0.0.1:{PORT}"
    with serving([sys.executable, "-m", "app", "ui", "--port", str(PORT)], url + "/healthz", "openai-test.log",
                 env=env):
        yield url + "/v1"


@pytest.fixture(scope="module")
def client_for(base_url, settings, passwords):  # noqa: F811 - the fixture imported above
    """An `openai` client signed in as a demo employee (its token is the API key)."""
    def _client(user: str | None = None, token: str | None = None) -> openai.OpenAI:
        return openai.OpenAI(base_url=base_url, api_key=token or login(settings, passwords, user), max_retries=0,
                             timeout=180)

    return _client


def ask(client: openai.OpenAI, messages: list[dict], **kw):
    """A completion and the thread the desk answered it in (the `X-Thread-Id` response header)."""
    raw = client.chat.completions.with_raw_response.create(model=MODEL_ID, messages=messages, **kw)
    return raw.parse(), raw.headers["x-thread-id"]


def streamed(client: openai.OpenAI, messages: list[dict], **kw):
    """A streamed answer: its chunks and its thread."""
    raw = client.chat.completions.with_raw_response.create(model=MODEL_ID, messages=messages, stream=True, **kw)
    return list(raw.parse()), raw.headers["x-thread-id"]


def test_the_desk_is_a_model_any_openai_client_can_pick(client_for):
    assert [m.id for m in client_for("E1016").models.list().data] == [MODEL_ID]


def test_a_personal_question_gets_the_callers_own_figures(client_for, backend):
    client = client_for("E1016")
    expected = f"You have {backend.get('/leave/balance', params={'employee': 'E1016'}).json()['annual_remaining']} days"
    done, thread = ask(client, [{"role": "system", "content": "You are a helpful assistant."},
                                {"role": "user", "content": LEAVE}], user="E1001")  # the body's user: no identity
    answer = done.choices[0].message.content
    assert expected in answer and done.choices[0].finish_reason == "stop" and done.usage.completion_tokens > 0
    assert done.helpdesk["route"] == "template" and done.helpdesk["thread"] == thread
    assert [t["name"] for t in done.helpdesk["tools"]] == ["leave_balance"]

    chunks, _ = streamed(client, [{"role": "user", "content": LEAVE}], stream_options={"include_usage": True})
    assert chunks[0].choices[0].delta.role == "assistant"
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert expected in text and text == answer, "the same answer, token by token"
    finish = [c for c in chunks if c.choices and c.choices[0].finish_reason == "stop"]
    assert len(finish) == 1 and finish[0].helpdesk["route"] == "template" and finish[0].helpdesk["total_ms"] > 0
    assert chunks[-1].usage is not None and chunks[-1].usage.completion_tokens > 0


def test_a_follow_up_sent_as_history_continues_the_conversation(client_for, backend):
    client = client_for("E1017")
    first, thread = ask(client, [{"role": "user", "content": OCTOBER}])
    answer = first.choices[0].message.content
    assert net(backend, "E1017") in answer
    history = [{"role": "user", "content": OCTOBER}, {"role": "assistant", "content": answer},
               {"role": "user", "content": SEPTEMBER}]
    chunks, same = streamed(client, history)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert same == thread and net(backend, "E1017", "2026-09") in text, "the first turn's context"


def test_another_employee_is_refused_on_that_conversation(client_for, backend):
    owner, intruder = client_for("E1018"), client_for("E1020")
    first, thread = ask(owner, [{"role": "user", "content": OCTOBER}])
    history = [{"role": "user", "content": OCTOBER}, {"role": "assistant", "content": first.choices[0].message.content},
               {"role": "user", "content": SEPTEMBER}]
    with pytest.raises(openai.PermissionDeniedError) as refused:
        ask(intruder, history, extra_headers={"X-Thread-Id": thread})
    assert refused.value.code == "conversation_not_yours" and say("not_your_conversation") in refused.value.message
    with pytest.raises(openai.PermissionDeniedError):
        streamed(intruder, history, extra_headers={"X-Thread-Id": thread})
    done, theirs = ask(intruder, history)  # the same history, no pin: their own new thread
    assert theirs != thread and net(backend, "E1018", "2026-09") not in done.choices[0].message.content
    again, same = ask(owner, history)
    assert same == thread and net(backend, "E1018", "2026-09") in again.choices[0].message.content, "owner carries on"


def test_an_expired_token_is_refused(client_for, settings):
    now = int(time.time())
    expired = client_for(token=signed(settings, sub="E1016", iat=now - 7200, exp=now - 3600))
    with pytest.raises(openai.AuthenticationError) as refused:
        ask(expired, [{"role": "user", "content": LEAVE}])
    assert "expired" in refused.value.message


def test_a_parameter_the_desk_cannot_honour_is_a_400(client_for):
    client = client_for("E1016")
    tools = [{"type": "function", "function": {"name": "lookup", "parameters": {"type": "object"}}}]
    with pytest.raises(openai.BadRequestError) as refused:
        ask(client, [{"role": "user", "content": LEAVE}], tools=tools)
    assert refused.value.param == "tools"
    with pytest.raises(openai.BadRequestError) as refused:
        ask(client, [{"role": "user", "content": LEAVE}], n=2)
    assert refused.value.param == "n"
