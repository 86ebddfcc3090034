"""The FAQ: question/answer entries kept as data (`data/faq.yaml`), and their translations (`data/i18n/faq/<lang>.yaml`,
the same ids, the same facts) for employees who ask in another language.

Which entry a question asks for is decided by the learned router (its training examples include
every phrasing here), so the FAQ needs no index of its own: answering is a dictionary look-up.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import yaml

TRANSLATIONS = Path(__file__).resolve().parent.parent / "data" / "i18n" / "faq"


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


@lru_cache(maxsize=16)
def translations(lang: str) -> dict[str, FaqEntry]:
    """The FAQ entries translated into `lang` (none for English, or for a language without a file)."""
    path = TRANSLATIONS / f"{lang}.yaml"
    return load_faq(path) if lang != "en" and path.exists() else {}


def translated_answer(entry_id: str, lang: str) -> str | None:
    """An entry's answer in `lang` (None: not translated into it)."""
    entry = translations(lang).get(entry_id)
    return entry.answer if entry else None
