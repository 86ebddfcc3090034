"""HTTP client of the tool backend: each tool's route and required fields come from its ToolSpec; errors
become plain sentences.
"""

from __future__ import annotations

from typing import Any

import httpx

from tools.registry import TOOLS


class ToolError(Exception):
    """A tool call failed; `retryable` says whether trying again may help."""

    def __init__(self, message: str, retryable: bool = False) -> None:
        super().__init__(message)
        self.retryable = retryable


class ToolClient:
    """Calls the backend; one pooled connection set per process."""

    def __init__(self, base_url: str, timeout_s: float = 10.0) -> None:
        self.base_url = base_url.rstrip("/")
        self._http = httpx.AsyncClient(base_url=self.base_url, timeout=timeout_s,
                                       limits=httpx.Limits(max_connections=64))

    async def call(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        """Call one tool; raises ToolError with a sentence a person understands."""
        spec = TOOLS[tool]
        query = {name: args[name] for name in spec.args.model_fields if name in args}
        try:
            resp = await self._http.get(spec.path, params=query)
        except httpx.TimeoutException as exc:
            raise ToolError(f"the {tool} service did not answer in time", retryable=True) from exc
        except httpx.HTTPError as exc:
            raise ToolError(f"the {tool} service could not be reached", retryable=True) from exc
        if resp.status_code >= 500:
            raise ToolError(f"the {tool} service is unavailable right now", retryable=True)
        try:
            body = resp.json()
        except ValueError as exc:
            raise ToolError(f"the {tool} service sent an unreadable answer") from exc
        if resp.status_code >= 400:
            detail = body.get("detail") if isinstance(body, dict) else None
            raise ToolError(f"the {tool} service said: {detail or resp.status_code}")
        if not isinstance(body, dict) or not spec.required <= body.keys():
            raise ToolError(f"the {tool} service sent malformed data")
        return body

    async def get_employee(self, employee: str) -> dict[str, Any] | None:
        """The caller's profile (name, city, department), or None when unknown."""
        resp = await self._http.get(f"/employees/{employee}")
        return resp.json() if resp.status_code == 200 else None

    async def aclose(self) -> None:
        """Close the connection pool."""
        await self._http.aclose()
