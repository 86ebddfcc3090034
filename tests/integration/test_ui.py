"""The Gradio chat in a real browser: tokens arrive before the answer is complete, steps are shown."""

import os
import re
import sys
import time
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import sync_playwright

from app.settings import ROOT
from tests.integration.servers import serving

ARTIFACTS = ROOT / "tests" / "artifacts"
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]
PORT = 17860


@pytest.fixture(scope="module")
def chat_url(running):
    env = {**os.environ, "GRADIO_ANALYTICS_ENABLED": "False"}
    url = f"http://127.0.0.1:{PORT}/"
    with serving([sys.executable, "-m", "app", "ui", "--port", str(PORT)], url, "ui-test.log", env=env):
        yield url


def _ask(page, question):
    page.locator("#question textarea").fill(question)
    page.locator("#question textarea").press("Enter")


def test_chat_streams_the_answer_and_shows_the_steps(chat_url):
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_FLAGS)
        page = browser.new_page(viewport={"width": 1100, "height": 900})
        page.goto(chat_url)
        page.wait_for_selector("#question textarea", timeout=60_000)
        _ask(page, "Write a short cheerful note to my team about Mondays.")
        bots = page.locator("#chat .bot, #chat [data-testid='bot']")
        states: list[str] = []
        seen_steps = ""
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            text = bots.last.inner_text() if bots.count() else ""
            whole = page.locator("#chat").inner_text()
            if "router chose" in whole:
                seen_steps = whole
            if text and (not states or text != states[-1]):
                states.append(text)
                if len(states) == 3:
                    page.screenshot(path=str(ARTIFACTS / "chat-mid-stream.png"))
            if "Path:" in page.locator("#chat").inner_text():
                break
            time.sleep(0.05)
        final = bots.last.inner_text()
        page.screenshot(path=str(ARTIFACTS / "chat-answered.png"))
        chat_text = page.locator("#chat").inner_text()
        browser.close()
    partial = [s for s in states if s != final and final.startswith(s.strip()[:10])]
    assert len(partial) >= 2, f"expected the answer to grow in steps, saw {len(states)} states"
    assert "Path: llm" in chat_text  # the collapsible steps with the route and durations
    assert re.search(r"router chose free_writing \(confidence [01]\.\d\d", seen_steps + chat_text), chat_text[:500]
    assert Path(ARTIFACTS / "chat-answered.png").stat().st_size > 10_000


def test_metrics_endpoint_serves_what_the_dashboard_reads(chat_url):
    import json
    import re

    body = httpx.get(chat_url + "metrics", timeout=10).text
    assert re.search(r'helpdesk_request_seconds_count\{route="llm"\} [1-9]', body), "the chat's turn was not counted"
    dashboard = json.loads((ROOT / "docs" / "grafana" / "helpdesk-dashboard.json").read_text())
    exprs = " ".join(t["expr"] for p in dashboard["panels"] for t in p["targets"])
    for name in set(re.findall(r"helpdesk_[a-z_]+", exprs)):
        base = re.sub(r"_(bucket|count|sum)$", "", name)
        assert f"# TYPE {base} " in body, f"dashboard reads {name}, which /metrics does not expose"
    assert httpx.get(chat_url + "healthz", timeout=5).json() == {"ok": True}
