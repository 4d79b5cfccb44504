"""Dawid–Skene for anonymous votes (:mod:`plausible.models.votes_dawid_skene`): the compiled
Gibbs sampler against NUTS on the same graph with the classes summed out (with and without a
classifier's prior) and against simulation-based calibration; seeds; the per-item
log-likelihood and the plausibilities computed when read against direct computations."""

import warnings

import numpy as np
import pymc as pm
import pytest
from scipy.special import gammaln, logsumexp, softmax

import plausible as pl
from plausible.inference.sbc import simulation_based_calibration
from plausible.models import votes_dawid_skene as vds

from posterior_agreement import assert_same_posterior

PRIOR = (4.0, 0.5)
"""A Gamma prior of ``kappa`` (mean 8) for the small simulated sets: the default's mean of 20
with a few items per class leaves ``kappa`` to the prior's long tail."""


def simulate(rng, n_items=40, n_classes=3, votes=(1, 6), concentration_prior=PRIOR):
    """``(truth, votes)`` from the model's prior: ``psi_c ~ Dirichlet(4 on the diagonal, 1
    elsewhere)``, ``kappa ~ Gamma``, ``pi ~ Dirichlet(1)``, ``z_i ~ pi``, ``theta_i ~
    Dirichlet(kappa_z psi_z)``, ``n_i ~ Multinomial(N_i, theta_i)`` with ``N_i`` uniform on
    ``votes``."""
    beta = np.ones((n_classes, n_classes)) + 3 * np.eye(n_classes)
    psi = np.stack([rng.dirichlet(row) for row in beta])
    kappa = rng.gamma(concentration_prior[0], 1 / concentration_prior[1])
    pi = rng.dirichlet(np.ones(n_classes))
    z = rng.choice(n_classes, n_items, p=pi)
    totals = rng.integers(votes[0], votes[1] + 1, n_items)
    counts = np.stack([rng.multinomial(n, rng.dirichlet(kappa * psi[c]))
                       for c, n in zip(z, totals)])
    data = pl.data.Votes(counts, np.arange(n_items), np.arange(n_classes))
    return {"population_confusion": psi, "concentration": kappa, "class_prior": pi}, data


def classifier(rng, truth_votes):
    """A classifier's probabilities leaning to each item's most voted class."""
    logits = rng.normal(size=truth_votes.shape) + 2.0 * (truth_votes == truth_votes.max(1,
                                                                                      keepdims=True))
    return softmax(logits, axis=1)


@pytest.mark.parametrize("with_classifier", [
    pytest.param(False, marks=pytest.mark.slow),  # the quick suite checks the kernel with one
    True])                                        # prior; SBC (slow) checks it with pi
def test_gibbs_matches_nuts_with_classes_summed_out(with_classifier):
    rng = np.random.default_rng(3)
    _, votes = simulate(rng)
    options = {"concentration_prior": PRIOR,
               "predictions": classifier(rng, votes.counts) if with_classifier else None}
    gibbs = pl.sample(vds.build(votes, **options), draws=2000, seed=0, progressbar=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        nuts = pl.sample(vds.build(votes, gibbs=False, **options), draws=1000, seed=1,
                         progressbar=False, dispersion=0.3)
    assert pl.diagnostics.convergence_report(nuts).converged
    prior = ("temperature", "class_bias") if with_classifier else ("class_prior",)
    assert_same_posterior(gibbs, nuts, (*prior, "population_confusion", "concentration",
                                        "plausibility"))


def test_a_seed_gives_the_same_draws_and_pymc_runs_the_same_kernel():
    _, votes = simulate(np.random.default_rng(5))
    model = vds.build(votes)
    first, second = (pl.sample(model, draws=100, chains=2, seed=3, progressbar=False,
                               check_convergence=False) for _ in range(2))
    for name in ("concentration", "population_confusion", "plausibility"):
        np.testing.assert_array_equal(first.posterior[name].values, second.posterior[name].values)
    [step] = pl.inference.steps(model)
    assert isinstance(step, pl.inference.KernelStep)
    pymc = pm.sample(model=model, step=step, draws=50, tune=20, chains=1, random_seed=3,
                     progressbar=False, compute_convergence_checks=False)
    assert np.isfinite(pymc.posterior["concentration"].values).all()


def test_log_likelihood_and_plausibilities_read_later_match_the_formula():
    """Per draw: ``logsumexp_c(log pi_c + gamma L[i, c])`` and ``softmax`` of the same terms,
    with ``L`` the Dirichlet-multinomial written out with scipy, at ``gamma = 2``; the
    plausibilities computed when read (``keep="summary"``) equal those stored."""
    _, votes = simulate(np.random.default_rng(6), n_items=25)
    model = vds.build(votes, reliability=2.0)
    stored = pl.sample(model, draws=20, chains=2, seed=1, keep="draws", progressbar=False,
                       check_convergence=False)
    later = pl.sample(model, draws=20, chains=2, seed=1, keep="summary", progressbar=False,
                      check_convergence=False)
    assert later.posterior["plausibility"].chunks is not None
    np.testing.assert_allclose(later.posterior["plausibility"].values,
                               stored.posterior["plausibility"].values, atol=1e-6)
    post = stored.posterior
    n = np.asarray(votes.counts, dtype=float)
    for chain, draw in ((0, 0), (1, 19)):
        pi = post["class_prior"].values[chain, draw]
        alpha = post["concentration"].values[chain, draw] * \
            post["population_confusion"].values[chain, draw]
        K = alpha.sum(1)
        L = 2.0 * (gammaln(K) - gammaln(K + n.sum(1)[:, None])
                   + (gammaln(alpha[None] + n[:, None]) - gammaln(alpha)[None]).sum(2))
        terms = np.log(pi) + L
        np.testing.assert_allclose(stored.log_likelihood["votes"].values[chain, draw],
                                   logsumexp(terms, axis=1), rtol=1e-10)
        np.testing.assert_allclose(post["plausibility"].values[chain, draw],
                                   softmax(terms, axis=1), atol=1e-6)


def test_the_predictive_check_replicates_votes_from_the_model():
    """Votes that agree on an item far more than independent votes would (small ``kappa``):
    this model's replicates reproduce the share of unanimous items."""
    _, votes = simulate(np.random.default_rng(8), n_items=300, votes=(3, 8))
    result = pl.aggregate(votes, "votes-dawid-skene", draws=300, seed=0,
                          concentration_prior=PRIOR)
    check = result.check(draws=100, seed=0).predictive
    assert check.replicated.shape == (100, 300, 3)
    np.testing.assert_array_equal(check.replicated.sum("class").values[0], votes.counts.sum(1))
    p = check.p_values
    assert 0.02 < p["unanimous_fraction"] < 0.98, p


@pytest.mark.slow  # 100 fits; NUTS above is the quick suite's independent check
def test_simulation_based_calibration_of_the_compiled_sampler():
    def simulated(rng):
        truth, votes = simulate(rng, n_items=30)
        return truth, votes

    result = simulation_based_calibration(
        lambda votes: vds.build(votes, concentration_prior=PRIOR), simulated,
        var_names=["population_confusion", "concentration", "class_prior"],
        n_simulations=100, draws=400, chains=2, thin=8, seed=21, log_likelihood=False)
    for name, p in result.p_values(bins=10).items():
        assert p > 1e-3, (name, p)
