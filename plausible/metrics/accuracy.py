"""Uncertainty-adjusted (UA) accuracy and overlap of predictions.

Each metric is evaluated per draw ``lambda^(m)`` and item ``x``; the result keeps both,
dims ``(sample dims..., item)``, so that ``.mean("item")`` gives one dataset value per
plausibility sample (whose mean, spread and histogram :mod:`plausible.metrics.summary`
reports) and ``.mean(sample dims)`` the per-item expectation ``E_lambda[.]``.
With ``Y_j = Y_top-j(lambda^(m))`` (ties: lowest class index first) and ``C_top-k(x)``
the classifier's ``k`` highest-scoring classes (same tie rule):

* UA top-k accuracy: ``1[Y_1 in C_top-k(x)]``;
* UA set accuracy: ``1[Y_|C| = C(x)]`` (as sets, ``|C|`` varies per item);
* UA overlap: ``|C(x) cap Y_|C|| / |C(x)|``;
* UA average overlap@L: ``(1/L) sum_{k=1}^{L} |C_top-k(x) cap Y_k| / k``;
* UA coverage: ``sum_{c in C(x)} lambda(c)``, the plausibility mass of the set.

All stream over the draws block by block, in either storage; all but UA coverage read only
each draw's top classes (:meth:`plausible.metrics.draws.Draws.iter_top`); outputs are float64
``(n_samples, n_items)``. The four that score against a draw's top classes read the draw as
an item's distribution over classes and warn when the draws are the posterior of one true
class (:mod:`plausible.metrics.meaning`); UA coverage holds for both meanings.
"""

from __future__ import annotations

import numba
import numpy as np
import xarray as xr

from plausible.metrics.draws import Draws, as_draws
from plausible.metrics.meaning import expect_item_distribution
from plausible.metrics.predictions import as_prediction_sets, as_scores, score_order, score_positions
from plausible.metrics.selection import check_k


def ua_topk_accuracy(plausibility, scores, k: int = 1) -> xr.DataArray:
    """UA top-k accuracy: is the draw's top-1 class among the classifier's top k?

    ``acc[m, i] = 1[Y_top-1(lambda^(m)_i) in C_top-k(x_i)]``.

    Parameters
    ----------
    plausibility : DataTree, Dataset, DataArray or top classes
        Plausibility draws in either storage (:func:`plausible.metrics.as_draws`).
    scores : array_like or DataArray, shape (item, class)
        Classifier scores aligned to the plausibility (see
        :mod:`plausible.metrics.predictions`).
    k : int
        ``1 <= k <= n_classes``.

    Returns
    -------
    xarray.DataArray
        float64 0/1, dims ``(sample dims..., "item")``, named ``ua_topk_accuracy``,
        ``attrs["k"] = k``.
    """
    draws = as_draws(plausibility)
    expect_item_distribution(draws.meaning, "ua_topk_accuracy")
    scores = as_scores(scores, draws)
    lay = draws.layout
    k = check_k(k, lay.n_classes)
    in_top = np.zeros(scores.shape, dtype=bool)
    np.put_along_axis(in_top, score_order(scores)[:, :k], True, axis=1)
    in_top = in_top.ravel()
    out = np.empty((lay.n_samples, lay.n_items))
    row = np.arange(lay.n_items, dtype=np.intp) * lay.n_classes
    for block, top in draws.iter_top(1):
        out[block.samples, block.items] = in_top[np.add(top[..., 0], row[block.items], dtype=np.intp)]
    return draws.per_sample_item(out, "ua_topk_accuracy", attrs={"k": k})


@numba.njit(nogil=True, cache=True)
def _hits_kernel(top, member, sizes, out):  # pragma: no cover - compiled
    """``out[s, i] = sum_{r < sizes[i]} member[i, top[s, i, r]]``: ``top (n, m, depth)``,
    ``member (m, K)`` bool, ``sizes (m,)``."""
    n, m, _ = top.shape
    for s in range(n):
        for i in range(m):
            hits = 0
            for r in range(sizes[i]):
                hits += member[i, top[s, i, r]]
            out[s, i] = hits


@numba.njit(nogil=True, cache=True)
def _overlap_kernel(top, positions, weight, out):  # pragma: no cover - compiled
    """``out[s, i] = sum_r weight[max(positions[i, top[s, i, r]], r)]``: ``top (n, m, L)``,
    ``positions (m, K)`` (each class's rank under the scores), ``weight (K,)``."""
    n, m, depth = top.shape
    for s in range(n):
        for i in range(m):
            total = 0.0
            for r in range(depth):
                total += weight[max(positions[i, top[s, i, r]], r)]
            out[s, i] = total


def _set_hits(draws: Draws, member: np.ndarray, sizes: np.ndarray):
    """Per block ``(block, hits)``: ``hits[m, i] = |C_i cap Y_top-|C_i|(lambda^(m)_i)|``."""
    depth = int(sizes.max())
    for block, top in draws.iter_top(depth):  # (n, ni, depth)
        hits = np.empty(top.shape[:2], dtype=np.int64)
        _hits_kernel(top, member[block.items], sizes[block.items], hits)
        yield block, hits


def ua_set_accuracy(plausibility, prediction_sets) -> xr.DataArray:
    """UA set accuracy: does the prediction set equal the draw's ``top-|C|`` set?

    ``acc[m, i] = 1[Y_top-|C_i|(lambda^(m)_i) = C_i]`` as unordered sets.

    Parameters
    ----------
    plausibility : DataTree, Dataset, DataArray or top classes
        Plausibility draws in either storage (:func:`plausible.metrics.as_draws`).
    prediction_sets : bool array_like or DataArray, shape (item, class)
        ``C(x)`` per item, any non-empty size (an empty set is a ValueError naming the
        item); e.g. :func:`top_k_sets`.

    Returns
    -------
    xarray.DataArray
        float64 0/1, dims ``(sample dims..., "item")``, named ``ua_set_accuracy``.
    """
    draws = as_draws(plausibility)
    expect_item_distribution(draws.meaning, "ua_set_accuracy")
    member = as_prediction_sets(prediction_sets, draws)
    sizes = member.sum(axis=1)
    out = np.empty((draws.layout.n_samples, draws.layout.n_items))
    for block, hits in _set_hits(draws, member, sizes):
        out[block.samples, block.items] = hits == sizes[block.items]
    return draws.per_sample_item(out, "ua_set_accuracy")


def ua_overlap(plausibility, prediction_sets) -> xr.DataArray:
    """UA overlap: share of the prediction set among the draw's ``top-|C|`` classes.

    ``ov[m, i] = |C_i cap Y_top-|C_i|(lambda^(m)_i)| / |C_i|``.

    Parameters as :func:`ua_set_accuracy`. Returns float64 in ``[0, 1]``, dims
    ``(sample dims..., "item")``, named ``ua_overlap``.
    """
    draws = as_draws(plausibility)
    expect_item_distribution(draws.meaning, "ua_overlap")
    member = as_prediction_sets(prediction_sets, draws)
    sizes = member.sum(axis=1)
    out = np.empty((draws.layout.n_samples, draws.layout.n_items))
    for block, hits in _set_hits(draws, member, sizes):
        np.divide(hits, sizes[block.items], out=out[block.samples, block.items])
    return draws.per_sample_item(out, "ua_overlap")


def ua_coverage(plausibility, prediction_sets) -> xr.DataArray:
    """UA coverage: the plausibility mass of the prediction set.

    ``cov[m, i] = sum_{c in C_i} lambda^(m)_ic``. For an item's distribution over classes it
    is the probability that a new annotation of the item falls in the set; for the
    posterior of an item's one true class (the latent-class models), the probability, given
    the draw's parameters, that the true class is in it. With top-``k`` sets
    (:func:`top_k_sets`) the latter is the expected top-``k`` accuracy against the true
    classes, the metric a true-class posterior calls for where :func:`ua_topk_accuracy`
    would count each draw's most probable class as certain.

    Parameters
    ----------
    plausibility : DataTree, Dataset or DataArray
        Plausibility draws in either storage (not only their top classes).
    prediction_sets : bool array_like or DataArray, shape (item, class)
        ``C(x)`` per item, non-empty.

    Returns
    -------
    xarray.DataArray
        float64 in ``[0, 1]``, dims ``(sample dims..., "item")``, named ``ua_coverage``.
    """
    draws = as_draws(plausibility)
    member = as_prediction_sets(prediction_sets, draws)
    out = np.empty((draws.layout.n_samples, draws.layout.n_items))
    for block, mass in draws.iter_set_mass(member):
        out[block.samples, block.items] = mass
    return draws.per_sample_item(out, "ua_coverage")


def ua_average_overlap(plausibility, scores, depth: int) -> xr.DataArray:
    """UA average overlap@L of the classifier's ranking with each draw's ranking.

    ``AO[m, i] = (1/L) sum_{k=1}^{L} |C_top-k(x_i) cap Y_top-k(lambda^(m)_i)| / k``.

    Computed without looping over ``k``: with ``r`` the rank of a class under the draw
    and ``p`` its rank under the scores (0-based), it lies in both top-k sets iff
    ``max(r, p) < k``, so it contributes ``sum_{k=max(r,p)+1}^{L} 1/k = H_L - H_max(r,p)``
    (harmonic numbers; 0 when ``max(r, p) >= L``). Only the draw's top ``L`` classes can
    contribute.

    Parameters
    ----------
    plausibility : DataTree, Dataset, DataArray or top classes
        Plausibility draws in either storage (:func:`plausible.metrics.as_draws`).
    scores : array_like or DataArray, shape (item, class)
        Classifier scores aligned to the plausibility.
    depth : int
        ``L``, ``1 <= L <= n_classes``.

    Returns
    -------
    xarray.DataArray
        float64 in ``[0, 1]``, dims ``(sample dims..., "item")``, named
        ``ua_average_overlap``, ``attrs["depth"] = L``.
    """
    draws = as_draws(plausibility)
    expect_item_distribution(draws.meaning, "ua_average_overlap")
    scores = as_scores(scores, draws)
    lay = draws.layout
    depth = check_k(depth, lay.n_classes, "depth")
    positions = score_positions(scores)
    harmonic = np.concatenate([[0.0], np.cumsum(1.0 / np.arange(1, lay.n_classes + 1))])
    # weight[q] = (H_L - H_q) / L for q < L, else 0; q = max(draw rank, score rank)
    weight = np.zeros(lay.n_classes)
    weight[:depth] = (harmonic[depth] - harmonic[:depth]) / depth
    out = np.empty((lay.n_samples, lay.n_items))
    for block, top in draws.iter_top(depth):  # (n, ni, L)
        _overlap_kernel(top, positions[block.items], weight, out[block.samples, block.items])
    return draws.per_sample_item(out, "ua_average_overlap", attrs={"depth": depth})
