"""Extractive answers from retrieved passages: the sentences closest to the question, quoted.

For policy look-ups this is the template answer: exact handbook wording, no LLM. It is used only
when the best sentence is close enough to the question; otherwise the LLM writes the answer.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

_SPLIT = re.compile(r"(?<=[.!?])\s+|\n+")


def sentences(passages: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """(title, sentence) pairs from the passages, list markers and headings stripped."""
    out = []
    for p in passages:
        for s in _SPLIT.split(p.get("text", "")):
            s = re.sub(r"^\s*(?:[-*•]|\d+[.)]|#+)\s*", "", s).strip()
            if len(s.split()) >= 4:
                out.append((p.get("title", ""), s))
    return out


def extract(question_vec: np.ndarray, sentence_vecs: np.ndarray, pairs: list[tuple[str, str]],
            threshold: float, k: int = 2) -> tuple[str | None, float]:
    """The best k sentences (in document order) when the best clears the threshold."""
    if not pairs:
        return None, 0.0
    scores = sentence_vecs @ question_vec
    order = np.argsort(-scores)
    best = float(scores[order[0]])
    if best < threshold:
        return None, best
    title = pairs[int(order[0])][0]
    keep = sorted(int(i) for i in order[:k] if scores[i] >= best - 0.05 and pairs[int(i)][0] == title)
    text = " ".join(pairs[i][1].replace("**", "") for i in keep)
    return f'{text} (from "{title}")', best
