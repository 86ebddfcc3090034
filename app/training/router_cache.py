"""Where the router's trained parts are kept, and what each is keyed by: the fine-tuned encoder by the labelled data
and its recipe alone, the heads by that and the company's FAQ (its ways of asking), the vectors by the encoder,
the C a grid chose by the encoder and the labelled data. A knowledge edit therefore changes only the heads' keys.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from app.settings import ROOT, Settings
from app.training.public_data import data_files
from app.training.router_finetune import SEED
from tools.company import current
from tools.embeddings import bundled_model_path
from tools.faq import FaqEntry
from tools.onnx_export import INT8_RECIPE

DATA = ROOT / "data" / "router"
# Bump when training changes in a way that changes the model: the head's recipe, and the encoder's.
RECIPE = "lr-c-grid+supcon-2ep+public-ood+temperature+family-floors+offer-window+company-faq/12"
ENCODER_RECIPE = "supcon-2ep+labelled-train+public-sample/2"

def company_faq() -> dict[str, FaqEntry]:
    """The FAQ of the company the desk speaks for (`tools/company.py`)."""
    return current().faq


def _base(embedder_name: str) -> str:
    """The bundled model named by what it is, not by where a virtualenv put it: every clone shares one cache."""
    return "bundled:all-MiniLM-L6-v2" if embedder_name == bundled_model_path() else embedder_name


def encoder_fingerprint(embedder_name: str) -> str:
    """Changes whenever what the encoder is fine-tuned on (the labelled train split, the public data), its recipe or
    its base model changes; never with a company's knowledge.
    """
    h = hashlib.sha256(f"encoder|{_base(embedder_name)}|{SEED}|{ENCODER_RECIPE}".encode())
    for path in [*sorted(DATA.glob("train*.yaml")), *data_files()]:
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


def faq_fingerprint(faq: dict[str, FaqEntry]) -> str:
    """Changes whenever an FAQ entry is added or removed or a way of asking it changes; an answer's wording does
    not (the heads never read it: an answer edited is served at the next start, or reload, with nothing refitted).
    """
    h = hashlib.sha256()
    for e in faq.values():
        h.update("\0".join([e.id, e.question, *e.paraphrases]).encode() + b"\1")
    return h.hexdigest()[:16]


def fingerprint(kind: str, embedder_name: str, with_faq: bool = True) -> str:
    """The head's key: changes whenever the labelled data, the company's FAQ (unless not `with_faq`), the recipe
    (`RECIPE`) or the encoder under it changes.
    """
    faq = faq_fingerprint(company_faq()) if with_faq else "any company"
    h = hashlib.sha256(f"{kind}|{_base(embedder_name)}|{SEED}|{RECIPE}|{faq}".encode())
    if kind == "finetuned":
        h.update(encoder_fingerprint(embedder_name).encode())
    for path in [*sorted(DATA.glob("*.yaml")), *data_files()]:
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


def model_dir(settings: Settings, kind: str, embedder_name: str) -> Path:
    """Cache folder of one trained head. An int8 encoder's head is its own model (`int8_encoder`), keyed by how
    the weights are quantized too: a head fits the vectors of one recipe.
    """
    return settings.cache_dir / "models" / f"router-{variant(settings, kind)}-{fingerprint(kind, embedder_name)}"


def variant(settings: Settings, kind: str) -> str:
    """A candidate's name with the vectors its head reads: `finetuned-int8pc`, `finetuned`, `frozen`."""
    return f"{kind}-{INT8_RECIPE}" if int8_encoder(settings, kind) else kind


def encoder_dir(settings: Settings, embedder_name: str) -> Path:
    """Cache folder of the fine-tuned encoder (float and int8 heads read the same one)."""
    return settings.cache_dir / "models" / f"router-encoder-{encoder_fingerprint(embedder_name)}"


def c_record(settings: Settings, name: str) -> Path:
    """Where the C chosen for a head over one encoder and labelled data is kept: chosen on dev + public val over the
    whole grid once (at set-up, for the first company), then reused when a knowledge edit refits the head, which
    then costs one fit instead of a grid (C weighs the labelled data's scale, not one company's FAQ).
    """
    return settings.cache_dir / "models" / f"c-{name}.json"


def known_c(record: Path) -> float | None:
    """The C kept in `record`, if any."""
    try:
        return float(json.loads(record.read_text())["C"])
    except (FileNotFoundError, ValueError, KeyError):
        return None


def remember_c(record: Path, c: float) -> None:
    """Keep the C a grid chose (written whole, then moved into place)."""
    tmp = record.with_name(f"{record.name}.tmp-{os.getpid()}")
    tmp.write_text(json.dumps({"C": c}) + "\n")
    tmp.replace(record)


def vectors_key(settings: Settings, kind: str, embedder_name: str) -> str:
    """What the cached vectors of a candidate's encoder are filed under: which encoder, served how."""
    if kind == "frozen":
        return f"frozen-{hashlib.sha256(_base(embedder_name).encode()).hexdigest()[:16]}"
    return f"{encoder_dir(settings, embedder_name).name}-{'int8' if int8_encoder(settings, kind) else 'float'}"


def int8_encoder(settings: Settings, kind: str) -> bool:
    """Whether this candidate's encoder is served with int8 weights: the fine-tuned one, when asked for and ONNX
    Runtime serves it (`Settings.router_int8`). The frozen candidate shares the app's float encoder.
    """
    return kind == "finetuned" and settings.router_int8 and settings.embed_backend == "onnx"
