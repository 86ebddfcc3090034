"""Traces leave the process: LangSmith runs (named by node, with route, cache and a hashed user id)
and OpenTelemetry node spans, both sent to a local capture server standing in for the collectors."""

import gzip
import http.server
import os
import subprocess
import sys
import threading

import pytest

from app.observability import user_hash
from app.settings import ROOT


class Capture(http.server.BaseHTTPRequestHandler):
    bodies: list[tuple[str, bytes]] = []

    def _reply(self) -> None:
        n = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(n) if n else b""
        if self.headers.get("content-encoding") == "gzip":
            body = gzip.decompress(body)
        Capture.bodies.append((self.path, body))
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.end_headers()
        self.wfile.write(b"{}")

    do_POST = do_PATCH = do_PUT = do_GET = _reply

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def collector():
    Capture.bodies = []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Capture)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def test_langsmith_runs_and_otel_spans_arrive(running, collector):
    env = {**os.environ, "LANGSMITH_TRACING": "true", "LANGSMITH_ENDPOINT": collector,
           "LANGSMITH_API_KEY": "lsv2_test_key", "LANGSMITH_PROJECT": "helpdesk-test",
           "OTEL_EXPORTER_OTLP_ENDPOINT": collector}
    out = subprocess.run([sys.executable, "-m", "app", "ask", "How many leave days do I have left?", "--user",
                          "E1004", "--json"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stderr
    runs = b"".join(b for path, b in Capture.bodies if "/runs" in path)
    spans = b"".join(b for path, b in Capture.bodies if path.startswith("/v1/traces"))
    for node in (b"route_question", b"call_tools", b"compose_answer"):
        assert node in runs, f"no LangSmith run for node {node!r}"
        assert b"node." + node in spans, f"no OpenTelemetry span for node {node!r}"
    assert user_hash("E1004").encode() in runs  # hashed user id in the run metadata
    assert b'"route"' in runs and b"template" in runs
    assert b"faq_hit" in runs and b"router_label" in runs  # node metadata: the router's choice and FAQ outcome
    assert b"leave_balance:" in runs  # cache outcome per tool
    assert b"helpdesk.route" in spans and b"leave_balance:" in spans
