"""Candidate-space PL traces from the tight-loop sampler (the metrics on them:
tests/metrics/test_storage.py)."""

import numpy as np
import pytest

import plausible
import plausible.metrics as metrics
from plausible.data.rankings import Rankings
from plausible.diagnostics.estimators import ess_bulk
from plausible.models.plackett_luce.sampler import sample_candidates
from plausible.models import plackett_luce

SELECTORS = [
    [[[0, 1], [2]], [[1], [3, 0]]],
    [[[2, 3, 4]], [[4], [0]], [[0, 1, 2, 3, 4, 5]]],
    [[[5]]],
]


@pytest.fixture(scope="module")
def trace():
    rankings = Rankings.from_selectors(SELECTORS, classes=7)
    return sample_candidates(rankings, draws=300, tune=50, chains=2, seed=5, shape=1.0)


def test_shapes_and_normalisation(trace):
    post = trace["posterior"]
    assert post["plausibility_candidates"].dims == ("chain", "draw", "item", "candidate")
    total = post["plausibility_candidates"].sum("candidate") + post["pooled_mass"]
    np.testing.assert_allclose(total.values, 1.0, rtol=1e-5)
    dense = metrics.to_dense(trace)
    np.testing.assert_allclose(dense.sum("class").values, 1.0, rtol=1e-5)


def test_reproducible():
    rankings = Rankings.from_selectors(SELECTORS, classes=7)
    a = sample_candidates(rankings, draws=20, tune=5, chains=2, seed=9)
    b = sample_candidates(rankings, draws=20, tune=5, chains=2, seed=9)
    np.testing.assert_array_equal(a["posterior"]["pooled_mass"].values,
                                  b["posterior"]["pooled_mass"].values)


def test_bit_identical_whatever_cores():
    """Each chain has its own seed and generator: same seed, same draws for
    1 or 2 threads (warm-up adaptation included: ``tune >= 100``), and chain ``c`` does not
    depend on how many chains run."""
    rankings = Rankings.from_selectors(SELECTORS, classes=7)

    def run(cores, chains=4):
        trace = sample_candidates(rankings, draws=15, tune=120, chains=chains, seed=11,
                                  cores=cores, metropolis_rounds=2)
        post = trace["posterior"]
        return post["plausibility_candidates"].values, post["pooled_mass"].values

    serial, serial_again = run(1), run(1)
    threaded, threaded_again = run(2), run(2)
    for got in (serial_again, threaded, threaded_again):
        for a, b in zip(serial, got):
            np.testing.assert_array_equal(a, b)
    assert not np.array_equal(serial[1][0], serial[1][1])  # chains differ
    for a, b in zip(serial, run(2, chains=2)):
        np.testing.assert_array_equal(a[:2], b)


def test_cores_validated():
    rankings = Rankings.from_selectors(SELECTORS, classes=7)
    with pytest.raises(ValueError, match="cores"):
        sample_candidates(rankings, draws=2, tune=0, chains=2, seed=1, cores=0)


@pytest.mark.slow
@pytest.mark.parametrize("metropolis_rounds", [0, 1])
def test_candidate_sampler_matches_pymc_gibbs(metropolis_rounds):
    rankings = Rankings.from_selectors(SELECTORS, classes=7)
    fast = metrics.to_dense(
        sample_candidates(rankings, reliability=2, draws=2000, tune=100, chains=2, seed=1,
                          shape=1.0, metropolis_rounds=metropolis_rounds)
    ).values
    dense = plausible.sample(
        plackett_luce.build(rankings, reliability=2, shape=1.0), draws=2000, chains=2,
        seed=2, progressbar=False, storage="dense",  # PyMC's loop with the Gibbs step
    ).posterior["plausibility"].values
    # pooled classes are spread equally in `fast`: compare per-class means (exchangeable)
    se = np.sqrt(fast.std(axis=(0, 1)) ** 2 / ess_bulk(fast)
                 + dense.std(axis=(0, 1)) ** 2 / ess_bulk(dense))
    diff = np.abs(fast.mean(axis=(0, 1)) - dense.mean(axis=(0, 1)))
    assert np.all(diff < 4.5 * se + 1e-3), diff / se


def test_thinning_keeps_draws():
    rankings = Rankings.from_selectors(SELECTORS, classes=7)
    trace = sample_candidates(rankings, draws=10, tune=0, chains=2, seed=1, thin=3)
    assert trace["posterior"]["pooled_mass"].shape == (2, 10, 3)
    assert np.all(np.isfinite(trace["posterior"]["pooled_mass"].values))
