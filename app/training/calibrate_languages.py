"""How well the desk routes questions in its other languages, per language, on each language's test split (another
author's, never trained or chosen on), and on its mixed-language test (`test_mixed.yaml`: an English HR word in a
sentence of the language, also another author's): `python -m app calibrate --languages [--json] [--write]`.

Every item goes through the real decision as the graph makes it (`Router.decide` with the question's language:
the multilingual router and its first reader, their thresholds, the nearest-example check, compound splitting),
with the figures `app/training/calibrate.py` reports for English: intent accuracy, coverage, wrong shortcuts with
their one-sided 95% bound, and the confusion. The dev split's figures are printed beside them (the thresholds
were chosen there).
"""

from __future__ import annotations

import json
from typing import Any

from app.settings import ROOT, get_settings
from app.training.calibrate import CALLER, report
from app.training.router_i18n import OTHER_LANGUAGES, load_lang_split, load_multilingual_router
from app.training.router_thresholds import clopper_pearson_upper
from graph.router import Router

REPORT = ROOT / "data" / "calibration_languages.json"
I18N = ROOT / "data" / "router" / "i18n"
SPLITS = ("dev", "test", "test_mixed")


async def language_report(router: Router, lang: str, split: str) -> dict[str, Any]:
    """One language's split through the router's decision."""
    items = load_lang_split(split, (lang,))
    for reader in router.readers():  # one batch fills each encoder's memo
        assert reader.embed is not None
        await reader.embed([it["q"] for it in items])
    decided = [await router.decide(it["q"], CALLER, ["salary"], lang=lang) for it in items]
    return report(items, decided)


async def evaluate(router: Router | None = None) -> dict[str, Any]:
    """Every language's dev and test figures (and its mixed-language test's, where it has one)."""
    router = router or load_multilingual_router(get_settings())
    assert router is not None, "no labelled questions in data/router/i18n"
    return {lang: {split: await language_report(router, lang, split) for split in SPLITS
                   if (I18N / lang / f"{split}.yaml").exists()}
            for lang in OTHER_LANGUAGES}


def pooled(languages: dict[str, Any], split: str) -> str:
    """One split's figures over every language that has it."""
    rows = [r[split] for r in languages.values() if split in r]
    items, shortcuts = sum(r["items"] for r in rows), sum(r["shortcuts"] for r in rows)
    right = sum(round(r["intent_accuracy"] * r["items"]) for r in rows)
    wrong = sum(r["wrong_shortcuts"] for r in rows)
    return (f"all {split:10s}: intent accuracy {right / max(items, 1):.3f} ({items} items), coverage "
            f"{shortcuts / max(items, 1):.3f}, wrong shortcuts {wrong}/{shortcuts} "
            f"(95% bound {clopper_pearson_upper(wrong, shortcuts):.2%})")


async def main(as_json: bool = False, write: bool = False) -> int:
    """Print (or keep, with `write`) the per-language figures."""
    router = load_multilingual_router(get_settings())
    assert router is not None
    first = router.fast
    languages = await evaluate(router)
    results: dict[str, Any] = {
        "model": {k: router.model.meta.get(k) for k in ("encoder", "C", "temperature", "thresholds",
                                                          "support_floors", "train_examples")},
        "first_reader": {k: first.model.meta.get(k) for k in ("encoder", "C", "temperature", "thresholds")}
        if first is not None else None,
        "languages": languages}
    if as_json:
        print(json.dumps(results, indent=2, ensure_ascii=False))
    else:
        for lang, r in languages.items():
            for split, s in r.items():
                print(f"{lang} {split:10s}: intent accuracy {s['intent_accuracy']:.3f} ({s['items']} items), "
                      f"coverage {s['coverage']:.3f}, wrong shortcuts {s['wrong_shortcuts']}/{s['shortcuts']} "
                      f"(95% bound {s['wrong_shortcut_rate_upper95']:.2%})")
        for split in SPLITS:
            print(pooled(languages, split))
    if write:
        slim = {lang: {s: {m: v for m, v in r[s].items() if m != "wrong_examples"} for s in r}
                for lang, r in languages.items()}
        REPORT.write_text(json.dumps({**results, "languages": slim}, indent=2, ensure_ascii=False) + "\n")
    return 0
