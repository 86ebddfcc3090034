"""compose_answer's outcomes, each a small function of what the turn fetched, tried in order: the first that has
an answer ends the turn under its name (`AnsweredBy`, a named edge in graph/graph.py); when none has, only the
LLM can answer ("llm", write_answer).

The order is the design: an error is explained first; then every part rendered from its tools' results; then
what could be fetched when some tools failed; then, where the handbook was searched (or the LLM path ran, or the
router read small talk), the FAQ entry that is likely, a quote, or "not in the handbook". The handbook is quoted,
never paraphrased by a small model.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from graph import extract, templates
from graph.context import Context
from graph.deps import Deps
from graph.paths import AnsweredBy
from graph.replies import closest_faq, not_in_handbook, out_of_scope
from graph.state import Part, State, ToolResult
from tools.i18n import say, sentences


@dataclass(frozen=True)
class Fetched:
    """What a turn has to answer from when compose_answer runs."""

    state: State
    ctx: Context
    deps: Deps
    parts: list[Part]  # a compound request's handbook parts already quoted (or "not in the handbook")
    results: list[ToolResult]
    offer: str | None  # the likely FAQ entry, offered as the closest answer (not sure enough to answer with)

    @classmethod
    async def of(cls, state: State, ctx: Context, deps: Deps) -> Fetched:
        """The turn's results and parts, a compound request's handbook parts quoted, and the FAQ entry to offer."""
        results = state.get("results") or []
        parts = state.get("parts") or []
        if templated(state, ctx) and not state.get("error"):  # an error is answered first: nothing to quote for it
            parts = await extract.quote_parts(parts, results, deps.embed_many, ctx.kb_answer_threshold)
        candidate = d.faq_candidate if (d := state.get("router")) else None
        offered = ctx.faq_fallback_enabled and candidate in deps.faq
        offer = closest_faq(deps.faq[candidate], state.get("lang", "en")) if offered and candidate else None
        return cls(state, ctx, deps, parts, results, offer)

    @property
    def lang(self) -> str:
        """The language the answer is written in."""
        return self.state.get("lang", "en")

    @property
    def small_talk(self) -> bool:
        """The router reads no matter of the company's: nothing from the handbook is quoted."""
        d = self.state.get("router")
        return d is not None and d.small_talk

    @property
    def looked_up(self) -> bool:
        """The handbook was searched, the LLM path ran, or the router read small talk: an outcome that says what
        the desk found (or did not) answers; elsewhere only the LLM can.
        """
        return templated(self.state, self.ctx) and (any(r["name"] == "kb_search" for r in self.results)
                                                    or self.state["route"] == "llm" or self.small_talk)


def templated(state: State, ctx: Context) -> bool:
    """Templates answer: on the template route, and on the LLM route unless the benchmark switched them off."""
    return state["route"] == "template" or ctx.templates_enabled


async def error(f: Fetched) -> str | None:
    """The LLM or a service was unreachable: the reason, in one sentence."""
    return f.state.get("error")


async def template(f: Fetched) -> str | None:
    """Every part rendered from its tools' results (on the LLM path: what its plan fetched, intent by intent)."""
    if not templated(f.state, f.ctx):
        return None
    answer = templates.compose(f.parts, f.results, f.state.get("streamed_parts") or [])
    if answer is None and f.state["route"] == "llm":
        answer = templates.compose_fetched(f.state["slots"], f.results, f.parts, f.offer)
    return answer


async def partial(f: Fetched) -> str | None:
    """Some tools failed (or a part's time could not be read): what could be fetched, and what could not."""
    if not templated(f.state, f.ctx):
        return None
    return templates.render_partial(f.parts, f.results, f.state.get("streamed_parts") or [])


async def closest(f: Fetched) -> str | None:
    """The likely FAQ entry, offered as the closest answer, with where to ask otherwise."""
    return f.offer if f.looked_up else None


async def handbook_quote(f: Fetched) -> str | None:
    """The handbook sentences that answer the question, quoted; introduced so in another language (the handbook is
    English). What the router reads as no company matter is not quoted (on train+dev 16 of 17 such quotes were wrong).
    """
    if not f.looked_up or f.small_talk:
        return None
    quote = await extract.quote(f.state["question"], f.results, f.deps.embed_many, f.ctx.kb_answer_threshold)
    if not quote:
        return None
    return sentences(f.lang, say("handbook_in_english", f.lang) if f.lang != "en" else "", quote)


async def nothing_sure(f: Fetched) -> str | None:
    """Nothing sure: say so and name where to ask (or, for small talk, what the desk covers)."""
    if not f.looked_up:
        return None
    return out_of_scope(f.lang) if f.small_talk else not_in_handbook(f.results, f.lang)


Outcome = Callable[[Fetched], Awaitable[str | None]]
OUTCOMES: list[tuple[AnsweredBy, Outcome]] = [
    ("error", error), ("template", template), ("partial", partial), ("closest_faq", closest),
    ("handbook_quote", handbook_quote), ("not_in_handbook", nothing_sure),
]


async def first_outcome(state: State, ctx: Context, deps: Deps) -> tuple[AnsweredBy, str | None]:
    """The first outcome with an answer, and the answer; ("llm", None) when only the LLM can answer."""
    fetched = await Fetched.of(state, ctx, deps)
    for how, outcome in OUTCOMES:
        if (answer := await outcome(fetched)) is not None:
            return how, answer
    return "llm", None
