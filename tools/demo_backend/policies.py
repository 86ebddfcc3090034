"""Leave policies (written from the demo company's facts.yaml), weather and clothing rules of the demo backend."""

from __future__ import annotations

import hashlib
from datetime import date
from pathlib import Path
from typing import Any

import yaml

from tools.domain import CITIES, LEAVE_TYPES

FACTS_PATH = Path(__file__).resolve().parents[2] / "data" / "companies" / "brightmart" / "facts.yaml"


def leave_policies(facts: dict[str, dict[str, Any]]) -> dict[str, dict[str, str]]:
    """The policy of each leave type, written from the leave facts (the demo company's facts.yaml holds each)."""
    a, s, m, pa, pr, b, st, u = (facts[k] for k in ("annual", "sick", "maternity", "paternity", "parental",
                                                     "bereavement", "study", "unpaid"))
    return {
        "annual": {"entitlement": f"{a['days_a_year']} days a year (pro rata for part time), accrued monthly",
                   "pay": "full pay",
                   "notice": f"request in MyHR at least {a['notice_weeks']} weeks ahead "
                             f"({a['short_notice_weeks']} week for {a['short_request_days']} days or fewer)",
                   "notes": f"up to {a['carry_over_days']} unused days carry over and must be used by "
                            f"{a['carry_over_until']}; store staff need regional approval from {a['peak_from']} "
                            f"to {a['peak_until']}"},
        "sick": {"entitlement": f"{s['paid_days_a_year']} paid sick days a year", "pay": "full pay",
                 "notice": f"phone your manager before your shift or by {s['report_by']}",
                 "notes": f"a doctor's note is needed from the {ordinal(s['note_from_day'])} consecutive day; "
                          "record it in MyHR on your first day back"},
        "maternity": {"entitlement": f"{m['full_pay_weeks']} weeks, then up to {m['more_weeks']} more weeks",
                      "pay": f"full pay for the {m['full_pay_weeks']} weeks, then {m['more_weeks_pay_percent']}% pay",
                      "notice": f"tell HR at least {m['notice_weeks']} weeks before the due date", "notes": ""},
        "paternity": {"entitlement": f"{pa['weeks']} weeks", "pay": "full pay",
                      "notice": "agree dates with your manager",
                      "notes": f"within {pa['within_months']} months of the birth or adoption"},
        "parental": {"entitlement": f"up to {pr['weeks_per_child']} weeks per child until the child turns "
                                    f"{pr['until_age']}", "pay": "unpaid", "notice": "request in MyHR", "notes": ""},
        "bereavement": {"entitlement": f"{b['close_family_days']} days for a close family member, "
                                       f"{b['other_days']} day for others", "pay": "full pay",
                        "notice": "tell your manager as soon as you can", "notes": ""},
        "study": {"entitlement": f"{st['days_a_year']} days a year for approved courses", "pay": "full pay",
                  "notice": "request in MyHR with the course details",
                  "notes": f"training budget EUR {st['training_budget_eur']:,} a year"},
        "unpaid": {"entitlement": f"up to {u['days_a_year']} days a year", "pay": "unpaid",
                   "notice": "needs manager and HR approval", "notes": ""},
    }


def ordinal(n: int) -> str:
    """1st, 2nd, 3rd, 4th, ... 11th, 12th, 13th, 21st."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def load_facts(path: Path = FACTS_PATH) -> dict[str, dict[str, Any]]:
    """The leave facts, by leave type."""
    return yaml.safe_load(path.read_text(encoding="utf-8"))["leave"]


LEAVE_POLICIES = leave_policies(load_facts())
assert set(LEAVE_POLICIES) == set(LEAVE_TYPES), "every leave type of the domain has a policy"

# Mean temperature per month (Jan..Dec), a rough European climate.
_SEASON = [3, 4, 8, 12, 16, 20, 23, 22, 18, 13, 8, 4]
# Degrees above or below that mean, per city of the domain (in its order).
_CITY_OFFSET = dict(zip(CITIES, [-1, -2, 0, 4, 1, 5, -2, -1, -1, 4, 4, -2, -1, -3, -4, -6, -3, -7, -2, 6], strict=True))
CONDITIONS = ["sunny", "cloudy", "rain", "windy", "partly cloudy"]


def weather_for(city: str, day: date) -> dict[str, object]:
    """Deterministic weather for a city and day, so answers can be checked."""
    digest = int(hashlib.sha256(f"{city.lower()}|{day.isoformat()}".encode()).hexdigest()[:8], 16)
    temp = _SEASON[day.month - 1] + _CITY_OFFSET.get(city, 0) + (digest % 9) - 4
    condition = CONDITIONS[(digest >> 8) % len(CONDITIONS)]
    if temp <= 1 and condition == "rain":
        condition = "snow"
    return {"city": city, "date": day.isoformat(), "temperature_c": temp, "condition": condition,
            "wind_kmh": 5 + (digest >> 12) % 35, "precipitation_mm": (digest >> 16) % 12 if condition in
            ("rain", "snow") else 0}


def clothing_for(temperature: float, condition: str) -> dict[str, object]:
    """What to wear for a temperature (Celsius) and a condition."""
    if temperature < 0:
        layers = ["a warm winter coat", "a hat", "gloves", "a scarf"]
    elif temperature < 8:
        layers = ["a warm coat", "a sweater"]
    elif temperature < 15:
        layers = ["a light jacket", "long sleeves"]
    elif temperature < 22:
        layers = ["a light sweater or shirt"]
    else:
        layers = ["light, breathable clothes", "sunglasses"]
    cond = condition.lower()
    if "rain" in cond:
        layers.append("an umbrella or a raincoat")
    if "snow" in cond:
        layers.append("waterproof boots")
    if "wind" in cond:
        layers.append("a windproof layer")
    if "sun" in cond and temperature >= 18:
        layers.append("sunscreen")
    return {"temperature_c": temperature, "condition": condition, "items": layers,
            "advice": "Wear " + ", ".join(layers[:-1]) + (" and " if len(layers) > 1 else "") + layers[-1] + "."}
