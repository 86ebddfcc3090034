"""A seeded, labelled workload following the reference mix.

About 38% FAQ-style questions (held-out or reworded paraphrases, never the indexed text verbatim),
single- and multi-tool questions, about 27% of requests inside long sessions (more than 10 turns,
with follow-ups), repeated and similar questions, and near misses that must not take the FAQ
shortcut. Every item carries the routes it may take and the facts its answer must contain, computed
from the demo backend's own data (and the figures it must not contain: another employee's, another
city's).
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import asdict
from datetime import date
from pathlib import Path

import yaml

from app.bench.asks import CITIES, DEMO_FAQ, TOMORROW, Asks, answer_facts, faq_routes, first_garment
from app.bench.items import FACTS_DB, Facts, Item
from app.bench.sessions import personal_sessions
from app.settings import ROOT
from tools.demo_backend.policies import LEAVE_POLICIES, weather_for

WORKLOAD = ROOT / "data" / "bench" / "workload.jsonl"
HELDOUT = ROOT / "data" / "bench" / "heldout.yaml"
MULTILINGUAL = ROOT / "data" / "bench" / "multilingual.yaml"


def generate(seed: int = 7) -> list[Item]:
    """The full workload (deterministic for a seed)."""
    rng = random.Random(seed)
    facts = Facts(FACTS_DB)
    items: list[Item] = []
    users = [f"E{1001 + i}" for i in range(20)]

    def add(session: str, user: str, q: str, kind: str, routes: list[str], f: list[str] | None = None,
            bad: list[str] | None = None) -> None:
        turn = sum(1 for it in items if it.session == session)
        items.append(Item(f"{session}.{turn}", session, turn, user, q, kind, routes, f or [], bad or []))

    asks = Asks(rng, facts, add)
    n_sessions = 0

    def session_id(prefix: str) -> str:
        nonlocal n_sessions
        n_sessions += 1
        return f"{prefix}{n_sessions:02d}"

    # Long sessions (> 10 turns) with follow-ups.
    for _ in range(2):
        s, user = session_id("long"), rng.choice(users)
        other = rng.choice([u for u in users if u != user])
        asks.faq(s, user)
        asks.salary(s, user, other)
        add(s, user, "and last month?", "followup", ["template"], [facts.net(user, "2026-10")])
        asks.weather(s, user, False)
        city = rng.choice([c for c in CITIES if c not in items[-1].q])
        add(s, user, f"what about {city}?", "followup", ["template"],
            [str(weather_for(city, TOMORROW)["temperature_c"])])  # the date carries over from the last turn
        asks.other_tool(s, user, other)
        asks.faq(s, user)
        asks.kb(s, user)
        asks.weather(s, user, True)
        asks.faq(s, user)
        asks.faq(s, user)
    # Short sessions: FAQ, single and multi tool, compound, knowledge base, near misses.
    for _ in range(14):
        asks.faq(session_id("s"), rng.choice(users))
    for _ in range(5):
        u = rng.choice(users)
        asks.salary(session_id("s"), u, rng.choice([x for x in users if x != u]))
    for _ in range(4):
        asks.weather(session_id("s"), rng.choice(users), rng.random() < 0.5)
    for _ in range(4):
        u = rng.choice(users)
        asks.other_tool(session_id("s"), u, rng.choice([x for x in users if x != u]))
    for k in range(3):
        asks.kb(session_id("s"), rng.choice(users), k)
    for _ in range(3):
        u, city = rng.choice(users), rng.choice(CITIES)
        asks.compound(session_id("s"), u, city)
    for q in asks.near_misses(6):
        asks.near_miss(session_id("s"), rng.choice(users), q)
    heldout_items(items, facts, rng, asks.by_id, users)
    # Repeated and similar traffic: the same questions again from other employees.
    pool = [i for i in items if i.kind in ("faq", "tool", "multi_tool") and i.session.startswith("s")]
    for it in rng.sample(pool, 6):
        personal = bool(re.search(r"\b(my|I)\b", it.q)) and it.kind != "faq"
        # Personal questions come back from the same employee; shared ones from someone else.
        add(session_id("r"), it.user if personal else rng.choice(users), it.q, "repeat", it.expect_routes,
            it.facts, it.forbidden)
    personal_sessions(add, session_id, facts, rng, users)
    return items


def _part_facts(part: dict, user: str, facts: Facts, by_id: dict) -> tuple[list[str], list[str]]:
    """Facts (and forbidden facts) of one part of a held-out question, from the demo backend's data."""
    route = part["route"]
    if route == "salary":
        return [facts.net(user, part["month"])], []
    if route == "attendance":
        a = facts.row("attendance", user, part["month"])
        return [f"{a['present_days']} of {a['working_days']}"], []
    if route == "leave_balance":
        return [f"have {facts.remaining(user)} days"], []
    if route == "leave_policy":
        return [re.findall(r"\d+", LEAVE_POLICIES[part["leave_type"]]["entitlement"])[0]], []
    if route in ("weather", "weather_clothing"):
        w = weather_for(part["city"], date.fromisoformat(part["day"]))
        f = [f"{w['temperature_c']}°C"]
        if route == "weather_clothing":
            f.append(first_garment(w))
        return f, []
    if route.startswith("faq:"):
        return answer_facts(by_id[route[4:]]["answer"]), []
    return [], []


def heldout_items(items: list[Item], facts: Facts, rng: random.Random, by_id: dict, users: list[str]) -> None:
    """The held-out-phrasing slice (`data/bench/heldout.yaml`): one question per session, facts from the data."""
    for n, h in enumerate(yaml.safe_load(HELDOUT.read_text()), 1):
        user = rng.choice(users)
        parts = h.get("parts") or [h]
        fs = [f for p in parts for f in _part_facts(p, user, facts, by_id)[0]]
        route = h["route"]
        routes = ["refused"] if route == "other_person" else faq_routes(route[4:]) if route.startswith("faq:") \
            else ["template"]
        items.append(Item(f"h{n:02d}.0", f"h{n:02d}", 0, user, h["q"], "heldout", routes, fs, []))


def _local_facts(h: dict, user: str, facts: Facts, by_id: dict) -> list[str]:
    """What an answer in the asker's language must carry: the same figures as in English, written as that locale
    writes them (money by Babel), never English words.
    """
    from babel.numbers import format_currency

    from tools.i18n import amounts_in, locale_of

    route = h["route"]
    if route == "salary":
        return [format_currency(facts.row("salary", user, h["month"])["net"], "EUR", locale=locale_of(h["lang"]))]
    if route == "attendance":
        a = facts.row("attendance", user, h["month"])
        return [str(a["present_days"]), str(a["working_days"])]
    if route == "leave_balance":
        return [facts.remaining(user)]
    if route in ("weather", "weather_clothing"):
        return [f"{weather_for(h['city'], date.fromisoformat(h['day']))['temperature_c']}°C"]
    if route == "leave_policy":
        return [re.findall(r"\d+", LEAVE_POLICIES[h["leave_type"]]["entitlement"])[0]]
    served = amounts_in(by_id[route[4:]]["answer"], h["lang"])  # its amounts as the reader's locale writes money
    return [f for f in answer_facts(served) if re.fullmatch(r"[\d.,:]+|MyHR|SpendWise", f)]


def multilingual(seed: int = 11) -> list[Item]:
    """The multilingual slice (`data/bench/multilingual.yaml`, written apart from the router's data): questions
    in the desk's other languages, each scored on the backend's figures as the asker's locale writes them.
    """
    if not MULTILINGUAL.exists():
        return []
    rng, facts = random.Random(seed), Facts(FACTS_DB)
    by_id = {e["id"]: e for e in yaml.safe_load(DEMO_FAQ.read_text())}
    users = [f"E{1001 + i}" for i in range(20)]
    out = []
    for n, h in enumerate(yaml.safe_load(MULTILINGUAL.read_text(encoding="utf-8")), 1):
        user = rng.choice(users)
        route = h["route"]
        routes = faq_routes(route[4:]) if route.startswith("faq:") else ["template", "llm"]
        out.append(Item(f"m{n:02d}.0", f"m{n:02d}", 0, user, h["q"], f"lang:{h['lang']}", routes,
                        _local_facts(h, user, facts, by_id), []))
    return out


def quick(items: list[Item]) -> list[Item]:
    """A small slice that still covers every kind: one long session, one item of each other kind, and the
    whole held-out-phrasing slice (its accuracy is the point of it).
    """
    long_session = [i for i in items if i.session == "long01"]
    picked, seen = [], set()
    for it in items:
        if not it.session.startswith("long") and it.kind not in seen and it.turn == 0 and it.kind != "heldout":
            picked.append(it)
            seen.add(it.kind)
    return long_session + picked + [i for i in items if i.kind == "heldout"]


def save(items: list[Item], path: Path = WORKLOAD) -> None:
    """Store the workload (one JSON object per line)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(asdict(i)) + "\n" for i in items))


def load(path: Path = WORKLOAD) -> list[Item]:
    """Read the stored workload, generating it first when missing."""
    if not path.exists():
        save(generate())
    return [Item(**json.loads(line)) for line in path.read_text().splitlines() if line.strip()]


if __name__ == "__main__":
    save(generate())
    print(f"wrote {WORKLOAD}")
