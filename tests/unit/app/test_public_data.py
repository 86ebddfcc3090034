"""The public intent data: licences beside it, mappings onto real routes, splits that never overlap."""

from app.public_data import PUBLIC, public_sets, sample
from app.router_train import training_examples
from tools.faq import load_faq
from tools.registry import INTENTS

ROUTES = {*INTENTS, "other", "handbook", "free_writing", "other_person"}


def _known(route: str) -> bool:
    faq = {f"faq:{e.id}" for e in load_faq(PUBLIC.parent.parent / "faq.yaml").values()}
    return route in ROUTES or route in faq


def test_every_data_set_carries_its_licence_and_attribution():
    sets = public_sets()
    assert {s.name for s in sets} == {"CLINC150", "BANKING77"}
    for s in sets:
        folder = PUBLIC / s.name.lower()
        assert "Creative Commons" in (folder / "LICENSE").read_text()
    assert "Larson" in (PUBLIC / "README.md").read_text() and "Casanueva" in (PUBLIC / "README.md").read_text()


def test_mapped_and_grey_intents_name_routes_the_desk_has_and_say_why():
    for s in public_sets():
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
