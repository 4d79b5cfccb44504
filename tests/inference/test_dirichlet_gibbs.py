"""The exact Dirichlet Gibbs step against independent routes.

Routes: the closed-form Dirichlet posterior (mean, variance), NUTS on the same PyMC
model, and the log-Gamma distribution (KS test) for the tiny-shape draws PrIRN needs.
"""

import types

import numpy as np
import pymc as pm
import pytest
import xarray as xr
from scipy import stats

from plausible.inference import sample
from plausible.metrics import as_plausibility
from plausible.maths.logspace import log_gamma_draws
from plausible.inference.sampling import dispersed_initvals
from plausible.models import dirichlet

from dirichlet_moments import assert_matches_dirichlet


def make_votes(n_items=40, n_classes=4, n_votes=12, seed=0):
    rng = np.random.default_rng(seed)
    probs = rng.dirichlet(np.ones(n_classes), size=n_items)
    counts = np.stack([rng.multinomial(n_votes, p) for p in probs])
    return types.SimpleNamespace(
        counts=counts, items=np.arange(n_items), classes=np.array([f"c{k}" for k in range(n_classes)])
    )


@pytest.mark.parametrize("reliability, alpha", [(1.0, 1.0), (2.5, 0.01), (0.3, 0.5)])
def test_gibbs_matches_closed_form_dirichlet(reliability, alpha):
    votes = make_votes()
    model = dirichlet.build(votes, reliability=reliability, alpha=alpha)
    trace = sample(model, draws=1000, chains=4, seed=3, progressbar=False)
    draws = trace.posterior["plausibility"].stack(sample=("chain", "draw")).transpose("sample", ...).values
    assert_matches_dirichlet(draws, reliability * votes.counts + alpha)


def test_same_seed_same_draws_and_other_seed_other_draws():
    model = dirichlet.build(make_votes(n_items=5), reliability=1.0, alpha=1.0)
    kwargs = dict(draws=50, chains=2, progressbar=False, check_convergence=False)
    first = sample(model, seed=11, **kwargs).posterior["plausibility"].values
    again = sample(model, seed=11, **kwargs).posterior["plausibility"].values
    other = sample(model, seed=12, **kwargs).posterior["plausibility"].values
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, other)
    assert not np.array_equal(first[0], first[1]), "chains must not repeat each other"


def test_trace_carries_coords_and_groups():
    votes = make_votes(n_items=3)
    trace = sample(dirichlet.build(votes), draws=20, chains=2, seed=0, progressbar=False,
                   check_convergence=False)
    plaus = trace.posterior["plausibility"]
    assert plaus.dims == ("chain", "draw", "item", "class")
    assert list(plaus["class"].values) == ["c0", "c1", "c2", "c3"]
    assert {"posterior", "sample_stats", "observed_data", "constant_data"} <= set(trace.children)
    np.testing.assert_array_equal(trace.observed_data["votes"].values, votes.counts)


@pytest.mark.slow  # NUTS, 4 x 1500 draws; the closed-form checks above stay in the quick suite
def test_gibbs_agrees_with_nuts_on_the_same_model():
    votes = make_votes(n_items=4, n_classes=3, n_votes=6, seed=5)
    model = dirichlet.build(votes, reliability=2.0, alpha=0.7)
    gibbs = sample(model, draws=2000, chains=4, seed=1, progressbar=False)
    with model:
        nuts = pm.sample(draws=1500, tune=1000, chains=4, random_seed=2, progressbar=False,
                         compute_convergence_checks=False)
    g = gibbs.posterior["plausibility"].stack(s=("chain", "draw")).values
    u = nuts.posterior["plausibility"].stack(s=("chain", "draw")).values
    # NUTS draws are autocorrelated: a conservative standard error inflates by 2.
    se = np.sqrt(g.var(axis=-1) / g.shape[-1] + 2 * u.var(axis=-1) / u.shape[-1])
    z = (g.mean(axis=-1) - u.mean(axis=-1)) / se
    assert np.abs(z).max() < 4.0
    np.testing.assert_allclose(g.std(axis=-1), u.std(axis=-1), rtol=0.1)


@pytest.mark.parametrize("shape", [0.01, 0.3, 4.0])
def test_log_gamma_draws_follow_the_log_gamma_distribution(shape):
    rng = np.random.default_rng(0)
    draws = log_gamma_draws(rng, np.full(20000, shape))
    assert np.all(np.isfinite(draws))
    assert stats.kstest(draws, stats.loggamma(c=shape).cdf).pvalue > 1e-3


def test_tiny_alpha_never_produces_invalid_points():
    votes = make_votes(n_items=30, n_classes=20, n_votes=3)  # sparse: candidate form
    model = dirichlet.build(votes, reliability=1.0, alpha=0.001)
    trace = sample(model, draws=300, chains=2, seed=0, progressbar=False, check_convergence=False)
    plaus = as_plausibility(trace).values
    assert np.all(np.isfinite(plaus)) and np.all(plaus >= 0)


def test_dispersed_starts_differ_per_chain_and_are_valid():
    model = dirichlet.build(make_votes(n_items=3), reliability=1.0, alpha=1.0)
    starts = dispersed_initvals(model, 4, np.random.default_rng(0), scale=2.0)
    values = np.stack([start["plausibility"] for start in starts])
    np.testing.assert_allclose(values.sum(axis=-1), 1.0)
    assert np.all(values > 0)
    assert len({v.tobytes() for v in values}) == 4


@pytest.mark.parametrize("bad", [0.0, -1.0, np.inf, np.nan])
def test_invalid_reliability_or_alpha_is_rejected(bad):
    votes = make_votes(n_items=2)
    with pytest.raises(ValueError, match="reliability"):
        dirichlet.build(votes, reliability=bad)
    with pytest.raises(ValueError, match="alpha"):
        dirichlet.build(votes, alpha=bad)


def test_trace_round_trips_through_netcdf(tmp_path):
    votes = make_votes(n_items=3)
    trace = sample(dirichlet.build(votes), draws=20, chains=2, seed=0, progressbar=False,
                   check_convergence=False)
    trace.to_netcdf(tmp_path / "trace.nc", engine="h5netcdf")
    loaded = xr.open_datatree(tmp_path / "trace.nc", engine="h5netcdf")
    xr.testing.assert_equal(loaded.posterior["plausibility"], trace.posterior["plausibility"])
