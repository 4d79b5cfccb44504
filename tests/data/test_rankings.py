import numpy as np
import pandas as pd
import pytest

from plausible.data import NO_READER, UNRANKED, Rankings

# case "a": reader 0 ranks {0, 3} > {2}, reader 1 ranks {1} > {0}; case "b": one reader, {2}.
SELECTORS = [[[[0, 3], [2]], [[1], [0]]], [[[2]]]]


def test_from_selectors_flat_arrays():
    rankings = Rankings.from_selectors(SELECTORS, classes=5, items=["a", "b"])
    np.testing.assert_array_equal(rankings.item, [0, 0, 0, 0, 0, 1])
    np.testing.assert_array_equal(rankings.reader, [0, 0, 0, 1, 1, 0])
    np.testing.assert_array_equal(rankings.label, [0, 3, 2, 1, 0, 2])
    np.testing.assert_array_equal(rankings.block, [0, 0, 1, 0, 1, 0])
    np.testing.assert_array_equal(rankings.n_readers, [2, 1])
    np.testing.assert_array_equal(rankings.flat_reader, [0, 0, 0, 1, 1, 2])
    assert (rankings.n_items, rankings.n_classes, rankings.n_entries, rankings.max_readers) == (2, 5, 6, 2)
    assert rankings.readers is None
    assert all(a.dtype == np.int64 for a in (rankings.item, rankings.reader, rankings.label, rankings.block))


def test_selectors_round_trip_and_default_classes():
    rankings = Rankings.from_selectors(SELECTORS)
    np.testing.assert_array_equal(rankings.classes, np.arange(4))
    np.testing.assert_array_equal(rankings.items, [0, 1])
    assert rankings.to_selectors() == SELECTORS
    assert Rankings.from_selectors([]).to_selectors() == []


def test_class_names():
    rankings = Rankings.from_selectors(SELECTORS, classes=["acne", "eczema", "melanoma", "psoriasis"])
    np.testing.assert_array_equal(rankings.classes[rankings.label[:2]], ["acne", "psoriasis"])


def test_blocks_dense_hand_example():
    blocks = Rankings.from_selectors(SELECTORS, classes=5).blocks()
    expected = np.array([
        [[0, -1, 1, 0, -1], [1, 0, -1, -1, -1]],
        [[-1, -1, 0, -1, -1], [-2, -2, -2, -2, -2]],
    ])
    np.testing.assert_array_equal(blocks, expected)
    assert (UNRANKED, NO_READER) == (-1, -2)


def test_unsorted_entries_are_put_in_canonical_order():
    rankings = Rankings(
        item=[1, 0, 0], reader=[0, 0, 0], label=[2, 1, 0], block=[0, 1, 0],
        n_readers=[1, 1], items=[0, 1], classes=np.arange(3),
    )
    assert rankings.to_selectors() == [[[[0], [1]]], [[[2]]]]


@pytest.mark.parametrize(
    ("selectors", "match"),
    [
        ([[[[0, 3], [3]]]], r"item 'x', reader 0: class 3 appears twice in the ranking"),
        ([[[[0]], [[1, 1]]]], r"item 'x', reader 1: class 1 appears twice in the ranking"),
        ([[[[0]], [[0], [], [2]]]], r"item 'x', reader 1: block 1 is empty"),
        ([[[[0]], []]], r"item 'x', reader 1 names no class"),
        ([[]], r"item 'x' has no readers"),
        ([[[[0, 1.5]]]], r"item 'x', reader 0: class id 1.5 is not an integer"),
        ([[[[0, "2"]]]], r"item 'x', reader 0: class id '2' is not an integer"),
        ([[[[0], [7]]]], r"item 'x', reader 0: class id 7 out of range 0..4"),
        ([[[[0], [-1]]]], r"item 'x', reader 0: class id -1 out of range 0..4"),
        ([[[[0], 2]]], r"item 'x', reader 0: block 1 must be a list"),
    ],
)
def test_from_selectors_errors_name_item_and_reader(selectors, match):
    with pytest.raises(ValueError, match=match):
        Rankings.from_selectors(selectors, classes=5, items=["x"])


def test_duplicate_error_uses_class_names():
    with pytest.raises(ValueError, match=r"item 0, reader 0: class 'b' \(id 1\) appears twice"):
        Rankings.from_selectors([[[[1], [0, 1]]]], classes=["a", "b"])


def test_direct_construction_is_validated():
    args = dict(item=[0, 0], reader=[0, 1], label=[0, 1], block=[0, 0], items=["x"], classes=[0, 1])
    with pytest.raises(ValueError, match=r"item 'x', reader 1 names no class"):
        Rankings(**args | dict(item=[0], reader=[0], label=[0], block=[0]), n_readers=[2])
    with pytest.raises(ValueError, match=r"item 'x': reader index 1 out of range for its 1 readers"):
        Rankings(**args, n_readers=[1])
    with pytest.raises(ValueError, match=r"item 'x', reader 1: block 0 is empty"):
        Rankings(**args | dict(block=[0, 1]), n_readers=[2])
    with pytest.raises(ValueError, match=r"item 'y' has no readers"):
        Rankings(**args | dict(items=["x", "y"]), n_readers=[2, 0])
    with pytest.raises(ValueError, match=r"item 'x', reader 0: class id 0.5 is not an integer"):
        Rankings(**args | dict(label=[0.5, 1.0]), n_readers=[2])


LONG = pd.DataFrame({
    "case": ["c1", "c1", "c1", "c1", "c1", "c2"],
    "reader": ["ann", "ann", "ann", "bob", "bob", "bob"],
    "label": ["flu", "cold", "covid", "cold", "flu", "covid"],
    "rank": [1, 1, 3, 2, 5, 1],
})


def test_from_long_ties_and_nonconsecutive_ranks():
    rankings = Rankings.from_long(LONG, item="case", classes=["cold", "covid", "flu"])
    np.testing.assert_array_equal(rankings.items, ["c1", "c2"])
    np.testing.assert_array_equal(rankings.n_readers, [2, 1])
    # ann: {flu, cold} > {covid}; bob: {cold} > {flu}; c2 bob: {covid}.
    assert rankings.to_selectors() == [[[[0, 2], [1]], [[0], [2]]], [[[1]]]]
    np.testing.assert_array_equal(rankings.readers, ["ann", "ann", "ann", "bob", "bob", "bob"])


def test_from_long_default_classes_sorted_names_and_int_labels():
    by_name = Rankings.from_long(LONG, item="case")
    np.testing.assert_array_equal(by_name.classes, ["cold", "covid", "flu"])
    ids = LONG.assign(label=LONG["label"].map({"cold": 0, "covid": 1, "flu": 2}))
    by_id = Rankings.from_long(ids, item="case")
    assert by_id.to_selectors() == by_name.to_selectors()
    np.testing.assert_array_equal(by_id.classes, np.arange(3))
    with_names = Rankings.from_long(ids, item="case", classes=["cold", "covid", "flu"])
    assert with_names.to_selectors() == by_name.to_selectors()


def test_from_long_errors_name_item_and_reader():
    with pytest.raises(ValueError, match=r"item 'c1', reader 'ann': unknown class 'flu'"):
        Rankings.from_long(LONG, item="case", classes=["cold", "covid"])
    twice = LONG.assign(label=["flu", "cold", "covid", "cold", "cold", "covid"])
    with pytest.raises(ValueError, match=r"item 'c1', reader 1 \('bob'\): class 'cold' \(id 0\) appears twice"):
        Rankings.from_long(twice, item="case")
    bad_rank = LONG.assign(rank=[1, 1, 3, 2, "best", 1])
    with pytest.raises(ValueError, match=r"item 'c1', reader 'bob': rank 'best' is not a finite number"):
        Rankings.from_long(bad_rank, item="case")
    no_label = LONG.assign(label=["flu", "cold", None, "cold", "flu", "covid"])
    with pytest.raises(ValueError, match=r"row 2: missing 'label' \(case='c1', reader='ann'"):
        Rankings.from_long(no_label, item="case")
    ids = LONG.assign(label=[0, 1, 2, 0, 1, 9])
    with pytest.raises(ValueError, match=r"item 'c2', reader 0 \('bob'\): class id 9 out of range 0..2"):
        Rankings.from_long(ids, item="case", classes=3)
