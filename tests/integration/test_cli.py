import json
import subprocess
import sys

from app.settings import ROOT


def test_ask_file_answers_each_line_and_reports_bad_ones(running, tmp_path):
    path = tmp_path / "q.jsonl"
    path.write_bytes(b'{"q": "When is payday?", "user": "E1003"}\n'
                     b'not json at all\n'
                     b'{"q": "\xff\xfe broken utf-8 leave balance left?", "user": "E1003"}\n'
                     b'{"user": "E1003"}\n'
                     b'{"question": "When is payday?", "user": "E1003"}\n')
    out = subprocess.run([sys.executable, "-m", "app", "ask", "--file", str(path), "--json"], cwd=ROOT,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    rows = [json.loads(line) for line in out.stdout.splitlines()]
    assert len(rows) == 5
    assert rows[0]["route"] == "faq" and rows[0]["error"] is None
    assert rows[1]["error"] and "not valid JSON" in rows[1]["error"]
    assert rows[2]["error"] is None and rows[2]["answer"].startswith("You have")  # the bytes it could read
    assert rows[3]["error"] and '"q"' in rows[3]["error"]
    assert rows[4]["route"] == "faq" and rows[4]["q"] == "When is payday?"  # the field's long name works too
    for row in rows:
        assert {"q", "user", "thread", "answer", "route", "tools", "llm_calls", "timings_ms", "total_ms",
                "error"} <= set(row)
