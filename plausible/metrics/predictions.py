"""Classifier outputs, aligned to a plausibility: scores and prediction sets.

* ``scores``: ``(item, class)`` real array (logits or probabilities), or a DataArray with
  dims ``item`` and ``class``. ``C_top-k(x)`` = the ``k`` highest-scoring classes, ties
  broken by lowest class index first (as for plausibilities).
* ``prediction_sets``: boolean ``(item, class)`` masks ``C(x)``, variable size per item,
  never empty.

A DataArray is aligned by label: if it and the draws (:mod:`plausible.metrics.draws`) both
carry ``item`` (or ``class``) coords, the same labels in another order are reordered;
different labels are an error naming them. Plain arrays must match ``(n_items, n_classes)``
exactly.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import xarray as xr

from plausible.data.validation import fmt

from plausible.metrics.draws import Draws
from plausible.metrics.storage import CLASS, ITEM


def _labels(values: np.ndarray, limit: int = 5) -> str:
    shown = ", ".join(repr(v.item() if hasattr(v, "item") else v) for v in values[:limit])
    return shown + (", ..." if len(values) > limit else "")


def align_item_class(arr, draws: Draws, name: str) -> np.ndarray:
    """``arr`` as an ``(n_items, n_classes)`` numpy array aligned to the draws."""
    lay = draws.layout
    expected = (lay.n_items, lay.n_classes)
    if isinstance(arr, xr.DataArray):
        if set(arr.dims) != {ITEM, CLASS}:
            raise ValueError(f"{name} must have dims ('item', 'class'), got {arr.dims}")
        arr = arr.transpose(ITEM, CLASS)
        for dim, target in ((ITEM, draws.items), (CLASS, draws.classes)):
            if dim not in arr.coords or target is None:
                continue
            own = arr[dim].values
            if own.shape == target.shape and np.array_equal(own, target):
                continue
            missing = target[~np.isin(target, own)]
            extra = own[~np.isin(own, target)]
            if missing.size or extra.size or own.size != np.unique(own).size:
                raise ValueError(
                    f"{name} {dim} labels do not match the plausibility's: "
                    f"missing [{_labels(missing)}], unexpected [{_labels(extra)}]"
                )
            arr = arr.sel({dim: target})
        values = arr.values
    else:
        values = np.asarray(arr)
    if values.shape != expected:
        raise ValueError(
            f"{name} has shape {values.shape}, expected (item={expected[0]}, class={expected[1]}) "
            "to match the plausibility"
        )
    return values


def item_label(draws: Draws, index: int):
    """The id of item ``index`` (the index itself when the draws carry no ids)."""
    value = draws.item_labels[index]
    return value.item() if hasattr(value, "item") else value


def class_positions(values, items: np.ndarray, classes: np.ndarray, what: str) -> np.ndarray:
    """int64 ``(item,)``: the position in ``classes`` of one class per item, ``values`` a
    Series indexed by item (reordered to ``items``) or an array in ``items``' order.
    ``ValueError`` naming an item without one, a length mismatch, or an item whose ``what``
    (e.g. ``"prediction"``, ``"label"``) is not a class."""
    if isinstance(values, pd.Series):
        missing = pd.Index(items).difference(values.index)
        if len(missing):
            raise ValueError(f"no {what} for item {fmt(missing[0])} ({len(missing)} items "
                             "without one)")
        values = values.reindex(items).to_numpy()
    values = np.asarray(values)
    if values.shape != (items.size,):
        raise ValueError(f"expected one {what} per item ({items.size}), got shape {values.shape}")
    position = pd.Index(classes).get_indexer(values)
    if (position < 0).any():
        k = int(np.flatnonzero(position < 0)[0])
        raise ValueError(f"item {fmt(items[k])}: {what} {fmt(values[k])} is not one of the "
                         f"classes {[c.item() if hasattr(c, 'item') else c for c in classes[:20]]}")
    return position.astype(np.int64)


def as_scores(scores, draws: Draws) -> np.ndarray:
    """Classifier scores as a float64 ``(n_items, n_classes)`` array aligned to the draws;
    NaN is a ValueError naming the item."""
    values = align_item_class(scores, draws, "scores")
    if values.dtype.kind not in "fiub":
        raise TypeError(f"scores must be real numbers, got dtype {values.dtype}")
    values = values.astype(np.float64, copy=False)
    bad = np.isnan(values).any(axis=1)
    if bad.any():
        raise ValueError(f"scores of item {item_label(draws, int(np.argmax(bad)))!r} contain NaN")
    return values


def as_prediction_sets(prediction_sets, draws: Draws) -> np.ndarray:
    """Prediction sets as a bool ``(n_items, n_classes)`` array aligned to the draws.

    Integer / float masks must hold only 0 and 1. An empty set is a ValueError naming
    the item.
    """
    values = align_item_class(prediction_sets, draws, "prediction_sets")
    if values.dtype != bool:
        if values.dtype.kind not in "fiu" or not np.isin(values, (0, 1)).all():
            raise ValueError("prediction_sets must be a boolean (or 0/1) mask")
        values = values.astype(bool)
    empty = ~values.any(axis=1)
    if empty.any():
        raise ValueError(
            f"prediction set of item {item_label(draws, int(np.argmax(empty)))!r} is empty "
            f"({int(empty.sum())} empty set(s) in all)"
        )
    return values


def score_order(scores: np.ndarray) -> np.ndarray:
    """Classes by decreasing score per item, ties lowest index first: int ``(item, class)``."""
    return np.argsort(-scores, axis=-1, kind="stable")


def score_positions(scores: np.ndarray) -> np.ndarray:
    """0-based rank position of every class under :func:`score_order`: int ``(item, class)``."""
    order = score_order(scores)
    positions = np.empty_like(order)
    np.put_along_axis(positions, order, np.arange(scores.shape[-1])[np.newaxis, :], axis=-1)
    return positions


def top_k_sets(scores, k: int) -> np.ndarray | xr.DataArray:
    """Top-``k`` prediction sets ``C_top-k(x)`` from classifier scores.

    ``scores`` ``(item, class)`` array or DataArray -> bool mask of the same shape with
    exactly ``k`` classes per item (ties lowest class index first); a DataArray keeps its
    dims and coords.
    """
    is_da = isinstance(scores, xr.DataArray)
    values = np.asarray(scores.values if is_da else scores, dtype=np.float64)
    if values.ndim != 2:
        raise ValueError(f"scores must be an (item, class) array, got shape {values.shape}")
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= k <= values.shape[1]:
        raise ValueError(f"k must be an int in 1..{values.shape[1]} (the number of classes), got {k!r}")
    if is_da and set(scores.dims) != {ITEM, CLASS}:
        raise ValueError(f"scores must have dims ('item', 'class'), got {scores.dims}")
    mask = np.zeros(values.shape, dtype=bool)
    class_axis = scores.get_axis_num(CLASS) if is_da else 1
    order = np.argsort(-values, axis=class_axis, kind="stable")
    top = order[:, :k] if class_axis == 1 else order[:k, :]
    np.put_along_axis(mask, top, True, axis=class_axis)
    if is_da:
        return scores.copy(data=mask).rename("prediction_set")
    return mask
