"""Fine-tuning the router's encoder: supervised contrastive learning on the labelled questions (seeded, CPU).

Questions of one route are pulled together and the others pushed apart, so that the head over the encoder
(app/training/router_train.py) separates routes the frozen MiniLM puts side by side.
"""

from __future__ import annotations

from typing import Any

from tools.embeddings import Embedder

SEED = 7  # every random choice of training: the same data gives the same router


def contrastive_loss(z: Any, y: Any, temperature: float = 0.1) -> Any:
    """Supervised contrastive loss of unit vectors `z` with labels `y`: each pulled towards the batch's others of
    its label and away from the rest; None when no two share a label.
    """
    import torch

    eye = torch.eye(len(y))
    same = (y[:, None] == y[None, :]).float() - eye
    logits = z @ z.T / temperature - eye * 1e9
    log_prob = logits - torch.logsumexp(logits, dim=1, keepdim=True)
    has = same.sum(1) > 0
    if not has.any():
        return None
    return -((same * log_prob).sum(1)[has] / same.sum(1)[has]).mean()


def finetune(base: str, pairs: list[tuple[str, str]], epochs: int = 2, batch: int = 32) -> Embedder:
    """Supervised contrastive fine-tuning of MiniLM on the training split (seeded, CPU)."""
    import random

    import torch
    from tqdm.auto import tqdm

    torch.manual_seed(SEED)
    random.seed(SEED)
    emb = Embedder(base, backend="torch")  # trained with torch; served through ONNX Runtime
    model = emb._model  # noqa: SLF001 - the SentenceTransformer itself
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-5)
    names = sorted({lab for _, lab in pairs})
    index = {n: i for i, n in enumerate(names)}
    order = list(range(len(pairs)))
    bar = tqdm(total=epochs * ((len(order) + batch - 1) // batch), desc="fine-tuning the router's encoder",
               unit="batch", mininterval=5)
    for _ in range(epochs):
        random.shuffle(order)
        for start in range(0, len(order), batch):
            bar.update()
            rows = [pairs[i] for i in order[start:start + batch]]
            features = model.tokenize([t for t, _ in rows])
            out = model(features)["sentence_embedding"]
            z = torch.nn.functional.normalize(out, dim=-1)
            loss = contrastive_loss(z, torch.tensor([index[lab] for _, lab in rows]))
            if loss is None:
                continue
            opt.zero_grad()
            loss.backward()
            opt.step()
    bar.close()
    model.eval()
    return emb
