"""An ONNX encoder in a child process of its own, for the few-text embeddings on a turn's critical path.

Why a process: a question's embedding is computed while the event loop starts the turn (LangGraph reads the
conversation and prepares the routing step). On a thread of the same process the two take turns on the GIL
(the tokenizer and the Python around ONNX Runtime on one side, LangGraph on the other), and each slows the
other: beside a turn's start the router's int8 embedding took about 6 ms against 3.5 alone. A child process
computes it on another core with no GIL to share; the event loop writes the texts to a socket, and the reply
wakes the loop itself (a thread between them would add a wake-up of its own).

Linux often wakes a sleeping child on the core of the task that woke it, where it would preempt the event loop
for the whole embedding. So the child sleeps on an eventfd rather than on the socket (a socket's write is a
"sync" wake-up, a hint to run the reader right there) and runs as SCHED_BATCH, which does not preempt whoever
runs where it wakes. Which cores the process uses is the deployment's to say, not this module's.

The child's side is `tools/encoder_child.py`: it starts in about a second and holds only the model.
It ends when its parent closes it (`Embedder.close`, `Deps.aclose`), when the object that started it is
collected (once no event loop reads its replies), and on its own within a second when the parent is gone.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import logging
import os
import socket
import struct
import subprocess
import sys
import weakref
from collections import deque
from collections.abc import Callable
from pathlib import Path

import numpy as np

from tools.child_end import end_child
from tools.encoder_child import ERROR, OK

log = logging.getLogger(__name__)
Then = Callable[["asyncio.Future[np.ndarray]"], None]  # told when a request's future is settled
_SMALL_MESSAGE = 32 * 1024  # a request's most bytes: the socket's buffer takes it whole, without waiting
_ROOT = Path(__file__).resolve().parents[1]  # the folder holding the `tools` package
_CHILD = "import sys; sys.path.insert(0, {root!r}); from tools.encoder_child import serve; serve({fd}, {bell})"


class EncoderGone(RuntimeError):
    """The child process exited, hung, or broke its replies: it is not asked again."""


class EncoderDeclined(RuntimeError):
    """This request is not the child's (too big for the socket, another event loop's, or it failed there): the
    caller computes it itself, and the child goes on.
    """


class EncoderProcess:
    """One child process serving one exported encoder to one event loop at a time.

    `submit` writes the request at once (the child starts while the caller goes on) and returns a future the
    event loop settles when the reply arrives: the reply wakes the loop itself, with no thread between. Nothing
    here blocks the loop (LangGraph's dev server fails a run on a blocking call): a request goes only when the
    socket's buffer takes it whole, a reply is read as far as it has come, and an ended child is reaped on a
    thread. Requests are answered in order, so several may be in flight. A child that exits or does not answer
    within `timeout_s` fails its requests with EncoderGone and is not asked again.
    """

    def __init__(self, onnx_path: str | Path, tokenizer_json: str, max_length: int, threads: int = 1,
                 timeout_s: float = 5.0, start_timeout_s: float = 60.0) -> None:
        self.timeout_s = timeout_s  # a few short texts take milliseconds; seconds mean it is stuck
        self._bell = os.eventfd(0, os.EFD_SEMAPHORE | os.EFD_CLOEXEC)  # one ring per request (see `_send`)
        try:
            ours, theirs = socket.socketpair()
        except OSError:
            os.close(self._bell)
            raise
        try:
            self._proc = subprocess.Popen(  # noqa: S603 - this interpreter, this module
                [sys.executable, "-c", _CHILD.format(root=str(_ROOT), fd=theirs.fileno(), bell=self._bell)],
                pass_fds=(theirs.fileno(), self._bell), stdin=subprocess.DEVNULL,
                start_new_session=True)  # a Ctrl-C at the terminal is the parent's to handle, not the child's
        except OSError:
            ours.close()
            os.close(self._bell)
            raise
        finally:
            theirs.close()
        self._sock = ours
        self._read = bytearray()  # reply bytes received and not yet parsed
        self._loop: asyncio.AbstractEventLoop | None = None  # the loop reading the replies
        self._waiting: deque[tuple[asyncio.Future[np.ndarray], int, asyncio.TimerHandle, Then | None]] = deque()
        self._dropped = 0  # replies still owed to requests of a loop that is gone
        self.gone: str | None = None  # why the child is not asked any more
        self._finalizer = weakref.finalize(self, end_child, self._sock, self._bell, self._proc)
        config = {"onnx": str(onnx_path), "tokenizer": tokenizer_json, "max_length": max_length, "threads": threads}
        try:  # blocking, with a deadline: the embedder is loaded before the desk serves (on a worker thread)
            ours.settimeout(start_timeout_s)
            ours.sendall(_frame(json.dumps(config).encode()))  # read before the child listens for rings
            reply = self._reply(self._frame_from(ours))
            ours.setblocking(False)
        except (EncoderDeclined, EncoderGone, OSError) as exc:
            self.close(kill=True)
            raise EncoderGone(f"the encoder process did not start: {exc}") from exc
        self.dim = struct.unpack("<I", reply)[0]

    def submit(self, texts: list[str], then: Then | None = None) -> asyncio.Future[np.ndarray]:
        """Normalized vectors of `texts`, one row each, computed in the child. Raises EncoderDeclined when this
        request is not the child's (the caller computes it), EncoderGone when the child is gone; the future
        fails with either, the same way. `then(future)` is called as soon as the future is settled, in the same
        turn of the event loop (a done-callback would wait for the next one).
        """
        loop = asyncio.get_running_loop()
        if self.gone:
            raise EncoderGone(self.gone)
        if self._loop is not loop:
            self._attach(loop)
        try:
            frame = _frame(json.dumps(texts, ensure_ascii=False).encode())
        except UnicodeEncodeError as exc:
            raise EncoderDeclined("a text that is not valid Unicode") from exc
        if len(frame) > _SMALL_MESSAGE:
            raise EncoderDeclined(f"a request of {len(frame)} bytes")
        self._send(frame)
        fut: asyncio.Future[np.ndarray] = loop.create_future()
        timer = loop.call_later(self.timeout_s, self._fail, f"no reply in {self.timeout_s:g} s")
        self._waiting.append((fut, len(texts), timer, then))
        return fut

    def _send(self, frame: bytes) -> None:
        """Write a request and ring the child's bell once for it.

        The child sleeps on the bell (an eventfd), not on the socket: a socket's write wakes its reader as a
        "sync" wake-up, which Linux takes as a hint to run the reader on the writer's core, so the child
        preempted the event loop it was meant to run beside (a 1-3 ms stall at the write, measured). A ring
        wakes it on a free core.
        """
        try:
            sent = self._sock.send(frame)
        except BlockingIOError as exc:  # the child is behind: this one is computed by the caller
            raise EncoderDeclined("the encoder process's socket is full") from exc
        except OSError as exc:
            self._fail(f"the encoder process is not reachable ({exc.__class__.__name__})")
            raise EncoderGone(self.gone or "") from exc
        if sent != len(frame):  # half a request in the socket: the stream cannot be trusted any more
            self._fail("a request written in part")
            raise EncoderGone(self.gone or "")
        os.eventfd_write(self._bell, 1)

    def _attach(self, loop: asyncio.AbstractEventLoop) -> None:
        """Read the replies on `loop`: the first loop to ask, or a later one once the earlier one is closed (a
        loop still open elsewhere keeps the child; the others compute their own).
        """
        if self._loop is not None:
            if not self._loop.is_closed():
                raise EncoderDeclined("the encoder process serves another event loop")
            while self._waiting:  # the closed loop's requests: their replies are read and dropped
                _, _, timer, _ = self._waiting.popleft()
                timer.cancel()
                self._dropped += 1
        # In an empty context: the reader outlives the caller's turn, whose context (its answer's sink) it must
        # not keep.
        contextvars.Context().run(loop.add_reader, self._sock.fileno(), self._on_readable)
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
            self._fail("a reply nobody asked for")
            return
        fut, rows, timer, then = self._waiting.popleft()
        timer.cancel()
        try:
            vectors = np.frombuffer(self._reply(reply), np.float32).reshape(rows, self.dim).copy()
        except EncoderDeclined as exc:  # that request failed in the child; the child goes on
            _settle(fut, then, error=exc)
        except Exception as exc:  # noqa: BLE001 - a reply of the wrong size: the stream is broken
            _settle(fut, then, error=EncoderGone(f"a broken reply ({exc!r})"))
            self._fail("a broken reply")
        else:
            _settle(fut, then, vectors)

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
        if reply.startswith(ERROR):
            raise EncoderDeclined(reply[len(ERROR):].decode(errors="replace"))
        return reply[len(OK):]

    def _fail(self, why: str) -> None:
        """Stop asking the child: its requests fail with `why`, and it is killed."""
        if not self.gone:
            self.gone = why
            self.close(kill=True)

    @property
    def pid(self) -> int:
        """The child's process id."""
        return self._proc.pid

    def close(self, kill: bool = False) -> None:
        """End the child: closing the socket and ringing ends it (killed when `kill`, or if it does not end).
        Requests still in flight fail with EncoderGone (their callers compute them). Never blocks.
        """
        self.gone = self.gone or "closed"
        while self._waiting:
            fut, _, timer, then = self._waiting.popleft()
            timer.cancel()
            _settle(fut, then, error=EncoderGone(self.gone))
        if not self._finalizer.alive:
            return
        if self._loop is not None and not self._loop.is_closed():
            self._loop.remove_reader(self._sock.fileno())
        self._finalizer.detach()
        end_child(self._sock, self._bell, self._proc, kill)


def _settle(fut: asyncio.Future[np.ndarray], then: Then | None, vectors: np.ndarray | None = None,
            error: Exception | None = None) -> None:
    """Settle a request's future (unless its caller stopped waiting), then tell `then` at once."""
    if not fut.done():
        if vectors is not None:
            fut.set_result(vectors)
        else:
            fut.set_exception(error or EncoderGone("no reply"))
    if then is not None:
        try:
            then(fut)
        except Exception:  # noqa: BLE001 - one caller's mistake must not stop the replies behind it
            log.exception("an embedding's callback failed")


def _frame(message: bytes) -> bytes:
    """A message as multiprocessing's Connection frames it (the child reads it with one): length, then bytes."""
    return struct.pack("!i", len(message)) + message
