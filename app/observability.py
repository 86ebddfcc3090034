"""Operating the help desk: Prometheus metrics, OpenTelemetry export, LangSmith run metadata.

- Prometheus: `record(row)` after every answered turn; the chat server exposes `/metrics`.
- OpenTelemetry: with OTEL_EXPORTER_OTLP_ENDPOINT set, node spans (graph/tracing.py) are exported
  over OTLP/HTTP; otherwise the API stays a no-op.
- LangSmith: the standard LANGSMITH_* variables turn tracing on (LangChain does the rest);
  `run_config` adds the metadata every run carries, with the user id hashed.
"""

from __future__ import annotations

import hashlib
import logging
import os
from typing import Any

from prometheus_client import CONTENT_TYPE_LATEST, Counter, Histogram, generate_latest

log = logging.getLogger(__name__)
_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 1.5, 2, 3, 5, 8, 13, 21, 34, 60)

REQUEST_SECONDS = Histogram("helpdesk_request_seconds", "End-to-end answer latency", ["route"], buckets=_BUCKETS)
TTFT_SECONDS = Histogram("helpdesk_first_token_seconds", "Time to the first streamed answer piece", ["route"],
                         buckets=_BUCKETS)
LLM_TTFT_SECONDS = Histogram("helpdesk_llm_first_token_seconds", "Time to first token on requests answered by "
                             "the LLM", buckets=_BUCKETS)
TOOL_SECONDS = Histogram("helpdesk_tool_seconds", "Tool call latency as seen by the graph", ["tool", "cache"],
                         buckets=_BUCKETS)
TOOL_CACHE = Counter("helpdesk_tool_cache_total", "Tool cache outcomes", ["tool", "outcome"])
LLM_CALLS = Counter("helpdesk_llm_calls_total", "LLM requests made", ["route"])
ERRORS = Counter("helpdesk_errors_total", "Turns that ended with an error message", ["route"])


def user_hash(user: str) -> str:
    """A stable pseudonym for traces: who asked, without the employee id."""
    salt = os.environ.get("HELPDESK_TRACE_SALT", "helpdesk")
    return hashlib.sha256(f"{salt}:{user}".encode()).hexdigest()[:16]


def run_config(thread: str, user: str) -> dict[str, Any]:
    """LangGraph config for one turn: the thread, and metadata every trace carries."""
    return {"configurable": {"thread_id": thread}, "run_name": "helpdesk",
            "metadata": {"user_hash": user_hash(user), "app": "helpdesk"}}


def record(row: dict[str, Any]) -> None:
    """Count one finished turn (a row as `ask --json` prints it)."""
    route = row.get("route") or "unknown"
    REQUEST_SECONDS.labels(route).observe(row.get("total_ms", 0) / 1000)
    if row.get("ttft_ms") is not None:
        TTFT_SECONDS.labels(route).observe(row["ttft_ms"] / 1000)
        if row.get("llm_calls"):
            LLM_TTFT_SECONDS.observe(row["ttft_ms"] / 1000)
    for t in row.get("tools") or []:
        TOOL_SECONDS.labels(t["name"], t["cache"]).observe(t["ms"] / 1000)
        TOOL_CACHE.labels(t["name"], t["cache"]).inc()
    if row.get("llm_calls"):
        LLM_CALLS.labels(route).inc(row["llm_calls"])
    if row.get("error"):
        ERRORS.labels(route).inc()


def metrics_text() -> tuple[bytes, str]:
    """The Prometheus exposition and its content type."""
    return generate_latest(), CONTENT_TYPE_LATEST


_otel_ready = False


def setup_otel() -> bool:
    """Export node spans over OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT is set; True when enabled."""
    global _otel_ready
    if _otel_ready or not os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT"):
        return _otel_ready
    from opentelemetry import trace
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    provider = TracerProvider(resource=Resource.create({"service.name": "helpdesk"}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)
    _otel_ready = True
    log.info("OpenTelemetry export to %s", os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"])
    return True
