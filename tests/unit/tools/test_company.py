"""A company is a folder: read whole or refused with every problem named by file and line, and every sentence that
names the company, its portals or contacts filled from it, never from code.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from app.cli import main
from tools.company import DEFAULT_DIR, CompanyError, check_company, current, load_company, use
from tools.i18n import LANGUAGES, catalog, placeholders, say

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def folder(tmp_path):
    """A copy of the demo company's folder to break or rename."""
    out = tmp_path / "acme"
    shutil.copytree(DEFAULT_DIR, out)
    return out


@pytest.fixture
def in_use():
    """Put back the company the desk spoke for before the test."""
    before = current()
    yield
    use(before)


def test_the_demo_company_is_read_whole():
    company = load_company(DEFAULT_DIR, LANGUAGES)
    assert company.name == "Brightmart" and company.hr_portal["name"] == "MyHR"
    assert len(company.faq) >= 60 and set(company.translations) == set(LANGUAGES) - {"en"}
    assert all(set(t) == set(company.faq) for t in company.translations.values())
    assert len(company.kb_pages) >= 30 and "Lisbon" in company.sites


def test_every_problem_is_named_with_its_file_and_line(folder):
    (folder / "company.yaml").write_text("name: Acme\nhr_portal: {name: People}\nit_desk: {phone: '1', url: it}\n"
                                         "payroll_email: p@x\nhr_email: h@x\nsites: [Oslo]\nlogo: x.png\n")
    faq = (folder / "faq.yaml").read_text(encoding="utf-8").splitlines()
    faq[2] = '  answer: ""'  # the first entry's answer emptied
    (folder / "faq.yaml").write_text("\n".join(faq) + "\n- id: core-hours\n  question: q\n  answer: a\n")
    (folder / "faq" / "de.yaml").write_text("- id: x\n  question: [unclosed\n", encoding="utf-8")
    (folder / "faq" / "xx-YY.yaml").write_text("[]")
    for page in (folder / "kb").glob("*.md"):
        page.unlink()
    company, problems = check_company(folder, LANGUAGES)
    assert company is None
    said = [str(p) for p in problems]
    assert "company.yaml:2: `hr_portal.url` must be a non-empty text" in said
    assert "company.yaml:7: unknown field `logo`" in said
    assert "faq.yaml:1: entry `office-working-hours`: `answer` must be a non-empty text" in said
    assert any(re.fullmatch(r"faq\.yaml:\d+: entry `core-hours` appears twice", s) for s in said)
    assert any(s.startswith("faq/de.yaml:3: not valid YAML") for s in said)
    assert any(s.startswith("faq/xx-YY.yaml: `xx-YY` is not a language the desk speaks") for s in said)
    assert "kb/: the handbook is missing: one Markdown page a topic (kb/*.md)" in said
    with pytest.raises(CompanyError, match=r"acme/company\.yaml:2: `hr_portal\.url`"):
        load_company(folder, LANGUAGES)


def test_a_missing_or_empty_folder_is_refused(tmp_path):
    assert [str(p) for p in check_company(tmp_path / "nowhere")[1]] == [".: no such folder"]
    (tmp_path / "empty").mkdir()
    said = [str(p) for p in check_company(tmp_path / "empty")[1]]
    assert said == ["company.yaml: missing", "faq.yaml: missing",
                    "kb/: the handbook is missing: one Markdown page a topic (kb/*.md)"]


def test_company_check_prints_what_it_found_and_fails_on_a_problem(folder, capsys):
    with pytest.raises(SystemExit) as done:
        main(["company", "check", str(DEFAULT_DIR)])
    out = capsys.readouterr().out
    assert done.value.code == 0 and "Brightmart" in out and "no problems found" in out and "zh 61/61" in out
    (folder / "faq.yaml").write_text("- id: a\n  question: q\n")
    with pytest.raises(SystemExit) as done:
        main(["company", "check", str(folder)])
    assert done.value.code == 1
    assert "faq.yaml:1: entry `a`: `answer` must be a non-empty text" in capsys.readouterr().err


def test_sentences_name_the_company_in_use(folder, in_use):
    text = (folder / "company.yaml").read_text(encoding="utf-8")
    for old, new in (("Brightmart", "Acme"), ("MyHR", "PeopleHub"), ("myhr.brightmart.internal", "people.acme.test"),
                     ('"4357"', '"2200"'), ("it.brightmart.internal", "help.acme.test")):
        text = text.replace(old, new)
    (folder / "company.yaml").write_text(text, encoding="utf-8")
    use(load_company(folder))
    assert say("ask_hr") == "HR through PeopleHub (people.acme.test)"
    assert say("ask_it", "de") == "den IT-Servicedesk (Durchwahl 2200 oder help.acme.test)"
    for lang in LANGUAGES:
        said = [say(k, lang, **dict.fromkeys(placeholders(v), "x")) for k, v in catalog(lang).items()]
        assert not [s for s in said if re.search("brightmart|myhr|4357", s, re.IGNORECASE)], lang


def test_no_code_names_the_demo_company():
    """The company's names live in its folder: only the demo backend, the benchmark's workload and the default
    folder's path may name it.
    """
    allowed = {"tools/company.py", "app/bench/workload.py", "app/bench/asks.py"}
    named = [str(p.relative_to(ROOT)) for d in ("app", "graph", "tools") for p in (ROOT / d).rglob("*.py")
             if not str(p.relative_to(ROOT)).startswith("tools/demo_backend/")
             and str(p.relative_to(ROOT)) not in allowed
             and re.search(r"brightmart|myhr|spendwise|brightconnect", p.read_text(encoding="utf-8"), re.I)]
    assert named == []
    for lang in LANGUAGES:
        assert not re.search(r"brightmart|myhr|4357", (ROOT / "tools" / "messages" / f"{lang}.yaml").read_text(
            encoding="utf-8"), re.I), lang


def test_an_edited_figure_retires_the_translations_that_still_say_the_old_one(folder, in_use):
    faq = (folder / "faq.yaml").read_text(encoding="utf-8")
    (folder / "faq.yaml").write_text(faq.replace("EUR 30 a day for domestic trips", "EUR 35 a day for domestic trips"),
                                     encoding="utf-8")
    company = load_company(folder, LANGUAGES)
    assert ("de", "meal-allowance") in company.stale and len(company.stale) == len(LANGUAGES) - 1
    assert [str(w) for w in company.warnings][0].startswith("faq/de.yaml:")
    use(company)
    from graph.replies import faq_answer

    answer = faq_answer(company.faq["meal-allowance"], "de")
    assert "35,00" in answer and "30" not in answer  # the entry's own answer, introduced, money as German writes it
    assert faq_answer(company.faq["payday"], "de") == company.translations["de"]["payday"].answer


def test_the_desk_does_not_start_on_a_broken_folder(folder, monkeypatch, capsys):
    from app.settings import get_settings

    (folder / "company.yaml").write_text("name: Acme\n")
    monkeypatch.setenv("COMPANY_DIR", str(folder))
    get_settings.cache_clear()
    try:
        with pytest.raises(SystemExit) as done:
            main(["ask", "When is payday?"])
    finally:
        get_settings.cache_clear()
    err = capsys.readouterr().err
    assert done.value.code == 2 and "Traceback" not in err
    assert f"{folder}/company.yaml:1: `payroll_email` must be a non-empty text" in err
