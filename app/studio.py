"""The graph for LangGraph Studio / `langgraph dev` (named in langgraph.json).

Built without a checkpointer: the LangGraph server brings its own persistence. The process's
clients are built once, on the first run, inside the server's event loop.
"""

from __future__ import annotations

import asyncio
from typing import Any

from app.runtime import build_deps
from app.settings import get_settings
from graph.graph import build_graph

_graph: Any = None
_lock = asyncio.Lock()


async def make_graph(config: Any = None) -> Any:
    """Graph factory used by `langgraph dev`."""
    global _graph
    async with _lock:
        if _graph is None:
            _graph = build_graph(await build_deps(get_settings()), checkpointer=None)
    return _graph
