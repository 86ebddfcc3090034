"""LangGraph Studio's server (`langgraph dev`) serves the graph named in langgraph.json."""

import shutil
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from langgraph_sdk import get_client

from app.settings import ROOT

PORT = 12124


@pytest.fixture(scope="module")
def studio(running):
    exe = Path(sys.executable).parent / "langgraph"
    cmd = [str(exe) if exe.exists() else shutil.which("langgraph"), "dev", "--no-browser", "--no-reload",
           "--port", str(PORT)]
    log = open(ROOT / ".run" / "logs" / "studio-test.log", "wb")
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{PORT}"
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        try:
            if httpx.get(url + "/ok", timeout=2).status_code == 200:
                break
        except httpx.HTTPError:
            pass
        assert proc.poll() is None, "langgraph dev exited; see .run/logs/studio-test.log"
        time.sleep(1)
    yield url
    proc.terminate()
    proc.wait(15)


async def test_studio_runs_a_thread(studio):
    client = get_client(url=studio)
    assistants = await client.assistants.search(graph_id="helpdesk")
    assert assistants
    thread = await client.threads.create()
    ask = {"messages": [{"role": "user", "content": "How many leave days do I have left?"}], "user": "E1004"}
    out = await client.runs.wait(thread["thread_id"], "helpdesk", input=ask)
    assert out["route"] == "template" and out["answer"].startswith("You have")
    ask = {"messages": [{"role": "user", "content": "When do we get paid?"}], "user": "E1004"}
    out = await client.runs.wait(thread["thread_id"], "helpdesk", input=ask)
    assert out["route"] == "faq" and len(out["messages"]) == 4  # the server kept the thread's history
