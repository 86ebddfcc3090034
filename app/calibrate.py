"""Calibrate the FAQ threshold on the labelled dev set (held-out paraphrases and near misses).

For each threshold the FAQ decision (similarity + guard) is scored: precision is the share of
shortcut answers that were the right entry, recall the share of paraphrases answered by the
shortcut. The chosen threshold is the lowest with precision 1.0 on the dev set (no wrong
answer), i.e. the most recall that costs no correctness.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import yaml

from app.runtime import FAQ_PATH
from app.settings import ROOT, get_settings
from graph.context import CALIBRATION
from graph.faq_match import decide
from tools.embeddings import load_embedder
from tools.faq import FaqEntry, load_faq

DEV_PATH = ROOT / "data" / "faq_dev.yaml"


@dataclass
class Point:
    """Scores at one threshold."""

    threshold: float
    precision: float
    recall: float
    hits: int
    wrong: int


def score(items: list[dict], candidates: list[list[tuple[FaqEntry, float]]], threshold: float) -> Point:
    """Precision and recall of the FAQ decision at one threshold."""
    hits = wrong = found = 0
    positives = sum(1 for it in items if it["faq"])
    for it, cands in zip(items, candidates, strict=True):
        d = decide(it["q"], cands, threshold)
        if d.accepted:
            hits += 1
            if d.entry and d.entry.id == it["faq"]:
                found += 1
            else:
                wrong += 1
    return Point(threshold, (hits - wrong) / hits if hits else 1.0, found / positives if positives else 0.0,
                 hits, wrong)


def sweep(items: list[dict], candidates: list[list[tuple[FaqEntry, float]]]) -> list[Point]:
    """Every threshold from 0.50 to 0.99 in steps of 0.01."""
    return [score(items, candidates, round(0.5 + i / 100, 2)) for i in range(50)]


def choose(points: list[Point]) -> Point:
    """Lowest threshold with no wrong shortcut answers (most recall at full precision)."""
    perfect = [p for p in points if p.wrong == 0]
    return min(perfect, key=lambda p: p.threshold) if perfect else max(points, key=lambda p: p.precision)


async def candidates_for(items: list[dict], faq: dict[str, FaqEntry]) -> list[list[tuple[FaqEntry, float]]]:
    """Nearest FAQ phrasings for each dev question, computed in memory (same model as the index)."""
    emb = load_embedder(get_settings().embedding_model)
    names = [(e, text) for e in faq.values() for text in e.phrasings]
    index = emb.embed([t for _, t in names])
    qs = emb.embed([it["q"] for it in items])
    out = []
    for qv in qs:
        sims = index @ qv
        best: dict[str, tuple[FaqEntry, float]] = {}
        for (entry, _), s in zip(names, sims, strict=True):
            if entry.id not in best or s > best[entry.id][1]:
                best[entry.id] = (entry, float(s))
        out.append(sorted(best.values(), key=lambda x: -x[1])[:3])
    return out


async def main(write: bool = False, dev_path: Path = DEV_PATH) -> int:
    """Print the sweep and the chosen point; with --write, store it for the graph to use."""
    items = yaml.safe_load(dev_path.read_text())
    faq = load_faq(FAQ_PATH)
    cands = await candidates_for(items, faq)
    points = sweep(items, cands)
    chosen = choose(points)
    for p in points[::5]:
        print(f"threshold {p.threshold:.2f}  precision {p.precision:.3f}  recall {p.recall:.3f}  "
              f"shortcuts {p.hits}  wrong {p.wrong}")
    kinds = {k: sum(1 for it in items if it["kind"] == k) for k in sorted({it["kind"] for it in items})}
    print(f"chosen threshold {chosen.threshold:.2f}: precision {chosen.precision:.3f}, recall {chosen.recall:.3f} "
          f"on {len(items)} dev items {kinds}")
    if write:
        CALIBRATION.write_text(json.dumps({"faq_threshold": chosen.threshold, "precision": round(chosen.precision, 4),
                                           "recall": round(chosen.recall, 4), "dev_items": len(items),
                                           "by_kind": kinds}, indent=2) + "\n")
        print(f"written to {CALIBRATION}")
    return 0
