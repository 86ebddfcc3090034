"""The shipped router on a sample of the public test sets: questions nobody on the project wrote.

The sample is the first queries of every intent of CLINC150's, BANKING77's and HWU64's test splits
(stable, so a failure is the router's, not the draw's); `python -m app calibrate --public` runs them all.
HWU64 is report-only: the router never trains or chooses on it, so it is the held-out check of issue 23.
"""

import pytest

from app.training.calibrate_public import OOD_TARGET, evaluate_public
from app.training.router_train import load_router

PER_INTENT = 6
MIN_OOD = {"CLINC150": 400, "BANKING77": 400, "HWU64": 300}  # out-of-domain queries in each sample, at least


@pytest.fixture(scope="module")
async def public():
    return await evaluate_public(load_router(standalone=True), PER_INTENT)


async def test_out_of_domain_questions_rarely_take_a_shortcut(public):
    assert set(public) == set(MIN_OOD)
    for name, r in public.items():
        o = r["out_of_domain"]
        assert o["items"] >= MIN_OOD[name], name
        assert o["wrong_rate"] <= OOD_TARGET, (name, o["worst_confusions"], o["examples"])


async def test_in_domain_questions_take_their_own_shortcut(public):
    i = public["CLINC150"]["in_domain"]
    assert i["items"] == 5 * PER_INTENT
    # The target is 90% (RECALL_TARGET): the shipped router reaches 92.7% on the full test split and 29 of 30
    # on this sample; 80% here is a floor against losing ground that a retrain's noise does not trip.
    assert i["recall"] >= 0.8, i["per_intent"]
    assert i["wrong_shortcuts"] == 0, i["per_intent"]


async def test_grey_intents_are_reported_not_scored(public):
    grey = public["CLINC150"]["grey"]
    assert "pto_request" in grey and sum(grey["pto_request"].values()) == PER_INTENT


async def test_the_held_out_set_is_reported_with_the_same_bounds(public):
    hwu = public["HWU64"]
    assert hwu["report_only"] and not public["CLINC150"]["report_only"]
    i = hwu["in_domain"]
    assert i["items"] == PER_INTENT and set(i["per_intent"]) == {"weather_query"}
    assert i["wrong_shortcuts"] == 0, i["per_intent"]  # in-domain wrong shortcuts <= 1%: none of 6
    assert sum(hwu["grey"]["email_sendemail"].values()) == PER_INTENT
