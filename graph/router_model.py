"""The learned router's model at run time: a linear classifier over sentence embeddings, plus the
labelled examples it was trained on for a nearest-example check.

Training (`app/training/router_train.py`) writes three files into a cache folder keyed by the training
data: `weights.npz` (coefficients, intercepts, example embeddings), `labels.json` (class and
example labels) and `meta.json` (which model, thresholds and temperature chosen on the dev and public
val splits, scores). Scoring is a matrix product and a softmax: well under a millisecond, so the
decision costs one embedding.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Scores:
    """What the classifier says about one question."""

    probs: dict[str, float]  # probability of every fine label (routes and faq:<id>)
    top: str  # most probable fine label
    confidence: float  # its probability
    support: float  # cosine similarity to the nearest training example of that label

    def best_faq(self) -> tuple[str | None, float]:
        """The most probable FAQ entry's label and its probability (whatever the top label is)."""
        label = max((k for k in self.probs if k.startswith("faq:")), key=self.probs.__getitem__, default=None)
        return label, (self.probs[label] if label else 0.0)


@dataclass
class RouterModel:
    """Softmax over `coef @ vec + intercept`; examples kept for the nearest-example check."""

    classes: list[str]
    coef: np.ndarray  # (n_classes, dim)
    intercept: np.ndarray  # (n_classes,)
    examples: np.ndarray  # (n_examples, dim), unit-normalized
    example_labels: list[str]
    meta: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # The examples grouped by label, each label's rows one contiguous block: the nearest-example check reads a
        # view of its block, where picking its rows out of all ~12,000 copied them (about 0.5 ms a decision).
        order = sorted(range(len(self.example_labels)), key=lambda i: self.example_labels[i])
        self.examples = np.ascontiguousarray(self.examples[order])
        self.example_labels = [self.example_labels[i] for i in order]
        bounds: dict[str, list[int]] = {}
        for i, lab in enumerate(self.example_labels):
            bounds.setdefault(lab, [i, i])[1] = i + 1
        self._label_examples = {c: self.examples[b[0]:b[1]] for c, b in bounds.items()}

    def logits(self, vecs: np.ndarray) -> np.ndarray:
        """Raw class scores of a batch of embeddings (n, dim) -> (n, n_classes), before the temperature."""
        return np.asarray(vecs @ self.coef.T + self.intercept)

    def score(self, vec: np.ndarray) -> Scores:
        """Probabilities of every label for one unit-normalized embedding, at the calibrated temperature."""
        logits = (self.coef @ vec + self.intercept) / self.temperature
        logits = logits - logits.max()
        p = np.exp(logits)
        p = p / p.sum()
        top = int(np.argmax(p))
        label = self.classes[top]
        block = self._label_examples.get(label)
        support = float((block @ vec).max()) if block is not None and len(block) else 0.0
        return Scores({c: float(x) for c, x in zip(self.classes, p, strict=True)}, label, float(p[top]), support)

    @property
    def temperature(self) -> float:
        """The logits' divisor fitted on validation data (1.0 for a model trained before it existed)."""
        return float(self.meta.get("temperature") or 1.0)

    @property
    def thresholds(self) -> dict[str, float]:
        """Per-route confidence thresholds chosen on the dev split and the public val splits."""
        return dict(self.meta.get("thresholds", {}))

    @property
    def faq_fallback(self) -> float:
        """How probable the best FAQ entry must be to be offered as the closest answer on the full path
        (chosen on the dev split; a model trained before it existed never offers one).
        """
        return float((self.meta.get("faq_fallback") or {}).get("threshold", 1.01))

    def support_floor(self, group: str) -> float:
        """Least similarity to a training example of the chosen label for a shortcut of this route group (chosen
        per threshold family on the dev and public val splits).
        """
        return float((self.meta.get("support_floors") or {}).get(group, 0.0))

    def save(self, folder: Path) -> None:
        """Write the three files (no pickles: plain arrays and JSON)."""
        folder.mkdir(parents=True, exist_ok=True)
        np.savez(folder / "weights.npz", coef=self.coef, intercept=self.intercept, examples=self.examples)
        (folder / "labels.json").write_text(json.dumps({"classes": self.classes, "examples": self.example_labels}))
        (folder / "meta.json").write_text(json.dumps(self.meta, indent=2, sort_keys=True) + "\n")

    @classmethod
    def load(cls, folder: Path) -> RouterModel:
        """Read a trained model; FileNotFoundError when it was never trained here."""
        arrays = np.load(folder / "weights.npz")
        labels = json.loads((folder / "labels.json").read_text())
        meta = json.loads((folder / "meta.json").read_text())
        return cls(labels["classes"], arrays["coef"].astype(np.float32), arrays["intercept"].astype(np.float32),
                   arrays["examples"].astype(np.float32), labels["examples"], meta)
