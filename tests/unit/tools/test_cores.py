import os
import threading

import pytest

from tools.cores import ThreadsAside, allowed_cores, this_core

TWO_CORES = len(allowed_cores()) >= 2


def test_the_core_a_thread_runs_on_is_one_the_process_may_use():
    core = this_core()
    assert core is None or core in allowed_cores()


@pytest.fixture
def other_thread():
    """Another thread of this process, asleep until the test ends: its native id."""
    started, done = threading.Event(), threading.Event()
    ids: list[int] = []

    def sleep() -> None:
        ids.append(threading.get_native_id())
        started.set()
        done.wait()

    thread = threading.Thread(target=sleep, daemon=True)
    thread.start()
    started.wait()
    yield ids[0]
    done.set()
    thread.join()


def one_core() -> int:
    return min(allowed_cores())


@pytest.mark.skipif(not TWO_CORES, reason="one core: there is no other to keep clear")
def test_held_the_other_threads_keep_to_one_core_and_get_their_cores_back(other_thread):
    everything = os.sched_getaffinity(0)
    aside = ThreadsAside()
    aside.hold(one_core())
    assert os.sched_getaffinity(other_thread) == {one_core()}
    assert os.sched_getaffinity(0) == everything  # the thread that holds is never moved
    aside.release()
    assert os.sched_getaffinity(other_thread) == everything and not aside.held


@pytest.mark.skipif(not TWO_CORES, reason="one core: there is no other to keep clear")
def test_two_holds_need_two_releases(other_thread):
    aside = ThreadsAside()
    aside.hold(one_core())
    aside.hold(one_core())  # a second encoder computing at the same time
    aside.release()
    assert os.sched_getaffinity(other_thread) == {one_core()}  # the first still computes
    aside.release()
    assert os.sched_getaffinity(other_thread) == allowed_cores()
    aside.release()  # one too many: nothing to give back, and the count stays at zero
    aside.hold(one_core())
    assert os.sched_getaffinity(other_thread) == {one_core()}
    aside.release()
    assert os.sched_getaffinity(other_thread) == allowed_cores()


@pytest.mark.skipif(not TWO_CORES, reason="one core: there is no other to keep clear")
def test_a_thread_started_meanwhile_gets_every_core_at_release():
    spawn, go, spawned = threading.Event(), threading.Event(), threading.Event()
    seen: list[set[int]] = []

    def child() -> None:
        seen.append(os.sched_getaffinity(0))  # a moved thread's one core, inherited
        spawned.set()
        go.wait()
        seen.append(os.sched_getaffinity(0))

    def parent() -> None:  # running before the hold, so it is moved; it starts a thread while held
        spawn.wait()
        threading.Thread(target=child, daemon=True).start()

    first = threading.Thread(target=parent, daemon=True)
    first.start()
    aside = ThreadsAside()
    aside.hold(one_core())
    spawn.set()
    spawned.wait(5)
    aside.release()
    go.set()
    first.join()
    for _ in range(100):
        if len(seen) == 2:
            break
        threading.Event().wait(0.01)
    assert seen == [{one_core()}, allowed_cores()]


def test_switched_off_it_moves_nothing(other_thread):
    aside = ThreadsAside()
    aside.enabled = False
    aside.hold(one_core())
    assert os.sched_getaffinity(other_thread) == allowed_cores()
    aside.release()
    assert not aside.held
