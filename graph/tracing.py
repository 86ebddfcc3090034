"""Trace annotations: OpenTelemetry spans per node and metadata on the LangSmith run of each node.

Both are no-ops unless configured: OpenTelemetry's API does nothing without an SDK provider (the
app installs one when OTEL_EXPORTER_OTLP_ENDPOINT is set), and LangSmith runs exist only with
LANGSMITH_TRACING=true.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from opentelemetry import trace

_tracer = trace.get_tracer("helpdesk.graph")


@contextlib.contextmanager
def node_span(name: str) -> Iterator[Any]:
    """An OpenTelemetry span around one node."""
    with _tracer.start_as_current_span(f"node.{name}") as span:
        yield span


def annotate(**metadata: Any) -> None:
    """Attach metadata (route, cache outcomes, ...) to the current LangSmith run and OTel span."""
    clean = {k: v for k, v in metadata.items() if v is not None}
    span = trace.get_current_span()
    for k, v in clean.items():
        span.set_attribute(f"helpdesk.{k}", v if isinstance(v, str | int | float | bool) else str(v))
    try:
        from langsmith.run_helpers import get_current_run_tree

        run = get_current_run_tree()
    except Exception:  # noqa: BLE001 - tracing must never break a request
        run = None
    if run is not None:
        run.metadata.update(clean)
