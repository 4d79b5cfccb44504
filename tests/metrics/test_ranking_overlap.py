"""Average overlap between partial rankings, against brute-force enumeration of ties."""

from itertools import permutations, product

import numpy as np
import pytest
import xarray as xr

from plausible.metrics import average_overlap, point_estimate, scores_to_blocks, ua_average_overlap


def _orderings(blocks: np.ndarray):
    """All full orderings consistent with a partial ranking (unranked = last block)."""
    last = blocks.max(initial=-1) + 1
    keyed = np.where(blocks == -1, last, blocks)
    groups = [np.flatnonzero(keyed == b).tolist() for b in sorted(set(keyed.tolist()))]
    for parts in product(*(permutations(g) for g in groups)):
        yield [c for part in parts for c in part]


def _ao_full(order_a, order_b, depth):
    return np.mean([len(set(order_a[:k]) & set(order_b[:k])) / k for k in range(1, depth + 1)])


def _uao_brute_force(a, b, depth):
    """E over independent uniform tie orderings of a and b (UAO is bilinear in P~)."""
    values = [_ao_full(oa, ob, depth) for oa in _orderings(a) for ob in _orderings(b)]
    return np.mean(values)


def _normalized_brute_force(a, b, depth):
    if (a == -1).all() or (b == -1).all():
        return 0.0
    return _uao_brute_force(a, b, depth) / np.sqrt(_uao_brute_force(a, a, depth) * _uao_brute_force(b, b, depth))


def test_ties_in_both_rankings_match_enumeration():
    a = np.array([0, 1, 1, -1, -1])  # {0} > {1, 2} > unranked {3, 4}
    b = np.array([1, 0, -1, 0, -1])  # {1, 3} > {0} > unranked {2, 4}
    for depth in (1, 2, 3, 5):
        raw = average_overlap(a[None], b[None], depth, normalize=False)
        np.testing.assert_allclose(raw, [_uao_brute_force(a, b, depth)])
        np.testing.assert_allclose(average_overlap(a[None], b[None], depth), [_normalized_brute_force(a, b, depth)])


def test_by_hand_depth_two():
    # a = {0} > {1, 2} > {3}; b = {1, 3} > {0} > {2}
    # Q_a rows k=1: [1, 0, 0, 0]; k=2: [1, 1/2, 1/2, 0]
    # Q_b rows k=1: [0, 1/2, 0, 1/2]; k=2: [0, 1, 0, 1]
    # UAO = (1/2) (0/1 + (1/2)/2) = 1/8
    a = np.array([[0, 1, 1, 2]])
    b = np.array([[1, 0, 2, 0]])
    np.testing.assert_allclose(average_overlap(a, b, 2, normalize=False), [1 / 8])
    # UAO(a, a) = (1/2)(1 + 1.5/2) = 7/8 ; UAO(b, b) = (1/2)(1/2 + 2/2) = 3/4
    np.testing.assert_allclose(average_overlap(a, b, 2), [(1 / 8) / np.sqrt(7 / 8 * 3 / 4)])


def test_random_partial_rankings_vectorised_over_items():
    rng = np.random.default_rng(7)
    n_items, n_classes = 25, 5
    a = rng.integers(-1, 3, size=(n_items, n_classes))
    b = rng.integers(-1, 2, size=(n_items, n_classes))
    b[0] = -1  # an empty ranking scores 0
    depth = rng.integers(1, n_classes + 1, size=n_items)
    expected = [_normalized_brute_force(a[i], b[i], depth[i]) for i in range(n_items)]
    np.testing.assert_allclose(average_overlap(a, b, depth), expected)
    assert average_overlap(a, b, depth)[0] == 0.0


def test_identical_rankings_score_one():
    a = np.array([[0, 1, 1, -1, -1], [2, 0, 1, 1, 0], [0, 0, 0, 0, 0]])
    np.testing.assert_allclose(average_overlap(a, a, 3), [1.0, 1.0, 1.0])
    np.testing.assert_allclose(average_overlap(a, a, 5), [1.0, 1.0, 1.0])


def test_non_consecutive_block_numbers():
    a = np.array([[0, 1, 1, -1]])
    gaps = np.array([[3, 10**12, 10**12, -1]])
    b = np.array([[1, 0, -1, 2]])
    np.testing.assert_allclose(average_overlap(gaps, b, 3), average_overlap(a, b, 3))


def test_scores_to_blocks_full_ranking_with_ties():
    scores = np.array([[0.2, 0.5, 0.5, 0.1]])
    np.testing.assert_array_equal(scores_to_blocks(scores), [[2, 0, 1, 3]])
    da = xr.DataArray(scores, dims=("item", "class"), coords={"item": ["q"]})
    blocks = scores_to_blocks(da)
    assert blocks.dims == ("item", "class")
    out = average_overlap(blocks, np.array([[0, -1, 0, -1]]), 2)
    assert out.dims == ("item",) and out["item"].values.tolist() == ["q"]


def test_full_rankings_agree_with_ua_average_overlap():
    rng = np.random.default_rng(11)
    probs = rng.integers(0, 3, size=(15, 6)).astype(float)
    scores = rng.random((15, 6))
    for depth in (1, 2, 4):
        expected = ua_average_overlap(point_estimate(probs), scores, depth).values[0, 0]
        got = average_overlap(scores_to_blocks(probs), scores_to_blocks(scores), depth)
        np.testing.assert_allclose(got, expected)


def test_validation():
    a = np.zeros((2, 3), dtype=int)
    with pytest.raises(ValueError, match="shape"):
        average_overlap(a, np.zeros((2, 4), dtype=int), 2)
    with pytest.raises(ValueError, match="depth must be in 1..3"):
        average_overlap(a, a, 4)
    with pytest.raises(ValueError, match="integer block"):
        average_overlap(a.astype(float), a, 2)
    with pytest.raises(ValueError, match="-1 for unranked"):
        average_overlap(a - 2, a, 2)
