"""Leave policies, weather and clothing rules of the demo backend (Brightmart's facts)."""

from __future__ import annotations

import hashlib
from datetime import date

from tools.domain import CITIES, LEAVE_TYPES

LEAVE_POLICIES: dict[str, dict[str, str]] = {
    "annual": {"entitlement": "25 days a year (pro rata for part time), accrued monthly",
               "pay": "full pay", "notice": "request in MyHR at least 2 weeks ahead (1 week for 2 days or fewer)",
               "notes": "up to 5 unused days carry over and must be used by 31 March; store staff need "
                        "regional approval from 15 November to 31 December"},
    "sick": {"entitlement": "12 paid sick days a year", "pay": "full pay",
             "notice": "phone your manager before your shift or by 09:30",
             "notes": "a doctor's note is needed from the 4th consecutive day; record it in MyHR on your first "
                      "day back"},
    "maternity": {"entitlement": "16 weeks, then up to 10 more weeks",
                  "pay": "full pay for the 16 weeks, then 70% pay",
                  "notice": "tell HR at least 15 weeks before the due date", "notes": ""},
    "paternity": {"entitlement": "4 weeks", "pay": "full pay",
                  "notice": "agree dates with your manager", "notes": "within 6 months of the birth or adoption"},
    "parental": {"entitlement": "up to 26 weeks per child until the child turns 8", "pay": "unpaid",
                 "notice": "request in MyHR", "notes": ""},
    "bereavement": {"entitlement": "5 days for a close family member, 1 day for others", "pay": "full pay",
                    "notice": "tell your manager as soon as you can", "notes": ""},
    "study": {"entitlement": "5 days a year for approved courses", "pay": "full pay",
              "notice": "request in MyHR with the course details", "notes": "training budget EUR 1,000 a year"},
    "unpaid": {"entitlement": "up to 30 days a year", "pay": "unpaid",
               "notice": "needs manager and HR approval", "notes": ""},
}
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
