"""What the benchmark's workload is made of: its items, the months its personal questions ask about, and the
figures their answers are scored against (the demo backend's own data). The workload generator
(app/bench/workload.py) and its session slice (app/bench/sessions.py) both build on it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from app.settings import ROOT
from tools.demo_backend import db

FACTS_DB = ROOT / ".run" / "bench-facts.sqlite"  # the figures answers are scored against
MONTHS = ["2026-03", "2026-06", "2026-08", "2026-09", "2026-10"]


@dataclass
class Item:
    """One request of the workload and its labels."""

    id: str
    session: str
    turn: int
    user: str
    q: str
    kind: str
    expect_routes: list[str]
    facts: list[str] = field(default_factory=list)
    forbidden: list[str] = field(default_factory=list)


class Facts:
    """Expected figures straight from the demo backend's data."""

    def __init__(self, tmp: Path) -> None:
        self.con = db.connect(tmp)

    def row(self, table: str, emp: str, month: str | None = None) -> dict:
        """One employee's row of a table (for a month where the table has one)."""
        sql = f"SELECT * FROM {table} WHERE employee = ?" + (" AND month = ?" if month else "")
        return dict(self.con.execute(sql, (emp, month) if month else (emp,)).fetchone())

    def net(self, emp: str, month: str) -> str:
        """Net pay as the template writes it."""
        return f"{self.row('salary', emp, month)['net']:,.2f}"

    def remaining(self, emp: str) -> str:
        """Annual leave days left."""
        r = self.row("leave", emp)
        return str(r["annual_entitled"] + r["carried_over"] - r["annual_taken"] - r["annual_pending"])
