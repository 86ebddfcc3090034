"""The OpenAI-compatible endpoint through the `openai` SDK itself, on the real graph with fake services: the
shapes a strict client parses, the caller from the token, threads continued from the history, refusals in
OpenAI's error shape."""

from __future__ import annotations

import json
import time

import httpx
import jwt
import openai
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from fastapi import FastAPI
from langgraph.checkpoint.memory import InMemorySaver
from limits import parse
from redis.exceptions import ConnectionError as RedisConnectionError

from app import openai_api
from app.auth import Verifier
from app.failures import failure
from app.openai_wire import MODEL_ID, estimate_tokens
from app.ratelimit import RateLimit
from app.resources import Resources
from app.settings import Settings
from app.stream import stream_turn
from graph.context import Context
from graph.graph import build_desk
from tests.unit.conftest import make_deps
from tools.i18n import say

KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)
LEAVE = "How many leave days do I have left?"
PAY = "What was my salary in March?"


def token(user: str = "E1001", **claims) -> str:
    now = int(time.time())
    return jwt.encode({"iss": "idp", "aud": "desk", "sub": user, "iat": now, "exp": now + 60, **claims}, KEY, "RS256")


class FakeLimit:
    """A rate limit of `left` requests, counted in memory."""

    def __init__(self, left: int = 1000) -> None:
        self.left = left

    async def allow(self, user: str) -> bool:
        self.left -= 1
        return self.left >= 0

    async def retry_after(self, user: str) -> int:
        return 42

    item = parse("30/minute")
    refuse = RateLimit.refuse


class FakeResources:
    """What the endpoint reads from `app.state.resources`: the real verifier, a fake limit, the desk."""

    def __init__(self, tmp_path) -> None:
        pem = KEY.public_key().public_bytes(serialization.Encoding.PEM,
                                            serialization.PublicFormat.SubjectPublicKeyInfo)
        (tmp_path / "pub.pem").write_bytes(pem)
        self.verifier = Verifier(Settings(auth_public_key_file=tmp_path / "pub.pem", auth_issuer="idp",
                                          auth_audience="desk"))
        self.rate_limit = FakeLimit()
        self.desk = build_desk(make_deps(), checkpointer=InMemorySaver())

    async def get(self):
        if self.desk is None:
            raise ConnectionRefusedError("the conversation store is not reachable")
        return self.desk

    serving = Resources.serving

    def request_context(self, accept_language: str | None = None) -> Context:
        return Context(today="2026-11-29")


@pytest.fixture
def resources(tmp_path):
    return FakeResources(tmp_path)


@pytest.fixture
def http(resources):
    app = FastAPI()
    app.state.resources = resources
    app.include_router(openai_api.router)
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://desk")


@pytest.fixture
def client(http):
    """An `openai` client for a user (no retries: a refusal is seen at once)."""
    return lambda user="E1001", tok=None: openai.AsyncOpenAI(base_url="http://desk/v1", api_key=tok or token(user),
                                                              max_retries=0, http_client=http)


def user(text: str) -> dict:
    return {"role": "user", "content": text}


def assistant(text: str) -> dict:
    return {"role": "assistant", "content": text}


async def ask(client, messages, **kw):
    """A non-streaming completion: (the completion, its X-Thread-Id)."""
    raw = await client.chat.completions.with_raw_response.create(model=MODEL_ID, messages=messages, **kw)
    return raw.parse(), raw.headers["x-thread-id"]


async def test_the_desk_is_listed_as_a_model_for_a_signed_in_caller(client, http):
    models = await client().models.list()
    assert [m.id for m in models.data] == [MODEL_ID]
    r = await http.get("/v1/models")
    assert r.status_code == 401 and r.json()["error"]["type"] == "authentication_error"
    assert "no credential" in r.json()["error"]["message"]


async def test_a_completion_answers_the_callers_own_question_with_its_path(client):
    done, thread = await ask(client(), [user(LEAVE)], user="E1002")  # the body's user is no identity
    answer = done.choices[0].message.content
    assert done.object == "chat.completion" and done.choices[0].finish_reason == "stop"
    assert answer.startswith("You have 1 day of annual leave left")
    assert done.usage.completion_tokens == estimate_tokens(answer)
    assert done.usage.prompt_tokens == estimate_tokens(LEAVE)
    path = done.helpdesk  # the extra field: what the chat's Path panel shows
    assert path["route"] == "template" and path["intent"] == "leave_balance" and path["thread"] == thread
    assert [t["name"] for t in path["tools"]] == ["leave_balance"]


async def test_a_stream_sends_the_role_then_the_text_then_the_finish_with_its_path(client):
    stream = await client().chat.completions.create(model=MODEL_ID, messages=[user(LEAVE)], stream=True,
                                                    stream_options={"include_usage": True})
    chunks = [c async for c in stream]
    assert chunks[0].choices[0].delta.role == "assistant"
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    done, _ = await ask(client(), [user(LEAVE)])
    assert text == done.choices[0].message.content
    finish = [c for c in chunks if c.choices and c.choices[0].finish_reason]
    assert len(finish) == 1 and finish[0].choices[0].finish_reason == "stop"
    assert finish[0].helpdesk["route"] == "template"
    assert chunks[-1].choices == [] and chunks[-1].usage.completion_tokens == estimate_tokens(text)


async def test_the_stream_ends_with_done(http):
    r = await http.post("/v1/chat/completions", headers={"Authorization": f"Bearer {token()}"},
                        json={"model": MODEL_ID, "messages": [user(LEAVE)], "stream": True})
    assert r.headers["content-type"].startswith("text/event-stream") and r.headers["x-thread-id"]
    events = [line[6:] for line in r.text.splitlines() if line.startswith("data: ")]
    assert events[-1] == "[DONE]" and all(json.loads(e)["object"] == "chat.completion.chunk" for e in events[:-1])


async def test_a_follow_up_with_the_history_continues_the_thread(client):
    first, thread = await ask(client(), [{"role": "system", "content": "Be brief."}, user(PAY)])
    history = [user(PAY), assistant(first.choices[0].message.content)]
    stream = await client().chat.completions.with_raw_response.create(
        model=MODEL_ID, messages=[*history, user("and last month?")], stream=True)
    assert stream.headers["x-thread-id"] == thread
    text = "".join([c.choices[0].delta.content or "" async for c in stream.parse() if c.choices])
    assert "October 2026" in text, "the follow-up read the first turn"
    history += [user("and last month?"), assistant(" " + text + "\n")]  # clients trim and re-join: still the same
    _, third = await ask(client(), [*history, user("When is payday?")])
    assert third == thread


async def test_a_history_the_desk_did_not_answer_starts_a_new_thread(client):
    first, thread = await ask(client(), [user(PAY)])
    answer = first.choices[0].message.content
    made_up = [user(PAY), assistant("Your payslip: EUR 1,000,000.00"), user("and last month?")]
    edited, other = await ask(client(), made_up)
    assert other != thread and "October 2026" not in edited.choices[0].message.content
    _, theirs = await ask(client("E1002"), [user(PAY), assistant(answer), user("and last month?")])
    assert theirs != thread, "the same history from another employee never reaches the first one's thread"


async def test_another_employees_token_on_a_pinned_thread_is_refused(client, resources):
    _, thread = await ask(client(), [user(PAY)])
    with pytest.raises(openai.PermissionDeniedError) as refused:
        await ask(client("E1002"), [user("and last month?")], extra_headers={"X-Thread-Id": thread})
    assert refused.value.code == "conversation_not_yours" and say("not_your_conversation") in refused.value.message
    with pytest.raises(openai.PermissionDeniedError):
        await client("E1002").chat.completions.create(model=MODEL_ID, messages=[user("and last month?")],
                                                      stream=True, extra_headers={"X-Thread-Id": thread})
    state = await resources.desk.graph.aget_state({"configurable": {"thread_id": thread}})
    assert state.values["user"] == "E1001" and len(state.values["messages"]) == 2
    follow, same = await ask(client(), [user("and last month?")], extra_headers={"X-Thread-Id": thread})
    assert same == thread and "October 2026" in follow.choices[0].message.content, "the owner carries on"


async def test_an_expired_token_is_refused_in_openais_shape(client):
    with pytest.raises(openai.AuthenticationError) as refused:
        await ask(client(tok=token(exp=int(time.time()) - 3600)), [user(LEAVE)])
    assert "expired" in refused.value.message and refused.value.type == "authentication_error"


async def test_over_the_rate_limit_is_a_429_with_retry_after(client, resources):
    resources.rate_limit.left = 0
    with pytest.raises(openai.RateLimitError) as slowed:
        await ask(client(), [user(LEAVE)])
    assert slowed.value.response.headers["retry-after"] == "42" and slowed.value.code == "rate_limit_exceeded"


@pytest.mark.parametrize(("extra", "param"), [
    ({"tools": [{"type": "function", "function": {"name": "f", "parameters": {}}}]}, "tools"),
    ({"tool_choice": "auto"}, "tool_choice"),
    ({"functions": [{"name": "f"}]}, "functions"),
    ({"n": 2}, "n"),
    ({"logprobs": True}, "logprobs"),
    ({"top_logprobs": 3}, "top_logprobs"),
    ({"response_format": {"type": "json_object"}}, "response_format"),
    ({"modalities": ["text", "audio"]}, "modalities"),
    ({"messages": [{"role": "user", "content": [{"type": "text", "text": "What is this?"},
                                                {"type": "image_url", "image_url": {"url": "http://x/a.png"}}]}]},
     "messages[0].content[1]"),
    ({"messages": [user("hi"), {"role": "tool", "content": "42", "tool_call_id": "c1"}, user(LEAVE)]},
     "messages[1].role"),
])
async def test_a_parameter_the_desk_cannot_honour_is_a_400_naming_it(client, extra, param):
    body = {"messages": [user(LEAVE)], **extra}
    with pytest.raises(openai.BadRequestError) as refused:
        await client().chat.completions.create(model=MODEL_ID, **body)
    assert refused.value.param == param and refused.value.code == "unsupported_parameter"


@pytest.mark.parametrize(("messages", "says"), [
    ([], "messages"),
    ([{"role": "system", "content": "You are helpful."}], "no user message"),
    ([user(LEAVE), assistant("You have 1 days.")], "last message must be the user's"),
    ([user("   ")], "empty"),
    ([user("x" * 4001)], "4,001 characters"),
    ([{"role": "robot", "content": "hi"}], "messages[0].role"),
])
async def test_bad_input_is_a_clear_400(client, messages, says):
    with pytest.raises(openai.BadRequestError) as refused:
        await client().chat.completions.create(model=MODEL_ID, messages=messages)
    assert says in refused.value.message


async def test_a_bad_body_or_thread_header_is_a_400(http):
    auth = {"Authorization": f"Bearer {token()}"}
    r = await http.post("/v1/chat/completions", headers=auth, content=b"{not json")
    assert r.status_code == 400 and r.json()["error"]["code"] == "invalid_json"
    r = await http.post("/v1/chat/completions", headers={**auth, "X-Thread-Id": "../x"},
                        json={"model": MODEL_ID, "messages": [user(LEAVE)]})
    assert r.status_code == 400 and r.json()["error"]["param"] == "X-Thread-Id"
    r = await http.post("/v1/chat/completions", json={"messages": []})
    assert r.status_code == 401, "the credential is checked before the body"


async def test_accepted_parameters_change_nothing_but_max_tokens_can_shorten(client, monkeypatch):
    contexts = []

    def recording(desk, question, user, thread, ctx):
        contexts.append(ctx)
        return stream_turn(desk, question, user, thread, ctx)

    monkeypatch.setattr(openai_api, "stream_turn", recording)
    plain, _ = await ask(client(), [user(LEAVE)])
    tuned, _ = await ask(client(), [user(LEAVE)], temperature=1.5, top_p=0.5, stop=["\n"], seed=7, max_tokens=50,
                         user="someone", presence_penalty=0.2, tool_choice="none")
    assert tuned.choices[0].message.content == plain.choices[0].message.content
    assert contexts[-1].answer_max_tokens == 50
    await ask(client(), [user(LEAVE)], max_completion_tokens=5000)
    assert contexts[-1].answer_max_tokens == Context().answer_max_tokens, "never longer than the desk's"


async def test_without_redis_the_desk_still_answers_in_a_new_thread(client, resources, monkeypatch):
    first, thread = await ask(client(), [user(PAY)])

    async def down(*args, **kwargs):
        raise RedisConnectionError("Redis is down")

    monkeypatch.setattr(resources.desk.deps.redis, "get", down)
    monkeypatch.setattr(resources.desk.deps.redis, "set", down)
    again, other = await ask(client(), [user(PAY), assistant(first.choices[0].message.content), user(PAY)])
    assert other != thread and again.choices[0].message.content == first.choices[0].message.content


async def test_a_turn_that_fails_is_an_error_openai_clients_raise(client, monkeypatch):
    why = failure("turn_failed", "fail", kind="Boom")
    failed = {"route": "error", "error": why.message, "failure": why.as_dict()}

    async def stream_turn(desk, question, user, thread, ctx):
        if "late" in question:
            yield "delta", "Half an ans"
        yield "final", {**failed, "thread": thread, "answer": ""}

    monkeypatch.setattr(openai_api, "stream_turn", stream_turn)
    with pytest.raises(openai.InternalServerError) as early:
        await ask(client(), [user("fail early")])
    assert "Boom" in early.value.message
    stream = await client().chat.completions.create(model=MODEL_ID, messages=[user("fail late")], stream=True)
    with pytest.raises(openai.APIError, match="Boom"):
        async for _ in stream:
            pass


async def test_a_desk_that_cannot_be_built_is_a_503_in_the_askers_language_and_the_next_request_builds_it(
        client, resources):
    desk, resources.desk = resources.desk, None  # its store down at start
    with pytest.raises(openai.APIStatusError) as refused:
        await ask(client(), [user("Wie viele Urlaubstage habe ich noch?")])
    error = refused.value
    assert error.status_code == 503 and error.response.headers["retry-after"] == "30"
    assert error.body["type"] == "server_error" and error.body["code"] == "service_unavailable"
    assert error.body["message"] == say("desk_unavailable", "de", kind="ConnectionRefusedError")
    resources.desk = desk  # the store is back: the next request is answered
    done, _ = await ask(client(), [user(LEAVE)])
    assert done.choices[0].message.content.startswith("You have 1 day of annual leave left")
