"""Process-wide resources the nodes use: clients for vLLM, Redis, the tool backend, the embedder.

Built once by the entry point (app/) from its settings and handed to `build_graph`; nothing here
holds per-request or per-user state, so replicas can run side by side. The tasks a turn leaves running
for a later node or turn (prefetches) belong to the graph's nodes (graph/nodes.py), not to these clients.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from langchain_core.language_models import BaseChatModel
from redis.asyncio import Redis
from redis.exceptions import RedisError

from graph.llm_gate import LLMGate
from graph.router import Router
from tools.cache import ToolCache
from tools.client import ToolClient
from tools.embedding_memo import EmbeddingMemo
from tools.embeddings import Embedder
from tools.faq import FaqEntry

log = logging.getLogger(__name__)


@dataclass
class Deps:
    """Everything a node may call out to."""

    embedder: Embedder
    redis: Redis
    faq: dict[str, FaqEntry]  # the FAQ entries the router may answer with
    router: Router
    cache: ToolCache
    tools: ToolClient
    llm: BaseChatModel
    llm_gate: LLMGate = field(default_factory=LLMGate)  # backpressure on the LLM
    llm_languages: tuple[str, ...] = ("en",)  # the languages the chat model writes well (Settings.llm_languages)

    def __post_init__(self) -> None:
        # One bounded memo of embeddings by text: the router (when it shares the model), the kb cache and
        # answer extraction reuse each other's work.
        self._memo = EmbeddingMemo(self.embedder)
        if self.router.embed is None:
            self.router.embed = self.embed_many

    def prefetch_embedding(self, text: str, lang: str = "en") -> None:
        """Start the router's embedding of a question now, before the graph runs: it is computed on the encoder's
        thread while LangGraph loads the conversation, and route_question awaits it. A question written in another
        of the desk's languages is embedded by the encoder of the router that reads it first.
        """
        router = self.router.first_reader(lang)
        memo = router.embed if isinstance(router.embed, EmbeddingMemo) else self._memo
        memo.prefetch(text)

    def prefetch_search_embedding(self, text: str) -> None:
        """Start the shared encoder's embedding of a question a later step will need (the handbook search's
        semantic cache and its quotes, the leave type settled by meaning), so it is computed while the routing
        step reads the profile and fills the slots instead of after them. Nothing to do when the router shares
        the encoder: its embedding is memoized already.
        """
        self._memo.prefetch(text)

    def forget_embedding(self, text: str) -> None:
        """Drop a text's memoized embeddings (the router's and the shared one): its next turn embeds it again."""
        for memo in (self._memo, *(r.embed for r in self.router.readers())):  # the same memo twice is harmless
            if isinstance(memo, EmbeddingMemo):
                memo.forget(text)

    async def embed(self, text: str) -> np.ndarray:
        """Embedding of a text, computed once per process for repeated texts."""
        return (await self.embed_many([text]))[0]

    async def embed_many(self, texts: list[str]) -> np.ndarray:
        """Embeddings of many texts: memoized ones reused, the rest computed in one batch."""
        return await self._memo(texts)

    async def aclose(self) -> None:
        """Close the clients, and the router's own encoder's thread when it has one."""
        await self.tools.aclose()
        await self.redis.aclose()
        for router in self.router.readers():
            if isinstance(router.embed, EmbeddingMemo):
                router.embed.embedder.close()

    async def profile(self, user: str) -> dict[str, Any] | None:
        """The caller's profile (pinned facts), cached in Redis for a day."""
        key = f"hd:profile:{user}"
        try:
            raw = await self.redis.get(key)
            if raw:
                return json.loads(raw)
        except RedisError:
            pass
        prof = await self.tools.get_employee(user)
        if prof is not None:
            try:
                await self.redis.set(key, json.dumps(prof), ex=86400)
            except RedisError:
                pass
        return prof
