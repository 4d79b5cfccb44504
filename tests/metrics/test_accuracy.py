"""UA accuracy / overlap metrics on hand-computed cases, including ties."""

import numpy as np
import pytest
import xarray as xr

from hand_draws import hand_plausibility
from plausible.metrics import (
    point_estimate,
    top_k_sets,
    ua_average_overlap,
    ua_overlap,
    ua_set_accuracy,
    ua_topk_accuracy,
)

# classifier scores with ties: item 0 ranks [1, 2, 0] (1 beats 2), item 1 ranks [0, 1, 2]
SCORES = np.array([[0.2, 0.4, 0.4], [0.5, 0.5, 0.0]])


def test_ua_topk_accuracy_by_hand_with_tied_scores():
    p = hand_plausibility()
    top1 = ua_topk_accuracy(p, SCORES, k=1)
    assert top1.dims == ("chain", "draw", "item")
    assert list(top1["item"].values) == ["x0", "x1"]
    # draw top-1: item 0 [0,0,1,0] vs {1}; item 1 [2,1,2,0] vs {0}
    np.testing.assert_array_equal(top1.values[0].T, [[0, 0, 1, 0], [0, 0, 0, 1]])
    top2 = ua_topk_accuracy(p, SCORES, k=2)  # C: {1,2} and {0,1}
    np.testing.assert_array_equal(top2.values[0].T, [[0, 0, 1, 0], [0, 1, 0, 1]])
    np.testing.assert_allclose(top1.mean("item").values[0], [0, 0, 0.5, 0.5])
    np.testing.assert_allclose(ua_topk_accuracy(p, SCORES, k=3).values, 1.0)


def test_ua_set_accuracy_and_overlap_with_two_element_sets():
    p = hand_plausibility()
    sets = np.array([[True, True, False], [True, False, True]])  # {0,1}, {0,2}
    # top-2 sets: item 0 {0,1} {0,1} {1,2} {0,2}; item 1 {0,2} {1,2} {0,2} {0,1}
    np.testing.assert_array_equal(ua_set_accuracy(p, sets).values[0].T, [[1, 1, 0, 0], [1, 0, 1, 0]])
    np.testing.assert_allclose(ua_overlap(p, sets).values[0].T, [[1, 1, 0.5, 0.5], [1, 0.5, 1, 0.5]])


def test_set_metrics_with_variable_set_sizes():
    p = hand_plausibility()
    sets = np.array([[True, True, False], [False, False, True]])  # |C| = 2 and 1
    np.testing.assert_array_equal(ua_set_accuracy(p, sets).values[0].T, [[1, 1, 0, 0], [1, 0, 1, 0]])
    np.testing.assert_allclose(ua_overlap(p, sets).values[0].T, [[1, 1, 0.5, 0.5], [1, 0, 1, 0]])
    full = np.ones((2, 3), dtype=int)  # 0/1 ints accepted; the full set always matches
    np.testing.assert_allclose(ua_set_accuracy(p, full).values, 1.0)


def test_top_k_sets_match_topk_accuracy():
    p = hand_plausibility()
    sets = top_k_sets(SCORES, 2)
    np.testing.assert_array_equal(sets, [[False, True, True], [True, True, False]])
    # a top-1 class inside C_top-2 <=> overlap of {top-1} ... checked through set accuracy with k=1
    np.testing.assert_array_equal(
        ua_set_accuracy(p, top_k_sets(SCORES, 1)).values, ua_topk_accuracy(p, SCORES, 1).values
    )
    da = xr.DataArray(SCORES.T, dims=("class", "item"))
    np.testing.assert_array_equal(top_k_sets(da, 2).transpose("item", "class").values, sets)


def _average_overlap_by_definition(classifier_order, draw_order, depth):
    return np.mean(
        [len(set(classifier_order[:k]) & set(draw_order[:k])) / k for k in range(1, depth + 1)]
    )


def test_ua_average_overlap_by_hand():
    p = hand_plausibility()
    ao = ua_average_overlap(p, SCORES, depth=2)
    assert ao.attrs["depth"] == 2
    # item 0, C ranks [1,2,0]: draws [0,1,2] -> (0 + 1/2)/2; [0,1,2]; [1,2,0] -> 1; [0,2,1] -> 1/4
    # item 1, C ranks [0,1,2]: draws [2,0,1] -> 1/4; [1,2,0] -> 1/4; [2,0,1] -> 1/4; [0,1,2] -> 1
    np.testing.assert_allclose(ao.values[0].T, [[0.25, 0.25, 1.0, 0.25], [0.25, 0.25, 0.25, 1.0]])
    draw_orders = [[[0, 1, 2], [0, 1, 2], [1, 2, 0], [0, 2, 1]], [[2, 0, 1], [1, 2, 0], [2, 0, 1], [0, 1, 2]]]
    classifier = [[1, 2, 0], [0, 1, 2]]
    for depth in (1, 2, 3):
        expected = [
            [_average_overlap_by_definition(classifier[i], draw_orders[i][m], depth) for i in range(2)]
            for m in range(4)
        ]
        np.testing.assert_allclose(ua_average_overlap(p, SCORES, depth).values[0], expected)


def test_point_estimate_average_overlap_against_definition():
    rng = np.random.default_rng(3)
    probs = rng.integers(0, 3, size=(20, 6)).astype(float)
    scores = rng.integers(0, 3, size=(20, 6)).astype(float)
    p = point_estimate(probs)
    for depth in (1, 3, 6):
        expected = [
            _average_overlap_by_definition(
                np.argsort(-scores[i], kind="stable"), np.argsort(-probs[i], kind="stable"), depth
            )
            for i in range(20)
        ]
        np.testing.assert_allclose(ua_average_overlap(p, scores, depth).values[0, 0], expected)


def test_scores_dataarray_aligned_by_labels():
    p = hand_plausibility()
    da = xr.DataArray(
        SCORES[::-1, ::-1].T, dims=("class", "item"), coords={"class": ["c", "b", "a"], "item": ["x1", "x0"]}
    )
    np.testing.assert_array_equal(ua_topk_accuracy(p, da, 1).values, ua_topk_accuracy(p, SCORES, 1).values)


def test_shape_mismatch_is_named():
    p = hand_plausibility()
    with pytest.raises(ValueError, match=r"scores has shape \(2, 4\), expected \(item=2, class=3\)"):
        ua_topk_accuracy(p, np.zeros((2, 4)), 1)
    with pytest.raises(ValueError, match=r"prediction_sets has shape \(3, 3\)"):
        ua_set_accuracy(p, np.ones((3, 3), dtype=bool))
    bad = xr.DataArray(SCORES, dims=("item", "class"), coords={"item": ["x0", "zz"]})
    with pytest.raises(ValueError, match=r"item labels do not match.*missing \['x1'\].*unexpected \['zz'\]"):
        ua_average_overlap(p, bad, 2)
    with pytest.raises(ValueError, match="dims"):
        ua_topk_accuracy(p, xr.DataArray(SCORES, dims=("item", "label")), 1)


def test_empty_prediction_set_names_the_item():
    p = hand_plausibility()
    sets = np.array([[True, False, False], [False, False, False]])
    with pytest.raises(ValueError, match="prediction set of item 'x1' is empty"):
        ua_set_accuracy(p, sets)
    with pytest.raises(ValueError, match="prediction set of item 'x1' is empty"):
        ua_overlap(p, sets)
    with pytest.raises(ValueError, match="0/1"):
        ua_overlap(p, np.full((2, 3), 0.5))


def test_bad_k_and_nan_scores():
    p = hand_plausibility()
    with pytest.raises(ValueError, match="k must be in 1..3"):
        ua_topk_accuracy(p, SCORES, 0)
    with pytest.raises(ValueError, match="depth must be in 1..3"):
        ua_average_overlap(p, SCORES, 4)
    scores = SCORES.copy()
    scores[1, 2] = np.nan
    with pytest.raises(ValueError, match="scores of item 'x1' contain NaN"):
        ua_topk_accuracy(p, scores, 1)
