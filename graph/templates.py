"""Templated reasoning: for each known intent, which tools to call with which slots, and how to
write the answer from their results. No chain of thought, no LLM: the figures come straight from
the tool results, so they are exactly the backend's.
"""

from __future__ import annotations

from datetime import date
from typing import Any

from graph.kit import emit
from graph.state import Part, ToolCall, ToolResult
from tools.domain import latest_payslip_month
from tools.i18n import say, sentences
from tools.intents.handbook import POLICY_LOOKUP
from tools.registry import INTENTS, TOOLS, IntentSpec

# How tools/client.py words what the backend answered with a refusal ("no payslip for ... yet"): trying again
# shortly would not change it.
_ANSWERED = " service said: "


def spec_of(intent: str | None) -> IntentSpec | None:
    """The calls of a known intent or of the handbook look-up (whose passages graph/extract.py quotes)."""
    return POLICY_LOOKUP if intent == POLICY_LOOKUP.name else INTENTS.get(intent or "")


def period_months(intent: str | None, slots: dict[str, Any]) -> list[str] | None:
    """The months a monthly intent asked about a period ("Q1 2026") is fetched for, all answered together."""
    tpl = spec_of(intent)
    return slots.get("months") if tpl and "month" in tpl.required and slots.get("period") else None


def instantiate(intent: str, slots: dict[str, Any], user: str, prefix: str = "") -> list[ToolCall] | None:
    """The template's calls with slots filled, or None when a required slot is missing (step aside), or when the
    question names a time nobody could read and the template needs a month or a day.

    `prefix` keeps call ids apart when several parts of a compound request use the same tool; over a period, each
    month's call is `<id>@<YYYY-MM>`.
    """
    tpl = spec_of(intent)
    if tpl is None or slots.get("unread_time") and {"month", "date"} & set(tpl.required):
        return None
    if months := period_months(intent, slots):
        calls: list[ToolCall] = []
        for m in months:
            for c in instantiate(intent, {**slots, "month": m, "period": None}, user, prefix) or []:
                calls.append(ToolCall(id=f"{c['id']}@{m}", name=c["name"], args=c["args"],
                                      depends_on=[f"{d}@{m}" for d in c["depends_on"]]))
        return calls
    if any(not slots.get(s) for s in tpl.required):
        return None
    calls = []
    for call_id, tool, args in tpl.calls:
        filled: dict[str, Any] = {}
        deps: list[str] = []
        for k, v in args.items():
            if v == "$user":
                filled[k] = user
            elif v.startswith("$"):
                filled[k] = slots[v[1:]]
            else:  # "@call.field": filled from another call's result when it arrives
                filled[k] = "@" + prefix + v[1:]
                deps.append(prefix + v[1:].split(".")[0])
        calls.append(ToolCall(id=prefix + call_id, name=tool, args=filled, depends_on=sorted(set(deps))))
    return calls


def render(intent: str | None, slots: dict[str, Any], results: list[ToolResult], prefix: str = "") -> str | None:
    """The templated answer, or None when the intent has no renderer or a needed result is missing."""
    tpl = INTENTS.get(intent or "")
    if tpl is None or tpl.renderer is None:
        return None
    mine = [r for r in results if r["ok"] and r["data"] is not None and r["id"].startswith(prefix)]
    by_id = {r["id"][len(prefix):]: r["data"] or {} for r in mine}
    months = period_months(intent, slots)
    if months and any("@" in i for i in by_id):  # a period: every month's results, or none rendered
        if tpl.summary is None or any(f"{call_id}@{m}" not in by_id for m in months for call_id, _, _ in tpl.calls):
            return None
        return tpl.summary(slots, {m: {c: by_id[f"{c}@{m}"] for c, _, _ in tpl.calls} for m in months})
    if any(call_id not in by_id for call_id, _, _ in tpl.calls):
        return None
    ids = {call_id for call_id, _, _ in tpl.calls}
    asked = next((m for r in mine if r["id"][len(prefix):] in ids and isinstance(m := r["args"].get("month"), str)),
                 None)
    return tpl.renderer({**slots, "month": asked} if asked else slots, by_id)  # named for the month fetched


def settle_months(part: Part, today: date) -> Part:
    """The months a salary question is answered for. A month it left unsaid is its intent's default
    (`IntentSpec.unsaid_month`): the newest payslip for a salary question, this month for the rest. A period's
    months whose payslip is not out yet are left out and named (`not_out`), unless that leaves none (then the
    backend says there is no payslip).
    """
    spec, slots = INTENTS.get(part["intent"]), part["slots"]
    if spec is None or spec.unsaid_month != "latest_payslip":
        return part
    latest = latest_payslip_month(today)
    if months := period_months(part["intent"], slots):
        paid, late = [m for m in months if m <= latest], [m for m in months if m > latest]
        if not paid or not late:
            return part
        settled = {**slots, "months": paid, "not_out": late}
        if len(paid) == 1:  # one month left: its payslip, with the note
            settled = {**{k: v for k, v in settled.items() if k not in ("months", "period")}, "month": paid[0]}
        return Part(intent=part["intent"], slots=settled)
    if (slots.get("sources") or {}).get("month") != "default":
        return part
    return Part(intent=part["intent"], slots={**slots, "month": latest})


def per_month(part: Part) -> list[Part]:
    """A monthly intent asked about several months ("did my pay go up in April compared to March?"): one
    part per month, so each is fetched (at once) and answered; any other part as it is.
    """
    months = part["slots"].get("months") or []
    spec = INTENTS.get(part["intent"])
    if part.get("answer") or spec is None or "month" not in spec.required or len(months) < 2 or \
            part["slots"].get("period"):  # a period is answered together (its intent's summary)
        return [part]
    return [Part(intent=part["intent"], slots={**part["slots"], "month": m}) for m in months]


def part_prefix(parts: list[Part], i: int) -> str:
    """Call-id prefix of part i: none for a single part, `p0.`, `p1.` ... for compound requests."""
    return f"p{i}." if len(parts) > 1 else ""


def plan_parts(parts: list[Part], user: str) -> list[ToolCall] | None:
    """Every part's calls (FAQ parts need none); None when any template part lacks a slot."""
    plan: list[ToolCall] = []
    for i, part in enumerate(parts):
        if part.get("answer"):
            continue
        calls = instantiate(part["intent"], part["slots"], user, part_prefix(parts, i))
        if calls is None:
            return None
        plan += calls
    return plan


def expected_calls(parts: list[Part] | None, slots: dict[str, Any], user: str) -> list[ToolCall]:
    """The calls the router's intents imply: the handbook for a question it could not place, or for a part whose
    slot no one could fill ("how much leave do I get for it?": which leave is unsaid).
    """
    calls: list[ToolCall] = []
    for part in parts or [Part(intent="policy_lookup", slots=slots)]:
        found = instantiate(part["intent"], part["slots"], user)
        if found is None and not part.get("answer") and not _unread(part):  # which leave? the handbook may say
            found = [c for c in instantiate(POLICY_LOOKUP.name, slots, user) or [] if c not in calls]
        calls += found or []
    return calls


def render_part(parts: list[Part], i: int, results: list[ToolResult]) -> str | None:
    """One part's answer: its FAQ answer, or its template rendered from its own results."""
    part = parts[i]
    return part.get("answer") or render(part["intent"], part["slots"], results, part_prefix(parts, i))


def compose(parts: list[Part], results: list[ToolResult], streamed: list[int] | None = None) -> str | None:
    """One answer from every part: those already streamed in the order they were, then the rest in the
    order asked; None when a part cannot be rendered.
    """
    if not parts:
        return None
    order = [*(streamed or []), *(i for i in range(len(parts)) if i not in (streamed or []))]
    said = [render_part(parts, i, results) for i in order]
    return " ".join(p for p in said if p) if all(said) else None


def _unread(part: Part) -> str | None:
    """The time phrase nobody could read in a part whose template needs a month or a day."""
    tpl, unread = spec_of(part.get("intent")), (part.get("slots") or {}).get("unread_time")
    return unread if unread and tpl is not None and {"month", "date"} & set(tpl.required) else None


def render_partial(parts: list[Part], results: list[ToolResult], streamed: list[int] | None = None) -> str | None:
    """When some tools failed, or a part's time could not be read and nothing answered it: the parts that could
    be answered (streamed ones first), then what could not be fetched, or which time to name.
    """
    failed = [r for r in results if not r["ok"]]
    unread = next((u for i, p in enumerate(parts) if (u := _unread(p)) and render_part(parts, i, results) is None),
                  None)
    if not failed and not unread or not parts:
        return None
    order = [*(streamed or []), *(i for i in range(len(parts)) if i not in (streamed or []))]
    pieces = []
    for i in order:
        part = parts[i]
        text = render_part(parts, i, results)
        if text is None:  # what this part's tools did return, each in its own template ("the forecast")
            prefix, slots = part_prefix(parts, i), part.get("slots") or {}
            mine = [r for r in results if r["ok"] and r["id"].startswith(prefix)]
            if months := period_months(part["intent"], slots):  # a period: the months that came, named as such
                came = [m for m in months if any(r["id"].endswith(f"@{m}") for r in mine)]
                text = render(part["intent"], {**slots, "months": came}, mine, prefix) if came else None
            else:
                text = " ".join(t for r in mine if (t := render(r["name"], slots, [r], prefix)))
        pieces.append(text)
    said = " ".join(p for p in pieces if p)
    undated = [r for r in failed if unread and r["name"] in TOOLS and not {"month", "date"} & r["args"].keys()
               and {"month", "date"} & TOOLS[r["name"]].args.model_fields.keys()]  # called without the time
    failed = [r for r in failed if r not in undated]
    lang: str = next((str(p["slots"]["lang"]) for p in parts if (p.get("slots") or {}).get("lang")), "en")
    tail = [say("unread_time", lang, phrase=unread)] if unread else []
    if failed:
        missing = "; ".join(f"{r['name'].replace('_', ' ')}: {r['error']}" for r in failed)
        again = any(_ANSWERED not in (r["error"] or "") for r in failed)  # a backend's "no payslip yet" stays so
        tail.append(sentences(lang, say("could_not_fetch", lang, missing=missing),
                              say("try_again_shortly", lang) if again else ""))
    return sentences(lang, said, *tail)


def parts_from_results(slots: dict[str, Any], results: list[ToolResult]) -> list[Part]:
    """Parts for an LLM plan: one per intent whose tools all returned (clothing rides with the weather)."""
    names = {r["name"] for r in results if r["ok"]}
    parts: list[Part] = []
    for intent, tpl in INTENTS.items():
        tools = set(tpl.tools)
        if tpl.renderer and tools <= names and not any(tools < set(o.tools) <= names
                                                           for o in INTENTS.values() if o is not tpl):
            parts.append(Part(intent=intent, slots=slots))
    return parts


def compose_fetched(slots: dict[str, Any], results: list[ToolResult], parts: list[Part],
                    offer: str | None = None) -> str | None:
    """The LLM path's answer without the LLM: what its plan fetched, intent by intent, then the FAQ parts of a
    compound request ("my pay in October, and when's the next payday?"), or else the FAQ entry the router found
    likely (`offer`: "my leave balance, and how far ahead do I book?" read as booking leave, not sure).
    None when the plan fetched nothing a template renders.
    """
    fetched = compose(parts_from_results(slots, results), results)
    if not fetched:
        return None
    faq = [a for p in parts if (a := p.get("answer"))] or ([offer] if offer else [])
    return " ".join([fetched, *faq])


def stream_parts(parts: list[Part], results: list[ToolResult], streamed: list[int]) -> str:
    """Stream each part that its results can now answer and was not streamed yet (progressive answers: a
    compound request's parts one by one, as their tools return), adding it to `streamed`; returns the text sent.
    """
    sent = []
    for i in range(len(parts)):
        if i not in streamed and (text := render_part(parts, i, results)):
            sent.append(("" if not streamed else " ") + text)
            emit(sent[-1])
            streamed.append(i)
    return "".join(sent)
