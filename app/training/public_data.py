"""Public intent data sets (CLINC150, BANKING77, HWU64) read as the desk's routes, through their mapping files.

The router's own splits were written by the project's authors; these were written by crowd workers for
other assistants. They teach the router what is not a help-desk matter (banking, cars, cooking, travel,
trivia: every intent the desk does not serve, trained as `other`) and more ways of asking what it does
serve (a *mapped* intent, such as CLINC's `pto_balance`, is more phrasings of `leave_balance`). *Grey*
intents, where more than one reply is fine, are neither trained on nor counted as wrong: they are
reported with their outcomes. The mapping is data (`data/router/public/*.yaml`), with a note on each
mapped and grey intent.

Splits: `train` is learned from, `val` chooses the model and its thresholds beside the dev split, `test`
is reported and never chooses anything. A data set published without a validation split (BANKING77)
gets one from its train split, by a hash of the text, so it never moves.

A *report-only* set (`role: report` in its mapping: HWU64) is the held-out public source: it has a test
split only, and is never trained on, never chosen on and not part of the router's fingerprint.
`public_sets()` and everything training reads (`data_files`, `validation_items`) leave it out; only the
report (`public_sets(include_report=True)`, `app/training/calibrate_public.py`) reads it.
"""

from __future__ import annotations

import csv
import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

import yaml

from app.settings import ROOT

PUBLIC = ROOT / "data" / "router" / "public"
Split = Literal["train", "val", "test"]
Kind = Literal["mapped", "grey", "ood"]
ROLES = ("train", "report")  # a mapping's `role`: learned from and chosen on (the default), or only reported
OOD_ROUTE = "other"  # what an out-of-domain query is trained as: small talk's route, answered by what the desk covers


@dataclass(frozen=True)
class PublicItem:
    """One query of a public data set, read as the desk would have to answer it."""

    q: str
    intent: str  # the data set's own label ("pto_balance", CLINC's "oos")
    kind: Kind
    routes: tuple[str, ...]  # mapped: the routes that are right; grey: the routes that are fine; ood: none
    source: str  # the data set's name

    @property
    def label(self) -> str | None:
        """What the router is trained and chosen on: a mapped intent's first route, `other` out of domain,
        None for a grey intent (more than one reply is fine: left out of every choice).
        """
        if self.kind == "mapped":
            return self.routes[0]
        return OOD_ROUTE if self.kind == "ood" else None


@dataclass(frozen=True)
class PublicSet:
    """One data set and its mapping onto the desk's routes."""

    name: str
    mapping: dict[str, Any]
    folder: Path

    @property
    def role(self) -> str:
        """`train` (learned from, its val split chooses) or `report` (only its test split, only reported)."""
        role = str(self.mapping.get("role", "train"))
        if role not in ROLES:
            raise ValueError(f"{self.name}: unknown role {role!r}, expected one of {ROLES}")
        return role

    @property
    def report_only(self) -> bool:
        """Never trained on, never chosen on: a held-out source, reported only."""
        return self.role == "report"

    @property
    def mapped(self) -> dict[str, dict[str, Any]]:
        """Intents that ask what one of the desk's routes answers."""
        return dict(self.mapping.get("mapped") or {})

    @property
    def grey(self) -> dict[str, dict[str, Any]]:
        """Intents where more than one reply is fine."""
        return dict(self.mapping.get("grey") or {})

    def item(self, q: str, intent: str) -> PublicItem:
        """A query as the desk reads it."""
        if intent in self.mapped:
            return PublicItem(q, intent, "mapped", tuple(self.mapped[intent]["routes"]), self.name)
        if intent in self.grey:
            return PublicItem(q, intent, "grey", tuple(self.grey[intent]["fine"]), self.name)
        return PublicItem(q, intent, "ood", (), self.name)

    def split(self, split: Split) -> list[PublicItem]:
        """Every query of one split, in the file's order (none where the set has no such split)."""
        return [self.item(q, intent) for q, intent in self._rows(split)]

    def _rows(self, split: Split) -> Iterator[tuple[str, str]]:
        reader = self.mapping["reader"]
        if reader == "clinc_json":
            data = _json(self.folder / self.mapping["file"])
            for part in self.mapping["splits"].get(split, []):
                for q, intent in data[part]:
                    yield str(q), str(intent)
        elif reader == "csv":
            every = int(self.mapping.get("val_from_train") or 0)
            source = "train" if split == "val" and every else split
            if source not in self.mapping["files"]:  # a report-only set has a test file only
                return
            for q, intent in _csv(self.folder / self.mapping["files"][source]):
                held_out = bool(every) and source == "train" and _bucket(q, every) == 0
                if split == "test" or (split == "val") == held_out:
                    yield q, intent
        else:
            raise ValueError(f"{self.name}: unknown reader {reader!r}")

    def train_pairs(self, per_intent: int, per_mapped: int | None = None) -> list[tuple[str, str]]:
        """(text, label) pairs the router learns from, the first `per_intent` of every out-of-domain intent (as
        `other`) and the first `per_mapped` (default the same) of every mapped one (as its first route); grey
        intents never; none of a report-only set.
        """
        if self.report_only:
            return []
        items = self.split("train")
        ood = sample([it for it in items if it.kind != "mapped"], per_intent)
        mapped = sample([it for it in items if it.kind == "mapped"], per_intent if per_mapped is None else per_mapped)
        return [(it.q, it.label) for it in [*mapped, *ood] if it.label is not None]


def _bucket(text: str, every: int) -> int:
    return int(hashlib.sha256(text.encode()).hexdigest()[:8], 16) % every


@lru_cache(maxsize=8)
def _json(path: Path) -> dict[str, list[list[str]]]:
    return dict(json.loads(path.read_text(encoding="utf-8")))


@lru_cache(maxsize=8)
def _csv(path: Path) -> tuple[tuple[str, str], ...]:
    with path.open(encoding="utf-8", newline="") as f:
        return tuple((row["text"].strip(), row["category"].strip()) for row in csv.DictReader(f))


def _mappings(folder: Path, include_report: bool) -> list[tuple[Path, PublicSet]]:
    out = []
    for path in sorted(folder.glob("*.yaml")):
        mapping = yaml.safe_load(path.read_text(encoding="utf-8"))
        s = PublicSet(mapping["name"], mapping, folder)
        if include_report or not s.report_only:
            out.append((path, s))
    return out


def public_sets(folder: Path = PUBLIC, *, include_report: bool = False) -> list[PublicSet]:
    """The data sets the router learns from and is chosen on, by mapping file name; with `include_report`,
    the report-only ones too (what `calibrate --public` reports).
    """
    return [s for _, s in _mappings(folder, include_report)]


def data_files(folder: Path = PUBLIC) -> list[Path]:
    """The files training reads (for the router's fingerprint): mappings and the data they name. A report-only
    set is not among them: adding or changing one never retrains the router.
    """
    chosen = _mappings(folder, include_report=False)
    files = [path for path, _ in chosen]
    for _, s in chosen:
        names = [s.mapping["file"]] if "file" in s.mapping else list(s.mapping["files"].values())
        files += [folder / n for n in names]
    return files


def validation_items() -> list[dict[str, Any]]:
    """The public val splits as labelled items (`{q, route[, also]}`, like the dev split's), grey ones and
    report-only sets left out: what the router's model and thresholds are chosen on beside the dev split.
    """
    return [{"q": it.q, "route": it.label, "also": list(it.routes[1:])}
            for s in public_sets() for it in s.split("val") if it.label is not None]


def sample(items: list[PublicItem], per_intent: int) -> list[PublicItem]:
    """At most `per_intent` queries of each intent, the first ones in the file (a stable sample)."""
    seen: dict[tuple[str, str], int] = {}
    out = []
    for it in items:
        key = (it.source, it.intent)
        if seen.get(key, 0) < per_intent:
            seen[key] = seen.get(key, 0) + 1
            out.append(it)
    return out
