"""The labelled questions of the desk's other languages: valid labels, splits written apart, every route present."""

from __future__ import annotations

import re
from collections import Counter

import pytest
import yaml

from app.settings import ROOT
from app.training.router_data import LEAVE_FAQ
from app.training.router_i18n import OTHER_LANGUAGES, load_lang_split
from tools.faq import load_faq
from tools.registry import INTENTS

FAQ = load_faq(ROOT / "data" / "companies" / "brightmart" / "faq.yaml")
ROUTES = {*INTENTS, "handbook", "other_person", "free_writing", "other", "follow_up", "compound"}


def norm(q: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", q.lower()).split())


def valid(route: str) -> bool:
    return route in ROUTES or route.startswith("faq:") and route[4:] in FAQ and route[4:] not in LEAVE_FAQ


@pytest.mark.parametrize("lang", OTHER_LANGUAGES)
def test_every_item_has_a_known_label_and_every_route_is_taught(lang):
    items = load_lang_split("train", (lang,))
    for it in [*items, *load_lang_split("dev", (lang,)), *load_lang_split("test", (lang,))]:
        assert valid(it["route"]), it
        assert it["route"] != "compound" or len(it.get("parts") or []) >= 2 and all(map(valid, it["parts"])), it
    taught = Counter("faq" if it["route"].startswith("faq:") else it["route"] for it in items)
    assert set(taught) == {*ROUTES, "faq"} and min(taught.values()) >= 10, taught


@pytest.mark.parametrize("lang", OTHER_LANGUAGES)
def test_the_splits_of_a_language_share_no_question(lang):
    seen: dict[str, str] = {}
    for split in ("train", "dev", "test"):
        for it in load_lang_split(split, (lang,)):
            key = norm(it["q"])
            assert seen.get(key, split) == split, f"{it['q']!r} is in {seen[key]} and {split}"
            seen[key] = split
    bench = yaml.safe_load((ROOT / "data" / "bench" / "multilingual.yaml").read_text(encoding="utf-8"))
    assert not {norm(it["q"]) for it in bench if it["lang"] == lang} & set(seen), "the benchmark's slice is apart"
