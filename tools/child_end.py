"""Ending a child process without waiting for it: an event loop must never block on a child's exit."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import threading


def end_child(sock: socket.socket, bell: int, proc: subprocess.Popen[bytes], kill: bool = False) -> None:
    """Close the socket and ring: the child reads the end and exits (killed when `kill`). It is reaped on a
    thread of its own (killed there if it has not ended in 5 s), so that an event loop never waits for it.
    """
    sock.close()
    with contextlib.suppress(OSError):
        os.eventfd_write(bell, 1)
    with contextlib.suppress(OSError):
        os.close(bell)
    if kill:
        proc.kill()
    threading.Thread(target=_reap, args=(proc,), name="encoder-reaper", daemon=True).start()


def _reap(proc: subprocess.Popen[bytes]) -> None:
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
