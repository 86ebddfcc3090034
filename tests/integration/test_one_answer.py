"""One answer per turn: the text that streamed is the text every entry point keeps, and the conversation's.

Forced where they used to part: an LLM answer that starts repeating itself (the real model loops on this
request, and its repeat is cut), and a compound request whose second tool fails (the first part streams as
soon as its tool returns, then what could not be fetched). Asked through the chat's handler, the OpenAI
endpoint (streamed and not) and the CLI; each keeps exactly what streamed, equal to the checkpoint's answer.
"""

from __future__ import annotations

import os
import subprocess
import sys
from types import SimpleNamespace

import openai
import pytest

from app.openai_wire import MODEL_ID
from app.resources import build_resources
from app.turn import new_thread_id
from app.ui import respond
from graph.llm import repeat_start
from tests.integration.servers import ROOT, serving
from tests.integration.test_auth import login, passwords  # noqa: F401 - a fixture
from tests.integration.test_faults import faults  # noqa: F401 - a fixture

PORT = 17865
# SmolLM2-135M at temperature 0 loops on this chant, written for E1001 (checked over several dates and runs).
CHANT = "Write a chant for the store opening: go team go, go team go, go team go, go team go, go team go"
COMPOUND = "How many leave days do I have left and what's the weather in Madrid tomorrow?"
ASKED = [(CHANT, "E1001"), (COMPOUND, "E1008")]


@pytest.fixture(scope="module")
def openai_url(running):
    env = {**os.environ, "GRADIO_ANALYTICS_ENABLED": "False", "RATE_LIMIT": "120/minute", "LLM_DRAFTS": "true"}
    url = f"http://127.0.0.1:{PORT}"
    with serving([sys.executable, "-m", "app", "ui", "--port", str(PORT)], url + "/healthz", "one-answer.log",
                 env=env):
        yield url + "/v1"


async def _checkpointed(resources, thread: str) -> str:
    desk = await resources.get()
    return (await desk.graph.aget_state({"configurable": {"thread_id": thread}})).values["answer"]


async def _chat(resources, question: str, user: str) -> tuple[str, str, str]:
    """The chat's handler as Gradio runs it: (the text it streamed, the text it kept, the thread)."""
    thread, shown = new_thread_id(), ""
    request = SimpleNamespace(username=user, headers={"accept-language": "en"})
    async for history, _ in respond(resources, question, [], thread, request):  # type: ignore[arg-type]
        now = history[-1].content
        assert now.startswith(shown), "the chat replaced text it had shown"
        shown = now
    return shown, history[-1].content, thread


def _openai(url: str, token: str, question: str, stream: bool) -> tuple[str, str]:
    """(the text it kept, the thread) from an `openai` client."""
    client = openai.OpenAI(base_url=url, api_key=token, max_retries=0, timeout=180)
    raw = client.chat.completions.with_raw_response.create(model=MODEL_ID, messages=[{"role": "user",
                                                           "content": question}], stream=stream)
    if stream:
        return "".join(c.choices[0].delta.content or "" for c in raw.parse() if c.choices), raw.headers["x-thread-id"]
    return raw.parse().choices[0].message.content or "", raw.headers["x-thread-id"]


def _cli(question: str, user: str) -> tuple[str, str, str]:
    """(the text `python -m app ask` printed, its log, the thread)."""
    thread = new_thread_id()
    done = subprocess.run([sys.executable, "-m", "app", "-v", "ask", "--user", user, "--thread", thread,
                           "--option", "llm_drafts=true", question], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)
    printed, _, tail = done.stdout.rpartition("\n[")
    assert tail.endswith("]\n") and done.returncode in (0, 1), done.stderr[-2000:]
    return printed, done.stderr, thread


async def test_streamed_text_is_the_answer(settings, openai_url, faults, passwords, fresh_cache):  # noqa: F811
    faults("weather", "error")  # the compound request's second part cannot be fetched (nor cached: fresh_cache)
    resources = build_resources(settings.model_copy(update={"llm_drafts": True}))
    try:
        for question, user in ASKED:
            streamed, kept, thread = await _chat(resources, question, user)
            assert kept == streamed == await _checkpointed(resources, thread) != ""
            token = login(settings, passwords, user)
            for stream in (True, False):
                kept, thread = _openai(openai_url, token, question, stream)
                assert kept == await _checkpointed(resources, thread), f"OpenAI endpoint, stream={stream}"
            printed, log, thread = _cli(question, user)
            assert printed == await _checkpointed(resources, thread), "the CLI"
            if question == CHANT:  # the repeat was forced, and cut before it streamed
                assert "started repeating itself" in log and repeat_start(printed) is None
            else:
                assert "could not fetch everything" in printed and "days" in printed.split(".")[0]
    finally:
        await resources.close()
