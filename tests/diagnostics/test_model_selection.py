"""Choosing and stacking candidates by PSIS-LOO (:mod:`plausible.diagnostics.model_selection`),
on traces whose per-item log-likelihood is the same in every draw: leaving an item out then
changes nothing, so each model's LOO predictive density is known exactly and the stacking
weights can be found by direct optimisation."""

import numpy as np
import pytest
import xarray as xr
from scipy.optimize import minimize

from plausible.diagnostics.model_selection import MIN_STACK_WEIGHT, Selection, select

N_ITEMS = 300


def trace(log_density: np.ndarray) -> xr.DataTree:
    """A trace of 2 chains x 30 draws whose items' log-likelihood is ``log_density`` in
    every draw."""
    values = np.broadcast_to(log_density, (2, 30, log_density.size))
    return xr.DataTree.from_dict({
        "posterior": xr.Dataset({"mu": (("chain", "draw"), np.zeros((2, 30)))}),
        "log_likelihood": xr.Dataset({"y": (("chain", "draw", "item"), values.copy())})})


def densities(seed=0) -> dict[str, np.ndarray]:
    """Per-item predictive densities of three models: ``a`` best on average, ``b`` good where
    ``a`` is poor (so stacking mixes them), ``c`` of the other meaning and nearly as good."""
    rng = np.random.default_rng(seed)
    a = rng.uniform(0.3, 0.9, N_ITEMS)
    b = np.clip(1.2 - a + rng.normal(0, 0.05, N_ITEMS), 0.05, 0.95)
    c = np.clip(a - 0.02 + rng.normal(0, 0.05, N_ITEMS), 0.05, 0.95)
    return {"a": a, "b": b, "c": c}


def direct_stacking(p: np.ndarray) -> np.ndarray:
    """Weights maximising ``sum_i log sum_k w_k p[i, k]`` on the simplex (softmax
    parametrisation)."""
    def loss(z):
        w = np.exp(z - z.max())
        return -np.log(p @ (w / w.sum())).sum()
    z = minimize(loss, np.zeros(p.shape[1]), method="Nelder-Mead",
                 options={"xatol": 1e-10, "fatol": 1e-12, "maxiter": 20_000}).x
    w = np.exp(z - z.max())
    return w / w.sum()


MEANINGS = {"a": "x", "b": "x", "c": "y"}


def test_the_stack_weighs_the_chosen_models_meaning_only_as_direct_optimisation_does():
    p = densities()
    selection = select({name: trace(np.log(v)) for name, v in p.items()}, {}, MEANINGS)
    assert selection.chosen == "a" and selection.stacked
    assert set(selection.stack) == {"a", "b"}  # c has the other meaning
    expected = direct_stacking(np.column_stack([p["a"], p["b"]]))
    np.testing.assert_allclose([selection.stack["a"], selection.stack["b"]], expected, atol=2e-3)
    assert 0.1 < expected[1] < 0.9  # a real mixture, not one model
    assert "combined with those of the models of the same meaning" in selection.reason
    assert Selection.from_json(selection.to_json()).stack == selection.stack


def test_no_stack_without_meanings_another_meaning_an_unconverged_peer_or_a_tiny_weight():
    p = densities()
    traces = {name: trace(np.log(v)) for name, v in p.items()}
    assert select(traces, {}).stack == {"a": 1.0}
    assert select(traces, {"b": "R-hat 1.2"}, MEANINGS).stack == {"a": 1.0}
    # c best: alone in its meaning
    better_c = {**traces, "c": trace(np.log(np.clip(p["a"] + 0.05, 0, 0.99)))}
    assert select(better_c, {}, MEANINGS).stack == {"c": 1.0}
    # b worse everywhere: stacking gives it no weight, and it does not join
    worse_b = {**traces, "b": trace(np.log(p["a"] * 0.5))}
    chosen = select(worse_b, {}, MEANINGS)
    assert chosen.stack == {"a": 1.0} and not chosen.stacked
    assert MIN_STACK_WEIGHT == pytest.approx(0.01)
