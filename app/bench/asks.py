"""The kinds of request the benchmark asks, each with the facts its answer must carry (computed from the demo
backend's own data) and the figures it must not (another employee's, another city's). The workload
(app/bench/workload.py) draws its short sessions from them; the HTTP load (app/bench/cluster_load.py) draws each
session's requests from the same kinds for that session's own employee.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from datetime import date, timedelta
from typing import Any, cast

import yaml

from app.bench.items import MONTHS, Facts
from app.settings import ROOT
from app.training.router_data import LEAVE_FAQ
from tools.demo_backend.policies import LEAVE_POLICIES, clothing_for, weather_for
from tools.domain import HOME_CITIES
from tools.formatting import month_name

TODAY = date(2026, 11, 29)
TOMORROW = TODAY + timedelta(days=1)
DEMO_FAQ = ROOT / "data" / "companies" / "brightmart" / "faq.yaml"  # the workload asks the demo company's questions
FAQ_DEV = ROOT / "data" / "faq_dev.yaml"
ANY = ["faq", "template", "llm"]
CITIES = list(HOME_CITIES)
KB_QUESTIONS = [  # policy look-ups with a fact their answer must contain
    ("What is the policy on public holidays in Spain?", ["Epiphany"]),
    ("What is the hotel limit in Paris?", ["200"]),
    ("Which VPN client must I use off-site?", ["BrightConnect"]),
    ("What are the public holidays in Ireland?", ["Patrick"]),
    ("How much is the referral bonus?", ["1,000"]),
]
Add = Callable[..., None]  # add(session, user, q, kind, routes, facts=None, forbidden=None)


def first_garment(weather: dict[str, object]) -> str:
    """The last word of the first thing to wear in that weather ("coat", "jacket"), a fact the answer must carry.

    The demo backend returns its weather and clothing as plain `dict[str, object]`; the casts name the types it
    puts there.
    """
    clothing = clothing_for(cast(float, weather["temperature_c"]), cast(str, weather["condition"]))
    return cast(list[str], clothing["items"])[0].split()[-1]


def answer_facts(answer: str) -> list[str]:
    """Figures and names an FAQ answer must carry."""
    facts = re.findall(r"\d+(?:[.,:]\d+)?", answer)
    facts += [w for w in ("MyHR", "SpendWise", "BrightConnect", "4357") if w in answer and w not in facts]
    facts += re.findall(r"\b(?:January|February|March|April|May|June|July|August|September|October|November|"
                        r"December|Monday|Friday|Sunday)\b", answer)
    if not facts:
        words = sorted(set(re.findall(r"[A-Za-z]{8,}", answer)), key=lambda w: (-len(w), w))  # stable across runs
        facts = words[:1]
    return list(dict.fromkeys(facts))[:3]


def faq_routes(faq_id: str) -> list[str]:
    """Routes an FAQ question may take: the FAQ, the leave_policy template for leave-type entries, or the full
    path when the router steps aside (right only when its answer carries the entry's facts).
    """
    return ["faq", "template", "llm"] if faq_id in LEAVE_FAQ else ["faq", "llm"]


class Asks:
    """Requests of each kind, drawn with `rng` and handed to `add` with their facts."""

    def __init__(self, rng: random.Random, facts: Facts, add: Add, tomorrow: date = TOMORROW) -> None:
        self.rng, self.facts, self.add = rng, facts, add
        self.tomorrow = tomorrow  # the day "tomorrow" is to whoever answers: the workload's, or a served desk's
        faq: list[dict[str, Any]] = yaml.safe_load(DEMO_FAQ.read_text())
        self.by_id = {e["id"]: e for e in faq}
        self.dev: list[dict[str, Any]] = yaml.safe_load(FAQ_DEV.read_text())

    def faq(self, session: str, user: str) -> None:
        """An FAQ question, reworded (a held-out paraphrase, or one of the entry's own, lower-cased and prefixed)."""
        rng = self.rng
        d = rng.choice([x for x in self.dev if x["kind"] == "paraphrase"])
        entry = self.by_id[d["faq"]]
        q = d["q"] if rng.random() < 0.6 else rng.choice(["hi, ", "quick question: ", ""]) + \
            rng.choice(entry["paraphrases"]).rstrip("?").lower() + "?"
        self.add(session, user, q, "faq", faq_routes(entry["id"]), answer_facts(entry["answer"]))

    def salary(self, session: str, user: str, other: str) -> None:
        """The caller's pay in a month (never `other`'s)."""
        month = self.rng.choice(MONTHS)
        m = month_name(month, with_year=False)
        self.add(session, user, self.rng.choice(["What was my salary in {m}?", "Show me my payslip for {m} 2026",
                                                 "How much net pay did I get in {m}?"]).format(m=m),
                 "tool", ["template"], [self.facts.net(user, month)], [self.facts.net(other, month)])

    def weather(self, session: str, user: str, clothing: bool) -> None:
        """Tomorrow's weather in a city, or what to wear there (never another city's temperature)."""
        city, other = self.rng.sample(CITIES, 2)
        w, wo = weather_for(city, self.tomorrow), weather_for(other, self.tomorrow)
        if clothing:
            q = self.rng.choice(["What should I wear in {c} tomorrow?",
                                 "Do I need a coat in {c} tomorrow?"]).format(c=city)
            f = [str(w["temperature_c"]), first_garment(w)]
            kind = "multi_tool"
        else:
            q = self.rng.choice(["What's the weather in {c} tomorrow?", "Forecast for {c} tomorrow?"]).format(c=city)
            f, kind = [str(w["temperature_c"])], "tool"
        self.add(session, user, q, kind, ["template"], f, [] if wo["temperature_c"] == w["temperature_c"] else
                 [f"{wo['temperature_c']}°C"])

    def other_tool(self, session: str, user: str, other: str) -> None:
        """The caller's leave balance or attendance, or a leave type's rules."""
        choice = self.rng.choice(["leave", "attendance", "policy"])
        if choice == "leave":
            q = self.rng.choice(["How many leave days do I have left?", "What's my leave balance?"])
            self.add(session, user, q, "tool", ["template"], [f"have {self.facts.remaining(user)} days"])
        elif choice == "attendance":
            month = self.rng.choice(MONTHS)
            a = self.facts.row("attendance", user, month)
            self.add(session, user, f"What was my attendance in {month_name(month, with_year=False)}?", "tool",
                     ["template"], [f"{a['present_days']} of {a['working_days']}"])
        else:
            kind = self.rng.choice(["maternity", "paternity", "bereavement", "unpaid", "study"])
            num = re.findall(r"\d+", LEAVE_POLICIES[kind]["entitlement"])[0]
            self.add(session, user, f"What are the rules for {kind} leave?", "tool", ANY, [num])

    def kb(self, session: str, user: str, which: int | None = None) -> None:
        """A policy look-up in the handbook (`which` of KB_QUESTIONS, else drawn)."""
        q, f = KB_QUESTIONS[which] if which is not None else self.rng.choice(KB_QUESTIONS)
        self.add(session, user, q, "kb", ANY, f)

    def compound(self, session: str, user: str, city: str) -> None:
        """Two things at once: the caller's leave balance and a city's weather tomorrow."""
        self.add(session, user, f"How many leave days do I have left and what's the weather in {city} tomorrow?",
                 "compound", ["llm", "template"],
                 [self.facts.remaining(user), str(weather_for(city, self.tomorrow)["temperature_c"])])

    def near_misses(self, n: int) -> list[str]:
        """`n` questions close to an FAQ entry's that it does not answer (they must not take its shortcut)."""
        return [d["q"] for d in self.rng.sample([x for x in self.dev if x["kind"] == "near_miss"], n)]

    def near_miss(self, session: str, user: str, q: str) -> None:
        """One of `near_misses`, asked."""
        self.add(session, user, q, "near_miss", ["template", "llm", "refused"])
