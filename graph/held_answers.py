"""A handbook answer kept beside the search result it was drawn from, so that the same question asked again is
answered as soon as the router has decided, without the shared encoder's embedding and the graph's steps.

A handbook answer is drawn from the passages the knowledge-base search returned: the sentences that answer the
question, quoted (graph/extract.py), or "not in the handbook" naming the closest section. Choosing the sentences
takes the shared encoder's embedding of the question, a second embedding after the router's, and the answer is
written three LangGraph steps after the decision: a repeated handbook question reached its first text at about
twice the floor of a cache hit. So when compose_answer answers a lone handbook question, the answer is noted
beside the search's cache entry for exactly that question's words (`<entry>:a`), with a digest of the result it
was drawn from. A later turn with the same words reads both within the read-ahead's round trip
(graph/early.py); when the router takes the handbook path and the entry still holds that result, the answer
goes to the caller at once. The graph still searches and answers as before, and the answer it records is
checked against the one sent (app/turn.py:_Delivery).

Only the question's own entry qualifies. Its vector is the question's, so a search finds it first, and the
graph's result is that entry's; a near question's entry could be outranked by a nearer one written since. The
note stands for nothing on its own: it is read only with the entry, and only while the entry's result is the
one it was drawn from, under the same answer threshold and recipe.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from graph.context import Context
from graph.deps import Deps
from graph.paths import Decision
from tools.registry import TOOLS

SEARCH = "kb_search"
RECIPE = 1  # of the answer (graph/extract.py:best_quote, graph/replies.py): a change makes every note stale


def applies(d: Decision, ctx: Context) -> bool:
    """Whether the decision's answer is drawn from a lone cached search: the handbook path (not a compound
    request's part, not the LLM path's closest FAQ entry), with the cache and the templates on.
    """
    return (d.path == "handbook" and d.faq_candidate is None and ctx.cache_enabled and ctx.templates_enabled
            and SEARCH in TOOLS)


def keys(deps: Deps, question: str, user: str) -> tuple[str, str]:
    """(the search's entry for exactly these words, the answer's note beside it), as the policy look-up asks
    (graph/templates.py: the question slot, graph/slots.py:fill_slots).
    """
    args = _args(question)
    return deps.cache.entry_of(TOOLS[SEARCH], args, user), deps.cache.note_of(TOOLS[SEARCH], args, user)


def _args(question: str) -> dict[str, Any]:
    return {"query": question.strip()[:500]}


def _digest(result: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(result, sort_keys=True).encode()).hexdigest()[:32]


def _note(result: dict[str, Any], answer: str, ctx: Context) -> dict[str, Any]:
    return {"answer": answer, "result": _digest(result), "threshold": ctx.kb_answer_threshold, "recipe": RECIPE}


def kept(held: dict[str, dict[str, Any]], entry: str, note: str, ctx: Context) -> str | None:
    """The answer noted beside `entry`, when `held` (what the cache held under both keys) shows the entry still
    holding the result it was drawn from, under this turn's answer threshold; None otherwise.
    """
    result, noted = held.get(entry), held.get(note)
    if not isinstance(result, dict) or not isinstance(noted, dict) or not isinstance(noted.get("answer"), str):
        return None
    return noted["answer"] if noted == _note(result, noted["answer"], ctx) else None


async def remember(deps: Deps, question: str, user: str, result: dict[str, Any], answer: str, ctx: Context) -> None:
    """Note the answer compose_answer drew from `result` for a lone handbook question (for as long as the search's
    results live; the digest, not the lifetime, keeps it to the entry's result).
    """
    await deps.cache.annotate(TOOLS[SEARCH], _args(question), user, _note(result, answer, ctx))
