import asyncio
import gc
import logging
import os
import signal
import time

import numpy as np
import pytest

from tools.embedding_memo import EmbeddingMemo
from tools.embeddings import SMALL_BATCH, Embedder

TEXTS = ["When is payday?", "", "Do I need an umbrella in Lisbon tomorrow? " * 100, "Привет, где мой отпуск?"]


@pytest.fixture(params=[False, True], ids=["float", "int8"])
def encoder(request):
    """The bundled encoder with its process (float, and int8 as the router serves it), ended afterwards."""
    enc = Embedder("", "onnx", 1, int8=request.param, process=True)
    assert enc.process
    yield enc
    enc.close()


async def test_the_encoder_process_gives_the_vectors_the_thread_gives(encoder):
    assert len(TEXTS) <= SMALL_BATCH  # what goes to the process: a question, or a request's few clauses
    there = await encoder.submit(TEXTS)  # long, empty and non-English texts too
    here = encoder.embed(TEXTS)  # in this process
    assert there.shape == here.shape == (len(TEXTS), encoder.dim) and there.dtype == np.float32
    assert np.allclose(there, here, atol=1e-5)
    many = [f"question number {i}" for i in range(SMALL_BATCH + 2)]  # a batch stays here, on every core
    assert np.allclose(await encoder.submit(many), encoder.embed(many), atol=1e-5)
    assert encoder.process


async def test_a_dead_encoder_process_is_replaced_by_the_thread(encoder, caplog):
    encoder._child._proc.kill()
    encoder._child._proc.wait()
    with caplog.at_level(logging.ERROR):
        vecs = await encoder.submit(TEXTS[:1])  # the same answer, computed here
    assert np.allclose(vecs, encoder.embed(TEXTS[:1]), atol=1e-5)
    assert not encoder.process and "encoder process" in caplog.text
    assert np.allclose(await encoder.submit(TEXTS[:2]), encoder.embed(TEXTS[:2]), atol=1e-5)  # and from then on


async def test_a_hung_encoder_process_does_not_hang_the_question(encoder):
    child = encoder._child
    child.timeout_s = 0.5
    child._proc.send_signal(signal.SIGSTOP)
    t0 = time.perf_counter()
    vecs = await encoder.submit(TEXTS[:1])
    assert time.perf_counter() - t0 < 5  # its wait is bounded, then the thread answers
    assert np.allclose(vecs, encoder.embed(TEXTS[:1]), atol=1e-5)
    assert not encoder.process and child._proc.wait(timeout=5) == -signal.SIGKILL  # the hung child is killed, not left


async def test_a_memo_waiting_on_the_process_is_answered_in_the_replys_own_turn(encoder):
    """The prefetched question's caller is answered inside the callback that reads the child's reply, not turns of
    the event loop later (each behind whatever else the loop has queued).
    """
    await encoder.submit(TEXTS[:1])  # the child's replies are read on this loop from now on
    loop, child = asyncio.get_running_loop(), encoder._child
    answered: list[list[bool]] = []
    memo = EmbeddingMemo(encoder)

    def reading() -> None:
        child._on_readable()
        answered.append([f.done() for f in waiters])

    loop.remove_reader(child._sock.fileno())
    loop.add_reader(child._sock.fileno(), reading)
    memo.prefetch("When is payday?")
    call = asyncio.ensure_future(memo(["When is payday?"]))
    await asyncio.sleep(0)  # the caller now waits on the prefetch
    waiters = list(memo._pending["When is payday?"][1])
    vecs = await call
    assert answered[0] == [True] and np.allclose(vecs, encoder.embed(["When is payday?"]), atol=1e-5)
    told: list[object] = []
    encoder._child._proc.kill()  # a lost child: the thread's answer reaches `then` too
    encoder._child._proc.wait()
    fut = encoder.submit(TEXTS[:1], then=told.append)
    assert np.allclose(await fut, encoder.embed(TEXTS[:1]), atol=1e-5)
    await asyncio.sleep(0)
    assert told == [fut]


async def test_a_request_too_big_for_the_socket_is_computed_here_and_the_child_goes_on(encoder):
    big = ["How do I book leave? " * 450] * SMALL_BATCH  # ~38 kB: more than the socket takes without waiting
    assert np.allclose(await encoder.submit(big), encoder.embed(big), atol=1e-5)
    assert encoder.process
    assert np.allclose(await encoder.submit(TEXTS[:1]), encoder.embed(TEXTS[:1]), atol=1e-5)


async def test_the_child_does_not_preempt_the_event_loop(encoder):
    await encoder.submit(TEXTS[:1])
    assert os.sched_getscheduler(encoder._child._proc.pid) == os.SCHED_BATCH


def test_the_encoder_process_ends_with_its_embedder():
    enc = Embedder("", "onnx", 1, process=True)
    closed = enc._child._proc
    enc.close()
    assert closed.wait(timeout=5) == 0 and not enc.process  # asked to end, it ended
    enc = Embedder("", "onnx", 1, process=True)
    dropped = enc._child._proc
    del enc
    gc.collect()
    assert dropped.wait(timeout=5) == 0  # collected with the embedder that started it
