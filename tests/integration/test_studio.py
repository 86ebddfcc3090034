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


def _workload_sample() -> list[list[dict]]:
    """Conversations of the benchmark's workload, each a list of turns in order: one whole session, and three
    single-turn questions of each kind that takes a shortcut or is a near miss (FAQ, tools, handbook, compound).
    """
    rows = [json.loads(line) for line in (ROOT / "data" / "bench" / "workload.jsonl").read_text().splitlines()]
    sessions: dict[str, list[dict]] = {}
    for row in rows:
        sessions.setdefault(row["session"], []).append(row)
    long = next(turns for name, turns in sessions.items() if len(turns) > 3)
    by_kind: dict[str, list[list[dict]]] = {}
    for row in rows:
        if row["kind"] in ("faq", "tool", "multi_tool", "kb", "near_miss", "compound"):
            by_kind.setdefault(row["kind"], []).append([row])
    return [sorted(long, key=lambda r: r["turn"]), *(turn for turns in by_kind.values() for turn in turns[:3])]


def _parts(text: str) -> list[str]:
    """A compound answer's sentences, in any order."""
    from graph.kit import pieces

    return sorted(p.strip() for p in pieces(text))


async def test_studio_and_the_chat_give_the_same_route_and_answer(studio, helpdesk, clear_cache):
    """One path: Studio's server runs the same graph as the chat, so every question of the workload gets the same
    route and, where no LLM writes it, the same answer; Studio's streamed text is its final answer.
    """
    from app.turn import run_turn
    from graph.context import Context

    client = get_client(url=studio)
    today = "2026-11-29"  # the workload's date
    compared = 0
    for turns in _workload_sample():
        thread, chat_thread = (await client.threads.create())["thread_id"], None
        for item in turns:
            ask = {"messages": [{"role": "user", "content": item["q"]}], "user": item["user"]}
            streamed, out, errors = [], {}, []
            async for part in client.runs.stream(thread, "helpdesk", input=ask, context={"today": today},
                                                 stream_mode=["custom", "values"]):
                if part.event == "custom" and "answer_delta" in (part.data or {}):
                    streamed.append(part.data["answer_delta"])
                elif part.event == "values":
                    out = part.data
                elif part.event == "error":
                    errors.append(part.data)
            assert not errors, (item["q"], errors)
            row = await run_turn(helpdesk, item["q"], item["user"], chat_thread, Context(today=today))
            chat_thread = row["thread"]
            assert out["route"] == row["route"], item["q"]
            assert " ".join("".join(streamed).split()) == " ".join(out["answer"].split()), item["q"]
            if row["route"] != "llm":  # the small LLM's wording may vary; every other answer is the graph's own
                if "+" in (row["intent"] or ""):  # a compound answer's parts come in the order their tools returned
                    assert _parts(out["answer"]) == _parts(row["answer"]), item["q"]
                else:
                    assert out["answer"] == row["answer"], item["q"]
            compared += 1
    assert compared >= 25
