"""The public intent data: licences beside it, mappings onto real routes, splits that never overlap."""

import pytest

from app.training.public_data import PUBLIC, data_files, public_sets, sample, validation_items
from app.training.router_data import finetune_examples, training_examples
from tools.company import DEFAULT_DIR
from tools.faq import load_faq
from tools.registry import INTENTS

ROUTES = {*INTENTS, "other", "handbook", "free_writing", "other_person"}


def _known(route: str) -> bool:
    faq = {f"faq:{e.id}" for e in load_faq(DEFAULT_DIR / "faq.yaml").values()}
    return route in ROUTES or route in faq


def _hwu64():
    return next(s for s in public_sets(include_report=True) if s.name == "HWU64")


def test_every_data_set_carries_its_licence_and_attribution():
    sets = public_sets(include_report=True)
    assert {s.name for s in sets} == {"CLINC150", "BANKING77", "HWU64"}
    for s in sets:
        folder = PUBLIC / s.name.lower()
        assert "Creative Commons" in (folder / "LICENSE").read_text()
    readme = (PUBLIC / "README.md").read_text()
    assert "Larson" in readme and "Casanueva" in readme and "Liu, Eshghi" in readme
    hwu = (PUBLIC / "hwu64" / "README.md").read_text()
    assert "Liu" in hwu and "CC BY 4.0" in hwu and "KFold_1/testset" in hwu


def test_mapped_and_grey_intents_name_routes_the_desk_has_and_say_why():
    for s in public_sets(include_report=True):
        for intent, m in {**s.mapped, **s.grey}.items():
            assert m["note"], intent
            assert all(_known(r) for r in m.get("routes", m.get("fine", []))), intent


def test_the_splits_never_share_a_query():
    for s in public_sets():
        train = {it.q for it in s.split("train")}
        val = {it.q for it in s.split("val")}
        test = {it.q for it in s.split("test")}
        assert val and test
        # The published splits carry a few duplicate queries (CLINC 2 train/test, 3 train/val), no more.
        assert len(train & test) <= 0.01 * len(test) and len(train & val) <= 0.01 * len(val)


def test_clinc_reads_as_the_desk_would_answer_it():
    clinc = next(s for s in public_sets() if s.name == "CLINC150")
    test = clinc.split("test")
    kinds = {it.intent: it.kind for it in test}
    assert kinds["pto_balance"] == "mapped" and kinds["pto_request"] == "grey" and kinds["oos"] == "ood"
    assert sum(it.kind == "mapped" for it in test) == 150  # 5 mapped intents of 30 test queries


def test_training_learns_out_of_domain_queries_as_other_and_mapped_ones_as_their_route():
    pairs = dict(training_examples())
    clinc = next(s for s in public_sets() if s.name == "CLINC150")
    income = [it.q for it in clinc.split("train") if it.intent == "income"]
    assert sum(pairs.get(q) == "salary" for q in income) >= 25
    banking = [it for it in clinc.split("train") if it.intent == "balance"]
    assert any(pairs.get(it.q) == "other" for it in banking)
    grey = [it.q for it in clinc.split("train") if it.kind == "grey"]
    assert not any(q in pairs for q in grey)


def test_a_sample_takes_the_first_queries_of_every_intent():
    items = public_sets()[0].split("test")
    got = sample(items, 2)
    assert len(got) == 2 * len({it.intent for it in items})
    for intent in {it.intent for it in items}:  # the first two of each intent, in the file's order: a stable sample
        assert [it for it in got if it.intent == intent] == [it for it in items if it.intent == intent][:2]


def test_the_report_only_set_is_left_out_of_everything_training_reads():
    hwu = _hwu64()
    assert hwu.report_only and not any(s.report_only for s in public_sets())
    assert "HWU64" not in {s.name for s in public_sets()}  # what with_public and validation_items iterate
    assert hwu.train_pairs(30) == [] and hwu.split("train") == [] and hwu.split("val") == []
    # A few short queries are word for word in CLINC150 too ("what is today"): only those may be learned from.
    texts = {it.q for it in hwu.split("test")}
    elsewhere = {t for t, _ in training_examples(public=False)}
    elsewhere |= {it.q for s in public_sets() for split in ("train", "val") for it in s.split(split)}
    assert not texts & {t for t, _ in training_examples()} - elsewhere
    assert not texts & {t for t, _ in finetune_examples()} - elsewhere
    assert not texts & {it["q"] for it in validation_items()} - elsewhere
    # The router's fingerprint reads these files: a report-only set is not among them, so adding it never
    # retrains the cached routers.
    assert not any("hwu64" in str(path) for path in data_files())


def test_hwu64_test_split_reads_as_the_desk_would_answer_it():
    test = _hwu64().split("test")
    assert len(test) == 1076 and len({it.intent for it in test}) == 64
    kinds = {it.intent: it.kind for it in test}
    assert kinds["weather_query"] == "mapped" and kinds["email_sendemail"] == "grey" and kinds["alarm_set"] == "ood"
    assert sum(it.kind == "mapped" for it in test) == 19  # weather_query: 19 test queries
    assert sum(it.kind == "grey" for it in test) == 4 * 19 and sum(it.kind == "ood" for it in test) == 981


def test_a_mapping_with_an_unknown_role_is_refused_not_trained_on(tmp_path):
    (tmp_path / "x.yaml").write_text("name: X\nrole: reprot\nreader: csv\nfiles: {test: x.csv}\n")
    with pytest.raises(ValueError, match="unknown role"):
        public_sets(tmp_path)
