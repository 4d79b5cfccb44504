"""Convergence report, SBC harness and the vote posterior predictive check."""

import types

import numpy as np
import pytest
import xarray as xr

from plausible.diagnostics import convergence_report, vote_predictive_check
from plausible.inference import sample, simulation_based_calibration
from plausible.models import dirichlet


def votes_namespace(counts):
    counts = np.asarray(counts)
    return types.SimpleNamespace(
        counts=counts, items=np.arange(len(counts)), classes=np.arange(counts.shape[1])
    )


def trace_from(values):
    values = np.asarray(values)
    posterior = xr.Dataset({"x": (("chain", "draw"), values)})
    return xr.DataTree.from_dict({"posterior": posterior})


def test_convergence_report_flags_stuck_chains_and_passes_mixed_ones():
    rng = np.random.default_rng(0)
    good = trace_from(rng.normal(size=(4, 1000)))
    assert convergence_report(good).converged
    assert convergence_report(good).text.startswith("Converged: all 1 variables pass")
    stuck = rng.normal(size=(4, 1000)) + np.array([0, 0, 0, 3.0])[:, None]
    report = convergence_report(trace_from(stuck))
    assert not report.ok
    assert "x: max R-hat" in report.text and report.text.startswith("Not converged")


@pytest.mark.parametrize("shape, reason", [
    ((1, 1000), "1 chain"), ((4, 3), "3 draws per chain"), ((4, 1000, 0), "no values"),
])
def test_convergence_report_never_claims_what_it_did_not_measure(shape, reason):
    values = np.random.default_rng(2).normal(size=shape)
    dims = ("chain", "draw", "item")[:len(shape)]
    report = convergence_report(xr.DataTree.from_dict(
        {"posterior": xr.Dataset({"x": (dims, values)})}))
    assert report.status == "not assessed" and not report.converged and report.ok
    assert reason in report.table.loc["x", "reason"]
    assert report.text.startswith("Not assessed") and "not claimed" in report.text
    assert "inf" not in report.text


def test_convergence_report_constant_variable_is_not_assessed_and_exact_draws_say_so():
    rng = np.random.default_rng(3)
    posterior = xr.Dataset({"x": (("chain", "draw"), rng.normal(size=(4, 500))),
                            "fixed": (("chain", "draw"), np.ones((4, 500)))})
    report = convergence_report(xr.DataTree.from_dict({"posterior": posterior}))
    assert report.table.loc["fixed", "status"] == "not assessed"
    assert report.status == "not assessed" and "fixed: constant in every draw" in report.text
    exact = xr.DataTree.from_dict({"posterior": posterior, "sample_stats": xr.Dataset(
        attrs={"independent_draws": 1})})
    assert convergence_report(exact).status == "exact draws"
    assert convergence_report(exact).converged


def test_convergence_report_flags_low_ess():
    rng = np.random.default_rng(1)
    walk = np.cumsum(rng.normal(size=(4, 1000)), axis=1) * 0.01 + rng.normal(size=(4, 1))
    report = convergence_report(trace_from(walk))
    assert not report.ok
    assert report.table.loc["x", "min_ess_bulk"] < 400


def simulate_votes(rng, n_items=300, n_classes=3, alpha=0.8):
    truth = rng.dirichlet(np.full(n_classes, alpha), size=n_items)
    n_votes = rng.integers(1, 8, size=n_items)
    counts = rng.multinomial(n_votes, truth)
    return {"plausibility": truth}, votes_namespace(counts)


@pytest.mark.slow
def test_sbc_ranks_of_the_dirichlet_gibbs_sampler_are_uniform():
    result = simulation_based_calibration(
        lambda votes: dirichlet.build(votes, alpha=0.8),
        simulate_votes, var_names=["plausibility"], n_simulations=3, draws=500, chains=2,
        thin=5, seed=0,
    )
    assert result.ranks["plausibility"].shape == (3 * 300 * 3,)
    assert result.n_draws == 200
    assert result.p_values()["plausibility"] > 1e-3


def test_sbc_p_values_expect_each_bin_to_hold_the_ranks_it_covers():
    """Uniform ranks on ``0..100`` (101 values) in 10 bins: the first bin covers 11 values,
    the others 10, so equal expected counts would reject these exactly uniform ranks (p below
    1e-30 at 200,000 ranks); the test expects each bin's share of the values."""
    from plausible.inference.sbc import SBCResult

    ranks = np.random.default_rng(0).integers(0, 101, 200_000)
    result = SBCResult(ranks={"x": ranks}, n_draws=100)
    np.testing.assert_allclose(result.bin_shares(10), [11 / 101] + [10 / 101] * 9)
    assert result.p_values(bins=10)["x"] > 1e-3
    assert SBCResult(ranks={"x": ranks[ranks > 0]}, n_draws=100).p_values(bins=10)["x"] < 1e-6


def test_sbc_detects_a_wrong_sampler():
    # Data simulated with a prior the model does not use: ranks pile up at the ends.
    def simulate_from_other_prior(rng):
        return simulate_votes(rng, alpha=0.1)

    result = simulation_based_calibration(
        lambda votes: dirichlet.build(votes, alpha=5.0),
        simulate_from_other_prior, var_names=["plausibility"], n_simulations=1, draws=400,
        chains=2, thin=4, seed=0,
    )
    assert result.p_values()["plausibility"] < 1e-6


def test_vote_predictive_check_fits_own_model_and_flags_overdispersion():
    rng = np.random.default_rng(2)
    probs = rng.dirichlet(np.ones(4), size=150)
    counts = np.stack([rng.multinomial(20, p) for p in probs])
    trace = sample(dirichlet.build(votes_namespace(counts)), draws=300, chains=2, seed=0,
                   progressbar=False, check_convergence=False)
    check = vote_predictive_check(trace, draws=200, seed=0)
    assert check.replicated.shape == (200, 150, 4)
    np.testing.assert_array_equal(check.replicated.sum("class").values[0], counts.sum(axis=1))
    assert check.p_values.between(0.01, 0.99).all(), check.summary()

    # All-or-nothing votes (each item unanimous) are more concentrated than any
    # multinomial replicate from the flat-prior posterior: top share p-value ~ 0.
    unanimous = np.zeros((150, 4), int)
    unanimous[np.arange(150), rng.integers(0, 4, 150)] = 3
    trace = sample(dirichlet.build(votes_namespace(unanimous)), draws=300, chains=2, seed=0,
                   progressbar=False, check_convergence=False)
    check = vote_predictive_check(trace, draws=200, seed=0)
    assert check.p_values["mean_top_share"] < 0.01
    assert set(check.summary().columns) == {"observed", "replicated_5%", "replicated_95%", "p_value"}
