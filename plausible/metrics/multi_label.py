"""Metrics of multi-label plausibilities: per draw ``p_ik = P(y_ik = 1 | theta, x)``, one
probability per label (not a simplex over the classes; :mod:`plausible.models.multi_label`).

With ``S`` posterior draws ``p^(s)`` (all chains and draws) and the posterior mean ``pbar_ik =
(1/S) sum_s p^(s)_ik = P(y_ik = 1 | x)``:

* **label certainty** (:func:`label_certainty`): ``(1/S) sum_s max(p^(s)_ik, 1 - p^(s)_ik)``,
  the expected probability of the more plausible answer (``how="expected"``), or the share of
  draws on the side of 1/2 that the posterior mean is on (``how="agreement"``); in ``[1/2,
  1]``, 1 when every draw is sure.
* **expected Hamming accuracy** of predicted sets ``z (item, class)``
  (:func:`expected_hamming_accuracy`): ``E[(1/K) sum_k 1[z_ik = y_ik] | x] = (1/K) sum_k (z_ik
  pbar_ik + (1 - z_ik)(1 - pbar_ik))``, exact, because it is linear in each ``y_ik``.
* **expected F1** (:func:`expected_f1`) and **expected exact-set accuracy**
  (:func:`expected_subset_accuracy`) are not linear in ``y``: they are Monte Carlo averages
  over draws of the true sets ``y^(t) (sample, item, class)``. Exact draws of the joint of an
  item's labels come from the model (:func:`plausible.models.multi_label.draw_label_sets`);
  :func:`sets_from_marginals` draws them from the plausibilities alone, each label independent
  given the draw ``s`` — exact for per-label quantities, an approximation for set-level ones
  when the labels depend on each other given the data.
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from plausible.metrics.chunks import iter_sample_blocks
from plausible.metrics.plausibility import posterior_mean

HOWS = ("expected", "agreement")


def _source(plausibility):
    """A trace's ``posterior["plausibility"]`` as a ``(sample dims..., item, class)``
    DataArray, a DataArray as it is, or an array ``(sample, item, class)`` as float64."""
    if hasattr(plausibility, "posterior") or isinstance(plausibility, xr.DataTree):
        plausibility = plausibility["posterior"]["plausibility"]
    if isinstance(plausibility, xr.DataArray):
        sample = [d for d in ("chain", "draw") if d in plausibility.dims]
        return plausibility.transpose(*sample, "item", "class")
    array = np.asarray(plausibility, dtype=np.float64)
    if array.ndim != 3:
        raise ValueError(f"plausibilities must be (sample, item, class), got shape {array.shape}")
    return array


def _draw_blocks(source):
    """float64 ``(sample, item, class)`` blocks of the draws of :func:`_source`'s result,
    bounded by the metrics' chunk size (:func:`~plausible.metrics.chunks.iter_sample_blocks`):
    a trace's draws are read a block at a time, never all at once."""
    if isinstance(source, np.ndarray):
        yield source
        return
    sample_shape = source.shape[:-2]
    width = source.shape[-2] * source.shape[-1]
    for _, index in iter_sample_blocks(sample_shape or (1,), width):
        block = np.asarray(source.data[index] if sample_shape else source.data[None],
                           dtype=np.float64)
        yield block.reshape(-1, *source.shape[-2:])


def _mean(plausibility) -> np.ndarray:
    """Posterior mean ``(item, class)`` float64 of a trace, DataArray or array
    (:func:`~plausible.metrics.plausibility.posterior_mean` for the first two: streamed, or
    the summaries of a trace whose draws are computed when read)."""
    source = _source(plausibility)
    if isinstance(source, np.ndarray):
        return source.mean(axis=0)
    return posterior_mean(plausibility).transpose("item", "class").values.astype(np.float64)


def _sets(sets, shape, what) -> np.ndarray:
    array = np.asarray(sets)
    if array.shape[-2:] != tuple(shape):
        raise ValueError(f"{what} must be (..., item, class) = (..., {shape[0]}, {shape[1]}), "
                         f"got {array.shape}")
    if array.dtype != bool and not np.isin(array, (0, 1)).all():
        raise ValueError(f"{what} must be 0/1")
    return array.astype(bool)


def label_certainty(plausibility, how: str = "expected") -> np.ndarray:
    """Per-label certainty, float64 ``(item, class)`` (module docstring), from ``plausibility``
    (a trace, a ``(chain, draw, item, class)`` DataArray or a ``(sample, item, class)``
    array)."""
    if how not in HOWS:
        raise ValueError(f"how must be one of {HOWS}, got {how!r}")
    source = _source(plausibility)
    majority = _mean(plausibility) > 0.5 if how == "agreement" else None
    total, n = 0.0, 0
    for p in _draw_blocks(source):
        total = total + (np.maximum(p, 1.0 - p) if majority is None
                         else (p > 0.5) == majority).sum(axis=0)
        n += p.shape[0]
    return total / n


def expected_hamming_accuracy(plausibility, predicted) -> np.ndarray:
    """``E[Hamming accuracy_i | x]`` of the predicted sets ``predicted`` 0/1 ``(item, class)``,
    float64 ``(item,)`` (exact; module docstring); ``.mean()`` is the data set's."""
    pbar = _mean(plausibility)
    z = _sets(predicted, pbar.shape, "predicted")
    return np.where(z, pbar, 1.0 - pbar).mean(axis=1)


def sets_from_marginals(plausibility, *, samples: int = 1000, seed=None) -> np.ndarray:
    """``samples`` draws of the true sets from the plausibilities alone, bool ``(sample, item,
    class)``: for each, a posterior draw ``s`` (evenly thinned) and ``y_ik ~ Bernoulli(p^(s)_ik)``
    independently (module docstring: the dependence among an item's labels given the data is
    lost)."""
    source = _source(plausibility)
    n_draws = int(np.prod(source.shape[:-2]))
    index = np.linspace(0, n_draws - 1, samples).round().astype(np.int64)
    if isinstance(source, np.ndarray):
        p = source[index]
    else:  # just the thinned draws
        flat = np.unravel_index(index, source.shape[:-2])
        p = np.asarray(source.isel({d: xr.DataArray(i, dims="sample")
                                    for d, i in zip(source.dims[:-2], flat)})
                       .transpose("sample", "item", "class").values, dtype=np.float64)
    rng = np.random.default_rng(seed)
    return rng.random((samples, *p.shape[1:])) < p


def expected_f1(true_sets, predicted, *, average: str = "samples") -> float | np.ndarray:
    """Monte Carlo ``E[F1 | x]`` of the predicted sets ``predicted`` 0/1 ``(item, class)`` over
    draws of the true sets ``true_sets`` 0/1 ``(sample, item, class)`` (module docstring).

    ``average="samples"``: per item ``F1_i = 2 |z_i & y_i| / (|z_i| + |y_i|)`` (1 when both
    sets are empty), averaged over the draws, float64 ``(item,)`` (its ``.mean()`` is the
    sample-averaged F1); ``"micro"``: ``2 TP / (2 TP + FP + FN)`` over all items and labels
    per draw, averaged over the draws (a float); ``"macro"``: per label over the items,
    float64 ``(class,)``."""
    y = _sets(true_sets, np.shape(predicted)[-2:], "true_sets")
    z = _sets(predicted, y.shape[-2:], "predicted")[None]
    tp = y & z
    if average == "samples":
        axis = -1
    elif average == "micro":
        axis = (-2, -1)
    elif average == "macro":
        axis = -2
    else:
        raise ValueError(f"average must be 'samples', 'micro' or 'macro', got {average!r}")
    hits = 2.0 * tp.sum(axis=axis)
    total = y.sum(axis=axis) + np.broadcast_to(z, y.shape).sum(axis=axis)
    f1 = np.where(total == 0, 1.0, hits / np.maximum(total, 1))
    return f1.mean(axis=0) if average != "micro" else float(f1.mean())


def expected_subset_accuracy(true_sets, predicted) -> np.ndarray:
    """Monte Carlo ``P(y_i = z_i | x)``, the probability that the predicted set ``predicted``
    0/1 ``(item, class)`` is exactly right, from draws ``true_sets`` 0/1 ``(sample, item,
    class)``, float64 ``(item,)``."""
    y = _sets(true_sets, np.shape(predicted)[-2:], "true_sets")
    z = _sets(predicted, y.shape[-2:], "predicted")
    return (y == z[None]).all(axis=-1).mean(axis=0)


__all__ = ["expected_f1", "expected_hamming_accuracy", "expected_subset_accuracy",
           "label_certainty", "sets_from_marginals"]
