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

import hashlib
import logging
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from tools.faq import FaqEntry

log = logging.getLogger(__name__)
DEFAULT_DIR = Path(__file__).resolve().parent.parent / "data" / "companies" / "brightmart"
_ID = re.compile(r"^[a-z0-9][a-z0-9-]*$")
_LANG = re.compile(r"^[a-z]{2,3}$")
_FIGURE = re.compile(r"\d+")


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a company folder: where, and what."""

    file: str  # relative to the folder
    line: int | None
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.message}" if self.line else f"{self.file}: {self.message}"


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

    @property
    def placeholders(self) -> dict[str, str]:
        """What the message catalogs may name: `{company}`, `{hr_portal}`, `{hr_portal_url}`, `{it_phone}`,
        `{it_url}`, `{payroll_email}`, `{hr_email}`.
        """
        return {"company": self.name, "hr_portal": self.hr_portal["name"], "hr_portal_url": self.hr_portal["url"],
                "it_phone": self.it_desk["phone"], "it_url": self.it_desk["url"],
                "payroll_email": self.payroll_email, "hr_email": self.hr_email}

    @property
    def own_words(self) -> frozenset[str]:
        """The company's own names, lower-case (its name, its HR portal, its systems): never a place or a person."""
        return frozenset(w.lower() for w in (self.name, self.hr_portal["name"], *self.systems))

    @property
    def kb_dir(self) -> Path:
        """The handbook's folder."""
        return self.folder / "kb"

    def texts(self) -> list[str]:
        """Every text of the folder that the desk reads, in a fixed order (what its fingerprint is made of)."""
        out = [f"{k}={v}" for k, v in sorted(self.placeholders.items())] + list(self.sites) + list(self.systems)
        for entries in [self.faq, *(self.translations[lang] for lang in sorted(self.translations))]:
            out += [f"{e.id}|{e.question}|{e.answer}|{'|'.join(e.paraphrases)}" for e in entries.values()]
        return out + [p.name + "\n" + p.read_text(encoding="utf-8") for p in self.kb_pages]

    def fingerprint(self) -> str:
        """Changes whenever anything the desk reads from the folder changes."""
        h = hashlib.sha256()
        for t in self.texts():
            h.update(t.encode())
            h.update(b"\0")
        return h.hexdigest()[:16]


def _yaml(path: Path, folder: Path, problems: list[Problem]) -> tuple[Any, yaml.Node | None]:
    """A YAML file's data and its node tree (for line numbers), or (None, None) with the problem noted."""
    rel = str(path.relative_to(folder))
    try:
        text = path.read_text(encoding="utf-8")
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except FileNotFoundError:
        problems.append(Problem(rel, None, "missing"))
        return None, None
    except UnicodeDecodeError as exc:
        problems.append(Problem(rel, None, f"not UTF-8 text ({exc.reason})"))
        return None, None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark else None
        problems.append(Problem(rel, line, f"not valid YAML: {getattr(exc, 'problem', None) or exc}"))
        return None, None
    return data, node


def _line(node: yaml.Node | None, *path: int | str) -> int | None:
    """The 1-based line of the item at `path` inside a node tree (the nearest enclosing one that exists)."""
    line = node.start_mark.line + 1 if node is not None else None
    for key in path:
        if isinstance(node, yaml.SequenceNode) and isinstance(key, int) and key < len(node.value):
            node = node.value[key]
        elif isinstance(node, yaml.MappingNode):
            node = next((v for k, v in node.value if k.value == key), None)
        else:
            node = None
        if node is None:
            break
        line = node.start_mark.line + 1
    return line


def _text(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip())


def _read_company_yaml(folder: Path, problems: list[Problem]) -> dict[str, Any]:
    data, node = _yaml(folder / "company.yaml", folder, problems)
    if data is None:
        return {}
    if not isinstance(data, dict):
        problems.append(Problem("company.yaml", _line(node), "expected a mapping of name, hr_portal, it_desk, "
                                "payroll_email, hr_email, sites"))
        return {}
    for key in ("name", "payroll_email", "hr_email"):
        if not _text(data.get(key)):
            problems.append(Problem("company.yaml", _line(node, key), f"`{key}` must be a non-empty text"))
    for key, parts in (("hr_portal", ("name", "url")), ("it_desk", ("phone", "url"))):
        value = data.get(key)
        for part in parts:
            if not isinstance(value, dict) or not _text(value.get(part)):
                problems.append(Problem("company.yaml", _line(node, key, part),
                                        f"`{key}.{part}` must be a non-empty text"))
    sites = data.get("sites")
    if not isinstance(sites, list) or not sites or not all(_text(s) for s in sites):
        problems.append(Problem("company.yaml", _line(node, "sites"), "`sites` must be a list of city names"))
    systems = data.get("systems", [])
    if not isinstance(systems, list) or not all(_text(s) for s in systems):
        problems.append(Problem("company.yaml", _line(node, "systems"), "`systems` must be a list of names"))
    unknown = sorted(set(data) - {"name", "hr_portal", "it_desk", "payroll_email", "hr_email", "sites", "systems"})
    if unknown:
        problems.append(Problem("company.yaml", _line(node, unknown[0]), f"unknown field `{unknown[0]}`"))
    return data


def _read_entries(path: Path, folder: Path, problems: list[Problem],
                  known: set[str] | None = None) -> dict[str, FaqEntry]:
    """FAQ entries of one file; `known`: the ids a translation may use (those of faq.yaml)."""
    rel = str(path.relative_to(folder))
    data, node = _yaml(path, folder, problems)
    if data is None and node is None:
        return {}
    if not isinstance(data, list) or not data:
        problems.append(Problem(rel, _line(node), "expected a non-empty list of entries (id, question, answer, "
                                "paraphrases)"))
        return {}
    out: dict[str, FaqEntry] = {}
    orphans: list[tuple[int | None, str]] = []  # translations of entries faq.yaml does not have
    for i, row in enumerate(data):
        where = _line(node, i)
        if not isinstance(row, dict):
            problems.append(Problem(rel, where, "an entry must be a mapping of id, question, answer, paraphrases"))
            continue
        entry_id = row.get("id")
        if not isinstance(entry_id, str) or not _ID.match(entry_id):
            problems.append(Problem(rel, _line(node, i, "id"), "`id` must be lower-case letters, digits and dashes"))
            continue
        bad = [k for k in ("question", "answer") if not _text(row.get(k))]
        bad += [k for k in row if k not in ("id", "question", "answer", "paraphrases")]
        paraphrases = row.get("paraphrases") or []
        if not isinstance(paraphrases, list) or not all(_text(p) for p in paraphrases):
            bad.append("paraphrases")
        if bad:
            problems.append(Problem(rel, where, f"entry `{entry_id}`: " + ", ".join(
                f"`{k}` must be a non-empty text" if k in ("question", "answer") else
                "`paraphrases` must be a list of texts" if k == "paraphrases" else f"unknown field `{k}`"
                for k in bad)))
            continue
        if entry_id in out:
            problems.append(Problem(rel, where, f"entry `{entry_id}` appears twice"))
            continue
        if known is not None and entry_id not in known:
            orphans.append((where, entry_id))
            continue
        out[entry_id] = FaqEntry(entry_id, row["question"].strip(), row["answer"].strip(),
                                 [p.strip() for p in paraphrases])
    if orphans:  # one line for the file: a faq.yaml that failed to read would otherwise flood the report
        names = ", ".join(f"`{e}`" for _, e in orphans[:3]) + (f" and {len(orphans) - 3} more" if len(orphans) > 3
                                                               else "")
        problems.append(Problem(rel, orphans[0][0], f"{len(orphans)} entr{'y' if len(orphans) == 1 else 'ies'} "
                                f"translate{'s' if len(orphans) == 1 else ''} no entry of faq.yaml: {names}"))
    return out


def _read_kb(folder: Path, problems: list[Problem]) -> tuple[Path, ...]:
    kb = folder / "kb"
    pages = tuple(sorted(kb.glob("*.md"))) if kb.is_dir() else ()
    if not pages:
        problems.append(Problem("kb/", None, "the handbook is missing: one Markdown page a topic (kb/*.md)"))
    for page in pages:
        try:
            text = page.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            problems.append(Problem(f"kb/{page.name}", None, f"not UTF-8 text ({exc.reason})"))
            continue
        if len(text.split()) < 3:
            problems.append(Problem(f"kb/{page.name}", 1, "the page is empty: a title line, then its text"))
    return pages


def check_company(folder: Path, languages: tuple[str, ...] | None = None) -> tuple[Company | None, list[Problem]]:
    """The company in `folder` and every problem found; the company is None when there is any problem.

    `languages`: the languages a translation may be in (None: any two- or three-letter code).
    """
    folder = Path(folder).expanduser().resolve()
    if not folder.is_dir():
        return None, [Problem(".", None, "no such folder")]
    problems: list[Problem] = []
    meta = _read_company_yaml(folder, problems)
    faq = _read_entries(folder / "faq.yaml", folder, problems)
    translations: dict[str, dict[str, FaqEntry]] = {}
    for path in sorted((folder / "faq").glob("*.yaml")) if (folder / "faq").is_dir() else []:
        lang = path.stem
        if not _LANG.match(lang) or (languages is not None and lang not in languages):
            problems.append(Problem(f"faq/{path.name}", None, f"`{lang}` is not a language the desk speaks"
                                    + (f" ({', '.join(languages)})" if languages else "")))
            continue
        translations[lang] = _read_entries(path, folder, problems, known=set(faq))
    pages = _read_kb(folder, problems)
    facts: dict[str, Any] = {}
    if (folder / "facts.yaml").exists():
        data, node = _yaml(folder / "facts.yaml", folder, problems)
        if data is not None and not isinstance(data, dict):
            problems.append(Problem("facts.yaml", _line(node), "expected a mapping"))
        facts = data if isinstance(data, dict) else {}
    if problems:
        return None, problems
    stale, warnings = _stale_translations(faq, translations, folder)
    return Company(folder, meta["name"].strip(), {k: str(v).strip() for k, v in meta["hr_portal"].items()},
                   {k: str(v).strip() for k, v in meta["it_desk"].items()}, meta["payroll_email"].strip(),
                   meta["hr_email"].strip(), tuple(s.strip() for s in meta["sites"]),
                   tuple(s.strip() for s in meta.get("systems") or []), faq, translations, pages, facts, stale,
                   warnings), []


def _stale_translations(faq: dict[str, FaqEntry], translations: dict[str, dict[str, FaqEntry]],
                        folder: Path) -> tuple[frozenset[tuple[str, str]], tuple[Problem, ...]]:
    """Translated answers missing a figure of their entry's answer, and a warning for each language that has any."""
    stale: set[tuple[str, str]] = set()
    warnings = []
    for lang, entries in sorted(translations.items()):
        ids = [i for i, e in entries.items() if any(n not in e.answer for n in _FIGURE.findall(faq[i].answer))]
        stale |= {(lang, i) for i in ids}
        if ids:
            _, node = _yaml(folder / "faq" / f"{lang}.yaml", folder, [])
            first = list(entries).index(ids[0])
            warnings.append(Problem(f"faq/{lang}.yaml", _line(node, first), f"{len(ids)} translated answer"
                                    f"{'s lack' if len(ids) != 1 else ' lacks'} a figure of faq.yaml's answer ("
                                    + ", ".join(f"`{i}`" for i in ids[:3]) + (" ..." if len(ids) > 3 else "")
                                    + "): out of date, so the entry's own answer is given instead"))
    return frozenset(stale), tuple(warnings)


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
