"""Train the router: fine-tune its encoder once on what the desk can do, and fit its heads on what the company
writes, at set-up or at start, in seconds on cached vectors.

Two candidates share the labelled data (`app/training/router_data.py`): `frozen`, a logistic head on the frozen
all-MiniLM-L6-v2 vectors the caches already compute, and `finetuned` (shipped), the same head on a MiniLM
fine-tuned with a supervised contrastive loss, served with int8 weights (`Settings.router_int8`; its head,
temperature and thresholds are fitted on the int8 vectors).

The encoder learns labelled questions, never a company's folder (the demo's FAQ phrasings are among them, kept as
`train_z_faq.yaml`), so a knowledge edit never fine-tunes it again (`app/training/router_cache.py` says what is
keyed by what). The head learns the train split, every phrasing of the company's FAQ and the public train splits,
on vectors cached by content (`app/training/vectors.py`). The C of the head, the temperature and the thresholds
are chosen on the dev split and the public val splits together, so wrong shortcuts stay bounded on questions
written nowhere near the training data too. The test splits are only reported (`python -m app calibrate`).
Training is seeded: `python -m app.training.router_train` (also run by `make setup`).
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import time
from pathlib import Path
from typing import Any

import numpy as np

from app.settings import Settings, get_settings
from app.training import leave_train
from app.training.public_data import validation_items
from app.training.router_cache import (
    c_record,
    company_faq,
    encoder_dir,
    fingerprint,
    int8_encoder,
    known_c,
    model_dir,
    remember_c,
    variant,
    vectors_key,
)
from app.training.router_data import faq_texts, finetune_examples, for_company, load_split, training_examples
from app.training.router_finetune import SEED, finetune
from app.training.router_thresholds import (
    accuracy,
    calibrate_temperature,
    choose_faq_fallback,
    choose_floor_and_thresholds,
    outcomes,
)
from app.training.vectors import CachedEncoder
from graph.router import Router
from graph.router_model import RouterModel
from tools.company import current, open_company
from tools.embedding_memo import EmbeddingMemo
from tools.embeddings import Embedder, load_embedder
from tools.i18n import LANGUAGES

log = logging.getLogger(__name__)
C_GRID = (1.0, 4.0, 16.0, 64.0, 256.0)
def fit_head(vecs: np.ndarray, labels: list[str], c: float) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Multinomial logistic regression, classes weighted so few-example FAQ entries still count."""
    from sklearn.linear_model import LogisticRegression

    clf = LogisticRegression(C=c, max_iter=3000, class_weight="balanced", random_state=SEED)
    clf.fit(vecs, labels)
    return [str(c) for c in clf.classes_], clf.coef_.astype(np.float32), clf.intercept_.astype(np.float32)


def build(vecs: np.ndarray, labels: list[str], c: float, meta: dict[str, Any]) -> RouterModel:
    """A router model from embedded examples."""
    classes, coef, intercept = fit_head(vecs, labels, c)
    return RouterModel(classes, coef, intercept, vecs.astype(np.float32), labels, meta)


def train(kind: str, settings: Settings | None = None) -> tuple[RouterModel, Embedder]:
    """Fit one candidate's head on cached vectors and cache it (fine-tuning the encoder first for `finetuned` when
    no encoder was fine-tuned on this labelled data yet).
    """
    settings = settings or get_settings()
    open_company(settings.company_dir, LANGUAGES)
    t0 = time.perf_counter()
    base = load_embedder(settings.embedding_model)
    folder = model_dir(settings, kind, base.name)
    embedder = base
    if kind == "finetuned":
        encoder = str(finetuned_encoder(settings, base.name))
        int8 = int8_encoder(settings, kind)  # the head learns the vectors it will be served
        embedder = Embedder(encoder, "onnx", settings.torch_threads, int8=True) if int8 else \
            Embedder(encoder, backend="torch")
        if int8 and not embedder.int8:  # ONNX Runtime fell back to torch: no int8 vectors to fit a head on
                raise RuntimeError("the int8 router encoder could not be built (see the warning above); "
                                   "set ROUTER_INT8=false to train and serve the float one")
    cached = CachedEncoder(embedder, vectors_key(settings, kind, base.name), settings.cache_dir / "vectors")
    t1 = time.perf_counter()
    record = c_record(settings, f"router-{variant(settings, kind)}-{fingerprint(kind, base.name, with_faq=False)}")
    c = known_c(record)
    model = fit_router(cached, training_examples(), (c,) if c else C_GRID)
    if c is None:
        remember_c(record, model.meta["C"])
    model.meta = {"kind": kind, "fingerprint": fingerprint(kind, base.name), "seed": SEED, **model.meta,
                  "encoder_int8": embedder.int8, "train_seconds": round(time.perf_counter() - t0, 1),
                  "base_model": base.name, "faq_entries": len(company_faq())}
    _save(model, folder)
    log.info("router %s: head fitted for %s's FAQ in %.1f s (%d texts embedded, %d vectors from the cache); C=%s "
             "T=%s dev %s, public val %s", kind, current().name, time.perf_counter() - t1, cached.embedded,
             cached.reused, model.meta["C"], model.temperature, model.meta["dev"], model.meta["public_val"])
    return model, embedder


def _save(model: RouterModel, folder: Path) -> None:
    """Write a model whole, then move it into place (several processes may start at once)."""
    tmp = folder.with_name(f"{folder.name}.tmp-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    model.save(tmp)
    try:
        tmp.rename(folder)
    except OSError:  # another process put the same model there first
        shutil.rmtree(tmp, ignore_errors=True)


def finetuned_encoder(settings: Settings, base: str) -> Path:
    """The fine-tuned encoder's folder (`encoder_dir`), fine-tuned now when this labelled data has none yet: once per
    labelled data and recipe, about ten minutes on two cores; a knowledge edit never comes here.
    """
    keep = encoder_dir(settings, base)
    if (keep / "config.json").exists():
        return keep
    tmp = keep.with_name(f"{keep.name}.tmp-{os.getpid()}")  # written whole, then moved into place
    shutil.rmtree(tmp, ignore_errors=True)
    pairs = finetune_examples()
    log.info("fine-tuning the router's encoder on %d labelled questions (once per labelled data and recipe)",
             len(pairs))
    finetune(base, pairs)._model.save(str(tmp))  # noqa: SLF001
    shutil.rmtree(keep, ignore_errors=True)  # what a run that stopped half-way left
    try:
        tmp.rename(keep)
    except OSError:  # another process put the same encoder there first
        shutil.rmtree(tmp, ignore_errors=True)
    return keep


def fit_router(embedder: Embedder | CachedEncoder, pairs: list[tuple[str, str]],
               c_grid: tuple[float, ...] = C_GRID) -> RouterModel:
    """The head over `embedder`'s vectors of `pairs`, with C (of `c_grid`), temperature, support floors and
    thresholds chosen on dev + public val.
    """
    vecs = embedder.embed([t for t, _ in pairs])
    labels = [lab for _, lab in pairs]
    dev, val = for_company(load_split("dev"), company_faq()), validation_items()
    dev_vecs = embedder.embed([it["q"] for it in dev])
    val_vecs = embedder.embed([it["q"] for it in val])
    best: tuple[float, float, RouterModel] | None = None
    for c in c_grid:  # the project's dev split and the public val splits weigh the same
        model = build(vecs, labels, c, {})
        if len(c_grid) == 1:
            best = (1.0, c, model)
            break
        acc = (accuracy(outcomes(model, dev, dev_vecs)) + accuracy(outcomes(model, val, val_vecs))) / 2
        if best is None or acc > best[0]:
            best = (acc, c, model)
    assert best is not None
    _, c, model = best
    temperature = calibrate_temperature(model, [*dev, *val], np.vstack([dev_vecs, val_vecs]))
    model.meta = {"temperature": temperature}
    dev_res, val_res = outcomes(model, dev, dev_vecs), outcomes(model, val, val_vecs)
    floors, thresholds, chosen = choose_floor_and_thresholds(dev_res, val_res)
    model.meta = {"C": c, "temperature": temperature,
                  "train_examples": len(pairs), "classes": len(model.classes), "support_floors": floors,
                  "thresholds": thresholds,
                  "faq_fallback": choose_faq_fallback(model, dev, dev_vecs, thresholds, floors),
                  "dev": {"accuracy": accuracy(dev_res), **chosen["dev"]},
                  "public_val": {"accuracy": accuracy(val_res), **chosen["val"]}}
    return model


def choose_model(settings: Settings | None = None) -> str:
    """The candidate shipped: the fine-tuned one once its encoder is trained (its head is fitted at start when the
    company's FAQ has none yet), else `frozen`, with a warning.
    """
    settings = settings or get_settings()
    if (encoder_dir(settings, load_embedder(settings.embedding_model).name) / "config.json").exists():
        return "finetuned"
    log.warning("no fine-tuned router encoder for this labelled data: the frozen router serves; "
                "`make router` (`python -m app.training.router_train`) fine-tunes it")
    return "frozen"


def load_router(settings: Settings | None = None, kind: str | None = None, standalone: bool = False) -> Router:
    """The router to serve: the shipped candidate (or `kind`), cached or trained now, with the encoder it was
    trained on.

    The `frozen` router shares the app's embedding model and memo (Deps fills in `embed`) unless
    `standalone`; the `finetuned` one brings its own encoder (its own thread).
    """
    settings = settings or get_settings()
    open_company(settings.company_dir, LANGUAGES)
    kind = kind or choose_model(settings)
    base = load_embedder(settings.embedding_model)
    folder = model_dir(settings, kind, base.name)
    try:
        model = RouterModel.load(folder)
    except FileNotFoundError:  # fitted now, on cached vectors: seconds once they are cached
        log.info("fitting the router's head (%s): none cached for this labelled data and FAQ", kind)
        model = train(kind, settings)[0]
    encoder = base
    if kind == "finetuned":
        encoder = Embedder(str(finetuned_encoder(settings, base.name)), settings.embed_backend,
                           settings.torch_threads, int8=int8_encoder(settings, kind))
        fitted = bool(model.meta.get("encoder_int8"))
        if encoder.int8 != fitted:  # its head was fitted on other vectors
            log.error("the fine-tuned router's encoder serves %s vectors but its head was fitted on %s ones: "
                      "serving the frozen router", *("int8" if x else "float" for x in (encoder.int8, fitted)))
            return load_router(settings, "frozen", standalone)
    memo = EmbeddingMemo(encoder) if kind == "finetuned" or standalone else None
    leave = leave_train.ensure(settings.cache_dir / "models", encoder.embed, base.embed,
                               key=vectors_key(settings, kind, base.name))
    return Router(model, memo, faq_texts(), leave)


def main(argv: list[str] | None = None) -> int:
    """Train both candidates (unless cached) and print their dev figures."""
    import argparse

    p = argparse.ArgumentParser(prog="python -m app.training.router_train", description=__doc__.splitlines()[0])
    p.add_argument("--kind", choices=["frozen", "finetuned", "both"], default="finetuned",
                   help="the candidate to train (the frozen one is only reported: `make router` leaves it out)")
    p.add_argument("--force", action="store_true", help="retrain even when a cached model exists")
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    settings = get_settings()
    open_company(settings.company_dir, LANGUAGES)
    kinds = ["frozen", "finetuned"] if args.kind == "both" else [args.kind]
    for kind in kinds:
        folder = model_dir(settings, kind, load_embedder(settings.embedding_model).name)
        if (folder / "meta.json").exists() and not args.force:
            meta = json.loads((folder / "meta.json").read_text())
        else:
            meta = train(kind, settings)[0].meta
        load_router(settings, kind, standalone=True)  # trains its leave-type classifiers when missing (seconds)
        print(f"{kind}: dev accuracy {meta['dev']['accuracy']:.3f}, coverage {meta['dev']['coverage']:.3f}, "
              f"wrong shortcuts {meta['dev']['wrong']} ({meta['train_seconds']} s to train) -> {folder}")
    print(f"shipped: {choose_model(settings)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
