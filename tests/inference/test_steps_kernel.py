"""The declared PyMC steps of GLAD, Su, annotator-beta and dense Plackett–Luce run in the one
driver (:class:`plausible.inference.bridges.from_pymc_steps.StepsKernel`). That they sample the posterior
``pm.sample`` does with the same steps is checked for every registered model in
``test_kernel_step.py``; here: the route, the trace's groups, reproducibility, the warm-up
and the refusal of steps that leave a variable uncovered."""

import numpy as np
import pytest

import plausible as pl
from plausible.inference.declarations import declared_gibbs
from plausible.inference.bridges.from_pymc_steps import StepsKernel, sample_steps


@pytest.fixture(scope="module")
def glad():
    labels = pl.data.simulate_glad(40, 4, n_classes=3, seed=5).labels
    return pl.models.get("glad")(labels)


def test_pl_sample_runs_the_declared_steps_in_the_driver(glad):
    trace = pl.sample(glad, draws=50, chains=2, seed=0, progressbar=False,
                      check_convergence=False)
    assert trace.posterior.attrs["sampler"] == StepsKernel.name
    assert trace.posterior.attrs["tune"] == 50  # the slice step's default warm-up
    assert {"plausibility", "ability", "true_class"} <= set(trace.posterior.data_vars)
    assert {"difficulty_slice_evaluations", "class_gibbs_changed"} <= set(trace.sample_stats.data_vars)
    assert {"log_likelihood", "observed_data", "constant_data"} <= set(trace.children)
    plausibility = trace.posterior["plausibility"].values
    np.testing.assert_allclose(plausibility.sum(-1), 1.0)
    # dispersed starts: the chains' first draws differ
    ability = trace.posterior["ability"].isel(draw=0).values
    assert not np.allclose(ability[0], ability[1])


def test_same_seed_same_draws_whatever_the_cores(glad):
    def run(cores):
        return sample_steps(glad, declared_gibbs(glad), draws=20, chains=3, seed=4, tune=5,
                            cores=cores).posterior
    one, two = run(1), run(2)
    for name in one.data_vars:
        np.testing.assert_array_equal(one[name].values, two[name].values)
    assert not np.array_equal(one["ability"].values,
                              sample_steps(glad, declared_gibbs(glad), draws=20, chains=3,
                                           seed=5, tune=5).posterior["ability"].values)


def test_slice_widths_adapt_during_the_warm_up_only(glad):
    kernel = StepsKernel(glad, declared_gibbs(glad), tune=3)
    state = kernel.start(np.random.default_rng(0))
    [slice_step] = [s for s in state.steps if hasattr(s, "widths")]
    assert slice_step.tune
    for _ in range(3):
        state = kernel.sweep(np.random.default_rng(1), state, None)
    assert not slice_step.tune
    widths = [w.copy() for w in slice_step.widths]
    kernel.sweep(np.random.default_rng(2), state, None)
    for before, after in zip(widths, slice_step.widths):
        np.testing.assert_array_equal(before, after)


def test_steps_that_leave_a_variable_uncovered_are_refused(glad):
    with pytest.raises(ValueError, match="do not cover"):
        StepsKernel(glad, declared_gibbs(glad)[:1], tune=0)
