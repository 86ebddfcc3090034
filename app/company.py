"""`python -m app company check DIR`: what a company's folder holds (`tools/company.py`) and every problem in it;
`python -m app company reload`: a served desk reads its folder again, with no restart (`app/api.py`).
"""

from __future__ import annotations

import json
from pathlib import Path

from app.settings import Settings
from tools.company import check_company
from tools.i18n import LANGUAGES


def describe(folder: Path) -> tuple[str, bool]:
    """What `company check` prints for a folder, and whether it can be served."""
    company, problems = check_company(folder, LANGUAGES)
    if company is None:
        lines = [f"{folder}: {len(problems)} problem{'s' if len(problems) != 1 else ''}"]
        return "\n".join([*lines, *(f"  {p}" for p in problems)]), False
    langs = {lang: len(entries) for lang, entries in sorted(company.translations.items())}
    phrasings = sum(len(e.phrasings) for e in company.faq.values())
    lines = [f"{company.folder}: {company.name}",
             f"  HR portal  {company.hr_portal['name']} ({company.hr_portal['url']})",
             f"  IT desk    {company.it_desk['phone']}, {company.it_desk['url']}",
             f"  contacts   payroll {company.payroll_email}, HR {company.hr_email}",
             f"  sites      {', '.join(company.sites)}",
             f"  FAQ        {len(company.faq)} entries, {phrasings} phrasings",
             "  translated " + (", ".join(f"{lang} {n}/{len(company.faq)}" for lang, n in langs.items()) or "none"),
             f"  handbook   {len(company.kb_pages)} pages (kb/)",
             f"  facts      {'facts.yaml' if company.facts else 'none'}",
             *(f"  warning: {w}" for w in company.warnings),
             "  no problems found"]
    return "\n".join(lines), True


def reload_served(url: str, user: str, settings: Settings) -> tuple[str, bool]:
    """Ask the desk served at `url` to read its company's folder again, as `user` (an admin employee); what it
    answered, and whether it reloaded.
    """
    import httpx

    from app.remote import RemoteAsker, RemoteError

    asker = RemoteAsker(url, settings)
    try:
        r = asker.client.post(f"{asker.url}/v1/admin/company/reload",
                              headers={"Authorization": f"Bearer {asker.token(user)}"})
    except (RemoteError, httpx.HTTPError) as exc:
        return f"error: {exc}", False
    finally:
        asker.close()
    if r.status_code != 200:
        json_body = r.headers.get("content-type", "").startswith("application/json")
        return f"error: HTTP {r.status_code}: {r.json().get('detail') if json_body else r.text}", False
    return json.dumps(r.json(), indent=2, ensure_ascii=False), True
