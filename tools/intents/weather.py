"""Trips: the forecast for a city on a day ("weather in Oslo tomorrow?") and what to wear there ("do I need a coat
in Oslo?"). Two tools (`weather`, `clothing_advice`, which reads the forecast's result) and two intents, one module:
they share the forecast and its sentence.
"""

from __future__ import annotations

from datetime import date
from typing import Any

from pydantic import BaseModel, Field

from tools.domain import DATE_PATTERN, city_name
from tools.formatting import day_text
from tools.gazetteer import name_used
from tools.i18n import and_list, catalog, say, say_known, sentences
from tools.specs import Fake, IntentSpec, tool

_FORECAST = {"city": "$city", "date": "$date"}
_DRESS = {"temperature": "@weather.temperature_c", "condition": "@weather.condition"}
_COVERS = "the weather (and what to wear) for your trips"  # one phrase covers the forecast and the clothing


class WeatherArgs(BaseModel):
    """Arguments of `weather`."""

    city: str = Field(min_length=2, max_length=40, pattern=r"^[A-Za-z][A-Za-z .'-]*$")
    date: str = Field(pattern=DATE_PATTERN, description="day as YYYY-MM-DD")


class ClothingArgs(BaseModel):
    """Arguments of `clothing_advice`."""

    temperature: float = Field(ge=-60, le=60, description="degrees Celsius")
    condition: str = Field(min_length=1, max_length=40)


def _weather_sentence(w: dict[str, Any], slots: dict[str, Any]) -> str:
    lang = slots.get("lang", "en")
    when = w["date"] if lang == "en" else day_text(date.fromisoformat(w["date"]), True, lang)
    city = city_name(w["city"], lang)
    if city == w["city"] and lang != "en":  # a city the answer has no name for in the reader's language: theirs
        city = name_used(str(slots.get("question") or ""), w["city"]) or city
    return say("forecast", lang, city=city, date=when, temp=w["temperature_c"],
               condition=say_known(f"condition.{w['condition']}", lang, w["condition"]), wind=w["wind_kmh"])


def _advice(a: dict[str, Any], lang: str) -> str:
    """What to wear, in the asker's language when every item is one the catalogs know (else the backend's words)."""
    items = a.get("items") or []
    if lang == "en" or not items or any(f"wear.{i}" not in catalog(lang) for i in items):
        return str(a["advice"])
    return say("wear", lang, items=and_list([say(f"wear.{i}", lang) for i in items], lang))


def render_weather(slots: dict[str, Any], r: dict[str, dict[str, Any]]) -> str:
    """Forecast."""
    return _weather_sentence(r["weather"], slots)


def render_weather_clothing(slots: dict[str, Any], r: dict[str, dict[str, Any]]) -> str:
    """Forecast and what to wear."""
    lang = slots.get("lang", "en")
    return sentences(lang, _weather_sentence(r["weather"], slots), _advice(r["clothing_advice"], lang))


def fake_weather(args: dict[str, Any]) -> dict[str, Any]:
    """Cold rain wherever and whenever asked."""
    return {"city": args.get("city"), "date": args.get("date"), "temperature_c": 4, "condition": "rain",
            "wind_kmh": 10}


def fake_clothing_advice(args: dict[str, Any]) -> dict[str, Any]:
    """A coat, naming the temperature it was given."""
    return {"advice": f"Wear a coat ({args.get('temperature')} C)."}


WEATHER = tool("weather", "Weather forecast for a city on a day: temperature in Celsius, condition, wind.",
               WeatherArgs, "/weather", {"temperature_c", "condition"}, ttl_s=600, slot_args=_FORECAST)
CLOTHING = tool("clothing_advice", "What to wear for a temperature (Celsius) and a weather condition.",
                ClothingArgs, "/clothing", {"advice"}, ttl_s=86400, slot_args=_DRESS)
FORECAST_INTENT = IntentSpec(
    "weather", (("weather", "weather", _FORECAST),), ("city", "date"),
    renderer=render_weather, covers=_COVERS,
    description="a forecast: temperature, rain, sun, wind, snow for a city and/or a day")
CLOTHING_INTENT = IntentSpec(
    "weather_clothing", (("weather", "weather", _FORECAST), ("clothing_advice", "clothing_advice", _DRESS)),
    ("city", "date"), renderer=render_weather_clothing, covers=_COVERS,
    description="what to wear / bring given the weather (coat, umbrella, raincoat, layers, shorts) for a city "
                "and/or a day")

SPECS = (WEATHER, CLOTHING, FORECAST_INTENT, CLOTHING_INTENT)
FAKES: dict[str, Fake] = {"weather": fake_weather, "clothing_advice": fake_clothing_advice}
