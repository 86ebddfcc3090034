"""Drafts for writing requests ("write a note to my team about ..."), built from the request's own words.

The 135M model invented a fact in every draft it wrote when this was measured (a COVID-19 closure of a
store called "EcoCure" for "the store closing early on 24 December", a promotion for "asking for Friday
off"), with or without worked examples in the prompt. A draft the desk can vouch for keeps to what the
caller said: a greeting for whom it is for, one sentence made of the request's subject, a placeholder for
everything the desk does not know, and the caller's name. `Context.llm_drafts` lets the LLM write instead.

The router decides that a request is a writing task; the patterns here only pull its parts out (the kind
of text, the recipient, the subject), as the slot parsers pull out months and cities.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_POLITE = re.compile(r"^(?:(?:hi|hello|hey)\b[,!]?\s*|(?:please|pls|kindly)\s+"
                     r"|(?:can|could|would|will) (?:you|u)(?: please| pls)?\s+"
                     r"|(?:help me|i need (?:you )?to|i want to|i'd like to|i would like to|i need|i want|need|want)\s+"
                     r"|(?:quickly|just)\s+)", re.I)
_VERB = re.compile(r"^(?:write|draft|compose|prepare|create|put together|type up|type|do|give me|get me)"
                   r"(?:\s+(?:me|up|out))?\s+", re.I)
_ARTICLE = re.compile(r"^(?:an?|the|some|one)\s+", re.I)
_ADJECTIVES = re.compile(r"^(?:(?:short|quick|brief|friendly|cheerful|polite|formal|informal|nice|warm|small|simple|"
                         r"professional|little|kind|positive|fun|happy|upbeat|clear|official|casual)[,]?\s+)+", re.I)
_KIND = re.compile(r"^(?:(thank[- ]you|thanks|welcome|apology|reminder|farewell|goodbye|birthday|invitation|"
                   r"congratulations|out[- ]of[- ]office|ooo)\s+)?(note|e-?mail|message|msg|reminder|announcement|memo|"
                   r"letter|text|post|card|invitation|invite|update|notice|request|apology|shout-?out|heads-?up|"
                   r"reply|response|auto-?reply|something|anything)\b\s*"
                   r"|^(thank[- ]you|welcome)\b\s*", re.I)
_RECIPIENT = re.compile(r"^(?:to|for)\s+(?:(?:my|our|the|a|an|all|all of)\s+)*((?:new\s+)?(?:[\w-]+\s+){0,2}"
                        r"(?:team|manager|boss|staff|colleagues?|co-?workers?|employees|crew|hr|customers?|supervisor|"
                        r"department|everyone|everybody|people|store|shift|workers|starter|starters|hire|hires|"
                        r"lead|director|payroll|it desk|it|admin))\b\s*", re.I)
_DIRECT = re.compile(r"^(e-?mail|message|text|tell|remind|ask|invite|thank|let)\s+(?=(?:my|our|the|a|an|all|everyone|"
                     r"everybody|hr|payroll)\b)", re.I)
_DIRECT_LEAD = {"tell": "telling", "let": "telling", "remind": "to remind", "ask": "asking", "invite": "inviting",
                "thank": "thanking"}
_LEAD = re.compile(r"^(about|regarding|re|on|asking|requesting|to remind|reminding|thanking|welcoming|inviting|"
                   r"to invite|announcing|to announce|telling|letting|saying|explaining|apologi[sz]ing|that|to|for|"
                   r"joining|who is joining|who joins|starting)\b\s*", re.I)
_THEY = {"their": "your", "them": "you", "they": "you", "theirs": "yours", "themselves": "yourselves",
         "they're": "you're", "they've": "you've", "they'll": "you'll"}
_TEAM = ("team", "staff", "colleagues", "coworkers", "co-workers", "employees", "crew", "everyone", "everybody",
         "people", "store", "shift", "workers", "department", "starters", "hires")
_NOT_A_REQUEST = ("I can set out a draft from a request that says whom it is for and what it is about, for "
                  "example \"Write a note to my team about the stock count on Friday\". I fill in only what you "
                  "tell me and leave [placeholders] for the rest, so nothing in it is made up.")


_KIND_NAMES = {"email": "e-mail", "thanks": "thank-you", "msg": "message", "ooo": "out-of-office"}  # hyphenated


@dataclass
class Request:
    """What a writing request asks for, in its own words."""

    kind: str  # note, e-mail, reminder, thank-you, welcome, ... ("note" when unsaid)
    recipient: str  # "team", "manager", "new colleague", ... ("" when unsaid)
    lead: str  # how the subject is introduced: about, asking, to, thanking, ... ("" when unsaid)
    subject: str  # the rest, as written
    understood: bool  # it read as "write <a kind of text> ..." at all


def parse(request: str) -> Request:
    """Split a writing request into its kind of text, recipient, lead word and subject."""
    text = re.sub(r"\s+", " ", request).strip().rstrip("?.! ")
    while (m := _POLITE.match(text)) and m.end():
        text = text[m.end():]
    if direct := _DIRECT.match(text):  # "email my manager that ...", "remind the team to ..."
        word = direct.group(1).lower()
        m = _RECIPIENT.match("to " + text[direct.end():])
        if m:
            rest = re.sub(r"^(?:know\s+)?(?:that\s+)?", "", ("to " + text[direct.end():])[m.end():])
            rest = re.sub(r"^to\s+", "", rest) if word in ("remind", "invite") else rest
            kind = "e-mail" if word in ("email", "e-mail") else "message" if word in ("message", "text") else "note"
            lead = _DIRECT_LEAD.get(word, "")
            if not lead and (lm := _LEAD.match(rest)):
                lead, rest = lm.group(1).lower(), rest[lm.end():]
            return Request(kind, m.group(1).lower(), lead or "that", rest.strip(" ,:"), understood=True)
    verb = _VERB.match(text)
    text = text[verb.end():] if verb else text
    text = _ADJECTIVES.sub("", _ARTICLE.sub("", text, count=1), count=1)
    kind_m = _KIND.match(text)
    kind = "note"
    if kind_m:
        word = (kind_m.group(1) or kind_m.group(2) or kind_m.group(3)).lower()
        word = re.sub(r"[ -]+", "-", word)  # "out of office", "thank you": one spelling
        kind = "note" if word in ("something", "anything") else _KIND_NAMES.get(word, word)
    text = text[kind_m.end():] if kind_m else text
    recipient = ""
    if m := _RECIPIENT.match(text):
        recipient, text = m.group(1).lower(), text[m.end():]
    lead = ""
    if m := _LEAD.match(text):
        lead, text = m.group(1).lower(), text[m.end():]
    # "Write a long story about ..." or "make it shorter" are not a text the desk can set out.
    return Request(kind, recipient, lead, text.strip(" ,:"), understood=bool(kind_m) or bool(verb and recipient))


def _to_them(text: str) -> str:
    """Words about the recipients, turned to address them ("submit their expenses" -> "submit your ...")."""
    return re.sub(r"\b(" + "|".join(map(re.escape, _THEY)) + r")\b", lambda m: _THEY[m.group(1).lower()], text,
                  flags=re.I)


def _greeting(recipient: str, kind: str = "") -> str:
    last = recipient.split()[-1] if recipient else ""
    if kind == "out-of-office" and not last:  # an automatic reply: whoever wrote
        return "Hello,"
    if last in _TEAM:
        return "Hi team,"
    if last in ("manager", "boss", "supervisor", "lead", "director"):
        return "Hi [manager's name],"
    if last in ("hr", "payroll", "it", "admin") or recipient == "it desk":
        return f"Hello {recipient.upper() if last in ('hr', 'it') else recipient.capitalize()} team,"
    if last == "customers":
        return "Dear customers,"
    if last == "customer":
        return "Dear [customer's name],"
    return "Hi [name],"


DETAILS = "[Add the details: dates, times, what you need from them.]"


def _body(r: Request) -> tuple[str, str]:
    """One sentence made of the request's own subject (a placeholder when it gave none), and what to add."""
    s, lead = r.subject, r.lead
    if lead in ("saying", "telling") and (m := re.match(r"^(?:them\s+)?(?:thanks|thank you)\s+(?:for\s+)?", s, re.I)):
        s, lead = s[m.end():], "thanking"
    if lead == "thanking" or ("thank" in r.kind and lead in ("for", "")):
        s = re.sub(r"^(?:them|everyone|everybody|you|him|her)\s+(?:for\s+)?", "", s)
        s = re.sub(r"^for\s+", "", s)
        thanked = _to_them(s) if s else "[what you are thanking them for]"
        return f"Thank you for {thanked}.", "[Add what it made possible.]"
    if r.kind == "out-of-office":  # "an out-of-office reply for my holiday 12-23 August"
        away = re.sub(r"^(?:while\s+|when\s+)?(?:(?:i'?m|i am|i'll be|i will be)\s+)?(?:away|off|out)\b\s*", "", s,
                      flags=re.I)
        when = f"for {away}" if re.match(r"^(?:my|a|the|annual|holiday|vacation|leave)\b", away, re.I) else away
        return f"I am out of the office {when or '[dates]'}.", "[Add when you are back and whom to contact meanwhile.]"
    if not s:
        if "welcome" in r.kind:
            return "Welcome to the team!", "[Add where to go and whom to ask on the first day.]"
        return "[Your message.]", DETAILS
    if lead in ("asking", "requesting"):
        ask = re.sub(r"^(?:you\s+|them\s+|him\s+|her\s+)", "", s)
        if not re.match(r"^(?:for|to|if|whether|about)\b", ask, re.I):
            ask = f"for {ask}"
        return f"I would like to ask {ask}.", "[Add the reason, and any cover or handover you have arranged.]"
    if lead in ("to remind", "reminding") or (r.kind == "reminder" and lead in ("to", "that", "about", "")):
        s = re.sub(r"^(?:them|everyone|everybody|you|people)\s+(?:to\s+)?", "", s)
        joined = s
        if not re.match(r"^(?:to|that|about|of)\b", s, re.I):
            joined = f"about {s}" if lead == "about" else f"to {s}"
        return f"A friendly reminder {_to_them(joined)}.", DETAILS
    if "welcome" in r.kind or lead in ("welcoming", "joining", "who is joining", "who joins", "starting"):
        s = re.sub(r"^(?:them|him|her|you)\s+", "", s)
        first_day = "[Add where to go and whom to ask on the first day.]"
        if lead in ("joining", "who is joining", "who joins", "starting"):
            return f"Welcome to the team! We look forward to having you with us, starting {s}.", first_day
        return f"Welcome to the team! A quick note about {s}.", first_day
    if lead in ("inviting", "to invite") or r.kind in ("invitation", "invite"):
        s = re.sub(r"^(?:them|everyone|everybody|you)\s+(?:to\s+)?", "", s)
        s = re.sub(r"^to\s+", "", s)
        return f"You are invited to {_to_them(s)}.", "[Add the time and the place, and whom to tell if you come.]"
    if r.kind == "apology" or lead.startswith("apologi"):
        s = re.sub(r"^for\s+", "", s)
        return f"I am sorry for {s}.", "[Add what happened and what you are doing about it.]"
    if lead in ("telling", "letting", "saying", "announcing", "to announce", "explaining", "that"):
        s = re.sub(r"^(?:them|everyone|everybody|you)\s+(?:know\s+)?", "", s)
        s = re.sub(r"^that\s+", "", s)
        return f"I would like to let you know that {s}.", DETAILS
    if lead == "to":
        return (f"I would like to ask to {s}." if r.kind == "request" else f"A quick note to {_to_them(s)}."), DETAILS
    return f"A quick note about {s}.", DETAILS


def _subject_line(r: Request) -> str:
    """An e-mail's subject: the request's own noun phrase where it gave one, else a placeholder."""
    s = r.subject
    if r.lead in ("about", "regarding", "re", "on", "requesting") or (r.lead == "asking" and s.startswith("for ")):
        s = re.sub(r"^for\s+", "", s)
        return f"Subject: {s[:1].upper()}{s[1:]}" if s else "Subject: [subject]"
    return "Subject: [subject]"


def drafts_it(path: str, label: str, request: str, drafted: bool) -> bool | None:
    """Whether a writing request is drafted here from its words (True) or written by the LLM (False); None when the
    request is not one.

    A request the router is not sure of but whose top label is free writing and that reads as "write <a kind
    of text> ..." ("email my manager that ...") is drafted too: a draft only repeats what the request says.
    """
    if path == "write":
        return drafted
    return True if drafted and label == "free_writing" and parse(request).understood else None


def draft(request: str, name: str | None) -> str:
    """The draft, framed as one: what the caller said, with [placeholders] for the rest."""
    r = parse(request)
    if not r.understood:
        return _NOT_A_REQUEST
    body, add = _body(r)
    lines = ["Here is a draft to adapt; the parts in [brackets] are for you to fill in.", ""]
    if r.kind == "e-mail":
        lines += [_subject_line(r), ""]
    lines += [_greeting(r.recipient, r.kind), "", f"{body[:1].upper()}{body[1:]} {add}", "",
              "Best wishes," if "thank" in r.kind or r.lead == "thanking" else "Thanks,", name or "[Your name]"]
    return "\n".join(lines)
