"""NIG ratings model: closed form, empirical Bayes, certainty routes, simulators, bad input.

Independent routes: 2-D quadrature of prior x tempered likelihood (posterior moments and
marginal likelihood), the classical Student-t interval (Jeffreys prior), finite differences
(empirical-Bayes gradient), Monte Carlo certainty from exact Gibbs draws and from the
streamed sampler against the closed-form Student-t certainty on every item, and the metric
layer on the very draws the stream reduces.
"""

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from scipy import optimize, stats

import plausible as pl
from plausible.data import Ratings, RatingSummary
from plausible.data.ratings_simulators import (
    AVA_SCORES,
    histogram_summary,
    simulate_ava,
    simulate_nig,
    simulate_toxicity,
)
from plausible.models import ratings as nig
from plausible.models.ratings.empirical import _objective
from plausible.models.ratings.stream import iter_draws

PRIOR = nig.NIGPrior(mu0=1.0, kappa0=2.0, alpha0=4.0, beta0=3.0)


def single_item(scores) -> Ratings:
    scores = np.asarray(scores, dtype=float)
    return Ratings(np.zeros(scores.size, int), np.arange(scores.size), scores, ["x"], np.arange(scores.size))


# --- closed form -------------------------------------------------------------------------


def quadrature(prior, scores, reliability):
    """``Z``, ``E mu``, ``E sigma2`` of prior x likelihood^gamma on a (mu, log sigma2) grid."""
    mu = np.linspace(-6, 8, 1401)[:, None]
    log_s2 = np.linspace(-6, 5, 1101)[None, :]
    s2 = np.exp(log_s2)
    log_prior = (
        stats.invgamma.logpdf(s2, prior.alpha0, scale=prior.beta0) + log_s2  # Jacobian d s2 / d log s2
        + stats.norm.logpdf(mu, prior.mu0, np.sqrt(s2 / prior.kappa0))
    )
    log_lik = stats.norm.logpdf(np.asarray(scores)[:, None, None], mu, np.sqrt(s2)).sum(axis=0)
    density = np.exp(log_prior + reliability * log_lik)
    z = np.trapezoid(np.trapezoid(density, log_s2[0], axis=1), mu[:, 0])

    def expect(f):
        return np.trapezoid(np.trapezoid(density * f, log_s2[0], axis=1), mu[:, 0]) / z

    return z, expect(mu), expect(s2)


@pytest.mark.parametrize("reliability", [1.0, 2.5, 0.4])
def test_posterior_and_marginal_likelihood_match_quadrature(reliability):
    scores = [0.3, 1.9, 1.2]
    ratings = single_item(scores)
    post = nig.nig_posterior(ratings, PRIOR, reliability=reliability)
    z, mean_mu, mean_s2 = quadrature(PRIOR, scores, reliability)
    moments = post.moments()
    np.testing.assert_allclose(moments["mu_mean"], mean_mu, rtol=1e-4)
    np.testing.assert_allclose(moments["sigma2_mean"], mean_s2, rtol=1e-4)
    log_z = nig.log_marginal_likelihood(ratings, PRIOR, reliability=reliability)
    np.testing.assert_allclose(log_z, np.log(z), atol=1e-4)


def test_jeffreys_prior_gives_the_classical_t_interval():
    scores = np.array([2.0, 3.5, 1.0, 4.0, 2.5])
    post = nig.nig_posterior(single_item(scores), nig.NIGPrior.reference())
    marginal = post.mu_marginal()
    np.testing.assert_allclose(marginal.kwds["df"], scores.size - 1)
    np.testing.assert_allclose(marginal.kwds["loc"], scores.mean())
    np.testing.assert_allclose(marginal.kwds["scale"], scores.std(ddof=1) / np.sqrt(scores.size))


def test_closed_form_certainty_is_the_student_t_tail():
    sim = simulate_nig(PRIOR, n_items=30, ratings_per_item=np.arange(30) % 7 + 1, seed=1)
    post = nig.nig_posterior(sim.ratings, PRIOR, reliability=1.7)
    certainty = post.certainty(1.2)
    below = post.mu_marginal().cdf(1.2)
    np.testing.assert_allclose(certainty.values, np.maximum(below, 1 - below), rtol=1e-12)
    np.testing.assert_allclose(post.prob_below(1.2), below, rtol=1e-12)
    assert certainty.dims == ("item",) and certainty.name == "annotation_certainty"


# --- empirical Bayes ---------------------------------------------------------------------


@pytest.mark.parametrize("reliability", [1.0, 3.0])
def test_empirical_bayes_gradient_matches_finite_differences(reliability):
    count, mean, ss = simulate_nig(PRIOR, 100, 5, seed=2).ratings.per_item()
    theta = np.array([0.3, 0.2, 1.1, 0.7])

    def value(t):
        return _objective(t, count, mean, ss, reliability)[0]

    def grad(t):
        return _objective(t, count, mean, ss, reliability)[1]

    assert optimize.check_grad(value, grad, theta) < 1e-5 * max(1.0, np.linalg.norm(grad(theta)))


def test_empirical_bayes_recovers_the_hyperparameters():
    truth = nig.NIGPrior(mu0=3.0, kappa0=0.8, alpha0=5.0, beta0=8.0)
    sim = simulate_nig(truth, n_items=4000, ratings_per_item=8, seed=3)
    fit = nig.fit_empirical_bayes(sim.ratings)
    assert fit.converged and not fit.at_bound
    got = fit.prior
    assert abs(got.mu0 - truth.mu0) < 0.1
    np.testing.assert_allclose([got.kappa0, got.alpha0, got.beta0 / got.alpha0],
                               [truth.kappa0, truth.alpha0, truth.beta0 / truth.alpha0], rtol=0.15)
    # it is the maximum: every coordinate step away lowers the marginal likelihood
    best = fit.log_marginal_likelihood
    for name in ("mu0", "kappa0", "alpha0", "beta0"):
        for factor in (0.97, 1.03):
            moved = nig.NIGPrior(**{**got.as_dict(), name: getattr(got, name) * factor})
            assert nig.log_marginal_likelihood(sim.ratings, moved).sum() < best


def test_empirical_bayes_rejects_data_without_spread():
    same_within = RatingSummary(np.array([3, 4]), np.array([1.0, 2.0]), np.zeros(2))
    with pytest.raises(ValueError, match="no item has two different ratings"):
        nig.fit_empirical_bayes(same_within)
    same_means = RatingSummary(np.array([3, 4]), np.array([1.0, 1.0]), np.ones(2))
    with pytest.raises(ValueError, match="all means are equal"):
        nig.fit_empirical_bayes(same_means)


# --- Monte Carlo certainty against the closed form ---------------------------------------


@pytest.fixture(scope="module")
def gibbs_fit():
    sim = simulate_nig(PRIOR, n_items=60, ratings_per_item=np.arange(60) % 9 + 1, seed=4)
    model = nig.build(sim.ratings, threshold=1.0, prior=PRIOR, reliability=1.5)
    trace = pl.sample(model, draws=2000, chains=2, seed=5, progressbar=False)
    return sim, trace, nig.nig_posterior(sim.ratings, PRIOR, reliability=1.5)


def assert_prob_below_agrees(estimate, exact, n_draws, z=4.5):
    """Every item: the Monte Carlo share of draws below t within ``z`` binomial s.e."""
    se = np.sqrt(exact * (1 - exact) / n_draws) + 1.0 / n_draws
    worst = np.max(np.abs(estimate - exact) / se)
    assert worst < z, f"max |MC - closed form| = {worst:.2f} s.e."


def test_trace_certainty_agrees_with_closed_form_on_every_item(gibbs_fit):
    _, trace, post = gibbs_fit
    label = pl.metrics.label_certainty(trace)
    n_draws = trace.posterior.sizes["chain"] * trace.posterior.sizes["draw"]
    assert_prob_below_agrees(label.sel({"class": "below"}).values, post.prob_below(1.0), n_draws)
    mc = pl.metrics.annotation_certainty(trace)
    assert np.max(np.abs(mc.values - post.certainty(1.0).values)) < 0.05


def test_trace_plausibility_is_thresholded_normal_and_metrics_read_it(gibbs_fit):
    sim, trace, _ = gibbs_fit
    plaus = trace.posterior["plausibility"]
    assert plaus.dims == ("chain", "draw", "item", "class")
    assert list(plaus["class"].values) == ["below", "at_or_above"]
    mu, sigma2 = trace.posterior["mu"].values, trace.posterior["sigma2"].values
    np.testing.assert_allclose(plaus.values, nig.threshold_plausibility(mu, sigma2, 1.0), rtol=1e-10, atol=1e-14)
    top1 = plaus.values.argmax(axis=-1)
    np.testing.assert_array_equal(top1, mu >= 1.0)
    scores = np.stack([np.zeros(60), np.ones(60)], axis=1)  # predict "at_or_above" everywhere
    acc = pl.metrics.ua_topk_accuracy(trace, scores, k=1)
    np.testing.assert_allclose(acc.values, (mu >= 1.0).astype(float))
    assert {"observed_data", "constant_data"} <= set(trace.children)
    np.testing.assert_array_equal(trace.observed_data["ratings"].values, sim.ratings.score)


def test_streamed_certainty_agrees_with_closed_form_and_is_chunk_invariant():
    sim = simulate_nig(PRIOR, n_items=300, ratings_per_item=np.arange(300) % 6 + 1, seed=6)
    post = nig.nig_posterior(sim.ratings, PRIOR, reliability=0.7)
    predictions = np.arange(300) % 2 == 0
    result = nig.stream_certainty(post, 1.0, draws=3000, predictions=predictions, seed=7)
    assert_prob_below_agrees(result.label_certainty.values[:, 0], post.prob_below(1.0), 3000)
    again = nig.stream_certainty(post, 1.0, draws=3000, predictions=predictions, seed=7, chunk_elements=997)
    xr.testing.assert_equal(result.label_certainty, again.label_certainty)
    xr.testing.assert_equal(result.ua_accuracy, again.ua_accuracy)
    # per-item expected accuracy = certainty of the predicted class, closed form
    expected = np.where(predictions, 1 - post.prob_below(1.0), post.prob_below(1.0)).mean()
    assert abs(float(result.ua_accuracy.mean()) - expected) < 4.5 * float(result.ua_accuracy.std()) / np.sqrt(3000)


def test_stream_equals_the_metric_layer_on_the_same_draws():
    sim = simulate_nig(PRIOR, n_items=50, ratings_per_item=4, seed=8)
    post = nig.nig_posterior(sim.ratings, PRIOR)
    scores = np.random.default_rng(0).normal(size=(50, 2))
    result = nig.stream_certainty(post, 1.0, draws=400, predictions=scores, seed=9, chunk_elements=3000)
    mu = np.empty((400, 50))
    sigma2 = np.empty((400, 50))
    for rows, m, log_sigma in iter_draws(post, 400, seed=9, chunk_elements=5000):
        mu[rows], sigma2[rows] = m, np.exp(2 * log_sigma)
    plaus = xr.DataArray(
        nig.threshold_plausibility(mu, sigma2, 1.0)[np.newaxis], dims=("chain", "draw", "item", "class"),
        coords={"chain": [0], "draw": np.arange(400), "item": np.arange(50), "class": list(nig.CLASSES)},
        name="plausibility",
    )
    xr.testing.assert_allclose(pl.metrics.label_certainty(plaus), result.label_certainty)
    np.testing.assert_allclose(pl.metrics.annotation_certainty(plaus).values, result.annotation_certainty.values)
    acc = pl.metrics.ua_topk_accuracy(plaus, scores, k=1).mean("item")
    np.testing.assert_allclose(acc.values, result.ua_accuracy.values)
    # and the draws themselves follow the closed-form marginals (pooled PIT)
    assert stats.kstest(post.mu_marginal().cdf(mu).ravel(), "uniform").pvalue > 1e-3
    assert stats.kstest(post.sigma2_marginal().cdf(sigma2).ravel(), "uniform").pvalue > 1e-3


# --- simulators ---------------------------------------------------------------------------


def test_toxicity_simulator_shape_and_seed():
    sim = simulate_toxicity(5000, seed=0)
    ratings = sim.ratings
    count = ratings.per_item().count
    assert 9.5 < count.mean() < 10.5 and count.min() >= 8
    assert set(np.unique(ratings.score)) <= {-2.0, -1.0, 0.0, 1.0, 2.0}
    assert ratings.scale == (-2.0, 2.0)
    assert 0.004 < sim.toxic.mean() < 0.02
    pairs = pd.DataFrame({"i": ratings.item, "a": ratings.annotator})
    assert not pairs.duplicated().any(), "an annotator rates a comment at most once"
    again = simulate_toxicity(5000, seed=0)
    np.testing.assert_array_equal(again.ratings.score, ratings.score)
    assert not np.array_equal(simulate_toxicity(5000, seed=1).ratings.score, ratings.score)


def test_ava_simulator_shape_seed_and_summary():
    sim = simulate_ava(2000, seed=0)
    assert sim.histograms.shape == (2000, 10)
    summary = sim.summary()
    assert 195 < summary.count.mean() < 205
    assert 5.2 < summary.mean.mean() < 5.6 and 0.55 < sim.good.mean() < 0.85
    np.testing.assert_array_equal(simulate_ava(2000, seed=0).histograms, sim.histograms)
    small = simulate_ava(20, ratings_per_item=15, seed=1)
    long = small.to_ratings()
    assert long.scale == (1.0, 10.0)
    for got, want in zip(long.per_item(), small.summary()):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-9)
    with pytest.raises(ValueError, match="item 1 has no ratings"):
        histogram_summary(np.array([[1] + [0] * 9, [0] * 10]), AVA_SCORES)


# --- model building and bad input ---------------------------------------------------------


FRAME = pd.DataFrame({
    "item": ["c1", "c1", "c1", "c2", "c2", "c3"],
    "annotator": ["a", "b", "c", "a", "b", "c"],
    "score": [1, 2, 0, -1, -2, 1],
})


@pytest.mark.parametrize(
    ("score", "match"),
    [
        ([1, 2, np.nan, -1, -2, 1], r"item 'c1', annotator 'c': score nan is not finite"),
        ([1, 2, 0, -np.inf, -2, 1], r"item 'c2', annotator 'a': score -inf is not finite"),
        ([1, "two", 0, -1, -2, 1], r"item 'c1', annotator 'b': score 'two' is not a number"),
        ([1, 2, 0, -1, -2, 3], r"item 'c3', annotator 'c': score 3.0 outside the scale \[-2, 2\]"),
    ],
)
def test_bad_scores_are_named(score, match):
    with pytest.raises(ValueError, match=match):
        Ratings.from_frame(FRAME.assign(score=score), scale=(-2, 2))


def test_model_rejects_items_with_too_few_ratings_for_its_prior():
    ratings = Ratings.from_frame(FRAME, scale=(-2, 2))
    with pytest.raises(ValueError, match=r"item 'c3' has 1 rating\(s\); .* needs at least 2"):
        nig.build(ratings, threshold=0.0, prior=nig.NIGPrior.reference())
    with pytest.raises(ValueError, match=r"item 'c3' has 1 rating\(s\)"):
        nig.nig_posterior(ratings, nig.NIGPrior.reference())
    equal = Ratings.from_frame(FRAME.assign(score=[1, 2, 0, -1, -1, 1]).iloc[:5])
    with pytest.raises(ValueError, match=r"item 'c2': all 2 ratings are equal"):
        nig.build(equal, threshold=0.0, prior=nig.NIGPrior.reference())
    # a proper prior accepts a single rating; a higher reliability lowers the need
    nig.build(ratings, threshold=0.0, prior=PRIOR)
    nig.nig_posterior(ratings, nig.NIGPrior(0.0, 0.0, -1.0, 0.1), reliability=3.0)
    with pytest.raises(ValueError, match="needs at least 3"):
        nig.nig_posterior(ratings, nig.NIGPrior(0.0, 0.0, -1.0, 0.1))


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"threshold": np.nan}, ValueError, "threshold must be a finite number"),
        ({"reliability": 0.0}, ValueError, "reliability must be a finite number > 0"),
        ({"prior": "flat"}, ValueError, "prior must be 'empirical', 'hierarchical'"),
        ({"prior": {"tau": 1.0}}, ValueError, r"unknown hyper-parameters \['tau'\]"),
        ({"prior": {"kappa0": -1.0}}, ValueError, "fixed kappa0 must be finite and > 0"),
        ({"prior": 3}, TypeError, "prior must be"),
    ],
)
def test_build_rejects_bad_arguments(kwargs, error, match):
    ratings = Ratings.from_frame(FRAME)
    with pytest.raises(error, match=match):
        nig.build(ratings, **{"threshold": 0.0, **kwargs})


@pytest.mark.parametrize(
    ("values", "match"),
    [
        ({"mu0": np.nan}, "mu0 must be a finite number"),
        ({"kappa0": -1.0}, "kappa0 and beta0 must be >= 0"),
        ({"alpha0": "3"}, "alpha0 must be a finite number"),
    ],
)
def test_prior_validation(values, match):
    with pytest.raises(ValueError, match=match):
        nig.NIGPrior(**{**PRIOR.as_dict(), **values})


def test_rating_summary_validation_names_the_item():
    with pytest.raises(ValueError, match="item 'b': mean score nan is not finite"):
        nig.nig_posterior(RatingSummary(np.array([2, 2]), np.array([1.0, np.nan]), np.ones(2)), PRIOR,
                          items=["a", "b"])
    with pytest.raises(ValueError, match="item 1 has 0 ratings"):
        nig.nig_posterior(RatingSummary(np.array([2, 0]), np.ones(2), np.ones(2)), PRIOR)
