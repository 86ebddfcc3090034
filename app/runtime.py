"""Wire the graph to the services named in the settings: one set of clients per process."""

from __future__ import annotations

import asyncio
import gc
import logging
import time
from typing import Any

import torch
from langchain_openai import ChatOpenAI

from app.settings import Settings
from app.training.router_i18n import load_multilingual_router
from app.training.router_train import load_router
from graph import language, times, times_local
from graph.deps import Deps
from graph.llm_gate import LLMGate
from graph.router import Router
from tools import gazetteer
from tools.cache import ToolCache
from tools.client import ToolClient
from tools.company import current, load_company, open_company, use
from tools.embedding_memo import EmbeddingMemo
from tools.embeddings import load_embedder
from tools.i18n import LANGUAGES
from tools.redis_client import async_redis

log = logging.getLogger(__name__)


def make_llm(settings: Settings) -> ChatOpenAI:
    """The chat model: vLLM's OpenAI-compatible API, streaming, no client-side retries."""
    return ChatOpenAI(base_url=settings.llm_url, api_key=settings.vllm_api_key, model=settings.vllm_model,
                      temperature=0, timeout=settings.llm_timeout_s, max_retries=0, streaming=True)


async def build_deps(settings: Settings) -> Deps:
    """Clients for every service, the FAQ entries and the router (trained now if not cached yet)."""
    # The encoders share the cores with vLLM's CPU worker: one thread (the default) keeps the router's decision
    # at 10-19 ms p50 while vLLM decodes, against 33 ms with one per core (`python -m app bench --contention`).
    if settings.torch_threads > 0:
        torch.set_num_threads(settings.torch_threads)
    # Model loading and file reads are blocking: keep them off the event loop (LangGraph's server checks).
    # The company's folder first: served whole, or one error naming every problem before anything loads.
    faq = (await asyncio.to_thread(open_company, settings.company_dir, LANGUAGES)).faq
    embedder = await asyncio.to_thread(load_embedder, settings.embedding_model, settings.embed_backend,
                                     settings.torch_threads)
    await embedder.run(embedder.embed, ["warm up the embedding thread and kernels", "a second, longer sentence"])
    redis = async_redis(settings.redis, socket_timeout=2, socket_connect_timeout=2,
                           health_check_interval=10, retry_on_timeout=False)
    router = await load_routers(settings)
    for r in router.readers():
        if r.embed is not None:  # its own encoder: warm its thread too
            await r.embed(["warm up the router's encoder"])
    await asyncio.to_thread(warm_parsers)
    if settings.gc_freeze:
        freeze_startup_heap()
    return Deps(embedder=embedder, redis=redis, faq=faq, router=router, cache=ToolCache(redis),
                tools=ToolClient(settings.backend), llm=make_llm(settings),
                llm_gate=LLMGate(settings.llm_max_concurrency, settings.llm_max_queue),
                llm_languages=llm_languages(settings))


async def load_routers(settings: Settings) -> Router:
    """The English router and the other languages' (their own encoders and threads), loaded side by side: after a
    knowledge edit each refits its heads on cached vectors, and the two fits overlap on the two cores.
    """
    router, other = await asyncio.gather(
        asyncio.to_thread(load_router, settings),
        asyncio.to_thread(load_multilingual_router, settings) if settings.multilingual else asyncio.sleep(0))
    router.other_languages = other
    return router


_RELOADING = asyncio.Lock()  # one reload at a time per process


async def reload_company(deps: Deps, settings: Settings) -> dict[str, Any]:
    """Read the company's folder again and serve it without a restart: its FAQ at once, and the routers' heads
    refitted for it on cached vectors (no fine-tuning; about as long as a start's refit). A folder that cannot be
    served changes nothing (`CompanyError`). The encoders stay: a knowledge edit never changes them, so the new
    heads read the vectors the running encoders compute. While the heads refit, the old ones keep routing; the
    catalogs name the company from the new folder at once.
    """
    async with _RELOADING:
        t0 = time.perf_counter()
        company = await asyncio.to_thread(load_company, settings.company_dir, LANGUAGES)
        before = current()
        use(company)
        try:
            router = await load_routers(settings)
        except BaseException:
            use(before)
            raise
        for new, old in zip(router.readers(), deps.router.readers(), strict=False):
            if isinstance(new.embed, EmbeddingMemo) and isinstance(old.embed, EmbeddingMemo) \
                    and new.embed.embedder is not old.embed.embedder:
                new.embed.embedder.close()  # a second copy of the running encoder: its thread is not needed
            new.embed = old.embed  # the running encoder and its memo (the same vectors)
        deps.faq, deps.router = company.faq, router
        seconds = round(time.perf_counter() - t0, 1)
        log.info("company %s reloaded from %s in %.1f s: %d FAQ entries", company.name, company.folder, seconds,
                 len(company.faq))
        return {"company": company.name, "folder": str(company.folder), "faq_entries": len(company.faq),
                "translations": sorted(company.translations), "handbook_pages": len(company.kb_pages),
                "warnings": [str(w) for w in company.warnings], "seconds": seconds}


def llm_languages(settings: Settings) -> tuple[str, ...]:
    """The languages the chat model writes (`Settings.llm_languages`: codes, or `all`)."""
    wanted = settings.llm_languages.strip().lower()
    return LANGUAGES if wanted == "all" else tuple(c.strip() for c in wanted.split(",") if c.strip() in LANGUAGES)



def freeze_startup_heap() -> None:
    """Collect once, then keep what start-up loaded out of later collections (`Settings.gc_freeze`).

    The models and libraries are hundreds of thousands of long-lived objects; Python's full collection walks all
    of them every time enough new objects have survived, which here stalls the event loop for about a third of a
    second, inside some unlucky answer. Frozen, they are never walked again (and never freed: they live as long as
    the process anyway); the requests' own objects are collected as before.
    """
    gc.collect()
    gc.freeze()


def warm_parsers() -> None:
    """Load the date parser's, the language detector's and the gazetteer's data before the first question (the
    gazetteer's 110,000 names took the first place question a second, and before the heap is frozen).
    """
    times.warm()
    gazetteer.lookup("Munich")
    language.warm()
    for lang in LANGUAGES[1:]:  # dateparser's and Babel's data for the other languages
        times_local.warm(lang)
