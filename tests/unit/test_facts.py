"""Each leave fact lives once, in the demo company's facts.yaml: every number the FAQ answers, the handbook pages,
the company facts page and the demo backend's policies state about it must be the one there.

A text states a fact where a sentence about that kind of leave (named in the sentence, else in its heading)
has the fact's phrasing (`STATED` below) with some number in it: the number must be the fact's. Every fact must
be found on docs/company-facts.md and in the handbook, so a phrasing that drifts away from its pattern fails
too, instead of going unchecked.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from tools.demo_backend.policies import LEAVE_POLICIES, load_facts

ROOT = Path(__file__).resolve().parents[2]
COMPANY = ROOT / "data" / "companies" / "brightmart"
FACTS = load_facts()
N, DAY = r"([\d,]+)", r"(\d+ [A-Z][a-z]+)"  # a number; a day of a month ("31 March")
LEAVE_TYPES = {  # what names each kind of leave in a sentence or a heading
    "annual": r"annual leave|leave days|carr(?:y|ied|ying)[ -](?:leave )?over|unused days",
    "sick": r"\bsick|doctor's note", "maternity": r"maternity", "paternity": r"paternity|partner leave",
    "parental": r"parental", "bereavement": r"bereavement", "study": r"\bstudy|training budget",
    "unpaid": r"(?<!parental leave is )unpaid leave|unpaid time off",
}
NOTICE = ("annual", "study", "general")  # the usual notice for requests in MyHR: annual leave's
STATED: dict[str, tuple[tuple[str, ...] | str, str]] = {  # fact -> (the leave it is about, or "*"; how it is said)
    "annual.days_a_year": (("annual",), rf"{N} days (?:of annual leave )?a year"),
    "annual.carry_over_days": (("annual",), rf"[Uu]p to {N} unused"),
    "annual.carry_over_until": (("annual",), rf"used by {DAY}"),
    "annual.notice_weeks": (NOTICE, rf"at least {N} weeks? ahead(?! for)"),
    "annual.short_request_days": (NOTICE, rf"{N} days or fewer"),
    "annual.short_notice_weeks": (NOTICE, rf"{N} weeks? (?:ahead )?(?:is enough|for (?:requests of )?\d+ days or)"),
    "annual.peak_from": ("*", rf"(?:from|between) {DAY} (?:to|and) \d+ [A-Z]"),
    "annual.peak_until": ("*", rf"(?:from|between) \d+ [A-Z][a-z]+ (?:to|and) {DAY}"),
    "sick.paid_days_a_year": (("sick",), rf"{N} paid sick days"),
    "sick.note_from_day": (("sick",), rf"from the {N}(?:st|nd|rd|th) consecutive day|{N} or more consecutive days"),
    "sick.report_by": (("sick",), r"by (\d\d:\d\d)"),
    "maternity.full_pay_weeks": (("maternity",), rf"{N} weeks at full pay|full pay for the {N} weeks"),
    "maternity.more_weeks": (("maternity",), rf"up to {N} more weeks"),
    "maternity.more_weeks_pay_percent": (("maternity",), rf"{N}% pay"),
    "maternity.notice_weeks": (("maternity",), rf"at least {N} weeks before the due date"),
    "paternity.weeks": (("paternity",), rf"{N} weeks"),
    "paternity.within_months": (("paternity",), rf"within {N} months|the {N} months"),
    "parental.weeks_per_child": (("parental",), rf"{N} weeks per child"),
    "parental.until_age": (("parental",), rf"child turns {N}"),
    "bereavement.close_family_days": (("bereavement",), rf"{N} (?:paid )?days? for (?:the death of )?a close family"),
    "bereavement.other_days": (("bereavement",), rf"{N} (?:paid )?days? for (?:the death of )?(?:another|others)"),
    "study.days_a_year": (("study",), rf"{N} (?:paid )?(?:study )?(?:leave )?days a year"),
    "study.training_budget_eur": (("study",), rf"training budget (?:of )?EUR {N}"),
    "unpaid.days_a_year": (("unpaid",), rf"{N} days (?:of unpaid leave )?a year"),
}


def value(fact: str) -> str:
    kind, name = fact.split(".")
    return str(FACTS[kind][name])


def kinds_named(text: str) -> set[str]:
    return {kind for kind, pattern in LEAVE_TYPES.items() if re.search(pattern, text, re.IGNORECASE)}


def sentences(text: str) -> list[str]:
    text = re.sub(r"\*\*|`", "", text)
    return [s for s in re.split(r"(?<=[.!?;])\s+|\n+", text) if s.strip()]


def passages() -> list[tuple[str, str, list[str]]]:
    """(where, sentence, its headings nearest first) for every sentence of the texts that state leave facts."""
    out: list[tuple[str, str, list[str]]] = []
    for entry in yaml.safe_load((COMPANY / "faq.yaml").read_text(encoding="utf-8")):
        out += [(f"faq.yaml: {entry['id']}", s, [entry["question"]]) for s in sentences(entry["answer"])]
    for page in sorted((COMPANY / "kb").glob("*.md")):
        title = section = ""
        for line in page.read_text(encoding="utf-8").splitlines():
            if line.startswith("# "):
                title = line[2:]
            elif line.startswith("## "):
                section = line[3:]
            else:
                out += [(f"kb/{page.name}", s, [section, title]) for s in sentences(line)]
    bullets = re.split(r"\n- ", (ROOT / "docs" / "company-facts.md").read_text(encoding="utf-8"))
    for bullet in bullets:
        lead = bullet.split(":", 1)[0] if ":" in bullet[:40] else ""
        out += [("docs/company-facts.md", s, [lead]) for s in sentences(" ".join(bullet.split()))]
    for kind, policy in LEAVE_POLICIES.items():
        out += [(f"tools/demo_backend/policies.py: {kind}", text, [f"{kind} leave"]) for text in policy.values()]
    return out


def about(sentence: str, headings: list[str]) -> set[str]:
    """The kinds of leave a sentence is about: those it names, else those of its nearest heading that names one."""
    if named := kinds_named(sentence):
        return named
    for heading in headings:
        if named := kinds_named(heading):
            return named
    return {"general"}


def statements() -> dict[str, list[tuple[str, str, str]]]:
    """fact -> (where, the number stated, the sentence) for each place a fact is stated."""
    found: dict[str, list[tuple[str, str, str]]] = {fact: [] for fact in STATED}
    for where, sentence, headings in passages():
        kinds = about(sentence, headings)
        for fact, (leave, pattern) in STATED.items():
            if leave != "*" and not kinds & set(leave):
                continue
            for match in re.finditer(pattern, sentence):
                found[fact] += [(where, g.replace(",", ""), sentence) for g in match.groups() if g is not None]
    return found


FOUND = statements()


def test_every_fact_has_a_phrasing_and_every_phrasing_a_fact():
    facts = {f"{kind}.{name}" for kind, names in FACTS.items() for name in names}
    assert facts == set(STATED), "facts.yaml and STATED name different facts"


@pytest.mark.parametrize("fact", sorted(STATED))
def test_every_text_states_the_fact_as_data_facts_yaml_does(fact):
    wrong = [f"{where}: says {said!r} for {fact} (facts.yaml: {value(fact)!r}) in {sentence!r}"
             for where, said, sentence in FOUND[fact] if said != value(fact)]
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("fact", sorted(STATED))
def test_every_fact_is_found_on_the_facts_page_and_in_the_handbook(fact):
    places = {"kb" if where.startswith("kb/") else where.split(":")[0] for where, _, _ in FOUND[fact]}
    missing = {"docs/company-facts.md", "kb"} - places
    assert not missing, f"{fact} ({value(fact)}) is not found in {sorted(missing)}: is its phrasing in STATED current?"


def test_a_changed_number_is_caught(monkeypatch):
    monkeypatch.setitem(FACTS["sick"], "paid_days_a_year", 13)
    wrong = [where for where, said, _ in FOUND["sick.paid_days_a_year"] if said != value("sick.paid_days_a_year")]
    assert {"faq.yaml: sick-pay", "kb/09-sick-leave-and-reporting-absence.md",
            "docs/company-facts.md"} <= set(wrong)
