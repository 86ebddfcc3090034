import shutil

import pytest

from app.settings import Settings
from app.training import router_train
from app.training.router_train import finetuned_encoder, fingerprint, model_dir
from tools.embeddings import bundled_model_path
from tools.onnx_export import INT8_RECIPE

BASE = bundled_model_path()


def test_an_int8_encoders_head_is_cached_apart_from_the_float_ones(tmp_path):
    int8 = Settings(_env_file=None, cache_dir=tmp_path, router_int8=True)
    float32 = Settings(_env_file=None, cache_dir=tmp_path, router_int8=False)
    on_torch = Settings(_env_file=None, cache_dir=tmp_path, router_int8=True, embed_backend="torch")
    fp = fingerprint("finetuned", BASE)
    assert model_dir(int8, "finetuned", BASE).name == f"router-finetuned-{INT8_RECIPE}-{fp}"
    assert model_dir(float32, "finetuned", BASE).name == model_dir(on_torch, "finetuned", BASE).name \
        == f"router-finetuned-{fp}"  # torch serves float vectors: the float head
    assert model_dir(int8, "frozen", BASE) == model_dir(float32, "frozen", BASE)  # shares the app's float encoder


def test_the_int8_head_reuses_the_encoder_the_float_one_fine_tuned(tmp_path, monkeypatch):
    settings = Settings(_env_file=None, cache_dir=tmp_path, router_int8=True)
    done = model_dir(Settings(_env_file=None, cache_dir=tmp_path, router_int8=False), "finetuned", BASE)
    tuned = done / "encoder"
    shutil.copytree(BASE, tuned)  # stands in for the seeded fine-tuning's result
    keep = model_dir(settings, "finetuned", BASE) / "encoder"
    (keep / "stale").mkdir(parents=True)  # what a copy that stopped half-way left

    def finetune(*_args):
        raise LookupError("fine-tuned again")

    monkeypatch.setattr(router_train, "finetune", finetune)
    with pytest.raises(LookupError):  # the float run's head is not saved yet: its encoder may be partial
        finetuned_encoder(settings, BASE, keep)
    assert not list(keep.parent.glob("*.tmp-*"))
    (done / "meta.json").write_text("{}")
    assert finetuned_encoder(settings, BASE, keep) == keep  # copied: fine-tuning again would raise
    assert (keep / "config.json").exists()
    assert sorted(p.name for p in keep.iterdir()) == sorted(p.name for p in tuned.iterdir())
