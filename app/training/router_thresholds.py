"""How sure the router must be: per-route thresholds chosen on validation data (the dev split and the
public data sets' val splits), the temperature that calibrates its confidence, and the statistics
reported beside them (coverage, wrong-shortcut rate with an exact binomial bound, expected calibration
error).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from graph.router import group_of
from graph.router_model import RouterModel
from tools.registry import INTENTS

MAX_WRONG_RATE = 0.01  # confidently wrong shortcuts allowed, at most, on the dev split
# Within a threshold family on the validation items, wrong shortcuts allowed per shortcut taken: half the
# target, so that the one-sided 95% bound on thousands of held-out queries stays under the target's 1.5x.
FAMILY_WRONG_RATE = 0.004
# On the public val splits, wrong shortcuts each family may let in beside that rate: with about ten families,
# all of them together stay under 0.5% of the ~3,800 val queries (3: 11 wrong, 0.29%).
VAL_WRONG_PER_FAMILY = 3
# Least similarity to a training example of the chosen label, tried in turn for each threshold family: an
# out-of-domain query the head reads as the caller's payslip sits 0.6-0.8 from any salary example, where most
# right ones are above 0.85, so the tool intents can afford a floor the handbook's paraphrases cannot.
SUPPORT_GRID = (0.0, 0.3, 0.4, 0.5, 0.6, 0.7, 0.75, 0.8, 0.85)
# The closest FAQ entry offered on the full path (framed as the closest, with where to ask) must be the
# right entry at least this often on the dev questions the shortcut stepped aside for.
FALLBACK_MIN_PRECISION = 0.6
FALLBACK_FLOOR = 0.3  # never offered below this probability, however the dev split falls
FALLBACK_WINDOW = 10  # the offers nearest a threshold whose precision decides it


@dataclass
class Outcome:
    """One dev/test item as the model saw it."""

    gold: str
    top: str
    confidence: float
    support: float
    also: tuple[str, ...] = ()  # other labels that are right too (a CLINC weather query: weather or clothing)

    @property
    def right(self) -> bool:
        """Whether the model's label is a right one."""
        return self.top == self.gold or self.top in self.also


def outcomes(model: RouterModel, items: list[dict[str, Any]], vecs: np.ndarray) -> list[Outcome]:
    """Score every item (compound items are judged by their whole text here: gold label `compound`)."""
    out = []
    for it, vec in zip(items, vecs, strict=True):
        s = model.score(vec)
        out.append(Outcome(it["route"], s.top, s.confidence, s.support, tuple(it.get("also") or ())))
    return out


def clopper_pearson_upper(wrong: int, n: int, confidence: float = 0.95) -> float:
    """One-sided upper confidence bound of a rate from `wrong` of `n` (exact binomial)."""
    if n == 0:
        return 1.0
    if wrong >= n:
        return 1.0
    from scipy.stats import beta

    return float(beta.ppf(confidence, wrong + 1, n - wrong))


def family_of(group: str) -> str:
    """The threshold family of a route group: every tool intent shares one, like every FAQ entry shares one.

    A fine-tuned router is so sure of its dev questions that one route alone says little: attendance's
    25 dev questions all scored above 0.97, so its own walk-down stopped there and a held-out 0.96 that was
    right stepped aside. The tool intents are one kind of decision (a template for the caller), so their
    dev items are pooled: the threshold is where a wrong one would first appear among all of them.
    """
    return "template" if group in INTENTS else group


def choose_thresholds(results: list[Outcome], floor: float, max_rate: float = 0.0,
                      max_wrong: int = 0) -> dict[str, float]:
    """Per route group, the lowest threshold at which its family's items above it are wrong at most
    `max_rate` of the time plus `max_wrong` times (both 0: not once, the rule on the dev split alone).

    The rate bounds wrong shortcuts per shortcut taken; the count bounds them where a family has few right
    items to set a rate against (on the public val splits, out-of-domain queries the model reads as a handbook
    question are all wrong: each family may let in a few, so that all of them together stay under the target).
    A family whose top item is already over the budget gets 1.01: never taken.
    """
    groups = {group_of(r.top) for r in results}
    by_family: dict[str, float] = {}
    for fam in sorted({family_of(g) for g in groups}):
        mine = sorted((r for r in results if family_of(group_of(r.top)) == fam and r.support >= floor),
                      key=lambda r: -r.confidence)
        t, wrong = 1.01, 0
        for taken, r in enumerate(mine, start=1):  # walk down from the most confident
            wrong += not r.right
            if wrong <= max_rate * taken + max_wrong and (r.right or max_wrong):
                t = r.confidence
        by_family[fam] = round(max(t, 0.2), 4)
    return {g: by_family[family_of(g)] for g in sorted(groups)}


def takes_shortcut(top: str, confidence: float, support: float, thresholds: dict[str, float],
                   floors: dict[str, float]) -> bool:
    """Whether a decision clears its route's threshold and its family's support floor (as `Router.sure`)."""
    group = group_of(top)
    return confidence >= thresholds.get(group, 1.01) and support >= floors.get(group, 0.0)


def shortcut_stats(results: list[Outcome], thresholds: dict[str, float], floors: dict[str, float]) -> dict[str, Any]:
    """Coverage (share of items that take a shortcut) and wrong-shortcut rate with its 95% bound."""
    taken = [r for r in results if takes_shortcut(r.top, r.confidence, r.support, thresholds, floors)]
    wrong = sum(1 for r in taken if not r.right)
    return {"items": len(results), "shortcuts": len(taken), "coverage": round(len(taken) / max(1, len(results)), 4),
            "wrong": wrong, "wrong_rate": round(wrong / max(1, len(taken)), 4),
            "wrong_rate_upper95": round(clopper_pearson_upper(wrong, len(taken)), 4)}


def accuracy(results: list[Outcome]) -> float:
    """Top-1 accuracy over the items."""
    return round(sum(r.right for r in results) / max(1, len(results)), 4)


def fit_temperature(logits: np.ndarray, gold: np.ndarray) -> float:
    """The temperature that minimizes the negative log-likelihood of the gold classes (Guo et al., 2017).

    A linear head over sentence embeddings is over-sure far from its training data; dividing its logits by
    one number fitted on validation data makes "0.9" mean right about nine times in ten, without changing
    which label wins.
    """
    from scipy.optimize import minimize_scalar

    def nll(t: float) -> float:
        z = logits / t
        z = z - z.max(axis=1, keepdims=True)
        logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
        return float(-logp[np.arange(len(gold)), gold].mean())

    return round(float(minimize_scalar(nll, bounds=(0.05, 20.0), method="bounded").x), 4)


def expected_calibration_error(confidence: list[float], right: list[bool], bins: int = 15) -> float:
    """ECE: the gap between confidence and accuracy, averaged over equal-width confidence bins by their size."""
    conf = np.asarray(confidence, dtype=np.float64)
    ok = np.asarray(right, dtype=np.float64)
    if not len(conf):
        return 0.0
    edges = np.linspace(0.0, 1.0, bins + 1)
    idx = np.clip(np.digitize(conf, edges[1:-1], right=True), 0, bins - 1)
    gap = sum(abs(conf[idx == b].mean() - ok[idx == b].mean()) * (idx == b).sum()
              for b in range(bins) if (idx == b).any())
    return round(float(gap / len(conf)), 4)


def choose_faq_fallback(model: RouterModel, items: list[dict[str, Any]], vecs: np.ndarray,
                        thresholds: dict[str, float], floors: dict[str, float]) -> dict[str, Any]:
    """How sure the router must be of an FAQ entry to offer it on the full path when the shortcut stepped aside.

    Walk the dev items below the shortcut, most probable FAQ entry first; the threshold is the lowest
    probability of a right offer down to which the offers nearest it (the last `FALLBACK_WINDOW`) are right at
    least `FALLBACK_MIN_PRECISION` of the time, and the walk stops at the first right offer where they are not.
    An offer at the threshold's confidence is then right that often, not only the offers above it on average:
    on a dev split of 999 questions the average let offers down to 0.48, where four in ten were right ("are pets
    allowed in the office?" offered the remote-work entry). It never ends on a wrong offer.
    """
    below = []
    for it, vec in zip(items, vecs, strict=True):
        s = model.score(vec)
        if takes_shortcut(s.top, s.confidence, s.support, thresholds, floors):
            continue  # the shortcut (or a sure route) answers these
        label, p = s.best_faq()
        if label is not None and p >= FALLBACK_FLOOR:
            below.append((p, label == it["route"]))
    below.sort(key=lambda x: -x[0])
    threshold, stats = 1.01, {"offered": 0, "right": 0}
    for i, (p, ok) in enumerate(below):
        if not ok:
            continue
        window = [o for _, o in below[max(0, i + 1 - FALLBACK_WINDOW):i + 1]]
        if sum(window) / len(window) < FALLBACK_MIN_PRECISION:
            break
        threshold, stats = p, {"offered": i + 1, "right": sum(o for _, o in below[:i + 1])}
    return {"threshold": round(threshold, 4), **stats, "below_shortcut": len(below)}


def calibrate_temperature(model: RouterModel, items: list[dict[str, Any]], vecs: np.ndarray) -> float:
    """The temperature fitted on validation items whose label the model has."""
    index = {c: i for i, c in enumerate(model.classes)}
    rows = [i for i, it in enumerate(items) if it["route"] in index]
    gold = np.array([index[items[i]["route"]] for i in rows])
    return fit_temperature(model.logits(vecs[rows]).astype(np.float64), gold)


# Routes whose answer states nothing the desk knows: small talk says what the desk covers, a draft repeats the
# request's own words. A public query read as one of them is no wrong shortcut ("text mom I'm late" gets a
# draft), so only the dev split sets their thresholds.
NO_SHORTCUT = {"other", "free_writing"}


def strictest(*chosen: dict[str, float]) -> dict[str, float]:
    """Per route group, the highest of the thresholds chosen on each validation set apart: the project's dev
    split must hold on its own, not only pooled with thousands of public queries.
    """
    return {g: max(c[g] for c in chosen if g in c) for g in sorted({g for c in chosen for g in c})}


def _family_choice(dev: list[Outcome], val: list[Outcome], fam: str, floor: float, count_val: bool = True,
                   covered: Sequence[bool] | None = None) -> tuple[tuple[int, int], dict[str, float]]:
    """One family's thresholds over one support floor: the stricter of what dev and the public val splits
    allow, and what they give: (right shortcuts of that family on dev that `covered` does not mark, right shortcuts
    on dev and, with `count_val`, on val).
    """
    cover = list(covered) if covered is not None else [False] * len(dev)
    dev_c = [(r, c) for r, c in zip(dev, cover, strict=True) if family_of(group_of(r.top)) == fam]
    dev_f, val_f = [r for r, _ in dev_c], [r for r in val if family_of(group_of(r.top)) == fam]
    on_val = choose_thresholds(val_f, floor, FAMILY_WRONG_RATE, VAL_WRONG_PER_FAMILY)
    th = strictest(choose_thresholds(dev_f, floor, FAMILY_WRONG_RATE),
                   {g: t for g, t in on_val.items() if g not in NO_SHORTCUT})
    floors = dict.fromkeys(th, floor)

    def right(r: Outcome) -> bool:
        return takes_shortcut(r.top, r.confidence, r.support, th, floors) and r.right

    added = sum(right(r) for r, c in dev_c if not c) if covered is not None else 0
    return (added, sum(map(right, [*dev_f, *val_f] if count_val else dev_f))), th


def choose_floor_and_thresholds(dev: list[Outcome], val: list[Outcome], count_val: bool = True,
                                covered: Sequence[bool] | None = None
                                ) -> tuple[dict[str, float], dict[str, float], dict[str, dict[str, Any]]]:
    """Per threshold family, the support floor and thresholds that give it the most right shortcuts on dev + public
    val, with its wrong shortcuts under `FAMILY_WRONG_RATE` (a tie goes to the higher floor: the same validation
    figures, and less reach far from the training data). Returns per route group (floors, thresholds, stats).

    `count_val=False`: the right shortcuts are counted on dev alone, for a router that reads only questions like
    dev's (the other languages' routers never read the English and public val queries); val's wrong shortcuts bound
    the thresholds all the same.

    `covered` (one flag per dev item): for a first reader, the dev items the reader after it takes right when this
    one steps aside. The floor then gives the two together the most right shortcuts (the dev items this one adds),
    and of those, this one the most (each is answered sooner). Counted on its own, the first reader over USE took
    the questions the pair is surest of and dropped those only it was sure of: on dev, 3% fewer shortcuts in turn.

    One floor for every route held the tool intents to what the handbook's paraphrases allow: with a floor per
    family the shipped encoder's dev coverage went from 80.8% to 84.0% at the same wrong shortcuts (docs/routing.md).
    """
    floors: dict[str, float] = {}
    thresholds: dict[str, float] = {}
    for fam in sorted({family_of(group_of(r.top)) for r in [*dev, *val]}):
        best = max(((*_family_choice(dev, val, fam, f, count_val, covered), f) for f in SUPPORT_GRID),
                   key=lambda c: (*c[0], c[2]))
        _, th, f = best
        thresholds.update(th)
        floors.update(dict.fromkeys(th, f))
    stats = {"dev": shortcut_stats(dev, thresholds, floors), "val": shortcut_stats(val, thresholds, floors)}
    if stats["dev"]["wrong_rate"] > MAX_WRONG_RATE:  # no floor keeps the dev split's shortcuts right: none taken
        return {}, {}, {"dev": shortcut_stats(dev, {}, {}), "val": shortcut_stats(val, {}, {})}
    return floors, thresholds, stats
