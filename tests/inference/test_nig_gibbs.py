"""The exact NIG Gibbs step against independent routes.

Fixed hyper-parameters: every Gibbs draw against the closed-form posterior (pooled
probability-integral transforms of ``mu`` through its Student-t marginal and of ``sigma2``
through its inverse-Gamma marginal, KS tests; per-item moments). Hyper-parameters sampled
by NUTS: the step's conditional at a given point against the closed form with those
hyper-parameters (read through their log transforms), Gibbs+NUTS against NUTS alone on
the same model, and recovery of the simulated hyper-parameters.
"""

import arviz as az
import numpy as np
import pymc as pm
import pytest
from scipy import stats

import plausible as pl
from plausible.data import Ratings
from plausible.data.ratings_simulators import simulate_nig
from plausible.inference.declarations import declared_gibbs
from plausible.inference.step_methods.nig_gibbs import draw_nig
from plausible.models import ratings as nig

PRIOR = nig.NIGPrior(mu0=1.0, kappa0=2.0, alpha0=4.0, beta0=3.0)
HYPER = ["mu0", "kappa0", "alpha0", "beta0"]


def pooled_pit_pvalues(post, mu, sigma2):
    """KS p-values of the pooled PITs of draws ``(sample, item)`` under the closed form."""
    return (
        stats.kstest(post.mu_marginal().cdf(mu).ravel(), "uniform").pvalue,
        stats.kstest(post.sigma2_marginal().cdf(sigma2).ravel(), "uniform").pvalue,
    )


@pytest.mark.parametrize("shape", [0.05, 0.8, 6.0])
def test_draw_nig_follows_the_nig_distribution(shape):
    n = 20000
    post = nig.NIGPosterior(np.full(n, 3.0), np.full(n, -1.0), np.full(n, shape), np.full(n, 2.0))
    mu, sigma2 = draw_nig(np.random.default_rng(0), post.kappa_n, post.mu_n, post.alpha_n, post.beta_n)
    assert np.all(np.isfinite(mu)) and np.all(sigma2 > 0)
    p_mu, p_sigma2 = pooled_pit_pvalues(post, mu, sigma2)
    assert p_mu > 1e-3 and p_sigma2 > 1e-3
    # mu | sigma2 is N(mu_n, sigma2 / kappa_n)
    assert stats.kstest((mu + 1.0) * np.sqrt(3.0 / sigma2), "norm").pvalue > 1e-3


@pytest.mark.parametrize(
    ("prior", "reliability"), [(PRIOR, 2.5), (nig.NIGPrior.reference(), 1.0)], ids=["proper", "jeffreys"]
)
def test_gibbs_matches_the_closed_form_posterior(prior, reliability):
    sim = simulate_nig(PRIOR, n_items=40, ratings_per_item=np.arange(40) % 8 + 2, seed=1)
    model = nig.build(sim.ratings, threshold=1.0, prior=prior, reliability=reliability)
    trace = pl.sample(model, draws=1500, chains=2, seed=2, progressbar=False)
    mu = trace.posterior["mu"].stack(s=("chain", "draw")).transpose("s", ...).values
    sigma2 = trace.posterior["sigma2"].stack(s=("chain", "draw")).transpose("s", ...).values
    post = nig.nig_posterior(sim.ratings, prior, reliability=reliability)
    p_mu, p_sigma2 = pooled_pit_pvalues(post, mu, sigma2)
    assert p_mu > 1e-3 and p_sigma2 > 1e-3
    # per-item KS of mu against its Student-t marginal, Bonferroni over items
    per_item = [
        stats.kstest(mu[:, i], stats.t(2 * post.alpha_n[i], post.mu_n[i], post.mu_scale[i]).cdf).pvalue
        for i in range(40)
    ]
    assert min(per_item) > 1e-3 / 40
    moments = post.moments()
    finite = np.isfinite(moments["mu_var"])
    z = (mu.mean(axis=0) - moments["mu_mean"])[finite] / np.sqrt(moments["mu_var"][finite] / mu.shape[0])
    assert np.abs(z).max() < 4.5
    finite = np.isfinite(moments["sigma2_var"])
    z = (sigma2.mean(axis=0) - moments["sigma2_mean"])[finite] / np.sqrt(moments["sigma2_var"][finite] / mu.shape[0])
    assert np.abs(z).max() < 4.5


@pytest.mark.parametrize(
    ("prior", "reliability"), [(PRIOR, 2.5), (nig.NIGPrior.reference(), 0.7)], ids=["tempered", "jeffreys"]
)
def test_nuts_on_the_pymc_model_matches_the_closed_form(prior, reliability):
    """The PyMC model (tempering potential, flat priors of the improper limit) is the model
    whose closed form the Gibbs step draws from."""
    sim = simulate_nig(PRIOR, n_items=6, ratings_per_item=[3, 4, 5, 6, 8, 10], seed=9)
    model = nig.build(sim.ratings, threshold=1.0, prior=prior, reliability=reliability)
    with model:
        nuts = pm.sample(draws=1000, tune=1000, chains=2, random_seed=10, progressbar=False,
                         compute_convergence_checks=False)
    post = nig.nig_posterior(sim.ratings, prior, reliability=reliability)
    mu = nuts.posterior["mu"].stack(s=("chain", "draw")).transpose("s", ...).values
    sigma2 = nuts.posterior["sigma2"].stack(s=("chain", "draw")).transpose("s", ...).values
    # NUTS draws are autocorrelated: compare quantiles of the PITs, not a KS test
    for pit in (post.mu_marginal().cdf(mu), post.sigma2_marginal().cdf(sigma2)):
        np.testing.assert_allclose(np.quantile(pit, [0.1, 0.5, 0.9], axis=0),
                                   np.array([[0.1], [0.5], [0.9]]) + 0 * pit[:3], atol=0.06)


def test_same_seed_same_draws_and_chains_differ():
    sim = simulate_nig(PRIOR, n_items=5, ratings_per_item=3, seed=3)
    model = nig.build(sim.ratings, threshold=1.0, prior=PRIOR)
    kwargs = dict(draws=30, chains=2, progressbar=False, check_convergence=False)
    first = pl.sample(model, seed=4, **kwargs).posterior["mu"].values
    np.testing.assert_array_equal(first, pl.sample(model, seed=4, **kwargs).posterior["mu"].values)
    assert not np.array_equal(first, pl.sample(model, seed=5, **kwargs).posterior["mu"].values)
    assert not np.array_equal(first[0], first[1])


def test_step_reads_the_current_hyperparameters_through_their_transforms():
    sim = simulate_nig(PRIOR, n_items=3000, ratings_per_item=3, seed=6)
    model = nig.build(sim.ratings, threshold=1.0, prior="hierarchical", reliability=1.0)
    [declaration] = declared_gibbs(model)
    step = declaration.instantiate(model)
    step.rng = np.random.default_rng(7)
    assert [v.name for v in step.vars] == ["mu", "sigma2_log__"]
    point = model.initial_point()
    for hyper, reliability in [(nig.NIGPrior(0.5, 0.3, 2.0, 1.0), 1.0), (nig.NIGPrior(2.0, 5.0, 8.0, 12.0), 2.0)]:
        nig.set_reliability(model, reliability)
        point = {**point, "mu0": np.array(hyper.mu0)}
        for name in ("kappa0", "alpha0", "beta0"):
            point[f"{name}_log__"] = np.array(np.log(getattr(hyper, name)))
        before = {k: v.copy() for k, v in point.items()}
        new, _ = step.step(point)
        for k in point:
            np.testing.assert_array_equal(point[k], before[k])  # the point is never mutated
        post = nig.nig_posterior(sim.ratings, hyper, reliability=reliability)
        p_mu, p_sigma2 = pooled_pit_pvalues(post, new["mu"], np.exp(new["sigma2_log__"]))
        assert p_mu > 1e-3 and p_sigma2 > 1e-3


def test_step_rejects_a_posterior_that_depends_on_its_own_variables():
    sim = simulate_nig(PRIOR, n_items=4, ratings_per_item=3, seed=8)
    model = nig.build(sim.ratings, threshold=1.0, prior=PRIOR)
    mu, sigma2 = model["mu"], model["sigma2"]
    with pytest.raises(ValueError, match="must not depend on mu or sigma2"):
        nig.NIGGibbs([mu, sigma2], posterior=(1.0 + 0 * mu, mu, 3.0, 2.0), model=model)


# --- hierarchical: Gibbs + NUTS ----------------------------------------------------------

TRUTH = nig.NIGPrior(mu0=2.0, kappa0=1.5, alpha0=5.0, beta0=4.0)


@pytest.fixture(scope="module")
def hierarchical():
    sim = simulate_nig(TRUTH, n_items=150, ratings_per_item=10, seed=11)
    model = nig.build(sim.ratings, threshold=2.0, prior="hierarchical")
    gibbs = pl.sample(model, draws=2000, chains=2, seed=12, progressbar=False)
    return sim, model, gibbs


@pytest.mark.slow
def test_hierarchical_recovers_the_hyperparameters(hierarchical):
    sim, _, gibbs = hierarchical
    assert pl.diagnostics.convergence_report(gibbs).ok
    post = gibbs.posterior
    for name in HYPER:
        draws = post[name].values.ravel()
        assert abs(draws.mean() - getattr(TRUTH, name)) < 3.5 * draws.std(), name
    # the hyper-posterior concentrates around the empirical-Bayes (type-II ML) estimate
    eb = nig.fit_empirical_bayes(sim.ratings).prior
    for name in HYPER:
        draws = post[name].values.ravel()
        assert abs(np.median(draws) - getattr(eb, name)) < 1.0 * draws.std(), name


@pytest.mark.slow
def test_hierarchical_gibbs_agrees_with_nuts_only(hierarchical):
    _, model, gibbs = hierarchical
    with model:
        nuts = pm.sample(draws=800, tune=700, chains=2, random_seed=13, progressbar=False,
                         compute_convergence_checks=False)
    names = HYPER + ["mu", "sigma2"]
    mcse = {k: az.mcse(t, var_names=names) for k, t in (("g", gibbs), ("n", nuts))}
    for name in names:
        g, n = gibbs.posterior[name], nuts.posterior[name]
        se = np.sqrt(mcse["g"][name].values ** 2 + mcse["n"][name].values ** 2)
        z = (g.mean(("chain", "draw")).values - n.mean(("chain", "draw")).values) / se
        assert np.abs(z).max() < 4.5, name
        np.testing.assert_allclose(g.std(("chain", "draw")), n.std(("chain", "draw")), rtol=0.25)
    rb = nig.rao_blackwell_prob_below(gibbs, hierarchical[0].ratings, 2.0)
    mc = pl.metrics.label_certainty(gibbs).sel({"class": "below"})
    assert np.abs(rb.values - mc.values).max() < 0.08


# --- annotator offsets: Gibbs for (mu, sigma2), NUTS for the offsets ---------------------


@pytest.mark.slow
def test_annotator_offsets_are_recovered_and_match_nuts_only():
    rng = np.random.default_rng(21)
    n_items, n_annotators = 40, 5
    bias = np.array([-0.8, -0.3, 0.1, 0.4, 0.6])
    bias -= bias.mean()
    log_scale = np.array([-0.4, 0.3, 0.2, -0.1, 0.0])
    log_scale -= log_scale.mean()
    sigma2 = PRIOR.beta0 / rng.gamma(PRIOR.alpha0, size=n_items)
    mu = PRIOR.mu0 + np.sqrt(sigma2 / PRIOR.kappa0) * rng.standard_normal(n_items)
    item = np.repeat(np.arange(n_items), n_annotators)
    annotator = np.tile(np.arange(n_annotators), n_items)
    noise = np.sqrt(sigma2[item]) * np.exp(log_scale[annotator]) * rng.standard_normal(item.size)
    score = mu[item] + bias[annotator] + noise
    ratings = Ratings(item, annotator, score, np.arange(n_items), np.arange(n_annotators))
    model = nig.build(ratings, threshold=1.0, prior=PRIOR, annotator_effects=True)
    gibbs = pl.sample(model, draws=600, chains=2, tune=500, seed=22, progressbar=False,
                      check_convergence=False)
    # the offsets' scales mix more slowly (coupled to every item's sigma2): a looser R-hat gate
    assert pl.diagnostics.convergence_report(gibbs).table["max_rhat"].max() < 1.05
    post = gibbs.posterior
    for name, truth in (("annotator_bias", bias), ("annotator_log_scale", log_scale)):
        draws = post[name].stack(s=("chain", "draw")).values
        assert np.all(np.abs(draws.mean(axis=-1) - truth) < 3.5 * draws.std(axis=-1)), name
    with model:
        nuts = pm.sample(draws=600, tune=500, chains=2, random_seed=23, progressbar=False,
                         compute_convergence_checks=False)
    for name in ("annotator_bias", "annotator_log_scale", "mu"):
        g, n = gibbs.posterior[name], nuts.posterior[name]
        se = np.sqrt(az.mcse(gibbs, var_names=[name])[name].values ** 2
                     + az.mcse(nuts, var_names=[name])[name].values ** 2)
        z = (g.mean(("chain", "draw")).values - n.mean(("chain", "draw")).values) / se
        assert np.abs(z).max() < 4.5, name
