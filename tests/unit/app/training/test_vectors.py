"""Vectors cached by content: a knowledge edit embeds only the texts that changed."""

import numpy as np

from app.training.vectors import CachedEncoder


class Counting:
    """A stand-in encoder that counts the texts it is asked to embed."""

    name = "counting"
    dim = 3

    def __init__(self) -> None:
        self.seen: list[str] = []

    def embed(self, texts):
        self.seen += texts
        return np.array([[len(t), t.count("a"), 1.0] for t in texts], np.float32)


def test_only_texts_never_seen_are_embedded_and_order_is_kept(tmp_path):
    enc = Counting()
    first = CachedEncoder(enc, "k", tmp_path).embed(["payday", "lunch", "payday"])
    assert enc.seen == ["payday", "lunch"]  # a text twice in one call is embedded once
    assert first[:, 0].tolist() == [6, 5, 6]
    again = CachedEncoder(enc, "k", tmp_path)  # another process, the same cache file
    out = again.embed(["lunch", "bike lease", "payday"])
    assert enc.seen == ["payday", "lunch", "bike lease"]
    assert (again.embedded, again.reused) == (1, 2)
    assert out[:, 0].tolist() == [5, 10, 6]
    assert CachedEncoder(enc, "other encoder", tmp_path).embed(["lunch"]).shape == (1, 3)
    assert enc.seen[-1] == "lunch"  # another encoder's key keeps vectors of its own
