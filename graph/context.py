"""Per-run knobs: which techniques are on, thresholds, limits. Every shortcut can be switched off."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any


@dataclass
class Context:
    """Read by nodes through `runtime.context`; the benchmark flips these one at a time."""

    faq_enabled: bool = True  # FAQ early exit
    early_embedding: bool = True  # embed the question before the graph starts (the router needs it first), and a
    # handbook question with the shared encoder as soon as the router says a later step searches by meaning
    faq_fallback_enabled: bool = True  # full path: offer the likely FAQ entry as the closest answer
    templates_enabled: bool = True  # templated plans and answers for known intents
    llm_drafts: bool = False  # writing requests: the LLM writes the draft (off: from the request's words, no LLM)
    parallel_enabled: bool = True  # independent tool calls run at once
    progressive_enabled: bool = True  # each part of a template answer streams as soon as its own tools return
    cache_enabled: bool = True  # tool results through the Redis cache
    prefetch_enabled: bool = True  # start predicted tools before planning finishes
    pruning_enabled: bool = True  # prune long histories by relevance
    next_turn_enabled: bool = True  # after an answer, prefetch the caller's likely next request
    next_turn_min_share: float = 0.3  # of the requests seen after this one, the share the next one must have
    next_turn_min_seen: int = 2  # and how many times at least
    next_turn_budget: int = 4  # backend calls a conversation may spend on next-turn prefetch
    kb_cache_threshold: float = 0.95  # cosine similarity for kb_search cache hits
    kb_answer_threshold: float = 0.55  # top passage similarity needed to quote it without the LLM
    max_tool_concurrency: int = 4
    tool_timeout_s: float = 8.0
    tool_retries: int = 1  # extra tries for idempotent calls that failed transiently
    max_tool_rounds: int = 2  # planning rounds on the LLM path: a failed call may be re-planned once
    plan_arguments: bool = False  # the LLM plan also writes arguments (slower; slot filling still overrides)
    plan_evidence: bool = True  # drop planned tools the router gave no weight (small models plan at random)
    max_question_chars: int = 4000
    history_keep_turns: int = 2  # always kept when pruning
    history_relevant_turns: int = 2  # older turns kept by relevance
    answer_max_tokens: int = 120
    plan_max_tokens: int = 120
    today: str | None = None  # ISO date override, for reproducible runs
    language: str | None = None  # the caller's preferred language (the browser's, an API's Accept-Language): the
    # answer's language when a question is too short to tell and the conversation has none yet

    @classmethod
    def from_options(cls, options: dict[str, Any] | list[str] | None) -> Context:
        """Build from `key=value` strings or a dict, converting to each field's type."""
        if isinstance(options, list):
            options = dict(o.split("=", 1) for o in options)
        types = {f.name: f.type for f in fields(cls)}
        kwargs: dict[str, Any] = {}
        for key, value in (options or {}).items():
            if key not in types:
                raise ValueError(f"unknown option {key!r}; known: {', '.join(types)}")
            kind = str(types[key])
            if isinstance(value, str):
                if "bool" in kind:
                    value = value.lower() in ("1", "true", "yes", "on")
                elif "float" in kind:
                    value = float(value)
                elif "int" in kind:
                    value = int(value)
            kwargs[key] = value
        return cls(**kwargs)
