"""Lexical overlap used to rerank dense retrieval: distinctive words (names, places) count."""

from __future__ import annotations

import re

_WORD = re.compile(r"[a-z][a-z0-9']{2,}")
GENERIC = {"the", "and", "what", "which", "how", "policy", "policies", "rules", "rule", "about", "there", "are",
           "for", "can", "does", "our", "company", "tell", "please", "when", "where", "who", "with",
           "have", "get", "this", "that", "from", "you", "your", "need", "should", "would", "could", "any", "into",
           "is", "was", "will", "do", "did", "many", "much", "a", "an", "to", "of", "in", "on", "at", "my", "me"}


def content_words(text: str) -> set[str]:
    """Lower-case words of three letters or more, minus generic ones."""
    return set(_WORD.findall(text.lower())) - GENERIC


def idf_overlaps(query: str, texts: list[str]) -> list[float]:
    """Overlap of each text with the query, each query word weighted by how rare it is among the texts:
    in a list of holidays by country, "Spain" decides, "holidays" does not.
    """
    import math

    q = content_words(query)
    bags = [content_words(t) for t in texts]
    if not q or not bags:
        return [0.0] * len(texts)
    n = len(bags)
    weight = {w: math.log((n + 1) / (sum(w in b for b in bags) + 1)) + 0.1 for w in q}
    total = sum(weight.values())
    return [sum(weight[w] for w in q & b) / total for b in bags]
