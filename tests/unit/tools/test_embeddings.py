import asyncio
import gc

import numpy as np
import pytest

from tools.embedding_memo import EmbeddingMemo
from tools.embeddings import SMALL_BATCH, Embedder

QUESTIONS = ["When is payday?", "how many days of annual leave do I have left this year",
             "Do I need an umbrella in Lisbon tomorrow?", "payslip oct", ""]


def test_onnx_runtime_gives_the_vectors_torch_gives(tmp_path, monkeypatch):
    monkeypatch.setenv("CACHE_DIR", str(tmp_path))  # a fresh export, not the shared one
    fast, slow = Embedder("", "onnx"), Embedder("", "torch")
    assert (fast.backend, slow.backend) == ("onnx", "torch")
    assert len(list((tmp_path / "onnx").glob("*.onnx"))) == 1  # exported once, atomically, under the cache
    a, b = fast.embed(QUESTIONS), slow.embed(QUESTIONS)
    assert a.shape == b.shape == (len(QUESTIONS), fast.dim) and a.dtype == np.float32
    assert np.min(np.sum(a * b, axis=1)) > 0.9999  # same direction: what the router was trained on holds
    assert np.allclose(np.linalg.norm(a, axis=1), 1.0, atol=1e-5)
    assert np.allclose(fast.embed(QUESTIONS[:1])[0], a[0], atol=1e-5)  # padding in a batch changes nothing


def test_the_int8_encoder_points_where_the_float_one_does_and_a_batch_does_not_move_it(tmp_path, monkeypatch):
    monkeypatch.setenv("CACHE_DIR", str(tmp_path))
    full, small = Embedder("", "onnx", 1), Embedder("", "onnx", 1, int8=True)
    assert small.int8 and not full.int8
    onnx = sorted((tmp_path / "onnx").glob("*.onnx"), key=lambda p: p.name.endswith("-int8pc.onnx"))
    assert len(onnx) == 2 and onnx[1].name == onnx[0].stem + "-int8pc.onnx"  # the float export, its int8 copy
    assert onnx[1].stat().st_size < onnx[0].stat().st_size / 3
    texts = [*QUESTIONS[:4], "Can I carry unused holiday over into next year, and until when?", "VPN?"]
    assert len(texts) > SMALL_BATCH  # a batch as training embeds them: the all-core session
    a, b = full.embed(texts), small.embed(texts)
    cos = np.sum(a * b, axis=1)
    assert cos.min() > 0.95 and np.median(cos) > 0.98  # close, not equal: only a head fitted on it may use it
    assert np.max(np.abs(a - b)) > 1e-4
    assert np.allclose(np.linalg.norm(b, axis=1), 1.0, atol=1e-5)
    for i, q in enumerate(texts):  # the same vector alone (served) as in a training batch beside longer texts
        assert np.allclose(small.embed([q])[0], b[i], atol=1e-5)


async def test_memo_embeds_each_text_once():
    calls = []

    class Fake:
        async def submit(self, texts):
            return self.embed(texts)

        def embed(self, texts):
            calls.append(list(texts))
            return np.ones((len(texts), 3), np.float32)

    memo = EmbeddingMemo(Fake(), size=2)
    await memo(["a", "b", "a"])
    await memo(["a", "c"])
    assert calls == [["a", "b"], ["c"]]
    assert list(memo._memo) == ["a", "c"]  # bounded, least recently used dropped
    await memo(["b"])
    assert calls[-1] == ["b"] and list(memo._memo) == ["c", "b"]
    memo.forget("c")  # the cold-start probe: the same question doing the same work again
    await memo(["c"])
    assert calls[-1] == ["c"]


class SlowEncoder:
    """Like Embedder: `submit` hands the call to the thread at once, and its vectors come 10 ms later.
    Row i of the n-th call is `vector(n, i)` (three times over); with `fail` set, the next call raises.
    """

    def __init__(self, vector):
        self.calls, self.fail, self.vector = [], False, vector

    def submit(self, texts, then=None):
        fut = asyncio.ensure_future(self._later(self.embed, texts))
        if then is not None:
            fut.add_done_callback(then)
        return fut

    async def _later(self, fn, texts):
        await asyncio.sleep(0.01)
        return fn(texts)

    def embed(self, texts):
        self.calls.append(list(texts))
        if self.fail:
            self.fail = False
            raise RuntimeError("encoder busy")
        return np.array([[self.vector(len(self.calls), i)] * 3 for i in range(len(texts))], np.float32)


async def test_a_prefetched_embedding_is_computed_once_and_a_failed_one_again():
    """The question's embedding starts before the graph runs; the router's call awaits that same work."""
    fake = SlowEncoder(lambda n, i: float(n))
    calls = fake.calls
    memo = EmbeddingMemo(fake)
    memo.prefetch("when is payday")
    memo.prefetch("when is payday")  # already under way: not started twice
    out = await memo(["when is payday", "dress code"])
    assert calls == [["dress code"], ["when is payday"]] or calls == [["when is payday"], ["dress code"]]
    assert set(memo._memo) == {"when is payday", "dress code"} and not memo._pending
    assert out[0][0] == calls.index(["when is payday"]) + 1  # the prefetch's own vector is the one returned
    fake.fail = True
    memo.prefetch("new question")
    again = await memo(["new question"])
    assert calls[-2:] == [["new question"], ["new question"]]  # the failed prefetch, then the call's own
    assert again[0][0] == len(calls)  # the vector of the call's own computation, after the failure


async def test_questions_prefetched_while_the_thread_is_busy_go_together_in_the_next_batch():
    """Concurrent conversations: the first question starts at once, the next ones share one pass after it."""
    fake = SlowEncoder(lambda n, i: 10.0 * n + i)
    calls = fake.calls
    memo = EmbeddingMemo(fake)
    for q in ("when is payday", "dress code", "my leave balance"):
        memo.prefetch(q)
    out = await memo(["my leave balance", "when is payday", "dress code"])
    assert calls == [["when is payday"], ["dress code", "my leave balance"]]
    assert [float(v[0]) for v in out] == [21.0, 10.0, 20.0]  # each text gets its own row of its batch
    assert not memo._pending and set(memo._memo) == {"when is payday", "dress code", "my leave balance"}


async def test_an_encoder_that_runs_one_text_per_pass_answers_each_prefetch_when_it_is_done():
    """The int8 router: a batch costs as much as its texts one by one, so nobody waits for the others' vectors."""
    fake = SlowEncoder(lambda n, i: 10.0 * n + i)
    fake.gains_from_batches = False
    memo = EmbeddingMemo(fake)
    for q in ("when is payday", "dress code", "my leave balance"):
        memo.prefetch(q)
    first = asyncio.ensure_future(memo(["when is payday"]))
    rest = asyncio.ensure_future(memo(["dress code", "my leave balance"]))
    done, _ = await asyncio.wait([first, rest], return_when=asyncio.FIRST_COMPLETED)
    assert first in done  # answered with its own vector, not when the last of the three is in
    assert fake.calls == [["when is payday"], ["dress code"], ["my leave balance"]]
    assert float(first.result()[0][0]) == 10.0 and [float(v[0]) for v in await rest] == [20.0, 30.0]
    assert not memo._pending and not memo._queued


class _Unanswered:
    """An encoder whose replies never come (a child's reply to a loop that has closed is dropped)."""

    def submit(self, texts, then=None):
        fut = asyncio.get_running_loop().create_future()
        if then is not None:
            fut.add_done_callback(then)
        return fut


class _AtOnce:
    def __init__(self, fail: bool = False) -> None:
        self.fail = fail

    def submit(self, texts, then=None):
        fut = asyncio.get_running_loop().create_future()
        if self.fail:
            fut.set_exception(RuntimeError("the encoder failed"))
        else:
            fut.set_result(np.ones((len(texts), 3), np.float32))
        if then is not None:
            fut.add_done_callback(then)
        return fut


def test_a_prefetch_left_by_a_closed_loop_does_not_hang_the_next_loops_callers():
    memo = EmbeddingMemo(_Unanswered())

    async def first():
        memo.prefetch("When is payday?")

    asyncio.run(first())  # that loop closes with its batch unanswered
    memo.embedder = _AtOnce()

    async def second():
        memo.prefetch("When is payday?")  # prefetched afresh on this loop
        return await asyncio.wait_for(memo(["When is payday?", "other"]), 2)

    assert asyncio.run(second()).shape == (2, 3)


async def test_a_caller_that_leaves_before_awaiting_a_failed_prefetch_logs_nothing(caplog):
    memo = EmbeddingMemo(_AtOnce(fail=True))
    memo.prefetch("When is payday?")
    with pytest.raises(RuntimeError):
        await memo(["When is payday?", "missing"])  # the direct part fails before the prefetch is awaited
    await asyncio.sleep(0.01)
    gc.collect()
    assert "never retrieved" not in caplog.text


class _WrongRows:
    """An encoder whose replies have one row too many."""

    def __init__(self) -> None:
        self.calls = 0

    def submit(self, texts, then=None):
        self.calls += 1
        fut = asyncio.get_running_loop().create_future()
        fut.set_result(np.ones((len(texts) + (self.calls == 1), 3), np.float32))
        if then is not None:
            fut.add_done_callback(then)
        return fut


async def test_a_batch_that_cannot_be_handed_out_still_answers_its_callers_and_the_next_batch():
    memo = EmbeddingMemo(_WrongRows())
    memo.prefetch("When is payday?")
    assert (await asyncio.wait_for(memo(["When is payday?"]), 2)).shape == (1, 3)  # computed again, directly
    memo.prefetch("How do I book leave?")  # later prefetches still start
    assert (await asyncio.wait_for(memo(["How do I book leave?"]), 2)).shape == (1, 3)
    assert memo._busy is None


async def test_a_shared_encoder_closed_by_one_desk_still_embeds_for_the_next():
    """A desk whose build failed half-way closes its clients (Deps.aclose), the multilingual encoder among them; it is
    one per process, so the desk built next reads with it: every question in another language failed after that.
    """
    from tools.multilingual import load_multilingual

    encoder = load_multilingual("usem3+e5")
    question = ["Wie hoch war mein Nettogehalt im Oktober?"]
    before = await encoder.submit(question)
    encoder.close()
    encoder.close()  # closing twice is harmless
    assert np.allclose(await encoder.submit(question), before)
