"""Train the leave-type classifiers, choose their thresholds on the dev split, cache them.

The labelled questions are in `data/leave_types/` (see its README): `train_*.yaml` are learned from, `dev.yaml`
chooses C and the thresholds, `test.yaml` is reported by `python -m app calibrate --leave-types` and chooses
nothing. Each question carries the one leave type whose rules answer it, or `none`.

Two classifiers learn the same questions (graph/leave_model.py): `fast` over the router's vectors, `full` over the
shared encoder's. They are asked only about questions that name no leave type by keyword, or several
(graph/leave_slots.py), so the dev and test figures count those. `fast`'s threshold is the least probability at
which its wrong answers on the dev split stay within `MAX_WRONG` of those questions; `full`'s is the one that makes the
chain (fast, full, then the description match) most accurate on the dev split.

The models are cached inside the router's own folder (`fast` reads that router's vectors), keyed by the data,
`RECIPE`, that router's training record and the keyword and description settings around them; a clone reuses
them until one of these changes. Training takes seconds (a few hundred embeddings each).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from app.settings import ROOT
from graph.leave_model import NONE, LeaveTypeModel, LeaveTypes
from graph.leave_slots import (
    LEAVE_MIN_MARGIN,
    LEAVE_MIN_SIMILARITY,
    closest_description,
    described,
    leave_types_named,
)
from tools.domain import LEAVE_DESCRIPTIONS, LEAVE_SYNONYMS, LEAVE_TYPES

log = logging.getLogger(__name__)
DATA = ROOT / "data" / "leave_types"
RECIPE = "lr-balanced-c-grid+dev-threshold/1"  # bump when training changes the model
SEED = 13
C_GRID = (0.25, 1.0, 4.0, 16.0, 64.0)
THRESHOLD_GRID = tuple(round(0.30 + 0.01 * i, 2) for i in range(70))  # 0.30 .. 0.99
MAX_WRONG = 0.02  # of the dev questions it is asked about: wrong answers it may give where it is sure
CLASSES = [*LEAVE_TYPES, NONE]
Embed = Callable[[list[str]], np.ndarray]


def load_split(name: str) -> list[dict[str, Any]]:
    """One split's `{q, leave_type}` items (the train split spans `train_*.yaml`, a file per author)."""
    files = sorted(DATA.glob(f"{name}_*.yaml")) if name == "train" else [DATA / f"{name}.yaml"]
    items = [it for f in files for it in yaml.safe_load(f.read_text(encoding="utf-8")) or []]
    for it in items:
        if it["leave_type"] not in CLASSES:
            raise ValueError(f"{it['q']!r}: unknown leave type {it['leave_type']!r} (known: {', '.join(CLASSES)})")
    return items


def asked(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The questions the classifier is asked about: no leave type named by keyword, or several."""
    return [it for it in items if len(leave_types_named(it["q"])) != 1]


def fingerprint(key: str) -> str:
    """Changes whenever the labelled data, the recipe, the encoder whose vectors `fast` reads (`key`: which one,
    served how; never the company's FAQ) or what decides around the classifiers changes: the keywords (which
    questions they are asked about) and the description match after them (which the thresholds count).
    """
    around = json.dumps([LEAVE_SYNONYMS, LEAVE_DESCRIPTIONS, LEAVE_MIN_SIMILARITY, LEAVE_MIN_MARGIN], sort_keys=True)
    h = hashlib.sha256(f"{RECIPE}|{SEED}|{MAX_WRONG}|{around}|{key}".encode())
    for path in sorted(DATA.glob("*.yaml")):
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


def fit(vecs: np.ndarray, labels: list[str], dev_vecs: np.ndarray, dev_gold: list[str]) -> LeaveTypeModel:
    """Multinomial logistic regression, classes weighted alike, C chosen by top-1 accuracy on dev."""
    from sklearn.linear_model import LogisticRegression

    best: tuple[float, LeaveTypeModel] | None = None
    for c in C_GRID:
        clf = LogisticRegression(C=c, max_iter=3000, class_weight="balanced", random_state=SEED)
        clf.fit(vecs, labels)
        acc = float((clf.predict(dev_vecs) == np.array(dev_gold)).mean())
        if best is None or acc > best[0]:
            best = (acc, LeaveTypeModel([str(k) for k in clf.classes_], clf.coef_.astype(np.float32),
                                        clf.intercept_.astype(np.float32), {"C": c, "dev_top1": round(acc, 4)}))
    assert best is not None
    return best[1]


def by_description(items: list[dict[str, Any]], shared: Embed) -> list[str]:
    """What graph/leave_slots.py's description match, the last method in its chain, says for each question with the
    shared encoder: a type, or NONE where it settles none (the question then steps aside).
    """
    out = []
    for it in items:
        named = leave_types_named(it["q"])
        pool = described(named)
        out.append(closest_description(pool, shared([it["q"], *(LEAVE_DESCRIPTIONS[k] for k in pool)]), bool(named))
                   or NONE)
    return out


@dataclass(frozen=True)
class Split:
    """A split's asked questions with everything each method reads: both encoders' vectors, the description match."""

    items: list[dict[str, Any]]
    fast: np.ndarray  # the router's vectors
    full: np.ndarray  # the shared encoder's
    described: list[str]

    @classmethod
    def of(cls, items: list[dict[str, Any]], encode: Embed, shared: Embed) -> Split:
        """Embed the items with both encoders and run the description match on them."""
        texts = [it["q"] for it in items]
        return cls(items, encode(texts), shared(texts), by_description(items, shared))


def outcomes(models: LeaveTypes, split: Split) -> dict[str, Any]:
    """How each method does on the split's asked questions, and the chain graph/leave_slots.py runs: the fast classifier
    when sure, else the full one when sure, else the description match.
    """
    gold = [it["leave_type"] for it in split.items]
    named = [leave_types_named(it["q"]) for it in split.items]
    fast = [models.fast.pick(v, n) for v, n in zip(split.fast, named, strict=True)]
    full = [models.full.pick(v, n) for v, n in zip(split.full, named, strict=True)]
    chain = [a or b or c for a, b, c in zip(fast, full, split.described, strict=True)]
    n = len(gold) or 1

    def taken(xs: list[str | None]) -> dict[str, int]:
        return {"taken": sum(x is not None for x in xs),
                "wrong": sum(x is not None and x != g for x, g in zip(xs, gold, strict=True))}

    return {"n": len(gold), "fast": taken(fast), "full_after_fast": taken([b if a is None else None
                                                                          for a, b in zip(fast, full, strict=True)]),
            "description_accuracy": round(sum(d == g for d, g in zip(split.described, gold, strict=True)) / n, 4),
            "accuracy": round(sum(c == g for c, g in zip(chain, gold, strict=True)) / n, 4)}


def train(encode: Embed, shared: Embed) -> LeaveTypes:
    """Fit both classifiers on the train split (over the router's vectors, `encode`, and the shared encoder's);
    choose C and the thresholds on the dev split: the fast one's least threshold whose wrong answers stay within
    `MAX_WRONG` of the dev questions, then the full one's that makes the chain most accurate (the higher on ties).
    """
    train_items = load_split("train")
    texts, labels = [it["q"] for it in train_items], [it["leave_type"] for it in train_items]
    dev = Split.of(asked(load_split("dev")), encode, shared)
    dev_gold = [it["leave_type"] for it in dev.items]
    models = LeaveTypes(fit(encode(texts), labels, dev.fast, dev_gold), fit(shared(texts), labels, dev.full, dev_gold))
    models.full.meta["threshold"] = 1.01  # takes nothing while the fast one's threshold is chosen
    for t in (*THRESHOLD_GRID, 1.01):  # 1.01: never taken, when no threshold keeps its wrong answers within bounds
        models.fast.meta["threshold"] = t
        if outcomes(models, dev)["fast"]["wrong"] <= MAX_WRONG * len(dev.items):
            break
    best = (outcomes(models, dev)["accuracy"], 1.01)
    for t in THRESHOLD_GRID:
        models.full.meta["threshold"] = t
        best = max(best, (outcomes(models, dev)["accuracy"], t))
    models.full.meta["threshold"] = best[1]
    for m in (models.fast, models.full):
        m.meta |= {"recipe": RECIPE, "train_examples": len(train_items)}
    models.fast.meta["dev"] = outcomes(models, dev)
    return models


def ensure(models_dir: Path, encode: Embed, shared: Embed, key: str = "") -> LeaveTypes:
    """The cached classifiers for this encoder (`key`) and data (in `models_dir`), trained now when missing
    (seconds).
    """
    key = fingerprint(key)
    models_dir.mkdir(parents=True, exist_ok=True)
    folder = models_dir / f"leave-types-{key}"
    try:
        return LeaveTypes.load(folder)
    except FileNotFoundError:
        log.info("training the leave-type classifiers: none cached for this router and data")
    models = train(encode, shared)
    for m in (models.fast, models.full):
        m.meta["fingerprint"] = key
    tmp = folder.with_name(f"{folder.name}.tmp-{os.getpid()}")  # written whole, then moved into place
    models.save(tmp)
    try:
        tmp.rename(folder)
    except OSError:  # another process put the same models there first
        shutil.rmtree(tmp, ignore_errors=True)
    log.info("leave types: thresholds %s / %s, dev %s", models.fast.threshold, models.full.threshold,
             models.fast.meta["dev"])
    return models
