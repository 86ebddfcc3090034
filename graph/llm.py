"""The two LLM steps of the fallback path: a tool plan through vLLM structured outputs, and an
answer written from tool results, streamed token by token.

The small model's plan picks tools well enough but its argument values are unreliable, so every
argument we can read from the question, the conversation or the caller's profile is filled by
slot filling, and personal tools always get the caller's id.
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from functools import lru_cache
from typing import Any, cast

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AnyMessage

from graph.llm_gate import LLMGate, LLMUnavailable
from graph.prompts import plan_schema, registry_key
from graph.safety import strip_instructions
from graph.state import ToolCall, ToolResult
from tools.intents.handbook import QUERY_MAX_CHARS
from tools.registry import QUESTION, TOOLS, USER, depends_on

log = logging.getLogger(__name__)
REPEAT_NGRAM = 6
# A word, as the repetition cut counts them: a run of letters between spaces, or one Chinese or Japanese
# character (those scripts put no spaces between words, so a loop there is a run of characters said again).
_CJK = "\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff\uac00-\ud7af"
WORD = re.compile(rf"[{_CJK}]|[^\s{_CJK}]+")


def plan_names_regex() -> str:
    """A plan of tool names only, as vLLM's structured outputs force it: "kb_search" or "weather, clothing_advice" or
    "none". The JSON schema's plan was 57-84 tokens here (the 135M model fills it with whitespace) and took 5-7 s;
    the same choice as names is 4-17 tokens, 2-3 s.
    """
    return _names_regex(registry_key())


@lru_cache(maxsize=8)
def _names_regex(_tools: tuple[tuple[str, int], ...]) -> str:
    names = "|".join(re.escape(name) for name in TOOLS)
    return rf"none|(?:{names})(?:, (?:{names})){{0,2}}"


@lru_cache(maxsize=8)
def _schema(_tools: tuple[tuple[str, int], ...]) -> dict[str, Any]:
    return plan_schema(with_args=True)


def plan_constraint(with_args: bool) -> dict[str, Any]:
    """VLLM's structured-output constraint of a plan, built from the tools registered now (cached while they stay):
    JSON with arguments (Context.plan_arguments), or tool names under a regex.
    """
    return {"json": _schema(registry_key())} if with_args else {"regex": plan_names_regex()}


def _slot_args(tool: str, slots: dict[str, Any], user: str, question: str) -> dict[str, Any]:
    """Arguments slot filling can supply for a tool (the ones the model gets wrong): its `slot_args`, filled."""
    filled: dict[str, Any] = {}
    for arg, ref in TOOLS[tool].slot_args.items():
        if ref == USER:
            filled[arg] = user
        elif ref == QUESTION:
            filled[arg] = question[:QUERY_MAX_CHARS]
        elif ref.startswith("$"):
            filled[arg] = slots.get(ref[1:])
        else:  # "@call.field": filled from another call's result when it arrives
            filled[arg] = ref
    return filled


def repair_plan(raw_calls: list[dict[str, Any]], slots: dict[str, Any], user: str, question: str) -> list[ToolCall]:
    """Turn the model's calls into a valid plan: known tools only, slot-filled arguments, no duplicates."""
    names: list[str] = []
    for call in raw_calls[:4]:
        name = call.get("tool") if isinstance(call, dict) else None
        if name in TOOLS and name not in names:
            names.append(name)
    for name in list(names):  # a tool that reads another's result ("@weather.condition") brings it first
        names[:0] = [dep for dep in depends_on(TOOLS[name].slot_args) if dep in TOOLS and dep not in names]
    plan: list[ToolCall] = []
    for name in names:
        model_args = next((c.get("args") or {} for c in raw_calls if isinstance(c, dict) and c.get("tool") == name), {})
        args = {**(model_args if isinstance(model_args, dict) else {}),
                **{k: v for k, v in _slot_args(name, slots, user, question).items() if v is not None}}
        args = {k: v for k, v in args.items() if k in TOOLS[name].args.model_fields}
        deps = depends_on({k: v for k, v in args.items() if isinstance(v, str)})
        plan.append(ToolCall(id=name, name=name, args=args, depends_on=deps))
    return plan


async def plan_tools(llm: BaseChatModel, messages: list[AnyMessage], max_tokens: int,
                     with_args: bool = True, gate: LLMGate | None = None) -> list[dict[str, Any]]:
    """Ask the model for a tool plan: tool names under a regex, or JSON with arguments (`with_args`).
    Malformed output yields an empty plan, never a crash.
    """
    bound = llm.bind(max_tokens=max_tokens, extra_body={"structured_outputs": plan_constraint(with_args)})
    try:
        async with gate.slot() if gate else contextlib.nullcontext():
            msg = await bound.with_config(tags=["nostream"], run_name="plan_llm").ainvoke(messages)
    except LLMUnavailable:
        raise
    except Exception as exc:  # noqa: BLE001 - any transport failure means the LLM is unavailable
        raise LLMUnavailable(_llm_error(exc)) from exc
    text = str(msg.content).strip()
    if not text.startswith("{"):  # tool names, comma separated ("none": no tool)
        return [{"tool": name} for name in (n.strip() for n in text.split(",")) if name in TOOLS]
    try:
        calls = json.loads(text).get("calls", [])
        return calls if isinstance(calls, list) else []
    except (ValueError, AttributeError):
        log.warning("planner returned malformed JSON (%d chars); planning no tools", len(str(msg.content)))
        return []


def repeat_start(text: str, n: int = REPEAT_NGRAM) -> int | None:
    """Where a text starts saying again what it already said (a repeated run of `n` words), else None.

    Small models at greedy decoding loop on one sentence until the token limit; an answer is cut
    at the start of the repeat.
    """
    words = list(WORD.finditer(text))
    seen: set[tuple[str, ...]] = set()
    for i in range(len(words) - n + 1):
        gram = tuple(w.group(0).lower().strip(".,;:!?") for w in words[i:i + n])
        if gram in seen:
            return words[i].start()
        seen.add(gram)
    return None


def safe_end(text: str, n: int = REPEAT_NGRAM) -> int:
    """How much of a growing answer can leave now: all but its last `n` words. A repeat found later starts inside
    them (the last word may still be growing), so what left is never cut afterwards: the stream is the answer.
    """
    words = list(WORD.finditer(text))
    return words[-n - 1].end() if len(words) > n else 0


async def write_answer(llm: BaseChatModel, messages: list[AnyMessage], max_tokens: int,
                       on_delta: Callable[[str], None], gate: LLMGate | None = None, lead: str = "",
                       interrupted: str = "") -> str:
    """Stream the answer through `on_delta` and return exactly what it sent: `lead` (a sentence the node puts before
    the model's words) with the first piece, the model's text a few words behind the model (`safe_end`), cut where
    it starts repeating itself, and `interrupted` after it when the model stops sending mid-answer.
    Raises LLMUnavailable, having sent nothing, when the model gives no text at all.
    """
    parts: list[str] = []
    sent = 0  # of `lead + body`: the characters on_delta has had

    def send_to(answer: str, end: int) -> None:
        nonlocal sent
        if end > sent:
            on_delta(answer[sent:end])
            sent = end

    # Mild penalties: on SmolLM2-135M, 0.4 / 1.15 made answers longer and more inventive (measured), these
    # keep quoting figures; the repetition cut below catches the loops they do not prevent.
    bound = llm.bind(max_tokens=max_tokens, frequency_penalty=0.1, extra_body={"repetition_penalty": 1.05})
    try:
        async with (gate.slot() if gate else contextlib.nullcontext(),
                    contextlib.aclosing(_generator(bound.with_config(run_name="answer_llm").astream(messages)))
                    as stream):
            async for chunk in stream:
                if not (text := str(chunk.content or "")):
                    continue
                parts.append(text)
                body = "".join(parts).lstrip()
                if (cut := repeat_start(body)) is not None:  # closing the stream (on the way out) aborts it in vLLM
                    log.info("answer started repeating itself after %d characters; cut", cut)
                    answer = lead + body[:cut].rstrip()
                    send_to(answer, len(answer))
                    return answer
                if body:
                    send_to(lead + body, len(lead) + safe_end(body))
    except LLMUnavailable:
        raise
    except Exception as exc:  # noqa: BLE001
        if body := "".join(parts).strip():  # keep what was said, tell the user the rest is missing
            answer = f"{lead}{body} {interrupted}".rstrip()
            send_to(answer, len(answer))
            return answer
        raise LLMUnavailable(_llm_error(exc)) from exc
    body = "".join(parts).strip()
    answer = lead + body if body else ""
    send_to(answer, len(answer))
    return answer


def _generator(stream: AsyncIterator[Any]) -> AsyncGenerator[Any, None]:
    """LangChain's `astream` is typed as an iterator; it is an async generator, which `aclosing` closes."""
    return cast(AsyncGenerator[Any, None], stream)


def results_text(results: list[ToolResult], max_chars: int = 700) -> str:
    """Tool results as compact text for the answer prompt (retrieved passages trimmed)."""
    lines = []
    for r in results:
        if not r["ok"]:
            lines.append(f"{r['name']}: NOT AVAILABLE ({r['error']})")
            continue
        data = dict(r["data"] or {})
        if r["name"] == "kb_search":
            data = {"passages": [f"{p['title']}: {strip_instructions(p['text'])[:max_chars]}"
                                 for p in data.get("passages", [])[:2]]}
        lines.append(f"{r['name']}: {strip_instructions(json.dumps(data, ensure_ascii=False))}")
    return "\n".join(lines) or "(no tools were needed)"


def _llm_error(exc: Exception) -> str:
    """The catalog key of what the user is told (`LLMUnavailable.key`)."""
    return "llm_timeout" if "Timeout" in type(exc).__name__ else "llm_unreachable"
