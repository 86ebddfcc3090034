"""Train the router: fine-tune its encoder once on what the desk can do, and fit its head on what the company
writes, at set-up or at start, in seconds on cached vectors.

Two candidate models are built from the same labelled data (`data/router/`):

- `frozen`: logistic regression on the frozen all-MiniLM-L6-v2 embeddings the app already computes
  for the caches, so routing costs no extra embedding;
- `finetuned` (shipped): the same head on a MiniLM contrastively fine-tuned on the labelled questions
  (supervised contrastive loss: questions of one route pulled together, others pushed apart), served with
  int8 weights (`Settings.router_int8`): its head, temperature and thresholds are fitted on the int8 vectors.

The encoder learns the desk's capabilities from labelled questions, never from a company's folder: the labelled
train split (the demo company's FAQ phrasings among them, kept as labelled questions in `train_z_faq.yaml`, read
last) and a fixed sample of the public data sets (`FINETUNE_PUBLIC_PER_INTENT` per intent). It is keyed by those alone
(`encoder_fingerprint`), so an edit of a company's FAQ, or another company's folder, never fine-tunes it again.
(Without those FAQ phrasings the public val splits' coverage fell from 89.9% to 70.8%: docs/routing.md.)
The head learns from the train split, every phrasing of the company's FAQ (`faq.yaml` of `COMPANY_DIR`) and the
public data sets' train splits (`app/training/public_data.py`: out-of-domain intents as `other`, mapped intents as
their route). Its vectors are cached by content (`app/training/vectors.py`), so refitting after a knowledge edit
embeds only what changed. A labelled question about an FAQ entry the company does not have is a handbook question
for it (`for_company`). The C of the head, the temperature and the thresholds are chosen on the dev split and the
public val splits together, so that wrong shortcuts stay bounded on questions written nowhere near the training
data as well as on the project's own.

Both candidates are reported on the test splits by `python -m app calibrate --json` (`--public` for the public
ones); the fine-tuned one ships whenever it is trained (`choose_model`), and `make router` trains only it. No test
split chooses anything. Training is seeded: `python -m app.training.router_train` (also run by `make setup`).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import time
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from app.settings import ROOT, Settings, get_settings
from app.training import leave_train
from app.training.public_data import data_files, public_sets, validation_items
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
from tools.embeddings import Embedder, bundled_model_path, load_embedder
from tools.faq import FaqEntry
from tools.i18n import LANGUAGES
from tools.onnx_export import INT8_RECIPE

log = logging.getLogger(__name__)
DATA = ROOT / "data" / "router"
# Bump when training changes in a way that changes the model: the head's recipe, and the encoder's.
RECIPE = "lr-c-grid+supcon-2ep+public-ood+temperature+family-floors+offer-window+company-faq/12"
ENCODER_RECIPE = "supcon-2ep+labelled-train+public-sample/2"
C_GRID = (1.0, 4.0, 16.0, 64.0, 256.0)
# Public train queries per intent the head learns from: measured on the frozen encoder, 30 a intent (10,853
# examples) gave the public val splits 91.6% against 93.0% for all of them (27,045), at a third of the
# embedding minutes every fresh clone spends at set-up.
HEAD_PUBLIC_PER_INTENT = 30
# Every train query of a mapped intent (CLINC's `payday`, `income` ...: 100 each) goes to the head: they are the
# only phrasings of the desk's own questions that nobody here wrote, and 30 left `income` and `payday` unsure.
HEAD_MAPPED_PER_INTENT = 100
FINETUNE_PUBLIC_PER_INTENT = 8  # public queries per intent the encoder is fine-tuned on
# Leave-type FAQ entries state the same facts as the leave_policy tool: one route per meaning.
LEAVE_FAQ = {"annual-leave-entitlement", "sick-pay", "maternity-leave", "paternity-leave", "parental-leave",
             "bereavement-leave", "study-leave", "unpaid-leave"}


def load_split(name: str) -> list[dict[str, Any]]:
    """One labelled split: `{q, route[, parts]}` items (the train and dev splits span `train*.yaml` and
    `dev*.yaml`, a file per author).
    """
    files = sorted(DATA.glob(f"{name}*.yaml")) if name in ("train", "dev") else [DATA / f"{name}.yaml"]
    return [it for f in files for it in yaml.safe_load(f.read_text(encoding="utf-8")) or []]


def company_faq() -> dict[str, FaqEntry]:
    """The FAQ of the company the desk speaks for (`tools/company.py`)."""
    return current().faq


def for_company(items: list[dict[str, Any]], faq: dict[str, FaqEntry]) -> list[dict[str, Any]]:
    """Labelled items as the company's router reads them: a question about an FAQ entry the company does not have
    asks about its policies all the same, and its handbook answers it.
    """
    return [{**it, "route": "handbook"} if it["route"].startswith("faq:") and it["route"][4:] not in faq else it
            for it in items]


def faq_label(entry_id: str) -> str:
    """The route of an FAQ entry's phrasings (leave-type entries state what the leave_policy tool states)."""
    return "leave_policy" if entry_id in LEAVE_FAQ else f"faq:{entry_id}"


def training_examples(public: bool = True) -> list[tuple[str, str]]:
    """(text, label) pairs of the head: the train split, every phrasing of the company's FAQ and (unless not
    `public`) the public train splits.
    """
    faq = company_faq()
    pairs = [(it["q"], it["route"]) for it in for_company(load_split("train"), faq)]
    for entry in faq.values():
        pairs += [(text, faq_label(entry.id)) for text in entry.phrasings]
    return with_public(pairs, HEAD_PUBLIC_PER_INTENT, HEAD_MAPPED_PER_INTENT) if public else list(dict.fromkeys(pairs))


def finetune_examples() -> list[tuple[str, str]]:
    """What the encoder is fine-tuned on: the labelled train split (no company's folder) and a smaller sample of each
    public intent.
    """
    pairs = [(it["q"], it["route"]) for it in load_split("train")]
    return with_public(list(dict.fromkeys(pairs)), FINETUNE_PUBLIC_PER_INTENT)


def with_public(pairs: list[tuple[str, str]], per_intent: int, per_mapped: int | None = None) -> list[tuple[str, str]]:
    """The project's pairs and `per_intent` public ones of every intent (`per_mapped` of a mapped one); a text the
    project labels keeps its label.
    """
    own = {t.lower() for t, _ in pairs}
    pairs = pairs + [(t, lab) for s in public_sets() for t, lab in s.train_pairs(per_intent, per_mapped)
                     if t.lower() not in own]
    return list(dict.fromkeys(pairs))


def _base(embedder_name: str) -> str:
    """The bundled model named by what it is, not by where a virtualenv put it: every clone shares one cache."""
    return "bundled:all-MiniLM-L6-v2" if embedder_name == bundled_model_path() else embedder_name


def encoder_fingerprint(embedder_name: str) -> str:
    """Changes whenever what the encoder is fine-tuned on (the labelled train split, the public data), its recipe or
    its base model changes; never with a company's knowledge.
    """
    h = hashlib.sha256(f"encoder|{_base(embedder_name)}|{SEED}|{ENCODER_RECIPE}".encode())
    for path in [*sorted(DATA.glob("train*.yaml")), *data_files()]:
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


def faq_fingerprint(faq: dict[str, FaqEntry]) -> str:
    """Changes whenever an FAQ entry is added or removed or a way of asking it changes; an answer's wording does
    not (the heads never read it: an answer edited is served at the next start, or reload, with nothing refitted).
    """
    h = hashlib.sha256()
    for e in faq.values():
        h.update("\0".join([e.id, e.question, *e.paraphrases]).encode() + b"\1")
    return h.hexdigest()[:16]


def fingerprint(kind: str, embedder_name: str, with_faq: bool = True) -> str:
    """The head's key: changes whenever the labelled data, the company's FAQ (unless not `with_faq`), the recipe
    (`RECIPE`) or the encoder under it changes.
    """
    faq = faq_fingerprint(company_faq()) if with_faq else "any company"
    h = hashlib.sha256(f"{kind}|{_base(embedder_name)}|{SEED}|{RECIPE}|{faq}".encode())
    if kind == "finetuned":
        h.update(encoder_fingerprint(embedder_name).encode())
    for path in [*sorted(DATA.glob("*.yaml")), *data_files()]:
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


def model_dir(settings: Settings, kind: str, embedder_name: str) -> Path:
    """Cache folder of one trained head. An int8 encoder's head is its own model (`int8_encoder`), keyed by how
    the weights are quantized too: a head fits the vectors of one recipe.
    """
    return settings.cache_dir / "models" / f"router-{variant(settings, kind)}-{fingerprint(kind, embedder_name)}"


def variant(settings: Settings, kind: str) -> str:
    """A candidate's name with the vectors its head reads: `finetuned-int8pc`, `finetuned`, `frozen`."""
    return f"{kind}-{INT8_RECIPE}" if int8_encoder(settings, kind) else kind


def encoder_dir(settings: Settings, embedder_name: str) -> Path:
    """Cache folder of the fine-tuned encoder (float and int8 heads read the same one)."""
    return settings.cache_dir / "models" / f"router-encoder-{encoder_fingerprint(embedder_name)}"


def c_record(settings: Settings, name: str) -> Path:
    """Where the C chosen for a head over one encoder and labelled data is kept: chosen on dev + public val over the
    whole grid once (at set-up, for the first company), then reused when a knowledge edit refits the head, which
    then costs one fit instead of a grid (C weighs the labelled data's scale, not one company's FAQ).
    """
    return settings.cache_dir / "models" / f"c-{name}.json"


def known_c(record: Path) -> float | None:
    """The C kept in `record`, if any."""
    try:
        return float(json.loads(record.read_text())["C"])
    except (FileNotFoundError, ValueError, KeyError):
        return None


def remember_c(record: Path, c: float) -> None:
    """Keep the C a grid chose (written whole, then moved into place)."""
    tmp = record.with_name(f"{record.name}.tmp-{os.getpid()}")
    tmp.write_text(json.dumps({"C": c}) + "\n")
    tmp.replace(record)


def vectors_key(settings: Settings, kind: str, embedder_name: str) -> str:
    """What the cached vectors of a candidate's encoder are filed under: which encoder, served how."""
    if kind == "frozen":
        return f"frozen-{hashlib.sha256(_base(embedder_name).encode()).hexdigest()[:16]}"
    return f"{encoder_dir(settings, embedder_name).name}-{'int8' if int8_encoder(settings, kind) else 'float'}"


def int8_encoder(settings: Settings, kind: str) -> bool:
    """Whether this candidate's encoder is served with int8 weights: the fine-tuned one, when asked for and ONNX
    Runtime serves it (`Settings.router_int8`). The frozen candidate shares the app's float encoder.
    """
    return kind == "finetuned" and settings.router_int8 and settings.embed_backend == "onnx"


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
    faq = {e.id: [*e.phrasings, e.answer] for e in company_faq().values()}
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
    return Router(model, memo, faq, leave)


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
