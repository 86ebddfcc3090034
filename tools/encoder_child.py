"""The encoder process's own side (tools/encoder_process.py starts it): load the encoder, then embed each
request's texts until the parent closes the socket. Imports only the standard library, numpy, tokenizers and
ONNX Runtime (through `tools.onnx_export`), so it starts in about a second and holds only the model.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import struct
from multiprocessing.connection import Connection
from typing import Any

import numpy as np

OK, ERROR = b"OK\0\0", b"ER"  # a reply's first bytes (four for OK: the vectors after it stay aligned)


def serve(fd: int, bell: int) -> None:
    """The child: load the encoder, then embed each request's texts until the parent closes the socket."""
    try:
        _serve_until_closed(Connection(fd), bell)
    except (EOFError, OSError):  # the parent closed its end, or died, mid-way
        return


def _serve_until_closed(conn: Connection, bell: int) -> None:
    parent = os.getppid()
    with contextlib.suppress(AttributeError, OSError):  # see the module's docstring; ONNX Runtime's threads inherit it
        os.sched_setscheduler(0, os.SCHED_BATCH, os.sched_param(0))
    config = json.loads(conn.recv_bytes())
    try:
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
        conn.send_bytes(ERROR + f"the encoder did not load: {exc!r}".encode())
        return
    conn.send_bytes(OK + struct.pack("<I", dim))
    sleeper = select.poll()
    sleeper.register(bell, select.POLLIN)
    while True:
        if not sleeper.poll(1000):  # asleep until a request rings
            if os.getppid() != parent:  # the parent died without closing
                return
            continue
        os.eventfd_read(bell)  # one ring, one request (or the parent's last: then the socket is at its end)
        message = conn.recv_bytes()
        try:
            vectors = np.stack([embed(text) for text in json.loads(message)]).astype(np.float32)
            conn.send_bytes(OK + vectors.tobytes())
        except Exception as exc:  # noqa: BLE001 - one bad request, not the end of the process
            conn.send_bytes(ERROR + repr(exc).encode())
