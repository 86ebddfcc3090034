"""Wait out the LLM server's leftover work before a measured request.

An answer the repetition cut stops (graph/llm.py: `write_answer`) closes its stream at once, but vLLM goes on
decoding it until it notices: 40 to 110 ms of both cores on this machine, measured after each of five cut
streams. The request the benchmark sends next, of whichever variant, would meet that work, and its floor probe,
sent later, would not: a shortcut turn of 5 ms measured 1.5x its floor for no cost of its own. So each measured
request, and each floor probe, starts once the server's processes have been quiet for one short window. A
request after an answer that ended normally waits that one window (5 ms); the wait is kept in `settle_ms`.

Only a server on this machine can be watched (its processes' CPU time, from the kernel's `schedstat`); for one
reached elsewhere `LlmServer.settle` returns at once.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable
from pathlib import Path
from urllib.parse import urlparse

from app.bench.metrics import RUNNING, schedstat_ms

LOOPBACK = {"127.0.0.1", "localhost", "::1", "0.0.0.0"}
WINDOW_S = 0.005  # one look at the server's CPU time
BUSY_MS = 1.0  # CPU time in one window above which the server is still working (idle vLLM: 0.1-0.4 ms)
LIMIT_S = 2.0  # a server busy for longer is serving someone else: measure anyway


def cpu_ms(pids: Iterable[int], proc: Path = Path("/proc")) -> float:
    """The CPU time so far of every thread of the processes `pids` together, in ms (gone ones count 0)."""
    return schedstat_ms(pids, RUNNING, proc)


def server_pids(url: str, name: bytes = b"vllm", proc: Path = Path("/proc")) -> list[int]:
    """The processes on this machine whose command line names the server (`name`), when `url` is on this
    machine; none for a server reached elsewhere.
    """
    if urlparse(url).hostname not in LOOPBACK:
        return []
    found = []
    for entry in proc.iterdir():
        if entry.name.isdigit():
            try:
                if name in (entry / "cmdline").read_bytes().lower():
                    found.append(int(entry.name))
            except OSError:
                continue
    return sorted(found)


class LlmServer:
    """The LLM server's processes on this machine, found once, and the wait for them to go quiet."""

    def __init__(self, url: str, proc: Path = Path("/proc")) -> None:
        self.proc = proc
        self.pids = server_pids(url, proc=proc)

    async def settle(self, window_s: float = WINDOW_S, busy_ms: float = BUSY_MS,
                     limit_s: float = LIMIT_S) -> float:
        """Wait until one window passes with the server using under `busy_ms` of CPU (at most `limit_s`);
        the ms waited. No processes to watch: 0 at once.
        """
        if not self.pids:
            return 0.0
        start = time.perf_counter()
        used = cpu_ms(self.pids, self.proc)
        while time.perf_counter() - start < limit_s:
            await asyncio.sleep(window_s)
            now = cpu_ms(self.pids, self.proc)
            if now - used < busy_ms:
                break
            used = now
        return (time.perf_counter() - start) * 1000
