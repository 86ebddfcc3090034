"""Nothing lost: a conversation continues after the app process stops and starts again."""

import json
import subprocess
import sys
import uuid

from app.settings import ROOT


def _ask(q, thread):
    out = subprocess.run([sys.executable, "-m", "app", "ask", q, "--user", "E1011", "--thread", thread, "--json"],
                         cwd=ROOT, capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.splitlines()[-1])


def test_thread_survives_a_restart(running):
    thread = f"persist-{uuid.uuid4().hex[:8]}"
    first = _ask("What was my salary in March 2026?", thread)  # one process ...
    assert first["route"] == "template" and "March 2026" in first["answer"]
    second = _ask("and last month?", thread)  # ... stopped; a new one continues the thread
    assert second["route"] == "template" and second["intent"] == "salary"
    assert "EUR" in second["answer"] and second["answer"] != first["answer"]
