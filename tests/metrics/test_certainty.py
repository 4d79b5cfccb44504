"""Certainty metrics on hand-computed cases (ties go to the lowest class index)."""

from itertools import combinations

import numpy as np
import pytest
import xarray as xr

from hand_draws import hand_plausibility
from plausible.metrics import (
    annotation_certainty,
    expected_group,
    group_certainty,
    label_certainty,
    point_estimate,
    set_options,
)
from plausible.metrics import certainty as certainty_module


def test_label_certainty_by_hand():
    certainty = label_certainty(hand_plausibility())
    assert certainty.dims == ("item", "class")
    assert list(certainty["class"].values) == ["a", "b", "c"]
    np.testing.assert_allclose(certainty.values, [[0.75, 0.25, 0.0], [0.25, 0.25, 0.5]])


def test_annotation_certainty_by_hand():
    p = hand_plausibility()
    ac1 = annotation_certainty(p)
    assert ac1.dims == ("item",) and ac1.attrs["top"] == 1
    np.testing.assert_allclose(ac1.values, [0.75, 0.5])
    np.testing.assert_allclose(ac1.values, label_certainty(p).max("class").values)
    # item 0: {0,1} twice of 4; item 1: {0,2} twice of 4
    np.testing.assert_allclose(annotation_certainty(p, top=2).values, [0.5, 0.5])
    np.testing.assert_allclose(annotation_certainty(p, top=3).values, [1.0, 1.0])


def test_annotation_certainty_set_is_unordered():
    # draws rank (0 > 1) and (1 > 0): same top-2 set, AC_2 = 1 although AC_1 = 1/2
    draws = np.array([[[0.6, 0.3, 0.1]], [[0.3, 0.6, 0.1]]])[np.newaxis]
    p = xr.DataArray(draws, dims=("chain", "draw", "item", "class"))
    assert annotation_certainty(p, top=1).values.tolist() == [0.5]
    assert annotation_certainty(p, top=2).values.tolist() == [1.0]


def test_group_certainty_and_expected_group_by_hand():
    p = hand_plausibility()
    groups = np.array([1, 0, 2])  # class a -> 1, b -> 0, c -> 2
    gc = group_certainty(p, groups)
    assert gc.dims == ("item", "group")
    np.testing.assert_array_equal(gc["group"].values, [0, 1, 2])
    np.testing.assert_allclose(gc.values, [[0.25, 0.75, 0.0], [0.25, 0.25, 0.5]])
    np.testing.assert_allclose(gc.max("group").values, [0.75, 0.5])
    np.testing.assert_allclose(expected_group(p, groups).values, [0.75, 1.25])


def test_groups_dataarray_aligned_by_class_label():
    p = hand_plausibility()
    groups = xr.DataArray([2, 1, 0], dims="class", coords={"class": ["c", "a", "b"]})
    np.testing.assert_allclose(group_certainty(p, groups).values, [[0.25, 0.75, 0.0], [0.25, 0.25, 0.5]])
    with pytest.raises(ValueError, match="shape"):
        group_certainty(p, np.array([0, 1]))
    with pytest.raises(ValueError, match="no group for classes"):
        group_certainty(p, xr.DataArray([0, 1, 2], dims="class", coords={"class": ["a", "b", "z"]}))
    with pytest.raises(ValueError, match=">= 0"):
        group_certainty(p, np.array([0, -1, 1]))


def test_point_estimate_has_certainty_one():
    probs = np.array([[0.2, 0.5, 0.3], [0.4, 0.4, 0.2]])  # item 1 tied: class 0 wins
    p = point_estimate(probs, items=["x0", "x1"])
    np.testing.assert_allclose(label_certainty(p).values, [[0, 1, 0], [1, 0, 0]])
    for top in (1, 2, 3):
        np.testing.assert_allclose(annotation_certainty(p, top=top).values, [1.0, 1.0])


def _brute_force_ac(draws: np.ndarray, top: int) -> np.ndarray:
    """AC_top per item by looping over draws with a stable argsort."""
    flat = draws.reshape(-1, *draws.shape[-2:])
    result = []
    for i in range(flat.shape[1]):
        sets = [tuple(sorted(np.argsort(-row, kind="stable")[:top])) for row in flat[:, i]]
        _, counts = np.unique(np.array(sets), axis=0, return_counts=True)
        result.append(counts.max() / len(sets))
    return np.array(result)


@pytest.mark.parametrize("path", ["dense", "held", "keyed", "rows"])
def test_annotation_certainty_counting_paths_match_brute_force(path, monkeypatch):
    rng = np.random.default_rng(1)
    draws = rng.integers(0, 4, size=(2, 9, 6, 5)).astype(float)  # many ties
    p = xr.DataArray(draws, dims=("chain", "draw", "item", "class"))
    if path == "rows":
        monkeypatch.setattr(certainty_module, "MAX_SET_KEY", 0)
    if path in ("keyed", "rows"):
        monkeypatch.setattr(certainty_module, "MAX_HELD_CODES", 0)
    monkeypatch.setattr(certainty_module, "SET_MERGE_ROWS", 3)  # merge after (almost) every chunk
    chunk = {"dense": 2**24, "held": 5, "keyed": 5, "rows": 5}[path]
    with set_options(chunk_elements=chunk):
        for top in (2, 3, 4):
            np.testing.assert_allclose(annotation_certainty(p, top=top).values, _brute_force_ac(draws, top))


def test_combinadic_codes_are_a_bijection():
    n_classes, j = 7, 3
    table = certainty_module._combinadic_table(n_classes, j)
    codes = sorted(sum(table[c, r] for r, c in enumerate(s)) for s in combinations(range(n_classes), j))
    assert codes == list(range(len(codes)))


def test_top_out_of_range():
    with pytest.raises(ValueError, match="top must be in 1..3"):
        annotation_certainty(hand_plausibility(), top=4)
