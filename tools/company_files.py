"""Reading a company's folder file by file (`tools/company.py` puts the company together): each reader returns what
it could read and adds every problem it found, with its file and line, so one report names them all.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from tools.faq import FaqEntry

_ID = re.compile(r"^[a-z0-9][a-z0-9-]*$")
_FIGURE = re.compile(r"\d+")
COMPANY_FIELDS = ("name", "hr_portal", "it_desk", "payroll_email", "hr_email", "sites", "systems")


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a company folder: where, and what."""

    file: str  # relative to the folder
    line: int | None
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.message}" if self.line else f"{self.file}: {self.message}"


def read_yaml(path: Path, folder: Path, problems: list[Problem]) -> tuple[Any, yaml.Node | None]:
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


def line_of(node: yaml.Node | None, *path: int | str) -> int | None:
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


def read_company_yaml(folder: Path, problems: list[Problem]) -> dict[str, Any]:
    """`company.yaml`'s fields (an empty mapping when it cannot be read)."""
    data, node = read_yaml(folder / "company.yaml", folder, problems)
    if data is None:
        return {}
    if not isinstance(data, dict):
        problems.append(Problem("company.yaml", line_of(node), "expected a mapping of name, hr_portal, it_desk, "
                                "payroll_email, hr_email, sites"))
        return {}
    for key in ("name", "payroll_email", "hr_email"):
        if not _text(data.get(key)):
            problems.append(Problem("company.yaml", line_of(node, key), f"`{key}` must be a non-empty text"))
    for key, parts in (("hr_portal", ("name", "url")), ("it_desk", ("phone", "url"))):
        value = data.get(key)
        for part in parts:
            if not isinstance(value, dict) or not _text(value.get(part)):
                problems.append(Problem("company.yaml", line_of(node, key, part),
                                        f"`{key}.{part}` must be a non-empty text"))
    sites = data.get("sites")
    if not isinstance(sites, list) or not sites or not all(_text(s) for s in sites):
        problems.append(Problem("company.yaml", line_of(node, "sites"), "`sites` must be a list of city names"))
    systems = data.get("systems", [])
    if not isinstance(systems, list) or not all(_text(s) for s in systems):
        problems.append(Problem("company.yaml", line_of(node, "systems"), "`systems` must be a list of names"))
    unknown = sorted(set(data) - set(COMPANY_FIELDS))
    if unknown:
        problems.append(Problem("company.yaml", line_of(node, unknown[0]), f"unknown field `{unknown[0]}`"))
    return data


def read_entries(path: Path, folder: Path, problems: list[Problem],
                  known: set[str] | None = None) -> dict[str, FaqEntry]:
    """FAQ entries of one file; `known`: the ids a translation may use (those of faq.yaml)."""
    rel = str(path.relative_to(folder))
    data, node = read_yaml(path, folder, problems)
    if data is None and node is None:
        return {}
    if not isinstance(data, list) or not data:
        problems.append(Problem(rel, line_of(node), "expected a non-empty list of entries (id, question, answer, "
                                "paraphrases)"))
        return {}
    out: dict[str, FaqEntry] = {}
    orphans: list[tuple[int | None, str]] = []  # translations of entries faq.yaml does not have
    for i, row in enumerate(data):
        where = line_of(node, i)
        if not isinstance(row, dict):
            problems.append(Problem(rel, where, "an entry must be a mapping of id, question, answer, paraphrases"))
            continue
        entry_id = row.get("id")
        if not isinstance(entry_id, str) or not _ID.match(entry_id):
            problems.append(Problem(rel, line_of(node, i, "id"), "`id` must be lower-case letters, digits and dashes"))
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


def read_kb(folder: Path, problems: list[Problem]) -> tuple[Path, ...]:
    """The handbook's pages (`kb/*.md`), each with some text."""
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


def stale_translations(faq: dict[str, FaqEntry], translations: dict[str, dict[str, FaqEntry]],
                        folder: Path) -> tuple[frozenset[tuple[str, str]], tuple[Problem, ...]]:
    """Translated answers missing a figure of their entry's answer, and a warning for each language that has any."""
    stale: set[tuple[str, str]] = set()
    warnings = []
    for lang, entries in sorted(translations.items()):
        ids = [i for i, e in entries.items() if any(n not in e.answer for n in _FIGURE.findall(faq[i].answer))]
        stale |= {(lang, i) for i in ids}
        if ids:
            _, node = read_yaml(folder / "faq" / f"{lang}.yaml", folder, [])
            first = list(entries).index(ids[0])
            warnings.append(Problem(f"faq/{lang}.yaml", line_of(node, first), f"{len(ids)} translated answer"
                                    f"{'s lack' if len(ids) != 1 else ' lacks'} a figure of faq.yaml's answer ("
                                    + ", ".join(f"`{i}`" for i in ids[:3]) + (" ..." if len(ids) > 3 else "")
                                    + "): out of date, so the entry's own answer is given instead"))
    return frozenset(stale), tuple(warnings)
