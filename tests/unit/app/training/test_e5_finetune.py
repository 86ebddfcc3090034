"""What the multilingual encoder is fine-tuned on, and the loss it learns with."""

from __future__ import annotations

import shutil

import torch

from app.training import e5_finetune
from app.training.router_finetune import contrastive_loss
from tools.company import DEFAULT_DIR, open_company


def test_a_company_folder_is_never_what_the_encoder_learns(tmp_path):
    """Knowledge edits refit heads only: neither the examples nor the fingerprint read the company's folder."""
    demo = open_company(DEFAULT_DIR)
    texts = {t for t, _ in e5_finetune.examples()}
    assert not texts & {e.answer for e in demo.faq.values()}
    assert all(label != "foreign" for _, label in e5_finetune.examples())
    before = e5_finetune.fingerprint()
    copy = tmp_path / "company"
    shutil.copytree(DEFAULT_DIR, copy)
    faq = copy / "faq.yaml"
    faq.write_text(faq.read_text(encoding="utf-8").replace("EUR", "USD"), encoding="utf-8")
    try:
        open_company(copy)
        assert e5_finetune.fingerprint() == before
    finally:
        open_company(DEFAULT_DIR)


def test_the_contrastive_loss_rewards_questions_of_a_route_side_by_side():
    y = torch.tensor([0, 0, 1, 1])
    together = torch.nn.functional.normalize(torch.tensor([[1.0, 0.1], [1.0, 0.0], [0.0, 1.0], [0.1, 1.0]]), dim=-1)
    crossed = together[[0, 2, 1, 3]]
    assert contrastive_loss(together, y) < contrastive_loss(crossed, y)
    assert contrastive_loss(together, torch.tensor([0, 1, 2, 3])) is None  # nothing to pull together
