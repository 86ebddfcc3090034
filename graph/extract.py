"""Extractive answers from retrieved passages: the sentences closest to the question, quoted.

For policy look-ups this is the template answer: exact handbook wording, no LLM. It is used only
when the best sentence is close enough to the question; otherwise the LLM writes the answer.
Sentences under a sub-heading carry it ("Spain (Madrid): New Year's Day, ..."), and the question's
distinctive words (names, places) add to a sentence's score, so the specific line wins over a
generic one.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from graph.replies import not_in_handbook
from graph.safety import is_injection
from graph.state import Part, ToolResult
from graph.templates import POLICY_LOOKUP, part_prefix
from graph.tracing import annotate
from tools.i18n import say
from tools.text import idf_overlaps

_SPLIT = re.compile(r"(?<=[.!?])\s+")
LEXICAL_WEIGHT = 0.15


def sentences(passages: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    """(title, sentence, heading) triples; a sentence under a `## heading` is prefixed with it."""
    out = []
    for p in passages:
        heading = ""
        for line in p.get("text", "").splitlines():
            line = line.strip()
            if line.startswith("#"):
                heading = line.lstrip("# ").strip()
                continue
            line = re.sub(r"^\s*(?:[-*•]|\d+[.)](?=\s))\s*", "", line).replace("**", "")
            for s in _SPLIT.split(line):
                if len(s.split()) >= 4 and not is_injection(s):
                    out.append((p.get("title", ""), f"{heading}: {s}" if heading else s, heading))
    return out


def names_another(question: str, quote: str, entities: Any) -> bool:
    """True when the question names a place or leave type and the quote names others of that kind but not
    it ("hotel limit in Lisbon" quoted with the line for Paris): a quote about something else.
    """
    asked, said = entities(question), entities(quote)
    for kind in ("city:", "country:", "leave:"):
        mine = {e for e in asked if e.startswith(kind)}
        theirs = {e for e in said if e.startswith(kind)}
        if mine and theirs and not mine & theirs:
            return True
    return False


def _heading(pair: Sequence[str]) -> str:
    return pair[2] if len(pair) > 2 else ""


def extract(question: str, question_vec: np.ndarray, sentence_vecs: np.ndarray, pairs: Sequence[Sequence[str]],
            threshold: float, k: int = 2, section_max: int = 3) -> tuple[str | None, float]:
    """The best k sentences of one document (in order) when the best clears the threshold; `pairs` are
    `sentences()`' triples (or (title, sentence) pairs, without headings).

    A short section under its own heading (at most `section_max` sentences) is quoted whole: its rule and the
    exceptions to it come together ("at least 2 weeks ahead", then "2 days or fewer: 1 week"). In a longer
    section a quoted sentence comes with the one before it. A best sentence under a heading is never joined by
    a sentence of another section.
    """
    if not pairs:
        return None, 0.0
    lexical = np.array(idf_overlaps(question, [p[1] for p in pairs]), dtype=np.float32)
    scores = sentence_vecs @ question_vec + LEXICAL_WEIGHT * lexical
    order = np.argsort(-scores)
    best = float(scores[order[0]])
    if best < threshold:
        return None, best
    top = int(order[0])
    title, heading = pairs[top][0], _heading(pairs[top])
    keep = sorted(int(i) for i in order[:k] if scores[i] >= best - 0.05 and pairs[int(i)][0] == title
                  and (not heading or _heading(pairs[int(i)]) == heading))  # a sentence of another section is off topic
    context: set[int] = set()
    for i in keep:  # each quoted sentence with its context: its short section whole, or the sentence before it
        if own := _heading(pairs[i]):
            section = [j for j, p in enumerate(pairs) if p[0] == title and _heading(p) == own]
            if len(section) <= section_max:
                context |= set(section)
            elif i != section[0]:  # a long section: the sentence before is the rule an exception follows
                context.add(section[section.index(i) - 1])
    keep = sorted(set(keep) | context)
    if pairs[keep[-1]][1].endswith(":"):  # a lead-in: the list that follows is the answer
        keep += [j for j in range(keep[-1] + 1, min(keep[-1] + 4, len(pairs))) if pairs[j][0] == title]
    said: list[str] = []
    for n, i in enumerate(keep):  # a heading is said once for the sentences that follow it
        same = n > 0 and _heading(pairs[i]) and _heading(pairs[i]) == _heading(pairs[keep[n - 1]])
        said.append(pairs[i][1].removeprefix(f"{_heading(pairs[i])}: ") if same else pairs[i][1])
    text = " ".join(said)
    return f'{text} (from "{title}")', best


async def quote(question: str, results: list[ToolResult], embed: Any, threshold: float) -> str | None:
    """Quote the knowledge-base sentences that answer the question, when they clearly do and are about
    what it names (`embed`: texts -> unit vectors, memoized by Deps).
    """
    data = next((r["data"] for r in results if r["name"] == "kb_search" and r["ok"]), None) or {}
    return (await best_quote(question, data.get("passages", []), embed, threshold))[0]


async def quote_parts(parts: list[Part], results: list[ToolResult], embed: Any, threshold: float) -> list[Part]:
    """A compound request's handbook parts, each answered on its own clause's words from its own search: the
    sentences that answer it, quoted, or else a plain "not in the handbook" that names what was asked, so that
    neither part goes unsaid ("my leave left, and can store staff take December off?"). A part whose search
    failed is left as it is (the partial answer names what could not be fetched); a lone look-up is
    compose_answer's to quote.
    """
    if len(parts) < 2:
        return parts
    searches = [r for r in results if r["name"] == "kb_search"]
    out: list[Part] = []
    for i, part in enumerate(parts):
        mine = [r for r in searches if r["id"].startswith(part_prefix(parts, i))] or searches  # full path: unprefixed
        asked = (part.get("slots") or {}).get("question") or ""
        if part.get("intent") != POLICY_LOOKUP.name or part.get("answer") or not any(r["ok"] for r in mine):
            out.append(part)
            continue
        lang = (part.get("slots") or {}).get("lang", "en")
        said = await quote(asked, mine, embed, threshold) or say("on_topic_not_found", lang, asked=asked,
                                                                 reply=not_in_handbook(mine, lang))
        out.append(Part(intent=part["intent"], slots=part["slots"], answer=said))
    return out


async def best_quote(question: str, passages: list[dict[str, Any]], embed: Any,
                     threshold: float = -math.inf) -> tuple[str | None, float]:
    """The quote of the top three passages and its score (the quote calibration reads the score too)."""
    from graph.router import entities

    pairs = sentences(passages[:3])
    if not pairs:
        return None, 0.0
    vecs = await embed([question, *(p[1] for p in pairs)])
    answer, score = extract(question, vecs[0], vecs[1:], pairs, threshold)
    if answer and names_another(question, answer, entities):
        annotate(quote_rejected="names another place or leave type")
        return None, score
    return answer, score
