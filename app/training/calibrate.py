"""How well the router routes, on the test split it never saw: `python -m app calibrate [--json] [--write]`.

Every item of a split goes through the real decision (`graph/router.py`: thresholds, the
nearest-example check, compound splitting, the language check), as the graph makes it. Reported:

- intent accuracy: the router's label (its top label, or the parts of a compound request) equals
  the gold one, whether or not it was sure enough to take a shortcut;
- per-route precision and recall, and the confusion (gold -> predicted);
- coverage: the share of items that took a shortcut: an FAQ answer, a template (handbook quotes
  included), a refusal or the English-only sentence, none of which the LLM checks;
- wrong-shortcut rate: shortcuts taken on a wrong label, with a one-sided 95% Clopper-Pearson bound;
- confident routes: every decision that was not "not sure" (free writing and small talk included),
  and how many of those were wrong.

Both candidate models are reported; thresholds come from the dev split and the public val splits
(`app/training/router_train.py`); `--public` reports the public test splits (`app/training/calibrate_public.py`).
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from typing import Any

from app.settings import ROOT, get_settings
from app.training.router_cache import DATA
from app.training.router_thresholds import clopper_pearson_upper
from app.training.router_train import choose_model, load_router, load_split
from graph.router import Decision, Router, group_of

REPORT = ROOT / "data" / "calibration.json"
CALLER = "E1001"
SHORTCUTS = ("faq", "template", "handbook", "refuse", "foreign")


def predicted(d: Decision) -> str:
    """The label a decision stands for (compound requests: their sorted parts)."""
    if d.label == "compound":
        return "compound:" + "+".join(sorted(d.intents))
    return d.label


def gold(item: dict[str, Any]) -> str:
    """The label an item must get (compound requests: their sorted parts)."""
    if item["route"] == "compound":
        return "compound:" + "+".join(sorted(item.get("parts") or []))
    return item["route"]


def coarse(label: str) -> str:
    """Route group of a label, for the per-route table and the confusion (FAQ entries together)."""
    return "compound" if label.startswith("compound:") else group_of(label)


def label_counts() -> dict[str, dict[str, int]]:
    """Items per route group in each split, for the report."""
    out = {}
    for split in ("train", "dev", "test"):
        out[split] = dict(Counter(group_of(it["route"]) for it in load_split(split)))
    return out


async def decisions(router: Router, items: list[dict[str, Any]]) -> list[Decision]:
    """The router's decision for every item (follow-ups asked after a salary question)."""
    assert router.embed is not None
    await router.embed([it["q"] for it in items])  # one batch fills the memo
    return [await router.decide(it["q"], CALLER, ["salary"]) for it in items]


def report(items: list[dict[str, Any]], decided: list[Decision]) -> dict[str, Any]:
    """Accuracy, per-route precision/recall, confusion, coverage and wrong shortcuts of one split."""
    pairs = [(gold(it), predicted(d), d.path in SHORTCUTS) for it, d in zip(items, decided, strict=True)]
    correct = sum(g == p for g, p, _ in pairs)
    taken = [(g, p) for g, p, t in pairs if t]
    wrong = [(g, p) for g, p in taken if g != p]
    confident = [(gold(it), predicted(d)) for it, d in zip(items, decided, strict=True) if d.path != "llm"]
    confusion: dict[str, Counter[str]] = defaultdict(Counter)
    for g, p, _ in pairs:
        confusion[coarse(g)][coarse(p) if g != p or coarse(g) != "faq" else "faq"] += 1
    routes = sorted({coarse(g) for g, _, _ in pairs})
    per_route = {}
    for r in routes:
        tp = sum(1 for g, p, _ in pairs if coarse(g) == r and g == p)
        pred = sum(1 for _, p, _ in pairs if coarse(p) == r)
        n = sum(1 for g, _, _ in pairs if coarse(g) == r)
        per_route[r] = {"n": n, "precision": round(tp / pred, 4) if pred else None, "recall": round(tp / n, 4)}
    return {
        "items": len(items), "intent_accuracy": round(correct / max(1, len(items)), 4),
        "shortcuts": len(taken), "coverage": round(len(taken) / max(1, len(items)), 4),
        "wrong_shortcuts": len(wrong), "wrong_shortcut_rate": round(len(wrong) / max(1, len(taken)), 4),
        "wrong_shortcut_rate_upper95": round(clopper_pearson_upper(len(wrong), len(taken)), 4),
        "confident_routes": len(confident), "confident_wrong": sum(g != p for g, p in confident),
        "closest_faq": closest_faq_stats(items, decided),
        "per_route": per_route, "confusion": {g: dict(c) for g, c in sorted(confusion.items())},
        "wrong_examples": [{"q": it["q"], "gold": g, "predicted": p, "path": d.path}
                           for it, d, (g, p, _) in zip(items, decided, pairs, strict=True)
                           if d.path != "llm" and g != p][:20],
    }


def closest_faq_stats(items: list[dict[str, Any]], decided: list[Decision]) -> dict[str, Any]:
    """The full path's closest-FAQ offers: how many, and how many named the item's own entry. An offer to a
    question that is not an FAQ one counts as not right (the reply frames it as the closest, not the answer).
    """
    offers = [(gold(it), d.faq_candidate) for it, d in zip(items, decided, strict=True) if d.faq_candidate]
    right = sum(g == f"faq:{c}" for g, c in offers)
    return {"offered": len(offers), "right": right, "precision": round(right / len(offers), 4) if offers else None}


async def evaluate(kind: str, router: Router | None = None) -> dict[str, Any]:
    """One candidate model on the dev and test splits (`router`: that candidate, when already loaded)."""
    router = router or load_router(get_settings(), kind, standalone=True)
    model = router.model
    keep = ("kind", "C", "temperature", "support_floors", "thresholds", "faq_fallback", "train_examples",
            "train_seconds", "public_val")
    out: dict[str, Any] = {"model": {k: model.meta.get(k) for k in keep}}
    for split in ("dev", "test"):
        items = load_split(split)
        out[split] = report(items, await decisions(router, items))
    return out


async def main(as_json: bool = False, write: bool = False, kinds: tuple[str, ...] = ("frozen", "finetuned")) -> int:
    """Report every candidate; `--write` keeps the summary in data/calibration.json."""
    candidates = {k: await evaluate(k) for k in kinds}  # trains a candidate not cached yet
    shipped = choose_model()
    results = {"shipped": shipped, "data": str(DATA.relative_to(ROOT)), "splits": label_counts(),
               "candidates": candidates}
    if as_json:
        print(json.dumps(results, indent=2))
    else:
        for kind, r in candidates.items():
            for split in ("dev", "test"):
                s = r[split]
                print(f"{kind:9s} {split:4s}: intent accuracy {s['intent_accuracy']:.3f}, "
                      f"coverage {s['coverage']:.3f}, "
                      f"wrong shortcuts {s['wrong_shortcuts']}/{s['shortcuts']} = {s['wrong_shortcut_rate']:.3%} "
                      f"(95% bound {s['wrong_shortcut_rate_upper95']:.2%}); other confident routes wrong "
                      f"{s['confident_wrong'] - s['wrong_shortcuts']}; closest FAQ offered "
                      f"{s['closest_faq']['offered']}, right {s['closest_faq']['right']}")
        print(f"shipped: {shipped} (chosen on the dev split)")
    if write:
        slim = {k: {s: {m: v for m, v in r[s].items() if m != "wrong_examples"} if s in ("dev", "test") else v
                    for s, v in r.items()} for k, r in candidates.items()}
        REPORT.write_text(json.dumps({**results, "candidates": slim}, indent=2) + "\n")
    return 0
