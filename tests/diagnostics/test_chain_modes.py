"""Chains that disagree on an item's most plausible class are named, with each chain's mode
and plausibility; items on the fence in every chain and agreeing chains are not."""

import numpy as np
import xarray as xr

import plausible as pl
from plausible.diagnostics import chain_modes


def trace_of(plausibility):
    chains, draws, items, classes = plausibility.shape
    posterior = xr.Dataset({"plausibility": (("chain", "draw", "item", "class"), plausibility)},
                           coords={"item": [f"i{k}" for k in range(items)],
                                   "class": list("abc")[:classes]})
    return xr.DataTree.from_dict({"posterior": posterior})


def test_a_chain_in_another_mode_is_named_and_fence_sitters_are_not():
    rng = np.random.default_rng(0)
    p = np.empty((4, 50, 3, 2))
    p[..., 0] = 0.9 + 0.02 * rng.standard_normal((4, 50, 3))
    p[2, :, 1, 0] = 0.15  # chain 2 puts item i1 in the other class
    p[:, :, 2, 0] = 0.5 + 0.05 * rng.standard_normal((4, 50))  # i2 on the fence everywhere
    p[..., 1] = 1 - p[..., 0]
    table = chain_modes(trace_of(p))
    assert list(table["item"]) == ["i1"]
    row = table.iloc[0]
    assert (row["mode_0"], row["mode_2"]) == ("a", "b")
    assert row["gap"] > 0.7 and abs(row["plausibility_2"] - 0.85) < 0.01


def test_converged_chains_on_a_real_fit_agree():
    labels = pl.data.simulate_glad(100, 5, n_classes=3, seed=2).labels
    trace = pl.sample(pl.models.get("dawid-skene")(labels), draws=300, seed=0,
                      progressbar=False, log_likelihood=False)
    assert chain_modes(trace).empty


def test_the_convergence_report_names_them():
    rng = np.random.default_rng(1)
    p = np.empty((2, 40, 2, 2))
    p[..., 0] = 0.9 + 0.01 * rng.standard_normal((2, 40, 2))
    p[1, :, 0, 0] = 0.1
    p[..., 1] = 1 - p[..., 0]
    report = pl.diagnostics.convergence_report(trace_of(p))
    assert len(report.modes) == 1
    assert "Chains disagree on the most plausible class of 1 items" in report.text
    assert "item 'i0': chain 0: 'a' 0.90; chain 1: 'b' 0.90" in report.text


def confusion_trace(theta):
    dims = ("chain", "draw", "annotator", "class", "label_class")
    return xr.DataTree.from_dict({"posterior": xr.Dataset(
        {"confusion": (dims, theta)}, coords={"class": [0, 1, 2], "label_class": [0, 1, 2]})})


def test_a_chain_whose_classes_read_relabelled_is_named():
    rng = np.random.default_rng(13)
    theta = rng.dirichlet([6.0, 1.0, 1.0], size=(3, 40, 4, 3))  # row c: mass on label 0
    theta = np.stack([np.roll(theta[..., c, :], c, axis=-1) for c in range(3)], axis=-2)
    theta[1] = theta[1][..., [1, 0, 2], :]  # chain 1: classes 0 and 1 swapped
    shares = pl.diagnostics.permuted_chains(confusion_trace(theta))
    assert shares.tolist() == [0.0, 1.0, 0.0]


def test_a_flat_confusion_prior_lands_in_permuted_modes_the_report_names_the_default_not():
    """With a flat confusion prior every relabelling of the classes is as probable: chains of
    Dawid-Skene move into them (the class-swap move takes them there), and the report names
    each chain that sits there. The default model's learned prior keeps every chain out."""
    labels = pl.data.simulate_glad(60, 10, n_classes=3, coverage=0.3, seed=0).labels
    flat = pl.aggregate(labels, "dawid-skene", confusion_prior=(1.0, 1.0), draws=300, seed=0)
    shares = pl.diagnostics.permuted_chains(flat.trace)
    report = flat.convergence()
    assert (shares > 0.5).any() and not report.converged
    line = report.describe("class labels")
    assert all(f"chain {c} " in line for c in shares.index[shares > 0.5])
    default = pl.aggregate(labels, seed=0)
    assert (pl.diagnostics.permuted_chains(default.trace) == 0).all()
    assert default.convergence().table.loc["class labels", "status"] == "converged"
