"""What the router learns from: the labelled splits (`data/router/`), the company's FAQ phrasings, and samples of
the public data sets (`app/training/public_data.py`), as the company's router reads them.
"""

from __future__ import annotations

from typing import Any

import yaml

from app.training.public_data import public_sets
from app.training.router_cache import DATA, company_faq
from tools.faq import FaqEntry

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


def faq_texts() -> dict[str, list[str]]:
    """What each of the company's FAQ entries says, asked and answered: a question naming anything else is a near
    miss (`graph/router.py`).
    """
    return {e.id: [*e.phrasings, e.answer] for e in company_faq().values()}
