"""Every registered model through PyMC's own ``pm.sample`` with ``pl.inference.steps(model)``
samples the posterior ``pl.sample`` does (the same kernels, or conjugate steps, on both
routes)."""

import warnings

import numpy as np
import pymc as pm
import pytest

import plausible as pl
from plausible.data.ratings_simulators import simulate_nig
from plausible.models.ratings.nig import NIGPrior

from posterior_agreement import assert_same_posterior


def small_data(entry):
    """Small annotations of the entry's format."""
    if entry.data == "votes":
        counts = np.random.default_rng(0).integers(1, 5, (20, 4))
        return pl.data.Votes(counts, np.arange(20), list("abcd"))
    if entry.data == "rankings":
        return pl.data.Rankings.from_selectors(
            [[[[0], [1, 2]], [[1], [0]], [[0, 2]]], [[[2], [0]], [[2, 1]]],
             [[[3]], [[1], [3]]]], classes=5)
    if entry.data == "ratings":
        r = simulate_nig(NIGPrior(2.0, 1.0, 3.0, 8.0), n_items=15, ratings_per_item=5,
                         seed=3).ratings
        return pl.data.Ratings(r.item, r.annotator, np.clip(np.round(r.score), 0.0, 10.0),
                               r.items, r.annotators, scale=(0.0, 10.0))
    binary = entry.classes == "binary" or entry.name == "easy-hard"
    return pl.data.simulate_glad(60, 5, n_classes=2 if binary else 3, seed=1).labels


OWN_CHECK = ("label_sets", "comparisons")
"""Formats whose models' own test files run ``pm.sample`` with the kernel step against
``pl.sample`` (tests/models/test_multi_label.py, tests/models/test_bradley_terry.py)."""


@pytest.mark.slow
@pytest.mark.parametrize("name", [name for name, row in pl.models.available().iterrows()
                                  if row["data"] not in OWN_CHECK])
def test_pymc_with_the_steps_samples_the_posterior_of_pl_sample(name):
    entry = pl.models.registry.entry(name)
    options = {"threshold": 5.0} if entry.data == "ratings" else {}
    model = entry.build(small_data(entry), **options)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        trace = pm.sample(model=model, step=pl.inference.steps(model), chains=2, draws=500,
                          tune=200, random_seed=1, progressbar=False,
                          compute_convergence_checks=False)
        reference = pl.sample(model, chains=2, draws=500, seed=2, storage="dense",
                              log_likelihood=False, check_convergence=False)
    shared = [v for v in reference.posterior.data_vars if v in trace.posterior.data_vars]
    assert "plausibility" in shared
    assert_same_posterior(trace, reference, shared)


def test_dawid_skene_steps_are_its_kernel_and_chains_start_apart():
    labels = pl.data.simulate_glad(60, 5, n_classes=3, seed=1).labels
    model = pl.models.get("dawid-skene")(labels)
    [step] = pl.inference.steps(model)
    assert isinstance(step, pl.inference.KernelStep)
    assert {v.name for v in step.vars} == {v.name for v in model.value_vars}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        trace = pm.sample(model=model, step=step, chains=4, draws=1000, tune=100,
                          random_seed=0, progressbar=False, compute_convergence_checks=False)
    assert pl.diagnostics.convergence_report(trace).ok
    assert "classes_changed" in trace.sample_stats
    first = trace.posterior["class_prior"].isel(draw=0).values  # (chain, class)
    assert np.unique(first.round(6), axis=0).shape[0] == 4


def test_a_kernel_step_rebuilds_its_state_when_another_step_moves_the_point():
    """With ``start="point"`` and a point changed behind its back, the step reads the classes
    from the point (the kernel's ``load``), so its first sweep's class counts follow them."""
    labels = pl.data.simulate_glad(30, 4, n_classes=2, seed=2).labels
    model = pl.models.get("dawid-skene")(labels)
    [step] = pl.inference.steps(model, start="point")
    step.setup_chain(np.random.default_rng(0), 0, 1)
    point = model.initial_point()
    new_point, _ = step.step(point)
    assert step._written is not None
    moved = dict(new_point, true_class=np.zeros_like(new_point["true_class"]))
    assert step._moved(moved)
    assert not step._moved(new_point)
    step.step(moved)  # rebuilds from the all-zero classes before sweeping


def test_models_without_exact_steps_are_named():
    labels = pl.data.simulate_glad(20, 3, n_classes=2, seed=0).labels
    with pytest.raises(ValueError, match="no exact steps"):
        pl.inference.steps(pl.models.get("dawid-skene")(labels, gibbs=False))
    with pytest.raises(ValueError, match="start must be one of"):
        pl.inference.steps(pl.models.get("dawid-skene")(labels), start="middle")


@pytest.mark.slow
@pytest.mark.parametrize("name", ["hierarchical-dirichlet", "mace", "hierarchical-dawid-skene",
                                  "learned-prior-dawid-skene",
                                  "easy-hard", "censored-normal-inverse-gamma", "ordered-probit"])
def test_a_state_rebuilt_from_the_point_every_step_keeps_the_posterior(name, monkeypatch):
    """``kernel.load`` must draw whatever the PyMC model leaves out of its point (easy/hard's
    state counts, the population's Gamma scale, MACE's state, the latent ratings) from its
    exact conditional. A chain that rebuilds its state from the point before every sweep, as
    after another step moved it, must sample the same posterior as ``pl.sample``."""
    monkeypatch.setattr(pl.inference.KernelStep, "_moved", lambda self, point: True)
    entry = pl.models.registry.entry(name)
    options = {"threshold": 5.0} if entry.data == "ratings" else {}
    model = entry.build(small_data(entry), **options)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # 4 x 1000: with 2 x 500 the hierarchical population's MCSE is itself too noisy
        trace = pm.sample(model=model, step=pl.inference.steps(model, start="point"), chains=4,
                          cores=1, draws=1000, tune=200, random_seed=3, progressbar=False,
                          compute_convergence_checks=False)
        reference = pl.sample(model, chains=4, draws=1000, seed=4, log_likelihood=False,
                              check_convergence=False)
    shared = [v for v in reference.posterior.data_vars if v in trace.posterior.data_vars]
    assert_same_posterior(trace, reference, shared)
