"""``plausible.sample``'s ``draws="auto"``: chains extended in blocks until every variable
passes the convergence report, a time limit or a draw limit; the draws of an extended run are
those of a run of the same length; what cannot be extended says so."""

import warnings

import numpy as np
import pytest
import xarray as xr

import plausible as pl
from plausible.metrics.accumulated import GROUP
from plausible.inference.draws import AutoDrawsUnavailable
from plausible.inference.sampling import no_variable_fails


@pytest.fixture(scope="module")
def labels():
    return pl.data.simulate_glad(200, 6, n_classes=3, seed=1).labels


def test_auto_stops_when_converged_with_the_draws_of_a_fixed_run(labels):
    model = pl.models.get("dawid-skene")(labels)
    auto = pl.sample(model, draws="auto", seed=3, progressbar=False, log_likelihood=False)
    assert auto.posterior.attrs["draws_stopped_by"] == "converged"
    assert pl.diagnostics.convergence_report(auto).converged
    n = auto.posterior.sizes["draw"]
    assert n in (250, 500, 1000, 2000, 4000, 8000, 16000)
    fixed = pl.sample(model, draws=n, seed=3, progressbar=False, log_likelihood=False,
                      check_convergence=False)
    for name in ("class_prior", "confusion", "plausibility"):
        np.testing.assert_array_equal(auto.posterior[name].values, fixed.posterior[name].values)
    assert auto.posterior.attrs["sampling_seconds"] > 0


def test_auto_with_summarised_plausibilities_stops_on_their_split_rhat_too(labels):
    model = pl.models.get("dawid-skene")(labels)
    auto = pl.sample(model, draws="auto", seed=3, keep="summary", progressbar=False,
                     log_likelihood=False)
    assert auto.posterior.attrs["draws_stopped_by"] == "converged"
    summary = pl.metrics.accumulated(auto)
    assert summary.attrs["first_half_draws"] == auto.posterior.sizes["draw"] // 2
    assert float(pl.metrics.split_rhat(summary).max()) <= 1.01
    # the rule: a summary whose split R-hat fails fails the run, whatever the parameters
    values = {name: auto.posterior[name].transpose("chain", "draw", ...).values
              for name in ("class_prior", "confusion")}
    assert no_variable_fails({**values, GROUP: summary})
    apart = summary.copy()
    apart["mean_first_half"] = apart["mean_first_half"] + xr.where(apart["chain"] == 0, 0.1, 0)
    assert not no_variable_fails({**values, GROUP: apart})


def test_auto_on_the_declared_steps_route(labels):
    model = pl.models.get("glad")(labels)
    trace = pl.sample(model, draws="auto", seed=0, progressbar=False, log_likelihood=False)
    assert trace.posterior.attrs["draws_stopped_by"] == "converged"
    assert pl.diagnostics.convergence_report(trace).converged


def test_a_limit_stops_it_and_the_warning_says_which(labels):
    model = pl.models.get("dawid-skene")(labels)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        trace = pl.sample(model, draws="auto", seed=0, max_draws=20, progressbar=False,
                          log_likelihood=False)
    assert trace.posterior.sizes["draw"] == 20
    assert trace.posterior.attrs["draws_stopped_by"] == "max_draws"
    [message] = [str(w.message) for w in caught if "Not converged" in str(w.message)]
    assert "stopped at the most draws allowed" in message


def test_what_cannot_be_extended_says_so(labels):
    model = pl.models.get("dawid-skene")(labels)
    with pytest.raises(ValueError, match="at least 2 chains"):
        pl.sample(model, draws="auto", chains=1)
    with pytest.raises(AutoDrawsUnavailable, match="pass a number"):
        pl.sample(pl.models.get("dawid-skene")(labels, gibbs=False), draws="auto")
    votes = pl.data.Votes(np.random.default_rng(0).integers(1, 5, (20, 3)), np.arange(20),
                          list("abc"))
    exact = pl.sample(pl.models.get("dirichlet")(votes), draws="auto", seed=0)
    assert exact.posterior.sizes["draw"] == 1000  # independent draws: nothing to converge
    assert exact.posterior.attrs["draws_stopped_by"] == "exact draws"
