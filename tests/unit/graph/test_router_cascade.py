"""The cascade of readers (`Router.fast`): a cheaper router reads first, its sure decisions stand, and the full
router reads only what it is not sure of. Two small linear models over 2-d vectors stand in for the trained heads.
"""

from __future__ import annotations

import numpy as np

from graph.router import Router
from graph.router_model import RouterModel

PAYDAY = np.array([1.0, 0.0], np.float32)  # a question both readers place by the payday entry
UNCLEAR = np.array([0.6, 0.8], np.float32)  # one the first reader is unsure of


def model(coef: list[list[float]]) -> RouterModel:
    examples = np.array([[1.0, 0.0], [0.0, 1.0]], np.float32)
    return RouterModel(["faq:payday", "salary"], np.array(coef, np.float32), np.zeros(2, np.float32), examples,
                       ["faq:payday", "salary"], {"thresholds": {"faq": 0.9, "salary": 0.9}})


def reader(coef: list[list[float]], vectors: dict[str, np.ndarray], calls: list[str], name: str) -> Router:
    async def embed(texts: list[str]) -> np.ndarray:
        calls.extend(name for _ in texts)
        return np.stack([vectors[t] for t in texts])

    return Router(model(coef), embed)


def cascade(calls: list[str]) -> Router:
    vectors = {"when is payday": PAYDAY, "my pay": UNCLEAR}
    full = reader([[10, 0], [0, 30]], vectors, calls, "full")  # sure of both questions
    full.fast = reader([[10, 0], [0, 7.5]], vectors, calls, "fast")  # sure of payday only (0.5 on "my pay")
    return full


async def test_a_sure_first_reading_stands_and_the_full_reader_is_not_asked():
    calls: list[str] = []
    d = await cascade(calls).decide("when is payday", "E1001", None, lang="de")
    assert (d.path, d.label, d.lang) == ("faq", "faq:payday", "de")
    assert calls == ["fast"]


async def test_what_the_first_reader_is_not_sure_of_is_read_again_by_the_full_reader():
    calls: list[str] = []
    d = await cascade(calls).decide("my pay", "E1001", None, lang="de")
    assert (d.path, d.label) == ("template", "salary")
    assert calls == ["fast", "full"]


async def test_without_a_first_reader_the_full_reader_decides_alone():
    calls: list[str] = []
    router = cascade(calls)
    router.fast = None
    d = await router.decide("my pay", "E1001", None, lang="de")
    assert (d.path, d.label) == ("template", "salary") and calls == ["full"]


def test_the_question_is_embedded_early_by_the_reader_that_reads_it_first():
    english = Router(model([[1, 0], [0, 1]]))
    other = cascade([])
    english.other_languages = other
    assert english.first_reader("fr") is other.fast
    assert english.first_reader("en") is english
    assert english.readers() == [english, other, other.fast]


async def test_a_question_the_english_model_reads_as_another_language_goes_to_that_languages_router():
    """"wat was mijn netto salaris in oktober?" is too mixed for the detector to be sure (nl 0.67); the English model
    reads it as another language first, though not surely: the other languages' router reads it, in Dutch.
    """
    question = "wat was mijn netto salaris in oktober?"
    english = Router(RouterModel(["foreign", "salary"], np.array([[4, 0], [0, 4]], np.float32), np.zeros(2, np.float32),
                                 np.array([[1.0, 0.0], [0.0, 1.0]], np.float32), ["foreign", "salary"],
                                 {"thresholds": {"foreign": 0.99, "salary": 0.99}}))

    async def embed(texts: list[str]) -> np.ndarray:
        return np.stack([np.array([0.9, 0.1], np.float32) for _ in texts])  # foreign, about 0.96: not sure

    english.embed = embed
    other = cascade([])
    other.fast.embed = other.embed = reader([[1, 0], [0, 1]], {question: UNCLEAR}, [], "x").embed
    english.other_languages = other
    d = await english.decide(question, "E1001", None)
    assert (d.path, d.label, d.lang) == ("template", "salary", "nl")
    english.other_languages = None
    assert (await english.decide(question, "E1001", None)).path == "llm"  # English alone: not sure, the full path
