"""The graph for LangGraph Studio / `langgraph dev` (named in langgraph.json).

Built from the process's resources (app/resources.py) without a checkpointer: the LangGraph server brings its
own persistence. They are built once, on the first run, inside the server's event loop.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from app.resources import Resources, build_resources
from app.settings import get_settings


@lru_cache
def studio_resources() -> Resources:
    """The resources of the LangGraph server's process (nothing opened until the first run)."""
    return build_resources(get_settings(), persistent=False)


async def make_graph(config: Any = None) -> Any:
    """Graph factory used by `langgraph dev`: the compiled graph, as LangGraph serves it."""
    return (await studio_resources().get()).graph
