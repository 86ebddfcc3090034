"""A served desk reads its company's folder again without a restart: an edited answer is served at once by the
encoders already running, and a folder that cannot be served changes nothing.
"""

import shutil

import pytest

from app.runtime import reload_company
from app.settings import get_settings
from app.training.router_i18n import load_multilingual_router
from app.training.router_train import load_router
from tests.unit.conftest import make_deps
from tools.company import DEFAULT_DIR, CompanyError, Problem, current, use


async def test_an_edited_folder_is_served_after_a_reload_by_the_running_encoders(tmp_path):
    folder = tmp_path / "acme"
    shutil.copytree(DEFAULT_DIR, folder)
    settings = get_settings().model_copy(update={"company_dir": folder})
    before = current()
    try:
        deps = make_deps()
        deps.router = load_router(settings, standalone=True)
        deps.router.other_languages = load_multilingual_router(settings)
        encoders = [r.embed for r in deps.router.readers()]
        faq = (folder / "faq.yaml").read_text(encoding="utf-8")
        (folder / "faq.yaml").write_text(faq.replace("EUR 30 a day for domestic trips", "EUR 35 a day for domestic "
                                                     "trips"), encoding="utf-8")
        meta = (folder / "company.yaml").read_text(encoding="utf-8")
        (folder / "company.yaml").write_text(meta.replace("name: Brightmart", "name: Acme"), encoding="utf-8")

        out = await reload_company(deps, settings)
        assert out["company"] == "Acme" and out["faq_entries"] == len(deps.faq)
        assert len(out["warnings"]) == 7  # the seven translations that still say EUR 30
        assert "EUR 35 a day" in deps.faq["meal-allowance"].answer
        assert [r.embed for r in deps.router.readers()] == encoders  # the running encoders, no second copy
        d = await deps.router.decide("What is the meal allowance on business trips?", "E1001", None)
        assert (d.path, d.faq_id) == ("faq", "meal-allowance")

        (folder / "faq.yaml").write_text("- id: meal-allowance\n  question: q\n", encoding="utf-8")
        with pytest.raises(CompanyError, match="faq.yaml:1"):
            await reload_company(deps, settings)
        assert current().name == "Acme" and "EUR 35 a day" in deps.faq["meal-allowance"].answer  # unchanged
    finally:
        use(before)


@pytest.fixture
def admin_http(tmp_path, monkeypatch):
    """The API with a real token verifier; E1002 is the only admin; the reload itself is recorded."""
    import httpx
    from fastapi import FastAPI

    from app import api
    from tests.unit.app.test_openai_api import FakeResources

    resources = FakeResources(tmp_path)
    resources.settings = get_settings().model_copy(update={"admin_employees": "e1002, E1003"})
    calls = []

    async def reload(deps, settings):
        calls.append(settings.admin_employees)
        if len(calls) > 1:
            raise CompanyError(tmp_path, [Problem("faq.yaml", 3, "bad")])
        return {"company": "Acme"}

    monkeypatch.setattr(api, "reload_company", reload)
    app = FastAPI()
    app.state.resources = resources
    app.include_router(api.router)
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://desk"), calls


async def test_only_an_admin_may_reload_and_a_broken_folder_is_named(admin_http):
    from tests.unit.app.test_openai_api import token

    http, calls = admin_http
    url = "/v1/admin/company/reload"
    assert (await http.post(url)).status_code == 401
    denied = await http.post(url, headers={"Authorization": f"Bearer {token('E1001')}"})
    assert denied.status_code == 403 and "ADMIN_EMPLOYEES" in denied.json()["detail"] and calls == []
    ok = await http.post(url, headers={"Authorization": f"Bearer {token('E1002')}"})
    assert ok.status_code == 200 and ok.json() == {"company": "Acme"}
    broken = await http.post(url, headers={"Authorization": f"Bearer {token('E1002')}"})
    assert broken.status_code == 422 and "faq.yaml:3: bad" in broken.json()["detail"]
