"""Item-difficulty models end to end: the Gibbs build (exact Gibbs for z, pi; slice scan of
the continuous parameters; no NUTS) against the marginalised NUTS build, coverage of Su's
difficulties and fallibilities in Su's main setting, seeds."""

import numpy as np
import pytest
from arviz_stats.base import array_stats

import plausible as pl
from plausible.models import glad, su_difficulty
from plausible.data import simulate_glad, simulate_su

QUIET = dict(progressbar=False, check_convergence=False)


def _mean_and_mcse(draws):
    """Posterior mean and the Monte Carlo standard error of the mean, per element.

    The MCSE uses ArviZ's ESS for the mean (autocorrelation of the raw draws), not the
    rank-normalised bulk ESS, which overstates the precision of means of skewed quantities
    such as plausibilities near 0 or 1."""
    values = np.asarray(draws, dtype=float)
    flat = values.reshape(values.shape[0], values.shape[1], -1)
    return flat.mean(axis=(0, 1)), array_stats.mcse(flat, chain_axis=0, draw_axis=1, method="mean")


def agreement_z(trace_a, trace_b, names):
    """Per variable, ``|difference of posterior means| / combined MC error`` per element."""
    out = {}
    for name in names:
        m1, e1 = _mean_and_mcse(trace_a.posterior[name].values)
        m2, e2 = _mean_and_mcse(trace_b.posterior[name].values)
        out[name] = np.abs(m1 - m2) / (np.sqrt(e1**2 + e2**2) + 1e-12)
    return out


def test_same_seed_same_draws():
    labels = simulate_glad(15, 3, 2, seed=0).labels
    model = glad.build(labels, plausibility=False)
    runs = [pl.sample(model, draws=20, tune=20, chains=2, seed=4, **QUIET) for _ in range(2)]
    for name in ["ability", "log_inverse_difficulty", "class_prior", "true_class"]:
        np.testing.assert_array_equal(runs[0].posterior[name].values, runs[1].posterior[name].values)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["glad", "su"])
def test_gibbs_and_marginal_nuts_agree(name):
    """Posterior means of the class probabilities (plausibility), the annotator and item
    parameters and the class prior agree between the two builds: every difference is within
    4.5 combined MC standard errors (~250 elements) and their mean within 1.1."""
    labels = simulate_glad(60, 5, 3, coverage=0.6, prior=[0.5, 0.3, 0.2], seed=31).labels
    module = {"glad": glad, "su": su_difficulty}[name]
    params = {"glad": ["ability", "log_inverse_difficulty"], "su": ["difficulty", "fallibility"]}[name]
    kwargs = dict(draws=1000, chains=4, **QUIET)
    gibbs = pl.sample(module.build(labels), seed=1, **kwargs)
    nuts = pl.sample(module.build(labels, gibbs=False), seed=2, tune=500, target_accept=0.9, **kwargs)
    if name == "glad":
        assert (glad.label_switching_check(gibbs).values == 0).all()
        assert (glad.label_switching_check(nuts).values == 0).all()
    z = np.concatenate(list(agreement_z(gibbs, nuts, ["plausibility", "class_prior", *params]).values()))
    # |N(0, 1)| has mean 0.80: a systematic difference would inflate the average
    assert z.max() < 4.5 and z.mean() < 1.1, (z.max(), z.mean())


@pytest.mark.slow
def test_su_interval_coverage_main_setting():
    """Su's main setting (N = 1000, T = 5, pi(1) = 0.2, delta ~ Beta(1, 5), phi ~ U(0, 0.4)),
    model priors delta ~ Beta(1, 5): the central 90 % intervals cover the true item
    difficulties at 0.85-0.95 on each of 2 data sets, and the 10 true fallibilities at
    >= 0.7 (0.9 - 2.6 binomial sd)."""
    covered_phi = []
    for seed in (0, 1):
        sim = simulate_su(1000, 5, prior=[0.8, 0.2], seed=seed)
        labels, truth = sim.labels, {"difficulty": sim.difficulty, "fallibility": sim.fallibility}
        model = su_difficulty.build(labels, difficulty_prior=(1.0, 5.0), plausibility=False)
        trace = pl.sample(model, draws=500, tune=500, chains=2, seed=seed, **QUIET)
        hits = {}
        for name in ("difficulty", "fallibility"):
            draws = trace.posterior[name].values.reshape(-1, truth[name].size)
            lo, hi = np.quantile(draws, [0.05, 0.95], axis=0)
            hits[name] = (lo <= truth[name]) & (truth[name] <= hi)
        assert 0.85 <= hits["difficulty"].mean() <= 0.95, hits["difficulty"].mean()
        covered_phi.extend(hits["fallibility"])
    assert np.mean(covered_phi) >= 0.7, covered_phi
