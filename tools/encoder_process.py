"""An ONNX encoder in a child process of its own, for the few-text embeddings on a turn's critical path.

Why a process: a question's embedding is computed while the event loop starts the turn (LangGraph reads the
conversation and prepares the routing step). On a thread of the same process the two take turns on the GIL
(the tokenizer and the Python around ONNX Runtime on one side, LangGraph on the other), and each slows the
other: beside a turn's start the router's int8 embedding took about 6 ms against 3.5 alone. A child process
computes it on another core with no GIL to share; the event loop writes the texts to a socket, and the reply
wakes the loop itself (a thread between them would add a wake-up of its own).

Beside the loop, never on its core: Linux often wakes a sleeping child on the core of the task that woke it,
where it preempted the event loop for the whole embedding (1-3 ms, one request in ten, measured). So the child
sleeps on an eventfd rather than on the socket (a socket's write is a "sync" wake-up, a hint to run the reader
right there), is told before each request to keep off the core the loop is on (its CPU affinity: every other
core the process may use), and runs as SCHED_BATCH, which does not preempt whoever runs where it wakes.
On one core none of this applies: it takes its turn there.

The child imports only the standard library, numpy, tokenizers and ONNX Runtime (and this package's
`tools.onnx_export`, for the session's options): it starts in about a second and holds only the model.
It ends when its parent closes (or when the parent is gone, within a second), and when the object that
started it is collected.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import json
import logging
import os
import select
import socket
import struct
import subprocess
import sys
import weakref
from collections import deque
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import numpy as np

log = logging.getLogger(__name__)
_OK, _ERROR = b"OK\0\0", b"ER"  # a reply's first bytes (four for OK: the vectors after it stay aligned)
_SMALL_MESSAGE = 32 * 1024  # a request's most bytes: the socket's buffer takes it whole, without waiting
_SCHED_GETCPU: Any
try:
    _SCHED_GETCPU = ctypes.CDLL(None).sched_getcpu  # glibc and musl; a vDSO read, well under a microsecond
except (OSError, AttributeError):
    _SCHED_GETCPU = None
_ROOT = Path(__file__).resolve().parents[1]  # the folder holding the `tools` package
_CHILD = "import sys; sys.path.insert(0, {root!r}); from tools.encoder_process import _serve; _serve({fd}, {bell})"


class EncoderGone(RuntimeError):
    """The child process failed, hung or exited: the caller computes the embedding itself."""


class EncoderProcess:
    """One child process serving one exported encoder to one event loop at a time.

    `submit` writes the request at once (the child starts while the caller goes on) and returns a future the
    event loop settles when the reply arrives: the reply wakes the loop itself, with no thread between. The
    loop's end of the socket never blocks (LangGraph's dev server fails a run on a blocking call): a request is
    small enough for the socket's buffer (`fits`), and a reply is read as far as it has come. Requests are
    answered in order, so several may be in flight. A child that fails, exits or does not answer within
    `timeout_s` fails its requests with EncoderGone and is not asked again.
    """

    def __init__(self, onnx_path: str | Path, tokenizer_json: str, max_length: int, threads: int = 1,
                 timeout_s: float = 30.0) -> None:
        self.timeout_s = timeout_s
        ours, theirs = socket.socketpair()
        self._bell = os.eventfd(0, os.EFD_SEMAPHORE)  # one ring per request (see `_send`)
        try:
            self._proc = subprocess.Popen(  # noqa: S603 - this interpreter, this module
                [sys.executable, "-c", _CHILD.format(root=str(_ROOT), fd=theirs.fileno(), bell=self._bell)],
                pass_fds=(theirs.fileno(), self._bell), stdin=subprocess.DEVNULL)
        except OSError:
            ours.close()
            os.close(self._bell)
            raise
        finally:
            theirs.close()
        self._sock = ours
        self._read = bytearray()  # reply bytes received and not yet parsed
        self._loop: asyncio.AbstractEventLoop | None = None  # the loop reading the replies
        self._waiting: deque[tuple[asyncio.Future[np.ndarray], int, asyncio.TimerHandle]] = deque()
        self._dropped = 0  # replies still owed to requests of a loop that is gone
        self.gone: str | None = None  # why the child is not asked any more
        cores = _cores()
        self._beside = cores if len(cores) > 1 and _this_core() is not None else None  # the cores it may use
        self._finalizer = weakref.finalize(self, _end, self._sock, self._bell, self._proc)
        config = {"onnx": str(onnx_path), "tokenizer": tokenizer_json, "max_length": max_length, "threads": threads}
        try:  # off the event loop (the embedder is built on a worker thread): blocking, with a deadline
            ours.settimeout(timeout_s)
            ours.sendall(_frame(json.dumps(config).encode()))  # read before the child listens for rings
            reply = self._reply(self._frame_from(ours))
            ours.setblocking(False)
        except (EncoderGone, OSError) as exc:
            self.close(kill=True)
            raise EncoderGone(f"the encoder process did not start: {exc}") from exc
        self.dim = struct.unpack("<I", reply)[0]

    @staticmethod
    def fits(texts: list[str]) -> bool:
        """Whether a request of `texts` is small enough to go to the child (a few questions, not a passage)."""
        return sum(len(t) for t in texts) * 4 + 64 * len(texts) < _SMALL_MESSAGE  # at most 4 UTF-8 bytes a char

    def submit(self, texts: list[str]) -> asyncio.Future[np.ndarray]:
        """Normalized vectors of `texts` (`fits`), one row each, computed in the child (fails with EncoderGone)."""
        loop = asyncio.get_running_loop()
        if self.gone:
            raise EncoderGone(self.gone)
        if self._loop is not loop:
            self._attach(loop)
        fut: asyncio.Future[np.ndarray] = loop.create_future()
        try:
            self._send(json.dumps(texts).encode())
        except OSError as exc:  # gone, or so far behind that its socket is full
            self._fail(f"the encoder process is not reachable ({exc.__class__.__name__})")
            raise EncoderGone(self.gone or "") from exc
        timer = loop.call_later(self.timeout_s, self._fail, f"no reply in {self.timeout_s:.0f} s")
        self._waiting.append((fut, len(texts), timer))
        return fut

    def _send(self, message: bytes) -> None:
        """Write a request and ring the child's bell once for it.

        The child sleeps on the bell (an eventfd), not on the socket: a socket's write wakes its reader as a
        "sync" wake-up, which Linux takes as a hint to run the reader on the writer's core, so the child
        preempted the event loop it was meant to run beside (a 1-3 ms stall at the write, measured). A ring
        wakes it on a free core.
        """
        if self._beside is not None:  # every core but the event loop's (the child is asleep: it moves for free)
            with contextlib.suppress(OSError):  # a child gone: the write below says so
                os.sched_setaffinity(self._proc.pid, self._beside - {_this_core()} or self._beside)
        frame = _frame(message)
        if len(frame) > _SMALL_MESSAGE or self._sock.send(frame) != len(frame):
            raise BlockingIOError("a request the socket's buffer does not take whole")
        os.eventfd_write(self._bell, 1)

    def _attach(self, loop: asyncio.AbstractEventLoop) -> None:
        """Read the replies on `loop` (a process's first loop, or a later one once an earlier one is gone)."""
        if self._loop is not None and not self._loop.is_closed():
            self._loop.remove_reader(self._sock.fileno())
        while self._waiting:  # the other loop's requests: their replies are read and dropped
            _, _, timer = self._waiting.popleft()
            timer.cancel()
            self._dropped += 1
        loop.add_reader(self._sock.fileno(), self._on_readable)
        self._loop = loop

    def _on_readable(self) -> None:
        try:
            chunk = self._sock.recv(1 << 16)
        except BlockingIOError:
            return
        except OSError as exc:
            self._fail(f"the encoder process is gone ({exc.__class__.__name__})")
            return
        if not chunk:
            self._fail("the encoder process exited")
            return
        self._read += chunk
        while len(self._read) >= 4 and len(self._read) >= 4 + (size := struct.unpack("!i", self._read[:4])[0]):
            reply = bytes(self._read[4:4 + size])
            del self._read[:4 + size]
            self._settle(reply)

    def _settle(self, reply: bytes) -> None:
        if self._dropped:
            self._dropped -= 1
            return
        if not self._waiting:
            return
        fut, rows, timer = self._waiting.popleft()
        timer.cancel()
        if fut.done():  # its caller stopped waiting
            return
        try:
            fut.set_result(np.frombuffer(self._reply(reply), np.float32).reshape(rows, self.dim))
        except EncoderGone as exc:  # that request failed in the child; the child goes on
            fut.set_exception(exc)

    @staticmethod
    def _frame_from(sock: socket.socket) -> bytes:
        """One whole reply, read blocking (start-up only)."""
        def exactly(n: int) -> bytes:
            data = b""
            while len(data) < n:
                if not (chunk := sock.recv(n - len(data))):
                    raise EncoderGone("the encoder process exited")
                data += chunk
            return data

        return exactly(struct.unpack("!i", exactly(4))[0])

    @staticmethod
    def _reply(reply: bytes) -> bytes:
        if reply.startswith(_ERROR):
            raise EncoderGone(reply[len(_ERROR):].decode(errors="replace"))
        return reply[len(_OK):]

    def _fail(self, why: str) -> None:
        """Stop asking the child: its requests fail with `why`, and it is ended."""
        if self.gone:
            return
        self.gone = why
        while self._waiting:
            fut, _, timer = self._waiting.popleft()
            timer.cancel()
            if not fut.done():
                fut.set_exception(EncoderGone(why))
        self.close(kill=True)

    def close(self, kill: bool = False) -> None:
        """End the child: closing the socket and ringing ends it (killed at once when `kill`, or if it does not end)."""
        self.gone = self.gone or "closed"
        if not self._finalizer.alive:
            return
        if self._loop is not None and not self._loop.is_closed():
            self._loop.remove_reader(self._sock.fileno())
        self._finalizer.detach()
        _end(self._sock, self._bell, self._proc, kill)


def _frame(message: bytes) -> bytes:
    """A message as multiprocessing's Connection frames it (the child reads it with one): length, then bytes."""
    return struct.pack("!i", len(message)) + message


def _end(sock: socket.socket, bell: int, proc: subprocess.Popen[bytes], kill: bool = False) -> None:
    """Close the socket and ring: the child reads the end and exits (killed when `kill`, or if it does not)."""
    sock.close()
    with contextlib.suppress(OSError):
        os.eventfd_write(bell, 1)
        os.close(bell)
    if kill:
        proc.kill()
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def _cores() -> set[int]:
    """The cores this process may run on (a container's cpuset, or all of them)."""
    return os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else set()


def _this_core() -> int | None:
    """The core the calling thread runs on now (None where the C library cannot say)."""
    return _SCHED_GETCPU() if _SCHED_GETCPU is not None else None


def _serve(fd: int, bell: int) -> None:
    """The child: load the encoder, then embed each request's texts until the parent closes the socket."""
    conn = Connection(fd)
    parent = os.getppid()
    with contextlib.suppress(AttributeError, OSError):  # see the module's docstring; ONNX Runtime's threads inherit it
        os.sched_setscheduler(0, os.SCHED_BATCH, os.sched_param(0))
    try:
        config = json.loads(conn.recv_bytes())
        from tokenizers import Tokenizer

        from tools.onnx_export import ONNX_INPUTS, session_at

        tokenizer = Tokenizer.from_str(config["tokenizer"])
        tokenizer.no_padding()
        tokenizer.enable_truncation(config["max_length"])
        session = session_at(config["onnx"], config["threads"])

        def embed(text: str) -> Any:
            # One text per run: int8 activations are quantized with one scale per run (tools/embeddings.py).
            enc = tokenizer.encode(text)
            feed = dict(zip(ONNX_INPUTS, (np.array([ids], np.int64) for ids in
                                          (enc.ids, enc.attention_mask, enc.type_ids)), strict=True))
            return session.run(None, feed)[0][0]

        dim = len(embed("warm up the encoder"))
    except Exception as exc:  # noqa: BLE001 - the parent logs it and computes the embeddings itself
        conn.send_bytes(_ERROR + f"the encoder did not load: {exc!r}".encode())
        return
    conn.send_bytes(_OK + struct.pack("<I", dim))
    while True:
        if not select.select([bell], [], [], 1.0)[0]:  # asleep until a request rings
            if os.getppid() != parent:  # the parent died without closing
                return
            continue
        try:
            os.eventfd_read(bell)  # one ring, one request
            message = conn.recv_bytes()
        except (EOFError, OSError):  # the parent closed its end (and rang)
            return
        try:
            vectors = np.stack([embed(text) for text in json.loads(message)]).astype(np.float32)
            conn.send_bytes(_OK + vectors.tobytes())
        except Exception as exc:  # noqa: BLE001 - one bad request, not the end of the process
            conn.send_bytes(_ERROR + repr(exc).encode())
