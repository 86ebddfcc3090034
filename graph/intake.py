"""What a new turn starts from: the question read from the caller's last message and checked, and the per-turn
fields reset. Bad input (an empty or oversized message, a caller who is no employee) is named here, in one
sentence, so the graph answers it at once without routing it.
"""

from __future__ import annotations

import re
import uuid
from typing import Any

from langchain_core.messages import HumanMessage, RemoveMessage

from graph.kit import normalize
from graph.language import answer_language
from graph.replies import unknown_employee
from graph.state import State, turn_reset
from tools.i18n import say

EMPLOYEE = re.compile(r"E\d{4}")


def had_turns(state: State) -> bool:
    """Whether the conversation had a turn before this question (its last message; any other is a turn's)."""
    return len(state.get("messages") or []) > 1


def new_turn(state: State, max_chars: int, preferred: str | None = None) -> tuple[dict[str, Any], str | None]:
    """The per-turn fields a new question starts with (its language among them: the question's, else the
    conversation's so far, else the caller's `preferred` one), and what is wrong with the input (None: nothing),
    said in that language.
    """
    last = state["messages"][-1] if state.get("messages") else None
    raw = str(last.content) if isinstance(last, HumanMessage) else ""
    question = normalize(raw)
    fresh = turn_reset(uuid.uuid4().hex, question)
    lang = fresh["lang"] = answer_language(question[:max_chars], state.get("lang"), preferred)
    if not question:
        return fresh, say("empty_question", lang)
    if len(question) > max_chars:
        # Keep only a stub of it in the conversation, so later prompts stay small.
        stub = HumanMessage(f"{question[:200]}… [{len(question):,} characters, not processed]")
        fresh["messages"] = [RemoveMessage(id=last.id), stub] if last is not None and last.id else []
        return fresh, say("too_long", lang, length=f"{len(question):,}", limit=f"{max_chars:,}")
    user = (state.get("user") or "").strip().upper()
    if not EMPLOYEE.fullmatch(user):
        return fresh, unknown_employee(user, lang)
    # The caller's profile is loaded later, only on paths that need it: FAQ answers do not.
    return {**fresh, "user": user}, None
