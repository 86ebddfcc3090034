"""The ways through the graph, named once: the router's reading of a question (a `Decision` on a `Path`),
the route the turn then takes (`Route`, what `ask --json` and the metrics report), and the answer it ends
with (`AnsweredBy`, one named edge each in graph/graph.py).

A path is the router's; a route is what route_question and fill_slots make of it, decided in one place (`route_of`)
and the one label the graph's routing edges read. Most paths have one route (`ROUTE_OF`). fill_slots settles the
others: a template whose slot is missing is planned by the LLM, a writing request is drafted ("template") or written
by the LLM, and bad input or a caller the backend does not know is "invalid".

The decision is a frozen dataclass kept in the state as it is (LangGraph's checkpoint serializer stores
dataclasses, and collects this one from `State` when it is strict about types); `summary` is its plain-dict
form for rows, traces and the chat's steps panel.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

# The router's reading: an FAQ entry, template intents, a handbook look-up, someone else's data, a writing
# request, small talk ("chat": no matter of the company's), not sure ("llm"), or a language the desk does not speak.
Path = Literal["faq", "template", "handbook", "refuse", "write", "chat", "llm", "foreign"]
# The route a turn takes ("" until decided); a row adds "denied" (someone else's conversation) and "error".
Route = Literal["", "faq", "template", "llm", "refused", "invalid"]
# How the answer was written: compose_answer's outcomes ("llm" hands over to write_answer), and write_answer's
# "draft" (a writing request's own words) and "llm".
AnsweredBy = Literal["error", "template", "partial", "closest_faq", "handbook_quote", "not_in_handbook", "draft",
                     "llm"]

ROUTE_OF: dict[Path, Route] = {
    "faq": "faq",  # the entry's answer, no LLM
    "template": "template",  # the intents' templates (the LLM plans when a slot is missing)
    "handbook": "template",  # searched and quoted from the handbook
    "chat": "template",  # no matter of the company's: what the desk covers, nothing searched
    "refuse": "refused",  # someone else's data
    "foreign": "refused",  # a language the desk does not speak
    "llm": "llm",  # not sure: the LLM plans
}  # "write" has none: drafted ("template") or written by the LLM, as Context says


def route_of(path: Path | None, *, valid: bool = True, settled: bool = True) -> Route:
    """The route a turn takes: "invalid" when its input or caller is not `valid`; "" while the router has not read
    it (`path` None); a template or writing request the desk can answer itself (`settled`: every slot filled, the
    draft made from the request's words) on "template", else on the LLM; every other path on its `ROUTE_OF`.
    """
    if not valid:
        return "invalid"
    if path is None:
        return ""
    if path in ("template", "write"):
        return "template" if settled else "llm"
    return ROUTE_OF[path]


@dataclass(frozen=True)
class Decision:
    """The router's choice, with what the trace and the Path panel show."""

    path: Path
    label: str  # the model's top label (salary, faq:payday, handbook, ...), or "foreign" / "compound"
    confidence: float  # its probability (1.0 for the language check)
    intents: list[str] = field(default_factory=list)  # template intents, one per part
    clauses: list[str] = field(default_factory=list)  # the text of each part, for per-part slots
    faq_id: str | None = None
    reason: str = ""
    hinted_tools: list[str] = field(default_factory=list)  # tools of intents the model gave some weight
    faq_candidate: str | None = None  # on the full path: the FAQ entry probable enough to offer as the closest
    # Compound parts on the full path: their FAQ entries, "sure" (answered) or "closest" (not sure, offered as such).
    faq_parts: dict[str, str] = field(default_factory=dict)
    # On a leave-policy part or the LLM path: the leave type (or "none") the router's leave-type classifier is sure
    # the question is about, read from the same vector (graph/leave_model.py); None: not sure, or not asked.
    leave_type: str | None = None
    lang: str = "en"  # the language the question was routed in (the multilingual router reads the other ones)

    @property
    def leave_question(self) -> bool:
        """Whether the leave-type classifiers read the question (graph/leave_model.py): a leave-policy request, or the
        LLM path where the router gave that intent some weight. Not a compound request: they learned questions,
        not messages that ask several things. Elsewhere a leave type is settled by the description match, as before.
        """
        if self.label == "compound":
            return False
        return "leave_policy" in self.intents or (self.path == "llm" and "leave_policy" in self.hinted_tools)

    @property
    def small_talk(self) -> bool:
        """The model reads no matter of the company's, sure ("chat") or not: nothing from the handbook is quoted."""
        return self.label == "other"

    @property
    def summary(self) -> dict[str, object]:
        """For rows (`ask --json`), traces and the UI."""
        return {"path": self.path, "label": self.label, "confidence": round(self.confidence, 3),
                "intents": self.intents, "faq_id": self.faq_id, "reason": self.reason,
                "hinted_tools": self.hinted_tools, "faq_candidate": self.faq_candidate, "faq_parts": self.faq_parts,
                "leave_type": self.leave_type, "lang": self.lang}


# The types of the state a checkpoint holds besides LangGraph's own: named to its serializer when the app opens the
# conversation store (app/resources.py), and when the owner check reads a checkpoint (app/turn.py).
STATE_TYPES = [(Decision.__module__, Decision.__name__)]
