import shutil

import pytest

from app.settings import Settings
from app.training import router_train
from app.training.router_train import encoder_dir, finetuned_encoder, fingerprint, for_company, model_dir
from tools.company import DEFAULT_DIR, current, load_company, use
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


@pytest.fixture
def edited_company(tmp_path):
    """A copy of the demo company's folder with one answer's figure changed and one entry added, in use."""
    folder = tmp_path / "company"
    shutil.copytree(DEFAULT_DIR, folder)
    faq = (folder / "faq.yaml").read_text(encoding="utf-8")
    faq = faq.replace("30-minute unpaid lunch break", "45-minute unpaid lunch break", 1)
    faq += '- id: canteen-hours\n  question: "When is the canteen open?"\n  answer: "From 11:30 to 14:00."\n'
    (folder / "faq.yaml").write_text(faq, encoding="utf-8")
    before = current()
    use(load_company(folder))
    yield folder
    use(before)


def test_a_knowledge_edit_refits_the_head_and_never_fine_tunes_the_encoder(tmp_path, edited_company, monkeypatch):
    settings = Settings(_env_file=None, cache_dir=tmp_path / "cache", company_dir=edited_company)
    edited = (model_dir(settings, "finetuned", BASE), encoder_dir(settings, BASE))
    use(load_company(DEFAULT_DIR))
    demo = (model_dir(settings, "finetuned", BASE), encoder_dir(settings, BASE))
    assert edited[0] != demo[0], "the head is fitted again for the edited FAQ"
    assert edited[1] == demo[1], "the encoder is the same: it never learned the FAQ"
    assert "canteen-hours" not in {lab[4:] for _, lab in router_train.finetune_examples()}
    shutil.copytree(BASE, demo[1])  # stands in for the seeded fine-tuning's result

    def finetune(*_args):
        raise LookupError("fine-tuned again")

    monkeypatch.setattr(router_train, "finetune", finetune)
    assert finetuned_encoder(settings, BASE) == demo[1]  # found: fine-tuning again would raise
    shutil.rmtree(demo[1])
    with pytest.raises(LookupError):  # no encoder for this labelled data yet: that one is fine-tuned
        finetuned_encoder(settings, BASE)
    assert not list(demo[1].parent.glob("*.tmp-*"))


def test_a_question_about_an_entry_the_company_lacks_is_a_handbook_question(edited_company):
    faq = current().faq
    items = [{"q": "is lunch paid?", "route": "faq:lunch-break"}, {"q": "what about my pension?", "route": "faq:x"},
             {"q": "my payslip", "route": "salary"}]
    assert [it["route"] for it in for_company(items, faq)] == ["faq:lunch-break", "handbook", "salary"]
    pairs = router_train.training_examples(public=False)
    assert ("When is the canteen open?", "faq:canteen-hours") in pairs
