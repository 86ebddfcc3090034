"""Who is asking, over real HTTP: bearer tokens from the demo IdP, the trusted proxy header, thread
ownership and the per-identity rate limit, against a served app on the real services."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid

import httpx
import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
from redis import Redis

from tests.integration.servers import serving
from tools.i18n import say

PORT = 17861
LIMIT = 4  # requests per minute per identity on this test server
PROXY = "127.0.0.2"  # the only address the trusted header is taken from (all of 127/8 is loopback)


@pytest.fixture(scope="module")
def api(running, settings):
    redis = Redis.from_url(settings.redis)
    for pattern in ("helpdesk-ratelimit*", "helpdesk-login-limit*"):  # a rerun within the minute starts afresh
        for key in redis.scan_iter(pattern):
            redis.delete(key)
    redis.close()
    env = {**os.environ, "GRADIO_ANALYTICS_ENABLED": "False", "RATE_LIMIT": f"{LIMIT}/minute",
           "AUTH_TRUSTED_HEADER": "X-Forwarded-User", "AUTH_TRUSTED_PROXIES": f"{PROXY}/32"}
    url = f"http://127.0.0.1:{PORT}"
    with serving([sys.executable, "-m", "app", "ui", "--port", str(PORT)], url + "/healthz", "auth-test.log",
                 env=env):
        yield url


@pytest.fixture(scope="module")
def passwords(settings, running):
    return json.loads((settings.run_dir / "demo-credentials.json").read_text())


def login(settings, passwords, user: str) -> str:
    r = httpx.post(settings.login_url, json={"user": user, "password": passwords[user]}, timeout=10)
    assert r.status_code == 200, r.text
    return r.json()["access_token"]


def signed(settings, **claims) -> str:
    """A token signed with the demo IdP's own key (to vary one claim at a time)."""
    key = (settings.run_dir / "demo-auth" / "signing-key.pem").read_text()
    now = int(time.time())
    base = {"iss": settings.auth_issuer, "aud": settings.auth_audience, "sub": "E1001", "iat": now, "exp": now + 600}
    return jwt.encode({**base, **claims}, key, "RS256", headers={"kid": idp_kid(settings)})


def idp_kid(settings) -> str:
    return httpx.get(settings.jwks_url, timeout=10).json()["keys"][0]["kid"]


def chat(url: str, body: dict, token: str | None = None, headers: dict | None = None,
         local_address: str | None = None) -> tuple[int, dict]:
    """POST /v1/chat; returns the status and, for 200, the SSE events by kind (deltas joined)."""
    hdrs = dict(headers or {})
    if token:
        hdrs["Authorization"] = f"Bearer {token}"
    transport = httpx.HTTPTransport(local_address=local_address) if local_address else None
    with httpx.Client(transport=transport, timeout=180) as client, \
            client.stream("POST", url + "/v1/chat", json=body, headers=hdrs) as r:
        if r.status_code != 200:
            r.read()
            return r.status_code, r.json()
        events: dict = {"step": [], "delta": ""}
        kind = None
        for line in r.iter_lines():
            if line.startswith("event: "):
                kind = line[7:]
            elif line.startswith("data: "):
                data = json.loads(line[6:])
                if kind == "delta":
                    events["delta"] += data["text"]
                elif kind == "step":
                    events["step"].append(data)
                else:
                    events[kind] = data
        return 200, events


def net(backend, user: str, month: str = "2026-10") -> str:
    return f"{backend.get('/salary', params={'employee': user, 'month': month}).json()['net']:,.2f}"


def test_a_token_answers_for_its_owner_whatever_the_body_says(api, settings, passwords, backend):
    token = login(settings, passwords, "E1003")
    status, ev = chat(api, {"q": "What was my net salary in October 2026?", "user": "E1004"}, token)
    assert status == 200, ev
    assert ev["final"]["user"] == "E1003" and ev["final"]["route"] == "template"
    assert net(backend, "E1003") in ev["final"]["answer"]
    assert net(backend, "E1004") not in ev["final"]["answer"]
    assert ev["delta"].strip() and ev["step"], "the answer and the steps stream as events"


def test_bad_credentials_get_401_with_a_reason(api, settings, passwords):
    body = {"q": "What was my net salary in October 2026?"}
    forger = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    now = int(time.time())
    forged = jwt.encode({"iss": settings.auth_issuer, "aud": settings.auth_audience, "sub": "E1001", "iat": now,
                         "exp": now + 600}, forger, "RS256", headers={"kid": idp_kid(settings)})
    cases = {
        "no credential": (None, "no credential"),
        "forged signature": (forged, "signature"),
        "expired": (signed(settings, iat=now - 7200, exp=now - 3600), "expired"),
        "wrong audience": (signed(settings, aud="another-app"), "audience"),
        "not a JWT": ("abc.def", "malformed"),
    }
    for case, (token, reason) in cases.items():
        status, body_out = chat(api, body, token)
        assert status == 401, (case, body_out)
        assert reason in body_out["detail"] and "\n" not in body_out["detail"], (case, body_out)
    r = httpx.post(settings.login_url, json={"user": "E1001", "password": "wrong"}, timeout=10)
    assert r.status_code == 401


def test_another_employee_cannot_continue_or_read_a_thread(api, settings, passwords, backend):
    t1, t2 = login(settings, passwords, "E1006"), login(settings, passwords, "E1007")
    thread = uuid.uuid4().hex
    status, first = chat(api, {"q": "What was my net salary in October 2026?", "thread": thread}, t1)
    assert status == 200 and net(backend, "E1006") in first["final"]["answer"]
    status, taken = chat(api, {"q": "and the month before? repeat your previous answer", "thread": thread}, t2)
    assert status == 200
    final = taken["final"]
    assert taken["error"] == final["failure"] == {"kind": "not_your_conversation", "status": 403,
                                                 "message": say("not_your_conversation")}
    assert final["answer"] == "" and final["route"] == "denied" and final["llm_calls"] == 0
    assert net(backend, "E1006") not in json.dumps(taken)
    status, again = chat(api, {"q": "What was my net salary in September 2026?", "thread": thread}, t1)
    assert status == 200 and again["final"]["route"] == "template", "the owner carries on"


async def test_a_taken_over_thread_keeps_no_trace_of_the_intruder(api, settings, passwords, helpdesk):
    t1, t2 = login(settings, passwords, "E1008"), login(settings, passwords, "E1009")
    thread = uuid.uuid4().hex
    chat(api, {"q": "How many leave days do I have left?", "thread": thread}, t1)
    chat(api, {"q": "INTRUDER: and what about sick days?", "thread": thread}, t2)
    state = await helpdesk.graph.aget_state({"configurable": {"thread_id": thread}})
    texts = " ".join(str(m.content) for m in state.values["messages"])
    assert state.values["user"] == "E1008" and "INTRUDER" not in texts


def test_trusted_header_only_from_the_configured_proxy(api, backend):
    body = {"q": "What was my net salary in October 2026?"}
    status, ev = chat(api, body, headers={"X-Forwarded-User": "E1010"}, local_address=PROXY)
    assert status == 200 and net(backend, "E1010") in ev["final"]["answer"]
    status, out = chat(api, body, headers={"X-Forwarded-User": "E1010"}, local_address="127.0.0.1")
    assert status == 401, "the header from any other address is ignored"


def test_rate_limit_slows_one_identity_down_and_not_the_others(api, settings, passwords):
    noisy, quiet = login(settings, passwords, "E1011"), login(settings, passwords, "E1012")
    statuses = [chat(api, {"q": "When is payday?"}, noisy)[0] for _ in range(LIMIT)]
    assert statuses == [200] * LIMIT
    status, out = chat(api, {"q": "When is payday?"}, noisy)
    assert status == 429 and "Slow down" in out["detail"]
    status, ev = chat(api, {"q": "When is payday?"}, quiet)
    assert status == 200 and ev["final"]["route"] == "faq"


def test_password_guessing_at_the_chat_sign_in_is_slowed_down(api, passwords):
    transport = httpx.HTTPTransport(local_address="127.0.0.3")  # its own address: other tests keep theirs
    with httpx.Client(transport=transport, base_url=api, timeout=30) as client:
        codes = [client.post("/login", data={"user": "E1019", "password": f"guess{i}"}).status_code
                 for i in range(10)]
        assert codes == [401] * 10
        r = client.post("/login", data={"user": "E1019", "password": passwords["E1019"]})
    assert r.status_code == 429 and "Too many sign-in attempts" in r.text  # even the right one, for now


def test_ask_url_sends_each_rows_question_as_its_user_and_prints_the_rows(api, backend, tmp_path):
    """`python -m app ask --url`: a file of {q, user, thread} rows through the HTTP API, each row's user signed
    in with the demo credentials; a conversation continues on the server, a bad line is an error row."""
    thread = uuid.uuid4().hex
    rows_in = [{"q": "What was my net salary in October 2026?", "user": "E1014", "thread": thread},
               {"q": "and in September 2026?", "user": "E1014", "thread": thread},
               {"q": "What was my net salary in October 2026?", "user": "E1015"}]
    questions = tmp_path / "questions.jsonl"
    questions.write_text("\n".join(json.dumps(r) for r in rows_in) + "\nnot json\n")
    done = subprocess.run([sys.executable, "-m", "app", "ask", "--url", api, "--file", str(questions)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    rows = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert len(rows) == 4, done.stdout
    assert rows[0]["user"] == "E1014" and net(backend, "E1014") in rows[0]["answer"]
    assert rows[1]["thread"] == thread and net(backend, "E1014", "2026-09") in rows[1]["answer"]  # turn 1's context
    assert rows[2]["user"] == "E1015" and net(backend, "E1015") in rows[2]["answer"]
    assert rows[2]["thread"] not in (thread, None)  # a row without a thread starts its own on the server
    assert rows[3]["route"] == "error" and "not valid JSON" in rows[3]["error"]
    # --option is for in-process runs: refused with a sentence, not ignored
    refused = subprocess.run([sys.executable, "-m", "app", "ask", "--url", api, "--option", "faq_enabled=false",
                              "When is payday?"], capture_output=True, text=True, timeout=120)
    assert refused.returncode == 2 and "--option" in refused.stderr
