"""Exact PL likelihood of partial rankings with ties: enumeration, reference value, pytensor."""

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest

from plausible.data.rankings import Rankings
from plausible.maths import plackett_luce as pll
from plausible.models.plackett_luce import ranking_probability
from plackett_luce_cases import brute_force_likelihood, random_rankings


def test_spec_reference_value():
    rankings = Rankings.from_selectors([[[[2], [1], [4]]]], classes=5)
    theta = np.array([[0.3, 0.15, 0.4, 0.1, 0.05]])
    assert np.exp(pll.log_likelihood(rankings, theta))[0] == pytest.approx(0.0111111, abs=1e-6)


def test_lattice_predecessors():
    lat = pll.lattice(4)
    for k in range(1, 5):
        for mask, members, preds in zip(lat.masks[k], lat.members[k], lat.preds[k]):
            assert sorted(lat.masks[k - 1][preds] ^ mask) == sorted(1 << members)


@pytest.mark.parametrize("seed", range(6))
def test_matches_enumeration(seed):
    rng = np.random.default_rng(seed)
    n_classes = int(rng.integers(2, 9))
    rankings, selectors = random_rankings(rng, 4, n_classes, max_readers=3, max_block=5)
    worth = np.exp(rng.normal(0.0, 2.0, size=(4, n_classes)))
    expected = np.array([
        sum(np.log(brute_force_likelihood(blocks, worth[i])) for blocks in case)
        for i, case in enumerate(selectors)
    ])
    got = pll.log_likelihood(rankings, worth)
    np.testing.assert_allclose(np.exp(got), np.exp(expected), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(got, expected, rtol=1e-10)


def test_scale_free_and_tiny_worths():
    rng = np.random.default_rng(7)
    rankings, _ = random_rankings(rng, 3, 6)
    worth = np.exp(rng.normal(0.0, 1.0, size=(3, 6)))
    base = pll.log_likelihood(rankings, worth)
    np.testing.assert_allclose(pll.log_likelihood(rankings, worth * 1e-250), base, rtol=1e-10)


def test_repetitions_multiply_the_log_likelihood():
    rng = np.random.default_rng(3)
    rankings, _ = random_rankings(rng, 3, 5)
    worth = np.exp(rng.normal(size=(3, 5)))
    np.testing.assert_allclose(
        pll.log_likelihood(rankings, worth, repetitions=3),
        3 * pll.log_likelihood(rankings, worth), rtol=1e-12,
    )


def _pytensor_fn(lay, n_items, n_classes):
    log_worth = pt.matrix("log_worth")
    total = pll.log_likelihood_pt(lay, log_worth)
    return pytensor.function([log_worth], [total, pytensor.grad(total, log_worth)])


@pytest.mark.parametrize("seed", range(3))
def test_pytensor_matches_numpy_and_gradient(seed):
    rng = np.random.default_rng(10 + seed)
    n_items, n_classes = 3, 7
    # max_ranked = K so that some readers rank every class (empty pool / empty Zbar)
    rankings, _ = random_rankings(rng, n_items, n_classes, max_block=4)
    lay = pll.layout(rankings)
    fn = _pytensor_fn(lay, n_items, n_classes)
    log_worth = rng.normal(0.0, 1.5, size=(n_items, n_classes))
    value, grad = fn(log_worth)
    np.testing.assert_allclose(value, pll.log_likelihood(rankings, np.exp(log_worth)).sum(),
                               rtol=1e-10)
    eps = 1e-6
    numeric = np.zeros_like(log_worth)
    for idx in np.ndindex(log_worth.shape):
        up, down = log_worth.copy(), log_worth.copy()
        up[idx] += eps
        down[idx] -= eps
        numeric[idx] = (pll.log_likelihood(rankings, np.exp(up)).sum()
                        - pll.log_likelihood(rankings, np.exp(down)).sum()) / (2 * eps)
    np.testing.assert_allclose(grad, numeric, rtol=1e-5, atol=1e-7)
    assert np.all(np.isfinite(grad))


def test_ranking_probability_single_reader():
    theta = [0.3, 0.15, 0.4, 0.1, 0.05]
    assert ranking_probability([[2], [1], [4]], theta) == pytest.approx(0.0111111, abs=1e-6)
    # a full ranking with a tied last block: the tie sums both orders
    assert ranking_probability([[0, 1, 2, 3, 4]], theta) == pytest.approx(1.0)
    assert ranking_probability([[2, 0]], theta) == pytest.approx(
        brute_force_likelihood([[2, 0]], theta), rel=1e-12)
