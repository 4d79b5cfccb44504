"""Gibbs sampler for Bayesian PL: within-block orders vs enumeration, Gibbs vs NUTS, SBC."""

import numpy as np
import pytest

import plausible
from plausible.data.rankings import Rankings
from plausible.diagnostics.estimators import ess_bulk
from plausible.models.plackett_luce.gibbs import gibbs_sweep, sample_block_orders
from plausible.models import plackett_luce
from plausible.maths import plackett_luce as pll
from plackett_luce_cases import brute_force_order_probabilities


@pytest.mark.parametrize("size", [2, 3, 4])
def test_block_orders_match_enumeration(size):
    rng = np.random.default_rng(size)
    worth = np.exp(rng.normal(0.0, 1.0, size=size))
    later = 0.7
    n = 60_000
    order = sample_block_orders(
        np.tile(np.log(worth), (n, 1)), np.full(n, np.log(later)), rng
    )
    assert np.all(np.sort(order, axis=1) == np.arange(size))
    expected = brute_force_order_probabilities(list(range(size)), later, worth)
    codes = order @ (size ** np.arange(size))
    for perm, prob in expected.items():
        freq = np.mean(codes == np.dot(perm, size ** np.arange(size)))
        assert abs(freq - prob) < 5 * np.sqrt(prob * (1 - prob) / n) + 1e-4, (perm, freq, prob)


# ties, classes unranked by one reader, classes (5) ranked by nobody, a full ranking
SELECTORS = [
    [[[0, 1], [2]], [[1], [3, 0]]],
    [[[2, 3, 4]], [[4], [0]], [[0, 1, 2, 3, 4, 5]]],
]


def _moments(trace):
    p = trace.posterior["plausibility"]
    values = p.values
    mean, sd = values.mean(axis=(0, 1)), values.std(axis=(0, 1))
    ess = ess_bulk(values)
    return mean, sd, sd / np.sqrt(ess)


@pytest.mark.slow
@pytest.mark.parametrize("gamma", [1, 3])
def test_gibbs_agrees_with_nuts(gamma):
    rankings = Rankings.from_selectors(SELECTORS, classes=7)
    gibbs = plausible.sample(
        plackett_luce.build(rankings, reliability=gamma, shape=1.0),
        draws=2000, chains=2, seed=11, progressbar=False, storage="dense",  # PyMC + Gibbs step
    )
    nuts = plausible.sample(
        plackett_luce.build(rankings, reliability=float(gamma), gibbs=False, shape=1.0),
        draws=1500, chains=2, tune=700, seed=12, progressbar=False, target_accept=0.9,
    )
    mean_g, sd_g, se_g = _moments(gibbs)
    mean_n, sd_n, se_n = _moments(nuts)
    err = np.sqrt(se_g**2 + se_n**2)
    assert np.all(np.abs(mean_g - mean_n) < 4.5 * err + 1e-3), np.abs(mean_g - mean_n) / err
    # sd: relative MC error ~ 1 / sqrt(2 ess); allow a generous band
    np.testing.assert_allclose(sd_g, sd_n, rtol=0.15, atol=5e-3)


def test_sweep_is_reproducible_and_finite():
    rankings = Rankings.from_selectors(SELECTORS, classes=7)
    lay = pll.layout(rankings, repetitions=2)
    start = (np.where(lay.candidate_class >= 0, 0.0, -np.inf),
             np.where(lay.n_pooled > 0, 0.0, -np.inf))

    def run(seed):
        rng = np.random.default_rng(seed)
        state = start
        for _ in range(50):
            state = gibbs_sweep(lay, *state, shape=0.5, rate=1.0, rng=rng)
        return state

    a, b = run(3), run(3)
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])
    assert np.all(np.isfinite(a[0][lay.candidate_class >= 0]))
    assert np.all(np.isfinite(a[1]))  # both items have pooled classes


def _simulate_pl(rng, n_items=12, n_classes=5, shape=0.7):
    """Worths from the prior, readers from PL arrivals, random (non-informative) ties and
    truncation."""
    worth = rng.gamma(shape, 1.0, size=(n_items, n_classes))
    worth = np.maximum(worth, 1e-300)
    selectors = []
    for i in range(n_items):
        readers = []
        for _ in range(int(rng.integers(1, 4))):
            order = np.argsort(rng.exponential(size=n_classes) / worth[i])
            m = int(rng.integers(1, n_classes + 1))
            cuts = np.flatnonzero(rng.random(m - 1) < 0.5) + 1
            readers.append([b.tolist() for b in np.split(order[:m], cuts)])
        selectors.append(readers)
    truth = {"plausibility": worth / worth.sum(axis=1, keepdims=True)}
    return truth, Rankings.from_selectors(selectors, classes=n_classes)


@pytest.mark.slow
def test_simulation_based_calibration():
    from plausible.inference.sbc import simulation_based_calibration

    result = simulation_based_calibration(
        lambda data: plackett_luce.build(data, shape=0.7),
        _simulate_pl, var_names=["plausibility"], n_simulations=16,
        draws=400, chains=2, thin=4, seed=2026,
    )
    # 16 simulations x 12 items x 5 classes of ranks in 0..200
    assert result.p_values(bins=10)["plausibility"] > 0.001


@pytest.mark.parametrize("seed", [0, 1])
def test_compiled_augmentation_matches_reference(seed):
    """Exposures of the numba kernel and of the enumeration-checked numpy reference have the
    same distribution (means and sds over 20 000 independent augmentations)."""
    from plausible.models.plackett_luce.gibbs import augment, augment_reference
    from plackett_luce_cases import random_rankings, tile_items

    rng = np.random.default_rng(seed)
    rankings, _ = random_rankings(rng, 2, 7, max_readers=3, max_block=4, max_ranked=6)
    n = 20_000
    lay = pll.layout(tile_items(rankings, n))
    width = lay.max_candidates
    log_cand = np.tile(rng.normal(size=(2, width)), (n, 1))
    log_cand = np.where(lay.candidate_class >= 0, log_cand, -np.inf)
    log_pool = np.where(lay.n_pooled > 0, np.tile(rng.normal(size=2), n), -np.inf)
    results = [f(lay, log_cand, log_pool, np.random.default_rng(seed + 5))
               for f in (augment, augment_reference)]
    for got, ref in zip(*results):
        got, ref = got.reshape(n, 2, -1), ref.reshape(n, 2, -1)
        se = np.sqrt((got.var(axis=0) + ref.var(axis=0)) / n) + 1e-12
        assert np.all(np.abs(got.mean(axis=0) - ref.mean(axis=0)) < 5 * se)
        np.testing.assert_allclose(got.std(axis=0), ref.std(axis=0), rtol=0.05, atol=1e-9)
