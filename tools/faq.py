"""The FAQ: question/answer entries kept as data in the company's folder (`faq.yaml`, `tools/company.py`), and their
translations (`faq/<lang>.yaml`, the same ids, the same facts) for employees who ask in another language.

Which entry a question asks for is decided by the learned router (its training examples include
every phrasing here), so the FAQ needs no index of its own: answering is a dictionary look-up.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import yaml


@dataclass(frozen=True)
class FaqEntry:
    """One policy question, its answer and the ways employees ask it."""

    id: str
    question: str
    answer: str
    paraphrases: list[str] = field(default_factory=list)

    @property
    def phrasings(self) -> list[str]:
        """The canonical question and every paraphrase."""
        return [self.question, *self.paraphrases]


def load_faq(path: Path) -> dict[str, FaqEntry]:
    """Read the FAQ data file."""
    rows = yaml.safe_load(path.read_text(encoding="utf-8"))
    return {r["id"]: FaqEntry(r["id"], r["question"], r["answer"], list(r.get("paraphrases", []))) for r in rows}
