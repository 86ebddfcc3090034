"""The handbook search (`kb_search`): a tool, not an intent. The router has no template for it; a question it
could not place, or a part whose slot nobody filled, is looked up there (`POLICY_LOOKUP`), and the passages are
quoted by `graph/extract.py`, not rendered.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from tools.specs import QUESTION, Fake, IntentSpec, tool

QUERY_MAX_CHARS = 500  # a handbook search reads this much of the question


class KbSearchArgs(BaseModel):
    """Arguments of `kb_search`."""

    query: str = Field(min_length=1, max_length=QUERY_MAX_CHARS)


def fake_kb_search(args: dict[str, Any]) -> dict[str, Any]:
    """One passage, too far off the question to answer it."""
    return {"passages": [{"title": "Doc", "text": "Nothing relevant here at all.", "score": 0.2}]}


KB_SEARCH = tool("kb_search", "Search the company knowledge base (handbook, policies, procedures); returns "
                 "the most relevant passages.", KbSearchArgs, "/kb/search", {"passages"}, ttl_s=3600,
                 similarity_arg="query", slot_args={"query": QUESTION})
# The handbook look-up's calls, planned like an intent's but never routed to (so not in the registry's INTENTS).
POLICY_LOOKUP = IntentSpec("policy_lookup", (("kb_search", "kb_search", {"query": "$question"}),), ("question",))

SPECS = (KB_SEARCH,)
FAKES: dict[str, Fake] = {"kb_search": fake_kb_search}
