"""The Dirichlet model with a learned concentration (:func:`dirichlet.build_hierarchical`),
its per-item log-likelihood, and exact LOO for the fixed-concentration model."""

import warnings

import arviz as az
import numpy as np
import pytest
from scipy import stats
from scipy.special import gammaln

import plausible as pl
from plausible.diagnostics.leave_one_out import loo
from plausible.models import dirichlet

from posterior_agreement import assert_same_posterior


def simulated_votes(n_items=40, alpha=(1.2, 0.6, 0.2), n_votes=8, seed=0):
    rng = np.random.default_rng(seed)
    plausibility = rng.dirichlet(alpha, size=n_items)
    counts = np.stack([rng.multinomial(n_votes, p) for p in plausibility])
    return pl.data.Votes(counts, items=[f"i{i}" for i in range(n_items)],
                         classes=[f"c{k}" for k in range(len(alpha))])


@pytest.mark.slow
def test_compiled_sampler_matches_nuts_on_the_same_model():
    """The partially collapsed Gibbs sampler (population with the items integrated out, then
    exact plausibilities) against PyMC's NUTS on the joint model, learned base at reliability
    0.7: posterior means of the concentration, the base measure and every plausibility within
    4.5 MCSE. (The uniform base is the same sampler with the base's coordinates fixed.)"""
    votes = simulated_votes()
    compiled = pl.sample(dirichlet.build_hierarchical(votes, reliability=0.7),
                         draws=3000, chains=4, seed=1, log_likelihood=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        nuts = pl.sample(dirichlet.build_hierarchical(votes, reliability=0.7, compiled=False),
                         draws=1000, chains=4, seed=2, progressbar=False, target_accept=0.95)
    assert pl.diagnostics.convergence_report(compiled).ok
    assert nuts.log_likelihood["votes"].shape == (4, 1000, 40)
    assert_same_posterior(compiled, nuts, ["concentration", "plausibility", "base_measure"])


def test_uniform_base_on_pymcs_route_keeps_its_base_and_log_likelihood():
    """With ``base="uniform"`` PyMC's route records the fixed base as a deterministic, which
    the per-item log-likelihood reads (it raised KeyError before): the Dirichlet-multinomial
    at ``alpha = kappa / 3`` per class, without the multinomial coefficient."""
    votes = simulated_votes(n_items=10)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        trace = pl.sample(dirichlet.build_hierarchical(votes, base="uniform", compiled=False),
                          draws=20, tune=20, chains=1, seed=2, progressbar=False)
    np.testing.assert_allclose(trace.posterior["base_measure"].values, 1 / 3, rtol=1e-12)
    kappa = trace.posterior["concentration"].values[0, :, None, None]
    expected = stats.dirichlet_multinomial.logpmf(
        votes.counts[None], np.broadcast_to(kappa / 3, (20, 10, 3)), votes.counts.sum(1)[None])
    n = votes.counts.sum(axis=1)
    coefficient = gammaln(n + 1) - gammaln(votes.counts + 1).sum(axis=1)  # votes as a sequence
    np.testing.assert_allclose(trace.log_likelihood["votes"].values[0], expected - coefficient,
                               rtol=1e-8)


def test_learned_concentration_recovers_the_simulating_one():
    """500 items with 8 votes each, ``alpha = (1.2, 0.6, 0.2)``: the posterior's 99 % interval
    holds the simulating ``kappa = 2`` and the base measure, and the seed fixes the draws
    whatever the number of threads."""
    votes = simulated_votes(n_items=500, seed=3)
    model = dirichlet.build_hierarchical(votes)
    trace = pl.sample(model, draws=1000, chains=2, seed=5, cores=2, log_likelihood=False)
    again = pl.sample(model, draws=1000, chains=2, seed=5, cores=1, log_likelihood=False)
    np.testing.assert_array_equal(trace.posterior["plausibility"].values,
                                  again.posterior["plausibility"].values)
    kappa = trace.posterior["concentration"].values.ravel()
    base = trace.posterior["base_measure"].values.reshape(-1, 3)
    assert np.quantile(kappa, 0.005) < 2.0 < np.quantile(kappa, 0.995)
    low, high = np.quantile(base, [0.005, 0.995], axis=0)
    assert np.all((low < [0.6, 0.3, 0.1]) & ([0.6, 0.3, 0.1] < high))


def test_log_likelihood_is_the_dirichlet_multinomial_of_the_item():
    """Each item's term is scipy's Dirichlet-multinomial of its votes without the multinomial
    coefficient (the votes as a sequence), at the draw's ``alpha``; tempered, ``B(alpha +
    gamma s) / B(alpha)``."""
    votes = simulated_votes(n_items=6)
    trace = pl.sample(dirichlet.build_hierarchical(votes, reliability=1.0), draws=3, chains=1,
                      seed=0, check_convergence=False)
    alpha = (trace.posterior["concentration"] * trace.posterior["base_measure"]).values[0, 1]
    n = votes.counts.sum(axis=1)
    coefficient = gammaln(n + 1) - gammaln(votes.counts + 1).sum(axis=1)
    expected = stats.dirichlet_multinomial.logpmf(votes.counts, alpha, n) - coefficient
    np.testing.assert_allclose(trace.log_likelihood["votes"].values[0, 1], expected, rtol=1e-10)

    tempered = pl.sample(dirichlet.build(votes, reliability=2.5, alpha=[0.5, 1.0, 2.0]),
                         draws=3, chains=1, seed=0)
    a, m = np.array([0.5, 1.0, 2.0]), 2.5 * votes.counts
    beta = lambda x: gammaln(x).sum(axis=-1) - gammaln(x.sum(axis=-1))  # noqa: E731
    np.testing.assert_allclose(tempered.log_likelihood["votes"].values[0, 2],
                               beta(a + m) - beta(a), rtol=1e-10)


def test_fixed_concentration_loo_is_exact_and_compares():
    """With a fixed ``alpha`` every draw gives an item the same log-likelihood: :func:`loo`
    returns the exact value (elpd the sum, ``p_loo = 0``, Pareto k 0) where ``az.loo`` cannot
    fit a tail, and ``az.compare`` ranks it beside the learned model's PSIS estimate; the
    learned model wins on data simulated far from ``alpha = 1``."""
    votes = simulated_votes(n_items=200, alpha=(0.2, 0.1, 0.1), seed=4)
    fixed = pl.sample(dirichlet.build(votes), draws=200, chains=2, seed=0)
    learned = pl.sample(dirichlet.build_hierarchical(votes), draws=500, chains=2, seed=0)
    exact = loo(fixed)
    assert exact.p == 0.0 and np.all(exact.pareto_k.values == 0)
    np.testing.assert_allclose(exact.elpd, fixed.log_likelihood["votes"].values[0, 0].sum())
    learned_loo = loo(learned)
    table = az.compare({"fixed": exact, "learned": learned_loo}, round_to="none")
    assert table.index[0] == "learned"
    assert abs(table.loc["fixed", "elpd_diff"]) > 4 * table.loc["fixed", "dse"]
    # PSIS with the vectorised r_eff gives what az.loo gives computing r_eff itself
    arviz = az.loo(learned, pointwise=True)
    np.testing.assert_allclose([learned_loo.elpd, learned_loo.se, learned_loo.p],
                               [arviz.elpd, arviz.se, arviz.p], rtol=1e-10)
    np.testing.assert_allclose(learned_loo.pareto_k.values, arviz.pareto_k.values, rtol=1e-10)
