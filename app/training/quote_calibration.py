"""How close a handbook sentence must be to quote it: `python -m app calibrate --quotes [--json]`.

A handbook quote is a shortcut like the FAQ answer: exact wording, no LLM check, so a quote from the wrong
document is a confidently wrong answer. This measures the threshold in use (`Context.kb_answer_threshold`)
the way the router's thresholds are measured, and finds where the router's rule would put it: walking down
from the closest quote, the lowest score of a right quote at which the quotes given so far are wrong at most
1% of the time (`MAX_WRONG_RATE`). Below the threshold the reply says the handbook has no clear answer and
where to ask. The two are reported side by side because they differ far: one similarity score separates a
sentence that answers from one that is only on the topic poorly (README, "Handbook quotes").

Labelled questions: every `handbook` item of the router's splits, with the documents that answer it in
`data/handbook_gold.yaml` (none when the handbook is silent), and every `other` item (not a company
matter: any quote is wrong), each first through the shipped router, since only questions it sends to the
handbook or the full path can get a quote (small talk and FAQ answers never do). The threshold at the limit
comes from the train and dev items (nothing in the quote is fitted on them); the test split is reported
apart. A quote counts as right when it comes from a document that answers the question: the document, not
the sentence, is checked.

The knowledge-base search is replayed in process, as the demo backend runs it (`tools/demo_backend/kb.py`:
dense candidates, then the same rerank), by exact search over the chunk vectors; the vector set's HNSW search
is approximate, which on 132 chunks should rarely change the 12 candidates (not compared item by item).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import yaml

from app.settings import ROOT, get_settings
from app.training.calibrate import CALLER
from app.training.router_thresholds import MAX_WRONG_RATE, clopper_pearson_upper
from app.training.router_train import choose_model, load_router, load_split
from graph.extract import best_quote
from tools.company import DEFAULT_DIR
from tools.demo_backend.kb import candidates, load_chunks, rerank
from tools.embedding_memo import EmbeddingMemo
from tools.embeddings import load_embedder
from tools.vectors import Hit

GOLD = ROOT / "data" / "handbook_gold.yaml"
KB_DIR = DEFAULT_DIR / "kb"  # the demo company's handbook, which the gold labels
K = 3  # passages the kb_search template asks for
QUOTED_PATHS = ("handbook", "llm")


@dataclass
class Quoted:
    """One labelled question and the quote the handbook path would give it (before the threshold)."""

    q: str
    split: str
    docs: list[str]
    score: float  # the best sentence's score; -1 when nothing could be quoted
    doc: str | None  # the document quoted
    path: str = "handbook"  # the router's path for it: only `handbook` and `llm` reach the quote
    label: str = "handbook"  # the router's top label: what it reads as `other` (no company matter) is not quoted

    @property
    def reaches(self) -> bool:
        """The router sends it where a quote is given (small talk and FAQ answers never get one)."""
        return self.path in QUOTED_PATHS and self.label != "other" and self.doc is not None

    @property
    def right(self) -> bool:
        """Quoted from a document that answers the question."""
        return self.doc is not None and self.doc in self.docs


def labelled() -> list[tuple[str, str, list[str]]]:
    """(question, split, documents that answer it) for every handbook and `other` item of the splits."""
    gold = {row["q"]: list(row["docs"]) for row in yaml.safe_load(GOLD.read_text(encoding="utf-8"))}
    out = []
    for split in ("train", "dev", "test"):
        for it in load_split(split):
            if it["route"] == "handbook":
                if it["q"] not in gold:
                    raise KeyError(f"handbook item without documents in {GOLD.name}: {it['q']!r}")
                out.append((it["q"], split, gold[it["q"]]))
            elif it["route"] == "other":
                out.append((it["q"], split, []))
    return out


class Replay:
    """The knowledge-base search, in process, over the same chunk vectors as the backend's index."""

    def __init__(self, embed: EmbeddingMemo) -> None:
        self.embed = embed
        self.chunks = load_chunks(KB_DIR)
        self.doc_of = {c.title: c.id.split("#")[0] for c in self.chunks}
        self.vecs: np.ndarray | None = None

    async def quote(self, q: str) -> tuple[float, str | None]:
        """The best sentence's score and the document its quote comes from (None: nothing quotable)."""
        if self.vecs is None:
            self.vecs = await self.embed([f"{c.title}. {c.text}" for c in self.chunks])
        sims = self.vecs @ (await self.embed([q]))[0]
        hits = [Hit(self.chunks[i].id, float(sims[i]), {"title": self.chunks[i].title, "text": self.chunks[i].text})
                for i in np.argsort(-sims)[:candidates(K)]]
        answer, score = await best_quote(q, rerank(q, hits, K), self.embed)
        if answer is None:
            return -1.0, None
        return score, self.doc_of.get(answer.rsplit('(from "', 1)[1].removesuffix('")'))


async def replay(items: list[tuple[str, str, list[str]]]) -> list[Quoted]:
    """Every labelled question through the shipped router and the replayed handbook path."""
    settings = get_settings()
    router = load_router(settings, choose_model(), standalone=True)
    assert router.embed is not None
    await router.embed([q for q, _, _ in items])  # one batch fills the memo
    embedder = load_embedder(settings.embedding_model, settings.embed_backend, settings.torch_threads)
    kb = Replay(EmbeddingMemo(embedder, size=100_000))  # every question and handbook sentence, once each
    await kb.embed([q for q, _, _ in items])
    out = []
    for q, split, docs in items:
        decision = await router.decide(q, CALLER, [])
        out.append(Quoted(q, split, docs, *await kb.quote(q), path=decision.path, label=decision.label))
    return out


def choose_threshold(rows: list[Quoted]) -> float:
    """The lowest score of a right quote at which the quotes at or above it are wrong at most 1% of the time."""
    threshold, wrong, taken = 1.01, 0, 0
    for r in sorted((r for r in rows if r.reaches), key=lambda r: -r.score):
        taken, wrong = taken + 1, wrong + (not r.right)
        if r.right and wrong / taken <= MAX_WRONG_RATE:
            threshold = r.score
    return round(threshold, 4)


def stats(rows: list[Quoted], threshold: float) -> dict[str, Any]:
    """Coverage (share quoted), wrong quotes with their 95% bound, and the handbook questions quoted right."""
    quoted = [r for r in rows if r.reaches and r.score >= threshold]
    wrong = [r for r in quoted if not r.right]
    answerable = [r for r in rows if r.docs]
    return {"items": len(rows), "reach_the_quote": sum(r.reaches for r in rows), "quoted": len(quoted),
            "coverage": round(len(quoted) / max(1, len(rows)), 4),
            "wrong": len(wrong), "wrong_rate": round(len(wrong) / max(1, len(quoted)), 4),
            "wrong_rate_upper95": round(clopper_pearson_upper(len(wrong), len(quoted)), 4),
            "answerable": len(answerable), "answerable_quoted_right": sum(r in quoted and r.right for r in answerable),
            "wrong_examples": [{"q": r.q, "quoted": r.doc, "answers": r.docs, "score": round(r.score, 3)}
                               for r in wrong[:10]]}


async def calibrate(current: float) -> dict[str, Any]:
    """The threshold at the 1% limit on train+dev, and both it and the one in use measured on each part."""
    rows = await replay(labelled())
    fit = [r for r in rows if r.split != "test"]
    at_limit = choose_threshold(fit)
    return {"at_limit": at_limit, "in_use": current, "max_wrong_rate": MAX_WRONG_RATE,
            **{name: {"at_limit": stats(part, at_limit), "in_use": stats(part, current)}
               for name, part in (("calibration", fit), ("test", [r for r in rows if r.split == "test"]))}}


def main(as_json: bool = False) -> int:
    """Print the threshold at the limit beside the one in use, on the calibration questions and the test split."""
    import asyncio
    import json

    from graph.context import Context

    result = asyncio.run(calibrate(Context().kb_answer_threshold))
    if as_json:
        print(json.dumps(result, indent=2))
        return 0
    print(f"at most {MAX_WRONG_RATE:.0%} wrong quotes on train+dev from {result['at_limit']}; in use: "
          f"{result['in_use']}")
    for part in ("calibration", "test"):
        for which in ("at_limit", "in_use"):
            s = result[part][which]
            print(f"{part:11s} {which:8s}: {s['reach_the_quote']} of {s['items']} reach the quote, quoted "
                  f"{s['quoted']} (coverage {s['coverage']:.1%}), "
                  f"wrong {s['wrong']} = {s['wrong_rate']:.1%} (95% bound {s['wrong_rate_upper95']:.1%}), "
                  f"handbook questions quoted right {s['answerable_quoted_right']}/{s['answerable']}")
    return 0
