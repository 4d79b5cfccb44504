import numpy as np
import pandas as pd
import pytest

from plausible.data import Labels, Votes


def test_from_counts_defaults_and_properties():
    votes = Votes.from_counts([[3, 0, 1], [0, 2, 2]])
    assert votes.counts.dtype == np.int64
    assert (votes.n_items, votes.n_classes) == (2, 3)
    np.testing.assert_array_equal(votes.items, [0, 1])
    np.testing.assert_array_equal(votes.classes, [0, 1, 2])


def test_integer_valued_floats_are_accepted():
    votes = Votes.from_counts(np.array([[1.0, 2.0]]), items=["a"], classes=["x", "y"])
    assert votes.counts.dtype == np.int64
    np.testing.assert_array_equal(votes.counts, [[1, 2]])


@pytest.mark.parametrize(
    ("counts", "match"),
    [
        ([[1, 0], [2, -1]], r"item 'img_2', class 'dog': count -1 is negative"),
        ([[1, 0], [2, 0.5]], r"item 'img_2', class 'dog': count 0.5 is not an integer"),
        ([[1, 0], [0, 0]], r"item 'img_2' has no votes"),
    ],
)
def test_invalid_counts_name_item_and_class(counts, match):
    with pytest.raises(ValueError, match=match):
        Votes.from_counts(np.array(counts), items=["img_1", "img_2"], classes=["cat", "dog"])


def test_counts_must_hold_numbers():
    with pytest.raises(ValueError, match="must hold integers"):
        Votes.from_counts(np.array([["1", "2"]]))


def test_id_shape_mismatch_and_duplicates():
    with pytest.raises(ValueError, match="expected 2 item ids, got 3"):
        Votes.from_counts([[1, 0], [0, 1]], items=["a", "b", "c"])
    with pytest.raises(ValueError, match="expected 2 class ids, got 1"):
        Votes.from_counts([[1, 0], [0, 1]], classes=["cat"])
    with pytest.raises(ValueError, match="item 'a' appears twice"):
        Votes.from_counts([[1, 0], [0, 1]], items=["a", "a"])
    with pytest.raises(ValueError, match="class 'cat' appears twice"):
        Votes.from_counts([[1, 0], [0, 1]], classes=["cat", "cat"])


def test_from_labels_counts_each_items_labels():
    frame = pd.DataFrame({
        "item": ["q", "q", "q", "p", "p"],
        "annotator": [1, 2, 2, 1, 3],
        "label": ["no", "yes", "yes", "no", "maybe"],
    })
    votes = Votes.from_labels(Labels.from_frame(frame))
    np.testing.assert_array_equal(votes.items, ["q", "p"])
    np.testing.assert_array_equal(votes.classes, ["maybe", "no", "yes"])
    np.testing.assert_array_equal(votes.counts, [[0, 1, 2], [1, 1, 0]])
