"""The OpenAI chat-completions wire format, for the desk's OpenAI-compatible endpoint (app/openai_api.py).

A request is checked here into what the desk can answer: one question (the LAST user message) and the
conversation before it. System and developer messages are ignored: the desk's behaviour is its graph, not a
prompt a client writes. Parameters the desk cannot honour are refused with a 400 that names them, so a client
learns at once instead of getting an answer that silently ignored its tools, images or `n`. Accepted and ignored:
`temperature`/`top_p` (the desk is deterministic: templates, FAQ answers and a temperature-0 LLM), `stop`,
`user` (never an identity: that comes from the bearer token), `seed` and any other field. `max_tokens` and
`max_completion_tokens` can only shorten the LLM-written answers (Context.answer_max_tokens); template and FAQ
answers are written whole.

`usage` counts are estimates, not the model's tokens (most answers never reach the LLM): words and punctuation
marks of the question and of the answer.
"""

from __future__ import annotations

import json
import re
import secrets
import time
from dataclasses import dataclass
from typing import Any, Literal

from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field, ValidationError

MODEL_ID = "helpdesk"
MAX_BODY_BYTES = 1_000_000  # a long conversation's history, with room to spare
MAX_MESSAGES = 400
Turn = tuple[str, str]  # (role "user" | "assistant", text)


class OpenAIError(Exception):
    """An error as OpenAI sends it: `{"error": {"message", "type", "param", "code"}}` with an HTTP status."""

    def __init__(self, status: int, message: str, type_: str = "invalid_request_error", param: str | None = None,
                 code: str | None = None, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.type, self.param, self.code = status, message, type_, param, code
        self.headers = headers or {}

    def body(self) -> dict[str, Any]:
        """The JSON body (also the `error` event of a stream that failed after it began)."""
        return {"error": {"message": self.message, "type": self.type, "param": self.param, "code": self.code}}

    def response(self) -> JSONResponse:
        """The HTTP response."""
        return JSONResponse(self.body(), status_code=self.status, headers=self.headers)


def unsupported(param: str, why: str) -> OpenAIError:
    """A 400 for a parameter the desk cannot honour."""
    return OpenAIError(400, f"`{param}` is not supported by the help desk: {why}", param=param,
                       code="unsupported_parameter")


class Message(BaseModel):
    """One message of the conversation; content is text or a list of parts (only text parts are read)."""

    model_config = ConfigDict(extra="allow")
    role: Literal["system", "developer", "user", "assistant", "tool", "function"]
    content: str | list[dict[str, Any]] | None = None
    tool_calls: list[Any] | None = None
    function_call: Any = None


class CompletionRequest(BaseModel):
    """The fields of a chat-completions request the desk reads; any other field is accepted and ignored."""

    model_config = ConfigDict(extra="allow")
    model: str = Field(..., min_length=1, max_length=256)  # any name: the desk is the one model here
    messages: list[Message] = Field(..., min_length=1, max_length=MAX_MESSAGES)
    stream: bool = False
    stream_options: dict[str, Any] | None = None
    temperature: float | None = Field(None, ge=0, le=2)
    top_p: float | None = Field(None, ge=0, le=1)
    max_tokens: int | None = Field(None, ge=0)
    max_completion_tokens: int | None = Field(None, ge=0)
    n: int | None = Field(None, ge=1)
    user: str | None = None
    stop: str | list[str] | None = None
    tools: list[Any] | None = None
    functions: list[Any] | None = None
    tool_choice: Any = None
    function_call: Any = None
    logprobs: bool | None = None
    top_logprobs: int | None = None
    response_format: dict[str, Any] | None = None
    modalities: list[str] | None = None
    audio: Any = None


@dataclass(frozen=True)
class Ask:
    """What the desk answers: the question, the conversation before it, and how to send the answer."""

    question: str
    history: tuple[Turn, ...]
    stream: bool
    include_usage: bool
    max_tokens: int | None


def _refuse_unsupported(req: CompletionRequest) -> None:
    if req.tools:
        raise unsupported("tools", "it answers from its own tools; send the request without `tools`")
    if req.functions:
        raise unsupported("functions", "it answers from its own tools; send the request without `functions`")
    if req.tool_choice not in (None, "none"):
        raise unsupported("tool_choice", "it calls no client tools (only `none` is accepted)")
    if req.function_call not in (None, "none"):
        raise unsupported("function_call", "it calls no client functions (only `none` is accepted)")
    if (req.n or 1) > 1:
        raise unsupported("n", "it gives one answer per question (n=1)")
    if req.logprobs or req.top_logprobs:
        raise unsupported("logprobs" if req.logprobs else "top_logprobs", "most answers are not sampled from a model")
    if (req.response_format or {}).get("type", "text") != "text":
        raise unsupported("response_format", "answers are text for a person to read")
    if set(req.modalities or ["text"]) != {"text"} or req.audio is not None:
        raise unsupported("modalities" if req.modalities else "audio", "it reads and writes text only")


def _text_of(message: Message, i: int) -> str:
    """A message's text; an image, audio or file part is refused (the desk reads text only)."""
    if message.tool_calls or message.function_call:
        raise unsupported(f"messages[{i}].tool_calls", "it calls no client tools")
    if message.content is None or isinstance(message.content, str):
        return message.content or ""
    texts = []
    for j, part in enumerate(message.content):
        if part.get("type") != "text" or not isinstance(part.get("text"), str):
            raise unsupported(f"messages[{i}].content[{j}]", f"it reads text only (got a {part.get('type')!r} part)")
        texts.append(part["text"])
    return "\n".join(texts)


def read_request(raw: bytes, max_question_chars: int) -> Ask:
    """The request body checked into an `Ask`; an `OpenAIError` (400) says what is wrong."""
    if len(raw) > MAX_BODY_BYTES:
        raise OpenAIError(400, f"The request is too large ({len(raw):,} bytes; at most {MAX_BODY_BYTES:,}).",
                          param="messages", code="request_too_large")
    try:
        req = CompletionRequest.model_validate(json.loads(raw or b"null"))
    except json.JSONDecodeError as exc:
        raise OpenAIError(400, f"The body is not valid JSON ({exc.msg}).", code="invalid_json") from exc
    except ValidationError as exc:
        err = exc.errors()[0]
        param = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in err["loc"]).lstrip(".") or None
        raise OpenAIError(400, f"Invalid `{param or 'body'}`: {err['msg']}.", param=param,
                          code="invalid_value") from exc
    _refuse_unsupported(req)
    conversation: list[Turn] = []
    for i, message in enumerate(req.messages):
        if message.role in ("tool", "function"):
            raise unsupported(f"messages[{i}].role", "it calls no client tools, so there are no tool results")
        text = _text_of(message, i)
        if message.role in ("user", "assistant"):  # system and developer prompts are ignored
            conversation.append((message.role, text))
    if not any(role == "user" for role, _ in conversation):
        raise OpenAIError(400, "There is no user message: the desk answers the last user message.",
                          param="messages", code="invalid_value")
    if conversation[-1][0] != "user":
        raise OpenAIError(400, "The last message must be the user's: the desk answers the last user message.",
                          param="messages", code="invalid_value")
    question = conversation[-1][1].strip()
    if not question:
        raise OpenAIError(400, "The last user message is empty; please send a question.", param="messages",
                          code="invalid_value")
    if len(question) > max_question_chars:
        raise OpenAIError(400, f"The question is {len(question):,} characters long; please keep it under "
                               f"{max_question_chars:,}.", param="messages", code="context_length_exceeded")
    limit = min([n for n in (req.max_tokens, req.max_completion_tokens) if n], default=None)
    return Ask(question, tuple(conversation[:-1]), req.stream, bool((req.stream_options or {}).get("include_usage")),
               limit)


def estimate_tokens(text: str) -> int:
    """An estimate of a text's tokens: its words and punctuation marks (not the model's tokenizer)."""
    return len(re.findall(r"\w+|[^\w\s]", text))


def usage(question: str, answer: str) -> dict[str, int]:
    """The `usage` object, estimated (see `estimate_tokens`)."""
    prompt, completion = estimate_tokens(question), estimate_tokens(answer)
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def path_of(row: dict[str, Any]) -> dict[str, Any]:
    """The extra `helpdesk` field: what the chat's Path panel shows (strict OpenAI parsers ignore it)."""
    return {"route": row.get("route"), "intent": row.get("intent"), "tools": row.get("tools") or [],
            "timings_ms": row.get("timings_ms") or {}, "ttft_ms": row.get("ttft_ms"),
            "total_ms": row.get("total_ms"), "thread": row.get("thread")}


class Reply:
    """The response objects of one completion: one id and creation time for the whole answer."""

    def __init__(self) -> None:
        self.id, self.created = f"chatcmpl-{secrets.token_hex(12)}", int(time.time())

    def _base(self, kind: str) -> dict[str, Any]:
        return {"id": self.id, "object": kind, "created": self.created, "model": MODEL_ID}

    def completion(self, answer: str, question: str, row: dict[str, Any]) -> dict[str, Any]:
        """The non-streaming response."""
        return {**self._base("chat.completion"),
                "choices": [{"index": 0, "message": {"role": "assistant", "content": answer, "refusal": None},
                             "logprobs": None, "finish_reason": "stop"}],
                "usage": usage(question, answer), "helpdesk": path_of(row)}

    def chunk(self, delta: dict[str, Any], finish_reason: str | None = None, **extra: Any) -> bytes:
        """One `chat.completion.chunk` as a server-sent event."""
        body = {**self._base("chat.completion.chunk"),
                "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}], **extra}
        return sse(body)

    def usage_chunk(self, question: str, answer: str) -> bytes:
        """The last chunk when `stream_options.include_usage` asks for it: no choices, the usage."""
        return sse({**self._base("chat.completion.chunk"), "choices": [], "usage": usage(question, answer)})


def sse(body: dict[str, Any] | str) -> bytes:
    """A `data:` line as OpenAI streams it (no `event:` name)."""
    return f"data: {body if isinstance(body, str) else json.dumps(body, ensure_ascii=False)}\n\n".encode()
