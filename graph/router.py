"""The learned router: which path a question takes, decided by a model trained on labelled examples.

One embedding of the question (the same one the caches use) is scored by a linear classifier over
every route: an FAQ entry, a tool intent, a handbook look-up, someone else's data, free writing,
small talk, a follow-up, a compound request. A route is taken only when the model is confident
(per-route thresholds chosen on the dev split and the public val splits so that wrong shortcuts stay
under 1%) and the question is close to a training example of that route; otherwise the router says "not sure" and
the full LLM path answers. A question the model reads as compound is split into clauses, each
routed on its own (background statements travel with the request after them).

Regexes here only pull out entities (employee ids); the language check uses a trained detector. The
decision's type and the names of the paths are graph/paths.py's.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import replace
from datetime import date
from functools import lru_cache

import numpy as np

from graph.language import is_foreign, languages
from graph.leave_model import LeaveTypes
from graph.paths import Decision, Path
from graph.router_model import RouterModel, Scores
from graph.slots import city_slot
from graph.times import date_slot
from tools.company import current
from tools.domain import (
    CITIES,
    CITY_PATTERN,
    COUNTRY_PATTERNS,
    EMPLOYEE_ID,
    LEAVE_PATTERNS,
    MONTH_NAMES,
    WEEKDAYS,
)
from tools.registry import INTENTS, is_personal, tools_of

_POSSESSIVE = re.compile(r"\b([A-Z][a-z]+(?: [A-Z][a-z]+)?)['’]s\b")
_NOT_PEOPLE = {w.lower() for w in (*CITIES, *MONTH_NAMES, *WEEKDAYS, "today", "tomorrow", "yesterday", "month",
                                   "year", "week", "company", "it", "what", "that", "where",
                                   "who", "there", "here", "let", "how", "when")}
_NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)?")
_ANY_DAY = date(2026, 1, 1)  # comparing two clauses' days needs some anchor; any fixed one does
HINT_MIN = 0.05
Embed = Callable[[list[str]], Awaitable[np.ndarray]]

# Clause boundaries of a compound request ("my leave balance and the weather in Rome tomorrow"): each language's
# "and" / "also" / "but" from its words file (`tools/messages/<lang>.words.yaml`), punctuation, and Chinese's
# joining words where they stand. The conjunction comes first so that ", and how many ..." leaves no "and" on the
# next clause.
@lru_cache(maxsize=2)
def _clauses(english: bool) -> re.Pattern[str]:
    from tools.i18n import LANGUAGES, words

    langs = ["en"] if english else [lang for lang in LANGUAGES if lang != "en"]
    spaced = "|".join(re.escape(w) for lang in langs for w in words(lang).get("conjunctions") or [])
    unspaced = "|".join(re.escape(w) for lang in langs for w in words(lang).get("conjunctions_unspaced") or [])
    pattern = rf"\s*(?:[;?!.,]*\s+\b(?:{spaced})\b\s+|[;?!]+\s+|\.\s+|\s[+&]\s|,\s+)"
    if not english:
        pattern += r"|\s*[，；？！。]+\s*" + (rf"|(?:{unspaced})" if unspaced else "")
    return re.compile(pattern, re.IGNORECASE)


# A long message (greeting, background, two questions, thanks) runs to five or six clauses, its context clauses read
# with the request after them; past this many it is read whole (one embedding per clause, and more for context).
_MAX_CLAUSES = 8


def split_clauses(text: str, lang: str = "en") -> list[str]:
    """Clauses of a request that may ask several things; fragments of one word (two characters in a language
    written without spaces) are dropped.
    """
    parts = [p.strip(" ,.?!，。？！") for p in _clauses(lang == "en").split(text)]
    from tools.i18n import spaced

    return [p for p in parts if (len(p.split()) >= 2 if spaced(lang) else len(p) >= 3)]


def named_people(text: str) -> set[str]:
    """Names in the possessive ("Anna Kowalski's payslip"): an entity, not a place, month or product."""
    return {m for m in _POSSESSIVE.findall(text) if m.split()[0].lower() not in _NOT_PEOPLE | current().own_words}


def entities(text: str) -> frozenset[str]:
    """The domain entities a text names: leave types, countries, cities, numbers."""
    found = {f"leave:{k}" for k, p in LEAVE_PATTERNS.items() if p.search(text)}
    found |= {f"country:{k}" for k, p in COUNTRY_PATTERNS.items() if p.search(text)}
    found |= {f"city:{c.lower()}" for c in CITY_PATTERN.findall(text)}
    found |= {f"#{n}" for n in _NUMBER.findall(text)}
    return frozenset(found)


def group_of(label: str) -> str:
    """The threshold group of a fine label (every FAQ entry shares one)."""
    return "faq" if label.startswith("faq:") else label


def hinted_tools(s: Scores) -> list[str]:
    """Tools of the intents the model gives at least `HINT_MIN`: what an LLM plan may keep."""
    return sorted({t for intent, p in s.probs.items() if p >= HINT_MIN for t in tools_of(intent)})


class Router:
    """The model, its thresholds, and the embedding function the graph already uses."""

    def __init__(self, model: RouterModel, embed: Embed | None = None,
                 faq_texts: dict[str, list[str]] | None = None, leave_types: LeaveTypes | None = None) -> None:
        self.model = model
        self.leave_types = leave_types  # which leave type a question is about (graph/leave_model.py)
        # What each FAQ entry's phrasings and answer name: a question naming anything else is a near miss.
        self.faq_entities = {fid: frozenset().union(*(entities(t) for t in texts))
                             for fid, texts in (faq_texts or {}).items()}
        self.embed = embed  # the model's encoder; Deps sets its own memoized one when the router shares it
        # The router of the desk's other languages (app/training/router_i18n.py); None: English only.
        self.other_languages: Router | None = None
        # A cheaper reader of the same routes, asked first: its sure decision stands, and this router reads only
        # what it is not sure of (the other languages: USE alone before USE and E5 side by side). None: no cascade.
        self.fast: Router | None = None

    def readers(self) -> list[Router]:
        """This router and those it hands questions to (its first reader, the other languages' and theirs)."""
        out = [self, *(self.fast.readers() if self.fast else [])]
        return out + (self.other_languages.readers() if self.other_languages else [])

    def first_reader(self, lang: str) -> Router:
        """The router that reads a question in `lang` first (whose embedding to start early)."""
        r = self.other_languages if lang != "en" and self.other_languages is not None else self
        return r.fast or r

    def sure(self, s: Scores, enabled: set[str] | None = None) -> bool:
        """Confident enough for a shortcut: over the route's threshold and near a training example."""
        group = group_of(s.top)
        if enabled is not None and group not in enabled:
            return False
        threshold = self.model.thresholds.get(group, 1.01)  # a route never calibrated is never taken
        return s.confidence >= threshold and s.support >= self.model.support_floor(group)

    def faq_candidate(self, s: Scores) -> str | None:
        """The FAQ entry the full path may offer as the closest answer: probable enough on the dev split
        (`RouterModel.faq_fallback`), though not sure enough for the shortcut.
        """
        label, p = s.best_faq()
        return label[4:] if label is not None and p >= self.model.faq_fallback else None

    async def decide(self, question: str, user: str, previous_intents: list[str] | None,
                     faq_enabled: bool = True, templates_enabled: bool = True, lang: str = "en") -> Decision:
        """The path for one question in `lang`, from one embedding (more only for the clauses of a compound request):
        English by this router's model, the desk's other languages by `other_languages`'.
        """
        if is_foreign(question):
            return Decision("foreign", "foreign", 1.0, reason="a language the desk does not speak")
        if lang != "en" and self.other_languages is not None:
            return await self.other_languages.decide(question, user, previous_intents, faq_enabled, templates_enabled,
                                                     lang)
        if self.fast is not None:  # "llm" is every decision that is not a sure path: those this model reads again
            d = await self.fast.decide(question, user, previous_intents, faq_enabled, templates_enabled, lang)
            if d.path != "llm":
                return d
        assert self.embed is not None, "Router.embed is set by Deps"
        # What the words alone say is read while the question's embedding is still being computed (it was
        # started when the request arrived), not after it: the decision follows the embedding at once.
        clauses = split_clauses(question, lang)
        others = {e.upper() for e in EMPLOYEE_ID.findall(question)} - {user.upper()} | named_people(question)
        named = entities(question)
        vec = (await self.embed([question]))[0]
        d = await self._decide(question, vec, clauses, others, named, previous_intents, faq_enabled, templates_enabled)
        if self.leave_types is not None and d.leave_question:
            # The leave type, where a later step settles one, from the vector at hand (graph/leave_slots.py)
            d = replace(d, leave_type=self.leave_types.fast.sure(vec))
        if "foreign" in (d.path, d.label) and self.other_languages is not None and (
                guess := self._language_guess(question)):
            # Too short or too mixed for the detector ("wat was mijn netto salaris in oktober?": nl 0.67), but the
            # English model reads another language first, sure or not: the other languages' router decides
            return await self.other_languages.decide(question, user, previous_intents, faq_enabled,
                                                     templates_enabled, guess)
        return replace(d, lang=lang) if lang != d.lang else d

    @staticmethod
    def _language_guess(question: str) -> str | None:
        """The desk's language the detector rates highest for a message the English model reads as another one."""
        from tools.i18n import LANGUAGES

        return next((code for code, _ in languages(question) if code in LANGUAGES and code != "en"), None)

    async def _decide(self, question: str, vec: np.ndarray, clauses: list[str], others: set[str], named: frozenset[str],
                      previous_intents: list[str] | None, faq_enabled: bool, templates_enabled: bool) -> Decision:
        """The path for the question with embedding `vec`, from what the model and the words say (see `decide`)."""
        s = self.model.score(vec)
        group = group_of(s.top)
        sure = self.sure(s)
        if group == "foreign" and sure:
            return Decision("foreign", "foreign", s.confidence, reason="not English (router)")
        if group == "compound" and len(clauses) > 1:  # the model reads several requests: route each clause
            parts = await self._compound(clauses, templates_enabled)
            if parts and parts[2]:
                return Decision("template", "compound", s.confidence, parts[0], parts[1],
                                reason="every part is known")
            if parts:  # several things asked, not all known: the LLM answers
                return Decision("llm", "compound", s.confidence, parts[0], parts[1],
                                reason="a part is not sure", hinted_tools=hinted_tools(s), faq_parts=parts[3])
        if not sure:
            return Decision("llm", s.top, s.confidence, reason=f"not sure ({s.confidence:.2f}, {s.support:.2f})",
                            hinted_tools=hinted_tools(s), faq_candidate=self.faq_candidate(s))
        if is_personal(group) and others:  # the caller's intent, about someone else: refuse
            return Decision("refuse", "other_person", s.confidence, reason=f"asks about {sorted(others)[0]}")
        if group == "faq":
            extra = named - self.faq_entities.get(s.top[4:], frozenset())
            if extra and self.faq_entities:  # "Is payday on the 15th in Lisbon?": not what the entry says
                return Decision("llm", s.top, s.confidence, reason=f"names {', '.join(sorted(extra))}, "
                                "which the FAQ entry does not", hinted_tools=hinted_tools(s),
                                faq_candidate=self.faq_candidate(s))
            if faq_enabled:
                return Decision("faq", s.top, s.confidence, faq_id=s.top[4:], reason="FAQ entry")
            return Decision("handbook", s.top, s.confidence, reason="FAQ shortcut off")
        if group in INTENTS:
            if templates_enabled:
                return Decision("template", s.top, s.confidence, [s.top], reason="known intent")
            return Decision("llm", s.top, s.confidence, [s.top], reason="templates off",
                            hinted_tools=hinted_tools(s))
        if group == "follow_up":
            if previous_intents:
                path: Path = "template" if templates_enabled else "llm"
                return Decision(path, "follow_up", s.confidence, list(previous_intents), reason="follow-up")
            return Decision("llm", s.top, s.confidence, reason="follow-up with nothing before it")
        return {
            "handbook": Decision("handbook", s.top, s.confidence, reason="handbook look-up"),
            "other_person": Decision("refuse", s.top, s.confidence, reason="someone else's data"),
            "free_writing": Decision("write", s.top, s.confidence, reason="writing task"),
            "other": Decision("chat", s.top, s.confidence, reason="not a help-desk matter"),
        }.get(group, Decision("llm", s.top, s.confidence, reason=f"no path for {group}"))

    async def _compound(self, clauses: list[str],
                        templates_enabled: bool) -> tuple[list[str], list[str], bool, dict[str, str]] | None:
        """(intents, segments, all sure, FAQ parts: sure or closest) of a request that asks several things, or
        None when it asks one.

        Clauses are read left to right; a clause the model is not sure of, or reads as asking nothing
        ("other": the training data labels background statements so), is joined to the next one, so that
        context ("I'm in Madrid on Thursday. What's the forecast there?") travels with its request.
        The shortcut holds when every segment is a sure template intent, FAQ entry or handbook question (searched
        and quoted on its own words beside the figures: "my leave left, and can store staff take December off?");
        otherwise the parts (free writing, someone else's data, a guess) are still reported, for the Path panel and
        the calibration, but the LLM path answers, with the FAQ parts' answers beside it: a sure one as it is, one the
        model is not sure of as the closest FAQ answer when it is as probable as a lone question's would have to be
        (`faq_candidate`). Two handbook questions in one message step aside: the part keeps one clause's words.
        """
        if len(clauses) > _MAX_CLAUSES:
            return None
        assert self.embed is not None, "Router.embed is set by Deps"
        vecs = await self.embed(clauses)
        scores = dict(zip(clauses, (self.model.score(v) for v in vecs), strict=True))
        intents: list[str] = []
        kept: list[str] = []
        all_sure = templates_enabled
        faq_parts: dict[str, str] = {}
        pending = ""
        for i, clause in enumerate(clauses):
            segment = f"{pending}. {clause}" if pending else clause
            s = scores[clause] if not pending else self.model.score((await self.embed([segment]))[0])
            sure = self.sure(s)
            ok = sure and group_of(s.top) in {*INTENTS, "faq", "handbook"}
            if (not sure or s.top == "other") and i < len(clauses) - 1:
                pending = segment  # context ("I'm in Lisbon next week."), read with the next clause
                continue
            pending = ""
            if s.top == "other" and intents:  # a closing "thanks a lot" asks nothing
                continue
            if s.top in intents or group_of(s.top) in ("compound", "follow_up"):
                all_sure = all_sure and s.top in intents and ok and s.top != "handbook"  # 2nd rule: unsearched
                continue
            all_sure = all_sure and ok
            if group_of(s.top) == "faq" and (sure or self.faq_candidate(s) == s.top[4:]):
                faq_parts[s.top] = "sure" if sure else "closest"
            intents.append(s.top)
            kept.append(segment)
        if {"weather", "weather_clothing"} <= set(intents):  # "weather in X ... what to wear": one request
            w, wc = kept[intents.index("weather")], kept[intents.index("weather_clothing")]
            if city_slot(w) in (None, city_slot(wc)) and date_slot(w, _ANY_DAY) in (None, date_slot(wc, _ANY_DAY)):
                i = intents.index("weather")
                intents, kept = intents[:i] + intents[i + 1:], kept[:i] + kept[i + 1:]
        return (intents, kept, all_sure, faq_parts) if len(intents) > 1 else None
