"""Which cores this process may use, and which one the calling thread runs on now: what keeps the encoder
process beside the event loop rather than on its core (tools/encoder_process.py).
"""

from __future__ import annotations

import ctypes
import os
from typing import Any

_SCHED_GETCPU: Any
try:
    _SCHED_GETCPU = ctypes.CDLL(None).sched_getcpu  # glibc and musl; a vDSO read, well under a microsecond
except (OSError, AttributeError):
    _SCHED_GETCPU = None


def allowed_cores() -> set[int]:
    """The cores this process may run on (a container's cpuset, or all of them)."""
    return os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else set()


def this_core() -> int | None:
    """The core the calling thread runs on now (None where the C library cannot say)."""
    return _SCHED_GETCPU() if _SCHED_GETCPU is not None else None
