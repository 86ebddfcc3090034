"""A company is a folder: what it writes (its name and contacts, FAQ, FAQ translations, handbook, leave facts),
read and checked at start, so any company's desk runs from its own folder with no training step.

```
company.yaml      name, hr_portal {name, url}, it_desk {phone, url}, payroll_email, hr_email, sites, optional
                  systems (the names of its own tools employees mention: expenses, VPN ...)
faq.yaml          entries: id, question, answer, optional paraphrases (one language)
faq/<lang>.yaml   optional translations: the same ids (answer, question, paraphrases in that language)
kb/*.md           the handbook, one topic a page (the first line its title)
facts.yaml        optional: facts the demo backend and the tests read
```

`load_company(folder)` reads a folder whole or raises `CompanyError` listing every problem with its file and line:
the desk never starts on half a company. `check_company(folder)` returns the problems instead (what
`python -m app company check DIR` prints). The folder in use is set once at start (`use`); `current()` is what
every sentence naming the company, its portals and contacts is filled from (`tools/i18n.py:say`).
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from tools.company_files import (
    Problem,
    line_of,
    read_company_yaml,
    read_entries,
    read_kb,
    read_yaml,
    stale_translations,
)
from tools.faq import FaqEntry

log = logging.getLogger(__name__)
DEFAULT_DIR = Path(__file__).resolve().parent.parent / "data" / "companies" / "brightmart"
_LANG = re.compile(r"^[a-z]{2,3}$")


class CompanyError(ValueError):
    """A company folder that cannot be served: every problem found, each with its file and line."""

    def __init__(self, folder: Path, problems: list[Problem]) -> None:
        self.folder, self.problems = folder, problems
        lines = "\n".join(f"  {folder / p.file}{f':{p.line}' if p.line else ''}: {p.message}" for p in problems)
        super().__init__(f"the company folder {folder} cannot be served ({len(problems)} problem"
                         f"{'s' if len(problems) != 1 else ''}):\n{lines}")


@dataclass(frozen=True)
class Company:
    """Everything one company writes, as read from its folder."""

    folder: Path
    name: str
    hr_portal: dict[str, str]  # name, url
    it_desk: dict[str, str]  # phone, url
    payroll_email: str
    hr_email: str
    sites: tuple[str, ...]
    systems: tuple[str, ...]
    faq: dict[str, FaqEntry]
    translations: dict[str, dict[str, FaqEntry]]  # lang -> id -> entry
    kb_pages: tuple[Path, ...]
    facts: dict[str, Any] = field(default_factory=dict)
    # Translated answers that lost a figure of the entry's own answer (the answer was edited, the translation was
    # not): (lang, id). Their questions still teach the router; their answers are never given.
    stale: frozenset[tuple[str, str]] = frozenset()
    warnings: tuple[Problem, ...] = ()

    @cached_property
    def placeholders(self) -> dict[str, str]:
        """What the message catalogs may name: `{company}`, `{hr_portal}`, `{hr_portal_url}`, `{it_phone}`,
        `{it_url}`, `{payroll_email}`, `{hr_email}`.
        """
        return {"company": self.name, "hr_portal": self.hr_portal["name"], "hr_portal_url": self.hr_portal["url"],
                "it_phone": self.it_desk["phone"], "it_url": self.it_desk["url"],
                "payroll_email": self.payroll_email, "hr_email": self.hr_email}

    @cached_property
    def own_words(self) -> frozenset[str]:
        """The company's own names, lower-case (its name, its HR portal, its systems): never a place or a person."""
        return frozenset(w.lower() for w in (self.name, self.hr_portal["name"], *self.systems))


def check_company(folder: Path, languages: tuple[str, ...] | None = None) -> tuple[Company | None, list[Problem]]:
    """The company in `folder` and every problem found; the company is None when there is any problem.

    `languages`: the languages a translation may be in (None: any two- or three-letter code).
    """
    folder = Path(folder).expanduser().resolve()
    if not folder.is_dir():
        return None, [Problem(".", None, "no such folder")]
    problems: list[Problem] = []
    meta = read_company_yaml(folder, problems)
    faq = read_entries(folder / "faq.yaml", folder, problems)
    translations: dict[str, dict[str, FaqEntry]] = {}
    for path in sorted((folder / "faq").glob("*.yaml")) if (folder / "faq").is_dir() else []:
        lang = path.stem
        if not _LANG.match(lang) or (languages is not None and lang not in languages):
            problems.append(Problem(f"faq/{path.name}", None, f"`{lang}` is not a language the desk speaks"
                                    + (f" ({', '.join(languages)})" if languages else "")))
            continue
        translations[lang] = read_entries(path, folder, problems, known=set(faq))
    pages = read_kb(folder, problems)
    facts: dict[str, Any] = {}
    if (folder / "facts.yaml").exists():
        data, node = read_yaml(folder / "facts.yaml", folder, problems)
        if data is not None and not isinstance(data, dict):
            problems.append(Problem("facts.yaml", line_of(node), "expected a mapping"))
        facts = data if isinstance(data, dict) else {}
    if problems:
        return None, problems
    stale, warnings = stale_translations(faq, translations, folder)
    return Company(folder, meta["name"].strip(), {k: str(v).strip() for k, v in meta["hr_portal"].items()},
                   {k: str(v).strip() for k, v in meta["it_desk"].items()}, meta["payroll_email"].strip(),
                   meta["hr_email"].strip(), tuple(s.strip() for s in meta["sites"]),
                   tuple(s.strip() for s in meta.get("systems") or []), faq, translations, pages, facts, stale,
                   warnings), []


def load_company(folder: Path, languages: tuple[str, ...] | None = None) -> Company:
    """The company in `folder`, read whole; `CompanyError` (every problem, with file and line) otherwise."""
    company, problems = check_company(folder, languages)
    if company is None:
        raise CompanyError(Path(folder), problems)
    return company


_CURRENT: list[Company] = []


def use(company: Company) -> None:
    """Make `company` the one the desk speaks for (set at start, and by a reload)."""
    _CURRENT[:] = [company]


def open_company(folder: Path, languages: tuple[str, ...] | None = None) -> Company:
    """The company in `folder`, made the one the desk speaks for (read again only when another folder is asked for);
    `CompanyError` (every problem, with its file and line) when the folder cannot be served whole.
    """
    folder = Path(folder).expanduser().resolve()
    if _CURRENT and _CURRENT[0].folder == folder:
        return _CURRENT[0]
    company = load_company(folder, languages)
    use(company)
    log.info("company %s from %s: %d FAQ entries, translations %s, %d handbook pages", company.name, folder,
             len(company.faq), ",".join(sorted(company.translations)) or "none", len(company.kb_pages))
    for warning in company.warnings:
        log.warning("company folder: %s", warning)
    return company


def translations(lang: str) -> dict[str, FaqEntry]:
    """The company's FAQ entries translated into `lang` (none for English, or for a language without a file)."""
    return current().translations.get(lang, {}) if lang != "en" else {}


def translated_answer(entry_id: str, lang: str) -> str | None:
    """An entry's answer in `lang` (None: not translated into it, or its translation is out of date)."""
    entry = translations(lang).get(entry_id)
    return entry.answer if entry and (lang, entry_id) not in current().stale else None


def current() -> Company:
    """The company the desk speaks for: the one `use` set, else the demo company's folder."""
    if not _CURRENT:
        _CURRENT.append(load_company(DEFAULT_DIR))
    return _CURRENT[0]
