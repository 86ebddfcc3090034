"""LangGraph Studio's server (`langgraph dev`) serves the graph named in langgraph.json."""

import json
import shutil
import sys
from pathlib import Path

import pytest
from langgraph_sdk import get_client

from app.settings import ROOT
from tests.integration.servers import serving

PORT = 12124


@pytest.fixture(scope="module")
def studio(running, tmp_path_factory):
    """The dev server in a temporary folder: its in-memory state (`.langgraph_api/`) never lands in the repo."""
    folder = tmp_path_factory.mktemp("studio")
    config = json.loads((ROOT / "langgraph.json").read_text())  # the project's config, its paths made absolute
    config["dependencies"] = [str(ROOT)]
    config["graphs"] = {k: str(ROOT / v.split(":")[0]) + ":" + v.split(":")[1] for k, v in config["graphs"].items()}
    (folder / "langgraph.json").write_text(json.dumps(config))
    exe = Path(sys.executable).parent / "langgraph"
    cmd = [str(exe) if exe.exists() else shutil.which("langgraph"), "dev", "--no-browser", "--no-reload",
           "--port", str(PORT)]
    url = f"http://127.0.0.1:{PORT}"
    with serving(cmd, url + "/ok", "studio-test.log", cwd=folder):
        yield url


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
