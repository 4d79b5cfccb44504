"""Censored (and rounded) NIG ratings: the interval maths against scipy, the augmented Gibbs
sampler against a quadrature of the posterior with fixed hyper-parameters and against NUTS on
the same model with learned ones, the per-rating log-likelihood, the recording rule and the
predictive check of ratings."""

import warnings

import numpy as np
import pytest
import xarray as xr
from scipy import stats
from scipy.special import logsumexp

import plausible as pl
from plausible.data.ratings import Ratings
from plausible.data.ratings_simulators import simulate_nig
from plausible.maths.normal_intervals import log_interval_probability, truncated_normal_draws
from plausible.models import ratings_censored
from plausible.models.ratings.consensus import expected_rating
from plausible.models.ratings.nig import NIGPrior

from posterior_agreement import assert_same_posterior

PRIOR = NIGPrior(2.0, 1.0, 3.0, 8.0)


def _slider(n_items=30, per_item=6, seed=3, resolution=1.0):
    """NIG ratings recorded on a 0..10 slider: clipped, and rounded at ``resolution``."""
    ratings = simulate_nig(PRIOR, n_items=n_items, ratings_per_item=per_item, seed=seed).ratings
    score = ratings.score if resolution is None else np.round(ratings.score / resolution) * resolution
    return Ratings(ratings.item, ratings.annotator, np.clip(score, 0.0, 10.0), ratings.items,
                   ratings.annotators, scale=(0.0, 10.0))


def _sample(model, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return pl.sample(model, progressbar=False, **{"draws": 1000, "chains": 4, **kwargs})


@pytest.mark.parametrize("lower, upper, loc, scale", [
    (-np.inf, 0.0, 3.0, 1.0), (5.0, np.inf, 0.0, 1.0), (30.0, 31.0, 0.0, 1.0),
    (-0.5, 0.5, 40.0, 20.0), (-np.inf, 0.5, -40.0, 2.0), (2.0, 3.0, 2.5, 0.1)])
def test_interval_probabilities_and_draws_match_scipy_far_in_the_tails(lower, upper, loc, scale):
    a, b = (lower - loc) / scale, (upper - loc) / scale
    law = stats.norm(loc, scale)
    if lower + upper > 2 * loc:  # upper tail: differences of survival functions
        exact = logsumexp([law.logsf(lower), law.logsf(upper)], b=[1, -1])
    else:
        exact = logsumexp([law.logcdf(upper), law.logcdf(lower)], b=[1, -1])
    np.testing.assert_allclose(log_interval_probability(lower, upper, loc, scale), exact, rtol=1e-9)
    draws = truncated_normal_draws(np.random.default_rng(0), np.full(4000, lower), upper, loc, scale)
    assert (draws > lower).all() and (draws <= upper).all()
    assert stats.kstest(draws, stats.truncnorm(a, b, loc, scale).cdf).pvalue > 1e-3


def test_an_exact_rating_contributes_its_density():
    np.testing.assert_allclose(log_interval_probability(1.5, 1.5, 1.0, 2.0),
                               stats.norm(1.0, 2.0).logpdf(1.5), rtol=1e-12)


def test_bins_hold_the_latent_value_of_every_recorded_rating():
    data = _slider()
    latent = np.random.default_rng(1).normal(3.0, 6.0, (50, data.n_ratings))
    for censored in (True, False):
        recorded_as = ratings_censored.recording(data, resolution=1.0, censored=censored)
        recorded = ratings_censored.record(latent, **recorded_as)
        for row, values in zip(latent, recorded):
            lower, upper = ratings_censored.rating_bins(
                Ratings(data.item, data.annotator, values, data.items, data.annotators,
                        scale=None if not censored else data.scale),
                resolution=1.0, censored=censored)
            assert ((row > lower - 1e-12) & (row <= upper + 1e-12)).all()
        assert (recorded.min() >= 0) == censored


def _quadrature_moments(lower, upper, prior: NIGPrior):
    """Posterior means of ``mu`` and ``sigma2`` of one item by a grid over ``(mu, log
    sigma2)``: the independent route with fixed hyper-parameters."""
    mu = np.linspace(-25, 20, 600)[:, None]
    log_s2 = np.linspace(-4, 7, 500)[None, :]
    s2 = np.exp(log_s2)
    log_post = (stats.invgamma(prior.alpha0, scale=prior.beta0).logpdf(s2) + log_s2
                + stats.norm(prior.mu0, np.sqrt(s2 / prior.kappa0)).logpdf(mu))
    for lo, up in zip(lower, upper):
        log_post = log_post + log_interval_probability(lo, up, mu, np.sqrt(s2))
    weight = np.exp(log_post - log_post.max())
    weight /= weight.sum()
    return float((weight * mu).sum()), float((weight * s2).sum())


@pytest.mark.parametrize("resolution", [None, 1.0])
def test_gibbs_with_fixed_hyperparameters_matches_quadrature(resolution):
    data = _slider(n_items=8, resolution=resolution)
    model = ratings_censored.build(data, threshold=2.0, resolution=resolution, prior=PRIOR)
    trace = _sample(model, seed=4)
    lower, upper = ratings_censored.rating_bins(data, resolution=resolution)
    assert np.isneginf(lower).any(), "the check needs censored ratings"
    for name, index in (("mu", 0), ("sigma2", 1)):
        draws = trace.posterior[name].values
        se = pl.diagnostics.mcse_mean(draws)
        for i in range(data.n_items):
            at = data.item == i
            expected = _quadrature_moments(lower[at], upper[at], PRIOR)[index]
            assert abs(draws[..., i].mean() - expected) < 4.5 * se[i], (name, i)


@pytest.mark.slow
def test_gibbs_matches_nuts_on_the_same_model_with_learned_hyperparameters():
    data = _slider(n_items=20, per_item=5)
    gibbs = _sample(ratings_censored.build(data, threshold=2.0, resolution=1.0), seed=1)
    # NUTS needs a longer warm-up than PyMC's 1000 here: with 6.4 it stopped short (R-hat 1.03)
    nuts = _sample(ratings_censored.build(data, threshold=2.0, resolution=1.0, compiled=False),
                   seed=2, target_accept=0.95, tune=2000)
    for trace in (gibbs, nuts):
        assert pl.diagnostics.convergence_report(trace).ok
    assert_same_posterior(gibbs, nuts, ("mu0", "kappa0", "alpha0", "beta0", "mu", "sigma2",
                                        "plausibility"))


def test_log_likelihood_per_rating_and_replicates_follow_the_recording():
    data = _slider(n_items=10)
    trace = _sample(ratings_censored.build(data, threshold=2.0, resolution=1.0, reliability=2),
                    draws=50, chains=2, seed=5)
    pointwise = trace.log_likelihood["ratings"]
    assert pointwise.dims == ("chain", "draw", "rating")
    mu, sd = trace.posterior.mu.values[1, 7], np.sqrt(trace.posterior.sigma2.values[1, 7])
    for k in range(data.n_ratings):
        law, x = stats.norm(mu[data.item[k]], sd[data.item[k]]), data.score[k]
        expected = (law.logcdf(0.5) if x == 0 else law.logsf(9.5) if x == 10
                    else np.log(law.cdf(x + 0.5) - law.cdf(x - 0.5)))
        np.testing.assert_allclose(float(pointwise[1, 7, k]), 2 * expected, rtol=1e-9)
    replicated = ratings_censored.replicate_ratings(trace, data, draws=30, seed=6)
    assert replicated.shape == (30, data.n_ratings)
    assert set(np.unique(replicated)) <= set(np.arange(11.0))
    np.testing.assert_array_equal(replicated,
                                  ratings_censored.replicate_ratings(trace, data, draws=30, seed=6))


def test_bad_options_are_refused_by_name():
    data = _slider(n_items=5)
    unscaled = Ratings(data.item, data.annotator, data.score, data.items, data.annotators)
    with pytest.raises(ValueError, match="censoring needs the rating scale"):
        ratings_censored.build(unscaled, threshold=1.0)
    with pytest.raises(ValueError, match=r"annotator \d+: score \d outside the scale \[0, 1\]"):
        ratings_censored.build(data, threshold=1.0, scale=(0.0, 1.0))
    with pytest.raises(ValueError, match="reliability must be a whole number"):
        ratings_censored.build(data, threshold=1.0, reliability=1.5)
    with pytest.raises(ValueError, match="resolution"):
        ratings_censored.build(data, threshold=1.0, resolution=0.0)
    with pytest.raises(ValueError, match="proper NIG prior"):
        ratings_censored.build(data, threshold=1.0, prior=NIGPrior.reference())


def test_rating_predictive_check_counts_the_floor_and_the_spread():
    data = Ratings(np.repeat(np.arange(3), 2), np.tile([0, 1], 3),
                   np.array([0.0, 0.0, 0.0, 4.0, 10.0, 6.0]), np.arange(3), np.arange(2),
                   scale=(0.0, 10.0))
    replicated = np.array([[0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [-1.0, 1.0, 2.0, 2.0, 11.0, 3.0]])
    check = pl.diagnostics.rating_predictive_check(data, replicated)
    observed = check.observed_statistics
    assert observed["share_at_floor"] == pytest.approx(0.5)
    assert observed["share_at_ceiling"] == pytest.approx(1 / 6)
    assert observed["share_items_all_equal"] == pytest.approx(1 / 3)
    assert observed["mean_within_item_sd"] == pytest.approx(np.mean([0, np.sqrt(8), np.sqrt(8)]))
    rep = check.replicated_statistics
    assert list(rep["share_outside_scale"]) == [0.0, pytest.approx(2 / 6)]
    assert list(rep["share_items_all_equal"]) == [1.0, pytest.approx(1 / 3)]
    with pytest.raises(ValueError, match="5 columns, the data 6 ratings"):
        pl.diagnostics.rating_predictive_check(data, replicated[:, :5])


def test_expected_rating_is_the_mean_of_the_recorded_rating():
    rng = np.random.default_rng(0)
    for mu, sigma2, low, high in [(-41.0, 900.0, 0.0, 100.0), (95.0, 400.0, 0.0, 100.0),
                                  (5.0, 400.0, 0.0, np.inf), (130.0, 900.0, -np.inf, 100.0),
                                  (10.0, 25.0, -np.inf, np.inf)]:
        simulated = np.clip(rng.normal(mu, np.sqrt(sigma2), 2_000_000), low, high)
        expected = expected_rating(mu, sigma2, low, high)
        assert abs(expected - simulated.mean()) < 5 * simulated.std() / np.sqrt(simulated.size)


def test_the_front_door_writes_a_consensus_rating_on_the_scale(tmp_path):
    """On a 0..10 slider with a floor, the censored model's latent means fall below the floor
    but its consensus rating is on the scale, near each item's mean rating; the Gaussian
    model's consensus is its ``mu``."""
    ratings = _slider(n_items=20, per_item=8, seed=5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        censored = pl.aggregate(ratings, "censored-normal-inverse-gamma", threshold=5.0,
                                draws=500, seed=0)
        gaussian = pl.aggregate(ratings, "normal-inverse-gamma", threshold=5.0, draws=500, seed=0)
    frame = censored.to_frame().set_index("item")
    mean_rating = np.bincount(ratings.item, ratings.score) / np.bincount(ratings.item)
    assert (censored.trace.posterior["mu"].mean(("chain", "draw")).values < 0).any()
    assert ((frame["consensus_q025"] >= 0) & (frame["consensus_q975"] <= 10)).all()
    assert (frame["consensus_q025"] <= frame["consensus_score"]).all()
    assert (frame["consensus_score"] <= frame["consensus_q975"]).all()
    assert np.abs(frame["consensus_score"].to_numpy() - mean_rating).max() < 1.5
    plain = gaussian.to_frame().set_index("item")["consensus_score"]
    np.testing.assert_allclose(plain.to_numpy(),
                               gaussian.trace.posterior["mu"].mean(("chain", "draw")).values)


def test_item_log_likelihood_integrates_the_items_parameters_by_quadrature():
    """One rating per item: given ``sigma2``, ``mu`` integrates out in closed form (``x ~
    N(mu0, sigma2 (1 + 1/kappa0))``), so the item's probability of its interval is a 1-D
    integral over the inverse-gamma ``sigma2``; the Monte Carlo estimate must match it."""
    from scipy import integrate

    hyper = {"mu0": 1.0, "kappa0": 2.0, "alpha0": 3.0, "beta0": 4.0}
    ratings = Ratings(np.arange(4), np.zeros(4, int), np.array([0.0, 1.0, 2.0, 4.0]),
                      np.arange(4), np.array([0]), scale=(0.0, 4.0))
    posterior = xr.Dataset({name: (("chain", "draw"), np.full((1, 3), value))
                            for name, value in hyper.items()},
                           coords={"chain": [0], "draw": [0, 1, 2]})
    constant = xr.Dataset({"reliability": 1.0, "censor_low": 0.0, "censor_high": 4.0,
                           "resolution": 1.0, "grid_anchor": 0.0})
    trace = xr.DataTree.from_dict({"posterior": posterior, "constant_data": constant})
    got = ratings_censored.item_log_likelihood(trace, ratings, samples=200_000, seed=1)
    lower, upper = ratings_censored.rating_bins(ratings, resolution=1.0)

    def exact(lo, hi):
        def density(s2):
            sd = np.sqrt(s2 * (1 + 1 / hyper["kappa0"]))
            p = stats.norm.cdf(hi, hyper["mu0"], sd) - stats.norm.cdf(lo, hyper["mu0"], sd)
            return p * stats.invgamma.pdf(s2, hyper["alpha0"], scale=hyper["beta0"])
        return np.log(integrate.quad(density, 0, np.inf)[0])

    expected = np.array([exact(lo, hi) for lo, hi in zip(lower, upper)])
    np.testing.assert_allclose(got.values[0], np.broadcast_to(expected, (3, 4)), atol=0.01)
    exact_values = xr.DataTree.from_dict({"posterior": posterior,
                                          "constant_data": constant.assign(resolution=0.0)})
    with pytest.raises(ValueError, match="recorded to a resolution"):
        ratings_censored.item_log_likelihood(exact_values, ratings.subset([1, 2]))
