"""What a person reads when their turn cannot run, written in one place.

Inside the graph, what goes wrong is an outcome the graph writes and streams like any answer (the LLM or a tool
unreachable: graph/nodes.py). Outside it, before or around the graph, a turn is refused or fails: someone else's
conversation, too many questions, a session that ended, the turn breaking, a desk that cannot be built now. Each is
a `Failure`, said in the asker's language from the message catalogs, carried in the turn's row (`failure`), and
rendered by every entry point alike: the chat shows its sentence after what streamed, `POST /v1/chat` sends it as an
`error` event (or its status before the stream), the CLI prints it, the OpenAI endpoint sends OpenAI's error object.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from graph.language import answer_language
from tools.i18n import say

Kind = Literal["not_your_conversation", "rate_limited", "session_ended", "turn_failed", "desk_unavailable"]
# HTTP status, and OpenAI's error type and code, of each kind.
_WIRE: dict[Kind, tuple[int, str, str]] = {
    "not_your_conversation": (403, "permission_error", "conversation_not_yours"),
    "rate_limited": (429, "rate_limit_error", "rate_limit_exceeded"),
    "session_ended": (401, "authentication_error", "session_ended"),
    "turn_failed": (500, "server_error", "turn_failed"),
    "desk_unavailable": (503, "server_error", "service_unavailable"),
}


@dataclass(frozen=True)
class Failure(Exception):
    """A turn that could not run: its kind, the sentence the asker reads, and how long to wait (rate limits)."""

    kind: Kind
    message: str
    retry_after: int | None = None

    @property
    def status(self) -> int:
        """The HTTP status it is answered with."""
        return _WIRE[self.kind][0]

    @property
    def openai_type(self) -> tuple[str, str]:
        """OpenAI's error `type` and `code` for it."""
        return _WIRE[self.kind][1], _WIRE[self.kind][2]

    @property
    def headers(self) -> dict[str, str]:
        """Response headers that go with it (Retry-After)."""
        return {"Retry-After": str(self.retry_after)} if self.retry_after is not None else {}

    def as_dict(self) -> dict[str, Any]:
        """Its form in a turn's row and in the API's `error` event."""
        return {"kind": self.kind, "status": self.status, "message": self.message,
                **({"retry_after": self.retry_after} if self.retry_after is not None else {})}


def failure(what: Kind, question: str, preferred: str | None = None, retry_after: int | None = None,
            **fields: Any) -> Failure:
    """The failure of a turn asking `question`, said in its language (else the caller's `preferred` one); `fields`
    fill its sentence's placeholders.
    """
    lang = answer_language(question, None, preferred)
    return Failure(what, say(what, lang, **({"seconds": retry_after} if retry_after else {}), **fields), retry_after)


def failure_of(row: dict[str, Any]) -> Failure | None:
    """The failure a turn's row carries (None: the turn ran and its answer is the row's)."""
    f = row.get("failure")
    return Failure(f["kind"], f["message"], f.get("retry_after")) if isinstance(f, dict) else None
