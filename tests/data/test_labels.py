import numpy as np
import pandas as pd
import pytest

from plausible.data import Labels

FRAME = pd.DataFrame({
    "task": ["t1", "t1", "t2", "t2", "t2", "t3"],
    "worker": ["w1", "w2", "w1", "w1", "w3", "w2"],
    "label": [1, 0, 1, 1, 0, 1],
})


def test_from_frame_indices_ids_and_round_trip():
    labels = Labels.from_frame(FRAME, item="task", annotator="worker")
    np.testing.assert_array_equal(labels.items, ["t1", "t2", "t3"])
    np.testing.assert_array_equal(labels.annotators, ["w1", "w2", "w3"])
    np.testing.assert_array_equal(labels.classes, [0, 1])
    np.testing.assert_array_equal(labels.item, [0, 0, 1, 1, 1, 2])
    np.testing.assert_array_equal(labels.annotator, [0, 1, 0, 0, 2, 1])
    np.testing.assert_array_equal(labels.label, [1, 0, 1, 1, 0, 1])
    assert (labels.n_items, labels.n_annotators, labels.n_classes, labels.n_annotations) == (3, 3, 2, 6)
    back = labels.to_frame()
    assert list(back.columns) == ["item", "annotator", "label"]
    np.testing.assert_array_equal(back.to_numpy(), FRAME.to_numpy())


def test_declared_ids_define_the_order():
    labels = Labels.from_frame(
        FRAME, item="task", annotator="worker", classes=[1, 0, 2], annotators=["w3", "w2", "w1", "w4"],
    )
    np.testing.assert_array_equal(labels.label, [0, 1, 0, 0, 1, 0])
    np.testing.assert_array_equal(labels.annotator, [2, 1, 2, 2, 0, 1])
    assert labels.n_annotators == 4


def test_label_outside_declared_classes():
    frame = FRAME.assign(label=[1, 0, 1, 2, 0, 1])
    with pytest.raises(ValueError, match=r"item 't2', annotator 'w1': label 2 is not one of the classes"):
        Labels.from_frame(frame, item="task", annotator="worker", classes=[0, 1])


def test_unknown_annotator():
    with pytest.raises(ValueError, match=r"item 't2': unknown annotator 'w3'"):
        Labels.from_frame(FRAME, item="task", annotator="worker", annotators=["w1", "w2"])


def test_declared_item_without_labels():
    with pytest.raises(ValueError, match=r"item 't4' has no labels"):
        Labels.from_frame(FRAME, item="task", annotator="worker", items=["t1", "t2", "t3", "t4"])


def test_undeclared_item():
    with pytest.raises(ValueError, match=r"item 't3' \(annotator 'w2'\) is not among the declared items"):
        Labels.from_frame(FRAME, item="task", annotator="worker", items=["t1", "t2"])


@pytest.mark.parametrize("missing", [np.nan, None])
def test_missing_label_names_item_and_annotator(missing):
    frame = FRAME.assign(label=[1, 0, 1, missing, 0, 1])
    with pytest.raises(ValueError, match=r"row 3: missing 'label' \(task='t2', worker='w1'\)"):
        Labels.from_frame(frame, item="task", annotator="worker")


def test_crowd_kit_and_project_column_names_are_the_defaults():
    named = Labels.from_frame(FRAME, item="task", annotator="worker")
    for frame in (FRAME, FRAME.rename(columns={"task": "item", "worker": "annotator"})):
        default = Labels.from_frame(frame)
        for field in ("item", "annotator", "label", "items", "annotators", "classes"):
            np.testing.assert_array_equal(getattr(default, field), getattr(named, field))


def test_missing_column():
    with pytest.raises(ValueError, match=r"no annotator column \(default names: "
                                         r"worker/annotator; name it with annotator=\)"):
        Labels.from_frame(FRAME.drop(columns="worker"))
    with pytest.raises(ValueError, match=r"column 'coder' \(the annotator\) is not in the table"):
        Labels.from_frame(FRAME, annotator="coder")


def test_direct_construction_is_validated():
    with pytest.raises(ValueError, match=r"item 'b': annotator index 2 out of range for 2 annotators"):
        Labels([0, 1], [0, 2], [0, 0], ["a", "b"], ["u", "v"], [0, 1])
    with pytest.raises(ValueError, match=r"item 'b', annotator 'v': class index 3 out of range"):
        Labels([0, 1], [0, 1], [0, 3], ["a", "b"], ["u", "v"], [0, 1])
