"""Which leave type a question is about, by classifiers trained on labelled leave-type questions.

A question about leave rules that names no type by keyword ("can I take time off to look after my five-year-old")
is about one type by meaning. Two linear classifiers, trained on `data/leave_types/` (app/training/leave_train.py), say
which: a type, or `NONE` (leave in general, no particular type).

- `fast` reads the router's own vector of the question, which the router decided with: when it is sure, the answer
  needs no second embedding (`Decision.leave_type`);
- `full` reads the shared encoder's vector (a second embedding; better at telling leave types apart, since the
  router's encoder is fine-tuned on routes, where leave types are one).

Each is taken only when its probability reaches a threshold chosen on the dev split; below `full`'s,
graph/leave_slots.py matches the question to the leave types' descriptions, the method before there were classifiers.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

NONE = "none"  # the class of questions about leave in general, no particular type


def settles(kind: str | None, named: list[str]) -> bool:
    """Whether a classifier's answer settles a question naming `named` (no type, or several): a type, or NONE,
    when none is named; one of those named when several are.
    """
    return kind is not None and (not named or kind in named)


@dataclass
class LeaveTypeModel:
    """Softmax over `coef @ vec + intercept`, and the probability it must reach to be taken."""

    classes: list[str]  # the leave types and NONE
    coef: np.ndarray  # (n_classes, dim)
    intercept: np.ndarray  # (n_classes,)
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def threshold(self) -> float:
        """The least probability taken (chosen on the dev split; never taken when it was not chosen)."""
        return float(self.meta.get("threshold", 1.01))

    def probs(self, vecs: np.ndarray) -> np.ndarray:
        """Class probabilities of a batch of unit-normalized embeddings, (n, dim) -> (n, n_classes)."""
        logits = np.atleast_2d(vecs) @ self.coef.T + self.intercept
        logits = logits - logits.max(axis=1, keepdims=True)
        p = np.exp(logits)
        return np.asarray(p / p.sum(axis=1, keepdims=True))

    def sure(self, vec: np.ndarray) -> str | None:
        """The leave type (or NONE) the question's embedding is about, when the classifier is sure; else None."""
        p = self.probs(vec)[0]
        top = int(np.argmax(p))
        return self.classes[top] if p[top] >= self.threshold else None

    def pick(self, vec: np.ndarray, named: list[str]) -> str | None:
        """What the classifier settles for a question naming `named` (no type, or several): the type (or NONE) it is
        sure of, when the question names none or names that one; else None (not sure: the next method decides).
        """
        kind = self.sure(vec)
        return kind if settles(kind, named) else None

    def save(self, folder: Path) -> None:
        """Write the arrays and the labels with what training chose (no pickles)."""
        folder.mkdir(parents=True, exist_ok=True)
        np.savez(folder / "weights.npz", coef=self.coef, intercept=self.intercept)
        (folder / "meta.json").write_text(json.dumps({"classes": self.classes, **self.meta}, indent=2,
                                                     sort_keys=True) + "\n")

    @classmethod
    def load(cls, folder: Path) -> LeaveTypeModel:
        """Read a trained model; FileNotFoundError when it was never trained here."""
        with np.load(folder / "weights.npz") as arrays:
            coef, intercept = arrays["coef"].astype(np.float32), arrays["intercept"].astype(np.float32)
        meta = json.loads((folder / "meta.json").read_text())
        return cls(meta.pop("classes"), coef, intercept, meta)


@dataclass(frozen=True)
class LeaveTypes:
    """The two classifiers: over the router's vectors, and over the shared encoder's."""

    fast: LeaveTypeModel
    full: LeaveTypeModel

    def save(self, folder: Path) -> None:
        """One sub-folder each."""
        self.fast.save(folder / "fast")
        self.full.save(folder / "full")

    @classmethod
    def load(cls, folder: Path) -> LeaveTypes:
        """Read both; FileNotFoundError when they were never trained here."""
        return cls(LeaveTypeModel.load(folder / "fast"), LeaveTypeModel.load(folder / "full"))
