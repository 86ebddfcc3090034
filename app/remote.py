"""`python -m app ask --url URL`: questions through a served help desk's HTTP API (`POST /v1/chat`), printed
as the in-process `ask --json` prints them.

Each row's user signs in at the demo backend's login endpoint with the demo credentials (the operator's
file beside the backend's database), so a file of `{"q", "user", "thread"}` rows works against a server as it
does in process. The server takes the caller from the bearer token, never from the row.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx

from app.settings import Settings
from app.turn import error_row
from tools.demo_backend.identity import credentials_file


class RemoteError(Exception):
    """Why a row could not be asked (sign-in failed, the server refused or is unreachable)."""


class RemoteAsker:
    """One HTTP client for a run; a token per user, fetched once."""

    def __init__(self, url: str, settings: Settings, timeout_s: float = 300.0) -> None:
        self.url = url.rstrip("/")
        self.settings = settings
        self.client = httpx.Client(timeout=timeout_s)
        self.tokens: dict[str, str] = {}
        self._passwords: dict[str, str] | None = None

    def password(self, user: str) -> str:
        """The demo password of one employee, from the operator's credentials file."""
        if self._passwords is None:
            path = credentials_file(self.settings.demo_db)
            try:
                self._passwords = json.loads(path.read_text())
            except (OSError, ValueError) as exc:
                raise RemoteError(f"no demo credentials at {path} ({exc}); start the backend with "
                                  "`python -m app services up`") from exc
        if user not in self._passwords:
            raise RemoteError(f"no demo credentials for {user}")
        return self._passwords[user]

    def token(self, user: str) -> str:
        """A bearer token for one employee from the demo IdP's login endpoint (once per run)."""
        if user not in self.tokens:
            try:
                r = self.client.post(self.settings.login_url, json={"user": user, "password": self.password(user)})
            except httpx.HTTPError as exc:
                raise RemoteError(f"sign-in at {self.settings.login_url} failed ({type(exc).__name__})") from exc
            if r.status_code != 200:
                raise RemoteError(f"sign-in for {user} refused: HTTP {r.status_code}")
            self.tokens[user] = r.json()["access_token"]
        return self.tokens[user]

    def ask(self, item: dict[str, Any], on_delta: Callable[[str], None] | None = None) -> dict[str, Any]:
        """One question as the row's user; the server's final event is the row (an error row otherwise)."""
        try:
            headers = {"Authorization": f"Bearer {self.token(item['user'])}"}
            body = {"q": item["q"], **({"thread": item["thread"]} if item.get("thread") else {})}
            with self.client.stream("POST", self.url + "/v1/chat", json=body, headers=headers) as r:
                if r.status_code != 200:
                    r.read()
                    detail = r.json().get("detail") if "json" in r.headers.get("content-type", "") else r.text
                    return error_row(item, f"HTTP {r.status_code}: {detail}")
                kind, final = None, None
                for line in r.iter_lines():
                    if line.startswith("event: "):
                        kind = line[7:]
                    elif line.startswith("data: "):
                        data = json.loads(line[6:])
                        if kind == "delta" and on_delta:
                            on_delta(data["text"])
                        elif kind == "final":
                            final = data
        except RemoteError as exc:
            return error_row(item, str(exc))
        except httpx.HTTPError as exc:
            return error_row(item, f"the help desk at {self.url} did not answer ({type(exc).__name__})")
        if final is None:
            return error_row(item, "the stream ended without an answer")
        if served_by := r.headers.get("x-served-by"):  # behind Ray Serve: which replica answered
            final["served_by"] = served_by
        return final

    def close(self) -> None:
        """Close the HTTP connections."""
        self.client.close()
