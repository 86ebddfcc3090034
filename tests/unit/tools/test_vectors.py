"""`_parse`: Redis VSIM replies (RESP2 and RESP3) become hits with cosine scores and decoded attributes."""

import json

import pytest

from tools.vectors import Hit, _parse


@pytest.mark.parametrize("raw", [None, [], {}, b""])
def test_an_empty_reply_means_no_hits(raw):
    assert _parse(raw) == []


def test_resp2_flat_reply_is_read_three_items_at_a_time_keeping_the_order():
    raw = [b"faq:payday", b"0.9", json.dumps({"id": "payday", "scope": "all"}).encode(),
           b"faq:leave", b"0.75", b'{"id": "apply-leave"}']
    assert _parse(raw) == [Hit("faq:payday", pytest.approx(0.8), {"id": "payday", "scope": "all"}),
                           Hit("faq:leave", pytest.approx(0.5), {"id": "apply-leave"})]


def test_scores_are_turned_back_into_cosine_similarities():
    # Redis reports (1 + cos) / 2; thresholds in the app are cosine values.
    raw = [b"same", b"1", None, b"orthogonal", b"0.5", None, b"opposite", b"0", None]
    assert [h.score for h in _parse(raw)] == [1.0, 0.0, -1.0]


def test_missing_or_empty_attributes_become_an_empty_dict():
    raw = [b"a", b"0.8", None, b"b", b"0.7", b""]
    assert [h.attrs for h in _parse(raw)] == [{}, {}]


def test_resp3_map_reply_with_scores_and_attributes():
    raw = {b"kb:1": [0.9, b'{"title": "Annual leave"}'], b"kb:2": [0.6, None]}
    assert _parse(raw) == [Hit("kb:1", pytest.approx(0.8), {"title": "Annual leave"}),
                           Hit("kb:2", pytest.approx(0.2), {})]


def test_resp3_map_reply_with_bare_scores():
    assert _parse({b"kb:1": 0.75}) == [Hit("kb:1", 0.5, {})]


def test_decoded_strings_and_non_ascii_names_are_accepted():
    attrs = {"name": "Zoë", "city": "Malmö"}
    raw = ["E1001:Zoë".encode(), "0.95", json.dumps(attrs, ensure_ascii=False).encode()]
    (hit,) = _parse(raw)
    assert hit.name == "E1001:Zoë" and hit.attrs == attrs and hit.score == pytest.approx(0.9)
    (hit,) = _parse(["plain", "0.95", json.dumps(attrs)])  # a client with decode_responses=True
    assert hit.name == "plain" and hit.attrs == attrs
