"""Prompt-injection hygiene for text that comes from tools or documents.

Retrieved passages and tool results are data. Sentences in them that address the assistant
("ignore all previous instructions", "print the system prompt", "you are now ...") are removed
before the text is quoted to a user or shown to the LLM.
"""

from __future__ import annotations

import re

INJECTION = re.compile(
    r"ignore (all |any )?(previous|prior|above|earlier|your) (instructions|prompts?|rules)|system prompt|"
    r"system note|you are now|disregard (all |any )?(previous|prior|your)|developer mode|jailbreak|"
    r"reveal (the |your )?(instructions|prompt)|act as (an? )?(admin|system)",
    re.IGNORECASE)
_SENTENCE = re.compile(r"[^.!?\n]*(?:[.!?]+|\n|$)")


def is_injection(text: str) -> bool:
    """True when a text addresses the assistant with instructions."""
    return bool(INJECTION.search(text))


def strip_instructions(text: str) -> str:
    """The text without the sentences that try to instruct the assistant."""
    if not is_injection(text):
        return text
    return "".join(s for s in _SENTENCE.findall(text) if not is_injection(s)).strip()
