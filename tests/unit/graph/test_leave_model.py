"""The leave-type classifiers at run time: sure only over their threshold, restricted to the types named."""

import numpy as np

from graph.leave_model import NONE, LeaveTypeModel, LeaveTypes

CLASSES = ["maternity", "parental", "paternity", NONE]


def model(threshold: float) -> LeaveTypeModel:
    """Each class's weights point along its own axis: a vector along an axis is that class, strongly."""
    return LeaveTypeModel(CLASSES, np.eye(4, dtype=np.float32) * 8, np.zeros(4, np.float32), {"threshold": threshold})


def along(i: int, strength: float = 1.0) -> np.ndarray:
    vec = np.full(4, (1 - strength) / 2, np.float32)
    vec[i] = strength
    return vec


def test_a_model_is_taken_only_when_it_is_sure():
    assert model(0.9).sure(along(1)) == "parental"
    assert model(0.9).sure(np.full(4, 0.5, np.float32)) is None  # every class alike: not sure
    assert model(1.01).sure(along(1)) is None  # a model whose threshold was never chosen is never taken


def test_a_question_naming_several_types_takes_only_one_of_them():
    m = model(0.5)
    assert m.pick(along(0), []) == "maternity"
    assert m.pick(along(0), ["maternity", "paternity"]) == "maternity"
    assert m.pick(along(1), ["maternity", "paternity"]) is None  # not among those named: the next method decides
    assert m.pick(along(3), ["maternity", "paternity"]) is None  # "none" of two named types is not an answer


def test_the_two_models_come_back_as_they_were_saved(tmp_path):
    saved = LeaveTypes(model(0.77), model(0.34))
    saved.full.meta["C"] = 4.0
    saved.save(tmp_path)
    loaded = LeaveTypes.load(tmp_path)
    assert loaded.fast.classes == CLASSES and loaded.full.threshold == 0.34 and loaded.full.meta["C"] == 4.0
    vec = along(2, 0.6)
    assert np.allclose(loaded.fast.probs(vec), saved.fast.probs(vec))
