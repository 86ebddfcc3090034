"""How the router does on public intent data nobody on the project wrote: `python -m app calibrate --public`.

Every query of a public data set's test split (CLINC150, BANKING77, and HWU64, the report-only set the
router never trains or chooses on) goes through the real decision (`graph/router.py`), as a caller's
question would. Reported per data set:

- in-domain shortcut recall per mapped intent (CLINC's `pto_balance` must get the leave balance), and the
  in-domain wrong shortcuts (a mapped query that got another route's shortcut);
- the out-of-domain wrong-shortcut rate (banking, cars, trivia ... that took any shortcut: an FAQ answer, a
  template, a handbook quote, a refusal) with its one-sided 95% bound, and the worst confusions;
- the grey intents' outcomes (more than one reply is fine there, so they are shown, not scored);
- the expected calibration error of the router's confidence on the mapped and out-of-domain queries.

Nothing here chooses anything: thresholds and temperature come from the dev and val splits.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

from app.training.calibrate import CALLER, SHORTCUTS, predicted
from app.training.public_data import PublicItem, public_sets, sample
from app.training.router_thresholds import clopper_pearson_upper, expected_calibration_error
from graph.router import Decision, Router

OOD_TARGET = 0.01  # out-of-domain wrong shortcuts the desk allows, at most (issue: <= 1%, bound <= 1.5%)
RECALL_TARGET = 0.90  # in-domain shortcut recall it aims for


def public_test_items(per_intent: int | None = None) -> dict[str, list[PublicItem]]:
    """Each data set's test split, report-only sets included, or a stable sample of `per_intent` queries of
    every intent.
    """
    out = {}
    for s in public_sets(include_report=True):
        items = s.split("test")
        out[s.name] = sample(items, per_intent) if per_intent else items
    return out


async def decide_all(router: Router, items: list[PublicItem]) -> list[Decision]:
    """The router's decision for every query (one embedding batch first, as calibrate does)."""
    assert router.embed is not None
    await router.embed([it.q for it in items])
    return [await router.decide(it.q, CALLER, None) for it in items]


def outcome(it: PublicItem, d: Decision) -> str:
    """What the caller got: a right shortcut, a wrong one, a confident non-shortcut (chat, draft) or the full path."""
    if d.path in SHORTCUTS:
        return "right_shortcut" if predicted(d) in it.routes else "wrong_shortcut"
    return "full_path" if d.path == "llm" else d.path


def report(items: list[PublicItem], decided: list[Decision]) -> dict[str, Any]:
    """One data set's figures (see the module docstring)."""
    mapped = [(it, d) for it, d in zip(items, decided, strict=True) if it.kind == "mapped"]
    ood = [(it, d) for it, d in zip(items, decided, strict=True) if it.kind == "ood"]
    grey = [(it, d) for it, d in zip(items, decided, strict=True) if it.kind == "grey"]
    per_intent: dict[str, Counter[str]] = defaultdict(Counter)
    for it, d in mapped:
        per_intent[it.intent][outcome(it, d)] += 1
    recall = {k: {"n": sum(c.values()), "shortcut": c["right_shortcut"],
                  "recall": round(c["right_shortcut"] / sum(c.values()), 4), "wrong_shortcut": c["wrong_shortcut"]}
              for k, c in sorted(per_intent.items())}
    in_right = sum(r["shortcut"] for r in recall.values())
    in_wrong = sum(r["wrong_shortcut"] for r in recall.values())
    ood_wrong = [(it, d) for it, d in ood if d.path in SHORTCUTS]
    confusions = Counter(f"{it.intent} -> {predicted(d)}" for it, d in ood_wrong)
    grey_out: dict[str, Counter[str]] = defaultdict(Counter)
    for it, d in grey:
        grey_out[it.intent]["fine_shortcut" if outcome(it, d) == "right_shortcut" else outcome(it, d)] += 1
    scored = [*mapped, *ood]
    ece_conf = [d.confidence for _, d in scored]
    ece_right = [(d.label in it.routes) if it.kind == "mapped" else d.label == "other" for it, d in scored]
    return {
        "items": len(items),
        "in_domain": {"items": len(mapped), "shortcuts_right": in_right,
                      "recall": round(in_right / max(1, len(mapped)), 4), "wrong_shortcuts": in_wrong,
                      "wrong_rate": round(in_wrong / max(1, len(mapped)), 4), "per_intent": recall},
        "out_of_domain": {"items": len(ood), "wrong_shortcuts": len(ood_wrong),
                          "wrong_rate": round(len(ood_wrong) / max(1, len(ood)), 4),
                          "wrong_rate_upper95": round(clopper_pearson_upper(len(ood_wrong), len(ood)), 4),
                          "by_label": dict(Counter(predicted(d) for _, d in ood_wrong).most_common(12)),
                          "worst_confusions": dict(confusions.most_common(12)),
                          "examples": [{"q": it.q, "intent": it.intent, "got": predicted(d), "path": d.path,
                                        "confidence": round(d.confidence, 3)}
                                       for it, d in sorted(ood_wrong, key=lambda x: -x[1].confidence)[:12]]},
        "grey": {k: dict(c) for k, c in sorted(grey_out.items())},
        "ece": expected_calibration_error(ece_conf, ece_right),
    }


async def evaluate_public(router: Router, per_intent: int | None = None) -> dict[str, Any]:
    """Every public test set through one router."""
    held_out = {s.name for s in public_sets(include_report=True) if s.report_only}
    out = {}
    for name, items in public_test_items(per_intent).items():
        out[name] = {"report_only": name in held_out, **report(items, await decide_all(router, items))}
    return out


def summary_lines(results: dict[str, Any]) -> list[str]:
    """The report as a reader wants it in a terminal."""
    lines = []
    for name, r in results.items():
        i, o = r["in_domain"], r["out_of_domain"]
        held_out = " (report only: never trained or chosen on)" if r.get("report_only") else ""
        lines.append(f"{name}{held_out}: out-of-domain wrong shortcuts {o['wrong_shortcuts']}/{o['items']} = "
                     f"{o['wrong_rate']:.2%} (95% bound {o['wrong_rate_upper95']:.2%}); in-domain recall "
                     f"{i['shortcuts_right']}/{i['items']} = {i['recall']:.1%}, wrong {i['wrong_shortcuts']}; "
                     f"ECE {r['ece']:.3f}")
        for intent, x in i["per_intent"].items():
            lines.append(f"  {intent:18s} recall {x['shortcut']}/{x['n']}, wrong {x['wrong_shortcut']}")
        if o["worst_confusions"]:
            lines.append("  worst: " + "; ".join(f"{k} ({v})" for k, v in list(o["worst_confusions"].items())[:6]))
        for intent, c in r["grey"].items():
            lines.append(f"  grey {intent:18s} " + ", ".join(f"{k} {v}" for k, v in sorted(c.items())))
    return lines


async def main(as_json: bool = False, write: bool = False, per_intent: int | None = None) -> int:
    """The shipped router on the public test sets, with the project's own dev and test figures beside them."""
    import json

    from app.settings import ROOT
    from app.training.calibrate import evaluate
    from app.training.router_train import choose_model, load_router

    kind = choose_model()
    router = load_router(kind=kind, standalone=True)
    own = await evaluate(kind, router)
    public = await evaluate_public(router, per_intent)
    results = {"shipped": kind, "sample_per_intent": per_intent, "public": public,
               "own": {s: {k: v for k, v in own[s].items() if k != "wrong_examples"} for s in ("dev", "test")},
               "model": own["model"]}
    if as_json:
        print(json.dumps(results, indent=2))
    else:
        print("\n".join(summary_lines(public)))
        for split in ("dev", "test"):
            s = own[split]
            print(f"own {split}: intent accuracy {s['intent_accuracy']:.3f}, coverage {s['coverage']:.3f}, wrong "
                  f"shortcuts {s['wrong_shortcuts']}/{s['shortcuts']} "
                  f"(95% bound {s['wrong_shortcut_rate_upper95']:.2%})")
        print(f"shipped: {kind}, temperature {own['model'].get('temperature')}")
    if write:
        (ROOT / "data" / "calibration_public.json").write_text(json.dumps(results, indent=2) + "\n")
    return 0
