"""Context pruning: long conversations keep the last turns, the most relevant older turns, and
the pinned facts; everything else is dropped before the LLM sees it.

Pinned facts (who the caller is, the open request) are not history: the prompt builders always
add them. Relevance is word overlap with the current question: deterministic, microseconds, and
good enough to keep the turn a follow-up refers to.
"""

from __future__ import annotations

import re

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage

from graph.context import Context

_WORD = re.compile(r"[a-z0-9]{3,}")
_STOP = {"the", "and", "for", "what", "how", "can", "you", "your", "with", "that", "this", "are", "was",
         "does", "did", "have", "about", "from", "when", "which", "will", "would", "there", "please"}


def turns(history: list[AnyMessage]) -> list[list[AnyMessage]]:
    """Group messages into turns, each starting at a human message."""
    out: list[list[AnyMessage]] = []
    for msg in history:
        if isinstance(msg, HumanMessage) or not out:
            out.append([msg])
        else:
            out[-1].append(msg)
    return out


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower())) - _STOP


def relevance(turn: list[AnyMessage], question: str) -> float:
    """Share of the question's content words that the turn mentions."""
    q = _words(question)
    if not q:
        return 0.0
    t = _words(" ".join(str(m.content) for m in turn))
    return len(q & t) / len(q)


def prune(history: list[AnyMessage], question: str, keep_last: int = 2, keep_relevant: int = 2) -> list[AnyMessage]:
    """The last `keep_last` turns plus up to `keep_relevant` older turns that share words with the question."""
    grouped = turns(history)
    if len(grouped) <= keep_last:
        return list(history)
    older, recent = grouped[:-keep_last] if keep_last else grouped, grouped[-keep_last:] if keep_last else []
    scored = sorted(((relevance(t, question), i) for i, t in enumerate(older)), reverse=True)
    chosen = sorted(i for score, i in scored[:keep_relevant] if score > 0)
    kept = [m for i in chosen for m in older[i]]
    return kept + [m for t in recent for m in t]


def history_of(messages: list[AnyMessage]) -> list[AnyMessage]:
    """Prior conversation: every human/AI message before the current (last) question."""
    prior = messages[:-1] if messages and isinstance(messages[-1], HumanMessage) else list(messages)
    return [m for m in prior if isinstance(m, HumanMessage | AIMessage)]


def prompt_history(messages: list[AnyMessage], question: str, ctx: Context) -> list[AnyMessage]:
    """The conversation as a prompt shows it: pruned by relevance when enabled, each message capped, so one
    long turn cannot crowd the model's context window.
    """
    history = history_of(messages)
    if ctx.pruning_enabled:
        history = prune(history, question, ctx.history_keep_turns, ctx.history_relevant_turns)
    return [m if len(str(m.content)) <= 1500 else m.model_copy(update={"content": str(m.content)[:1500] + "…"})
            for m in history]
