"""Which cores this process may use, which one the calling thread runs on now, and the process's other threads
kept to one core for a while: what keeps the encoder process beside the event loop rather than on its core,
with that core to itself (tools/encoder_process.py).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import threading
from typing import Any

_SCHED_GETCPU: Any
try:
    _SCHED_GETCPU = ctypes.CDLL(None).sched_getcpu  # glibc and musl; a vDSO read, well under a microsecond
except (OSError, AttributeError):
    _SCHED_GETCPU = None
_TASKS = "/proc/self/task"  # one entry per thread of this process, named by its native id


def allowed_cores() -> set[int]:
    """The cores this process may run on (a container's cpuset, or all of them)."""
    return os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else set()


def this_core() -> int | None:
    """The core the calling thread runs on now (None where the C library cannot say)."""
    return _SCHED_GETCPU() if _SCHED_GETCPU is not None else None


class ThreadsAside:
    """Keeps this process's other threads on one core while held: the event loop's, so that the encoder
    process computing on the other core has it to itself.

    Why: on two cores the encoder is given the one the loop is not on, and the process's other threads
    (aiosqlite's writing the last turn's checkpoint, the default executor's, a library's pool) were woken
    there too, and it waited behind them. In an A/B of FAQ turns right after a plain-agent answer, with the
    threads held on the loop's core for each whole turn, the turns over 1.5x their floor went from 5 in 43 to
    1 in 43 and the encoder's wait for its core at the 95th percentile from 0.7 ms to 0.2 ms
    (docs/benchmark.md). Here they are held only while an embedding is computed, the time it competes.

    Held by count (two encoders may compute at once): the first `hold` moves the threads, the last `release`
    gives each the calling thread's cores back (what the process was allowed when held; a thread's own mask
    is not kept). The thread that holds is never moved. Threads that end or start meanwhile are fine: an
    ended one is skipped, a new one is found at release. Off (`enabled` False) it does nothing.
    """

    def __init__(self) -> None:
        self.enabled = True
        self._lock = threading.Lock()  # two event loops in two threads may each hold
        self._count = 0
        self._back: set[int] | None = None  # the cores each moved thread gets back; None while nothing is moved
        self._keep = 0  # the native id of the thread that held first

    def hold(self, core: int) -> None:
        """Move every other thread of this process to `core` (the first hold), or count one more."""
        with self._lock:
            self._count += 1
            if self._count > 1 or not self.enabled:
                return
            self._keep = threading.get_native_id()
            try:
                self._back = os.sched_getaffinity(0)
            except OSError:
                return
            _move(self._keep, {core})

    def release(self) -> None:
        """Count one hold less; the last one gives the threads their cores back."""
        with self._lock:
            if self._count == 0:
                return
            self._count -= 1
            if self._count or self._back is None:
                return
            back, self._back = self._back, None
            _move(self._keep, back)

    @property
    def held(self) -> bool:
        """Whether any hold is not released yet."""
        return self._count > 0


def _move(keep: int, cores: set[int]) -> None:
    """Set every thread of this process but `keep` to `cores` (a thread gone meanwhile is skipped)."""
    try:
        tids = os.listdir(_TASKS)
    except OSError:  # not Linux: nothing to move
        return
    for tid in tids:
        if int(tid) != keep:
            with contextlib.suppress(OSError):
                os.sched_setaffinity(int(tid), cores)


threads_aside = ThreadsAside()  # one per process: its threads are the process's
