"""The demo database: 64 employees with distinct, deterministic attendance, salary and leave figures (as many as
the HTTP load benchmark's sessions, one identity each: app/bench/cluster_load.py).

Each month's row is the whole month's record; the current month is served to date (`attendance_to_date`).
"""

from __future__ import annotations

import hashlib
import random
import sqlite3
from datetime import date
from pathlib import Path
from typing import Any

from tools.demo_backend import identity
from tools.domain import HOME_CITIES

CITIES = HOME_CITIES
FIRST = ["Anna", "Ben", "Carla", "David", "Eva", "Farid", "Greta", "Hugo", "Ines", "Jonas",
         "Klara", "Luca", "Maya", "Nils", "Olga", "Pedro", "Rosa", "Sven", "Tara", "Yusuf"]
LAST = ["de Vries", "Schmidt", "Moreau", "Garcia", "Rossi", "Silva", "Huber", "Byrne", "Jansen",
        "Weber", "Laurent", "Lopez", "Bianchi", "Costa", "Gruber", "Murphy", "Bakker", "Fischer",
        "Martin", "Navarro"]
DEPTS = ["Store Operations", "Finance", "IT", "Logistics", "Marketing"]
ROLES = ["Sales Associate", "Store Manager", "Analyst", "Engineer", "Coordinator"]
MONTHS = [f"{y}-{m:02d}" for y in (2025, 2026, 2027) for m in range(1, 13)]
SCHEMA = """
CREATE TABLE employees (id TEXT PRIMARY KEY, name TEXT, city TEXT, department TEXT, role TEXT,
  base_salary INTEGER);
CREATE TABLE attendance (employee TEXT, month TEXT, working_days INTEGER, present_days INTEGER,
  absent_days INTEGER, late_arrivals INTEGER, overtime_hours REAL, PRIMARY KEY (employee, month));
CREATE TABLE salary (employee TEXT, month TEXT, base REAL, overtime_pay REAL, bonus REAL, gross REAL,
  tax REAL, pension REAL, net REAL, PRIMARY KEY (employee, month));
CREATE TABLE leave (employee TEXT PRIMARY KEY, annual_entitled INTEGER, annual_taken INTEGER,
  annual_pending INTEGER, carried_over INTEGER, sick_used INTEGER);
"""


EMPLOYEES = 64


def employee_ids() -> list[str]:
    """E1001..E1064."""
    return [f"E{1001 + i}" for i in range(EMPLOYEES)]


def _name(i: int) -> str:
    """The i-th employee's name: the first 20 as ever, then each first name with other family names, all distinct."""
    return f"{FIRST[i % len(FIRST)]} {LAST[(i + i // len(FIRST) * 7) % len(LAST)]}"


def _rng(*parts: object) -> random.Random:
    digest = hashlib.sha256("|".join(map(str, parts)).encode()).hexdigest()
    return random.Random(int(digest[:16], 16))


def working_dates(month: str) -> list[date]:
    """The weekdays of a month (YYYY-MM); public holidays, which differ by country, are not counted."""
    year, mon = map(int, month.split("-"))
    days = []
    for d in range(1, 32):
        try:
            day = date(year, mon, d)
        except ValueError:
            break
        if day.weekday() < 5:
            days.append(day)
    return days


def _working_days(month: str) -> int:
    return len(working_dates(month))


def attendance_to_date(row: dict[str, Any], today: date) -> dict[str, Any]:
    """A month's attendance counted up to and including `today`: the working days so far, and the absences,
    late arrivals and overtime among them, with `through` saying up to when.

    Which working days were the absent and the late ones is drawn once per employee and month (seeded), so the
    figures are the same on every machine and grow day by day into the month's full record.
    """
    days = working_dates(row["month"])
    r = _rng(row["employee"], row["month"], "days")
    absent = set(r.sample(days, row["absent_days"]))
    late = set(r.sample([d for d in days if d not in absent], row["late_arrivals"]))
    so_far = [d for d in days if d <= today]
    away = sum(d in absent for d in so_far)
    return {**row, "working_days": len(so_far), "present_days": len(so_far) - away, "absent_days": away,
            "late_arrivals": sum(d in late for d in so_far),
            "overtime_hours": round(row["overtime_hours"] * len(so_far) / len(days) * 2) / 2,  # in half hours
            "through": today.isoformat()}


def build(path: Path) -> None:
    """Create the database from scratch (deterministic: the same figures on every machine)."""
    tmp = path.with_suffix(".tmp")
    tmp.unlink(missing_ok=True)
    con = sqlite3.connect(tmp)
    con.executescript(SCHEMA)
    for i, emp in enumerate(employee_ids()):
        base = 2400 + 150 * i + (i % 3) * 35  # distinct for every employee
        con.execute("INSERT INTO employees VALUES (?,?,?,?,?,?)", (
            emp, _name(i), CITIES[i % len(CITIES)], DEPTS[i % len(DEPTS)],
            ROLES[(i * 3) % len(ROLES)], base))
        r = _rng(emp, "leave")
        con.execute("INSERT INTO leave VALUES (?,?,?,?,?,?)", (
            emp, 25, 3 + i % 11, r.randint(0, 4), i % 6, r.randint(0, 9)))
        for month in MONTHS:
            r = _rng(emp, month)
            wd = _working_days(month)
            absent = r.randint(0, 3)
            overtime = round(r.choice([0, 0, 2, 4, 5.5, 8, 10]) + (i % 4) * 0.5, 1)
            con.execute("INSERT INTO attendance VALUES (?,?,?,?,?,?,?)", (
                emp, month, wd, wd - absent, absent, r.randint(0, 4), overtime))
            hourly = base / 165
            ot_pay = round(overtime * hourly * 1.5, 2)
            bonus = round(base * (0.04 + 0.005 * (i % 8)), 2) if month.endswith("-03") else 0.0
            gross = round(base + ot_pay + bonus, 2)
            tax = round(gross * 0.28, 2)
            pension = round(base * 0.05, 2)
            con.execute("INSERT INTO salary VALUES (?,?,?,?,?,?,?,?,?)", (
                emp, month, base, ot_pay, bonus, gross, tax, pension, round(gross - tax - pension, 2)))
    identity.issue_passwords(con, employee_ids(), path)
    con.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    con.commit()
    con.close()
    tmp.replace(path)


SCHEMA_VERSION = 4  # 3: credentials (argon2 hashes of the demo passwords); 4: 64 employees


def connect(path: Path) -> sqlite3.Connection:
    """Open the database, (re)building it when it is missing or from an older schema."""
    if path.exists():
        with sqlite3.connect(path) as con:
            version = con.execute("PRAGMA user_version").fetchone()[0]
        if version != SCHEMA_VERSION:
            path.unlink()
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        build(path)
    con = sqlite3.connect(path, check_same_thread=False)
    con.row_factory = sqlite3.Row
    return con
