"""The tools as LangChain tools, for agents that call tools themselves (LangChain's `create_agent`).

Personal tools are bound to the caller: the employee id is not an argument the model can set.
"""

from __future__ import annotations

from typing import Any

from langchain_core.tools import BaseTool, StructuredTool
from pydantic import create_model

from tools.client import ToolClient, ToolError
from tools.registry import TOOLS


def make_tools(client: ToolClient, user: str) -> list[BaseTool]:
    """One StructuredTool per registry entry, calling the backend."""
    out: list[BaseTool] = []
    for spec in TOOLS.values():
        fields = {k: (f.annotation, f) for k, f in spec.args.model_fields.items() if k != "employee"}
        schema = create_model(f"{spec.name}_args", **fields)  # type: ignore[call-overload]

        async def run(_name: str = spec.name, _personal: bool = spec.personal, **kwargs: Any) -> str:
            args = {**kwargs, **({"employee": user} if _personal else {})}
            try:
                return str(await client.call(_name, args))
            except ToolError as exc:
                return f"error: {exc}"

        out.append(StructuredTool.from_function(coroutine=run, name=spec.name, description=spec.description,
                                                args_schema=schema))
    return out
