"""HTTP endpoints of the demo backend, one per tool, each with its own simulated latency.

Records follow the demo's date (`DEMO_BACKEND_TODAY`, else the clock): the current month's attendance counts the
working days so far, a month still to come has none, and a payslip is served once it is out (three working days
before payday, `tools/domain.py`). Asked for anything else, the backend answers 404 with a sentence.
"""

from __future__ import annotations

import asyncio
import logging
import re
from contextlib import asynccontextmanager
from datetime import date
from pathlib import Path
from typing import Any

from fastapi import Body, FastAPI, HTTPException, Query
from pydantic_settings import BaseSettings, SettingsConfigDict

from tools.demo_backend import db, identity, kb
from tools.demo_backend.policies import LEAVE_POLICIES, clothing_for, weather_for
from tools.domain import payslip_day
from tools.embeddings import load_embedder
from tools.redis_client import async_redis

log = logging.getLogger(__name__)
ROOT = Path(__file__).resolve().parents[2]
MONTH_RE = re.compile(r"^\d{4}-(0[1-9]|1[0-2])$")


class BackendSettings(BaseSettings):
    """Demo backend knobs (env prefix DEMO_BACKEND_); latencies in seconds follow the reference case."""

    model_config = SettingsConfigDict(env_prefix="DEMO_BACKEND_", env_file=ROOT / ".env", extra="ignore")

    db_path: Path = ROOT / ".run" / "demo-backend.sqlite"
    kb_dir: Path = ROOT / "data" / "companies" / "brightmart" / "kb"  # the app starts it with COMPANY_DIR's
    redis_url: str = "redis://127.0.0.1:16379/0"
    embedding_model: str = ""
    today: date | None = None  # the demo's date, for reproducible runs; the clock's when unset
    latency_attendance: float = 1.5
    latency_salary: float = 1.0
    latency_leave_balance: float = 0.6
    latency_leave_policy: float = 0.3
    latency_weather: float = 1.2
    latency_clothing_advice: float = 0.4
    latency_kb_search: float = 0.8
    latency_employee: float = 0.05
    # the demo identity provider (tools/demo_backend/identity.py)
    auth_key_dir: Path = ROOT / ".run" / "demo-auth"
    auth_issuer: str = "helpdesk-demo-idp"
    auth_audience: str = "helpdesk"
    auth_token_ttl_s: int = 3600


SETTINGS = BackendSettings()
# Runtime-adjustable copies (the admin endpoints let tests and the benchmark inject latency and faults).
LATENCY: dict[str, float] = {k.removeprefix("latency_"): v for k, v in SETTINGS.model_dump().items()
                             if k.startswith("latency_")}
FAULTS: dict[str, str] = {}


@asynccontextmanager
async def lifespan(app: FastAPI):  # noqa: D103
    app.state.db = db.connect(SETTINGS.db_path)
    app.state.signer = identity.Signer(SETTINGS.auth_key_dir, SETTINGS.auth_issuer, SETTINGS.auth_audience,
                                       SETTINGS.auth_token_ttl_s)
    app.state.redis = async_redis(SETTINGS.redis_url)  # a server or a cluster (the index is one key)
    app.state.embedder = load_embedder(SETTINGS.embedding_model)
    app.state.kb_chunks = await kb.ensure_index(app.state.redis, app.state.embedder, SETTINGS.kb_dir)
    yield
    await app.state.redis.aclose()
    app.state.db.close()


app = FastAPI(title="Brightmart demo backend", lifespan=lifespan)


async def _serve(tool: str) -> None:
    """Apply the tool's latency and any injected fault."""
    fault = FAULTS.get(tool)
    if fault == "timeout":
        await asyncio.sleep(3600)
    await asyncio.sleep(LATENCY.get(tool, 0.0))
    if fault == "error":
        raise HTTPException(503, f"{tool} backend unavailable (injected fault)")


def _employee(emp: str) -> dict[str, Any]:
    row = app.state.db.execute("SELECT * FROM employees WHERE id = ?", (emp,)).fetchone()
    if row is None:
        raise HTTPException(404, f"unknown employee {emp!r}")
    return dict(row)


def _month(month: str) -> str:
    if not MONTH_RE.match(month):
        raise HTTPException(422, f"month must look like 2026-03, got {month[:20]!r}")
    return month


def today() -> date:
    """The demo's date: the setting, else the clock's."""
    return SETTINGS.today or date.today()


def _named(month: str) -> str:
    year, mon = map(int, month.split("-"))
    return date(year, mon, 1).strftime("%B %Y")


@app.get("/health")
async def health() -> dict[str, Any]:  # noqa: D103
    return {"ok": True, "kb_chunks": app.state.kb_chunks, "kb_dir": str(SETTINGS.kb_dir.resolve()),
            "employees": len(db.employee_ids())}


@app.get("/employees")
async def employees() -> list[dict[str, Any]]:  # noqa: D103
    return [dict(r) for r in app.state.db.execute("SELECT id, name, city, department FROM employees ORDER BY id")]


@app.get("/employees/{emp}")
async def employee(emp: str) -> dict[str, Any]:  # noqa: D103
    await _serve("employee")
    return _employee(emp)


@app.get("/employee/details")
async def employee_details(employee: str) -> dict[str, Any]:  # noqa: D103
    await _serve("employee_details")
    row = _employee(employee)
    return {k: row[k] for k in ("id", "name", "role", "department", "city")}


@app.get("/attendance")
async def attendance(employee: str, month: str) -> dict[str, Any]:  # noqa: D103
    await _serve("attendance")
    _employee(employee)
    day = today()
    if _month(month) > f"{day:%Y-%m}":
        raise HTTPException(404, f"no attendance record for {_named(month)}: that month has not started yet")
    row = app.state.db.execute("SELECT * FROM attendance WHERE employee = ? AND month = ?",
                               (employee, month)).fetchone()
    if row is None:
        raise HTTPException(404, f"no attendance record for {month}")
    record = dict(row) if month < f"{day:%Y-%m}" else db.attendance_to_date(dict(row), day)  # this month: so far
    return record if FAULTS.get("attendance") != "malformed" else {"garbage": True}


@app.get("/salary")
async def salary(employee: str, month: str) -> dict[str, Any]:  # noqa: D103
    await _serve("salary")
    _employee(employee)
    out = payslip_day(*map(int, _month(month).split("-")))
    if today() < out:
        raise HTTPException(404, f"no payslip for {_named(month)} yet: it appears in MyHR on {out.day} {out:%B %Y}")
    row = app.state.db.execute("SELECT * FROM salary WHERE employee = ? AND month = ?",
                               (employee, month)).fetchone()
    if row is None:
        raise HTTPException(404, f"no payslip for {month}")
    return dict(row) | {"currency": "EUR"}


@app.get("/leave/balance")
async def leave_balance(employee: str) -> dict[str, Any]:  # noqa: D103
    await _serve("leave_balance")
    _employee(employee)
    row = dict(app.state.db.execute("SELECT * FROM leave WHERE employee = ?", (employee,)).fetchone())
    row["annual_remaining"] = row["annual_entitled"] + row["carried_over"] - row["annual_taken"] - row["annual_pending"]
    row["sick_remaining"] = 12 - row["sick_used"]
    return row


@app.get("/leave/policy")
async def leave_policy(leave_type: str) -> dict[str, Any]:  # noqa: D103
    await _serve("leave_policy")
    policy = LEAVE_POLICIES.get(leave_type.lower())
    if policy is None:
        raise HTTPException(404, f"unknown leave type {leave_type[:30]!r}; known: {', '.join(LEAVE_POLICIES)}")
    return {"leave_type": leave_type.lower(), **policy}


@app.get("/weather")
async def weather(city: str, date_: str = Query(alias="date")) -> dict[str, Any]:  # noqa: D103
    await _serve("weather")
    try:
        day = date.fromisoformat(date_)
    except ValueError as exc:
        raise HTTPException(422, f"date must look like 2026-03-01, got {date_[:20]!r}") from exc
    return weather_for(city.strip().title(), day)


@app.get("/clothing")
async def clothing(temperature: float, condition: str) -> dict[str, Any]:  # noqa: D103
    await _serve("clothing_advice")
    return clothing_for(temperature, condition)


@app.get("/kb/search")
async def kb_search(query: str, k: int = 3) -> dict[str, Any]:  # noqa: D103
    await _serve("kb_search")
    passages = await kb.search(app.state.redis, app.state.embedder, query[:2000], min(k, 10))
    if not passages:  # Redis lost the index (restart, flush): rebuild it once and retry
        app.state.kb_chunks = await kb.ensure_index(app.state.redis, app.state.embedder, SETTINGS.kb_dir)
        passages = await kb.search(app.state.redis, app.state.embedder, query[:2000], min(k, 10))
    return {"query": query, "passages": passages}


@app.post("/admin/latency")
async def set_latency(values: dict[str, float]) -> dict[str, float]:  # noqa: D103
    LATENCY.update({k: max(0.0, float(v)) for k, v in values.items()})
    return LATENCY


@app.post("/admin/fault")
async def set_fault(values: dict[str, str | None]) -> dict[str, str]:  # noqa: D103
    for tool, fault in values.items():
        if fault:
            FAULTS[tool] = fault
        else:
            FAULTS.pop(tool, None)
    return FAULTS


@app.post("/auth/login")
async def login(user: str = Body(..., max_length=64), password: str = Body(..., max_length=256)) -> dict[str, Any]:
    """Password sign-in: a bearer token for the employee (401 with one reason for any mismatch)."""
    employee = user.strip().upper()
    ok = await asyncio.to_thread(identity.check_password, app.state.db, employee, password)
    if not ok:
        raise HTTPException(401, "wrong employee id or password")
    return app.state.signer.token(employee)


@app.get("/.well-known/jwks.json")
async def jwks() -> dict[str, Any]:
    """The public keys tokens are verified with."""
    return app.state.signer.jwks()
