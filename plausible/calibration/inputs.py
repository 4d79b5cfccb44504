"""Inputs of the calibration metrics (Mimori et al. 2021): label histograms, CPEs and DPEs.

A *label histogram* holds, for item ``i``, the counts ``n_ik`` of the ``n_i = sum_k n_ik``
labels it received in class ``k`` (labels drawn i.i.d. from ``Cat(mu_i)``); its empirical
class probabilities are ``muhat_ik = n_ik / n_i``. A *CPE* (class probability estimate)
``q`` is an ``(item, class)`` array of categorical distributions; a *DPE* (disagreement
probability estimate) ``phi`` is an ``(item,)`` array in ``[0, 1]``.

Every check is vectorised and raises ``ValueError`` naming the first offending item (by
its id) and how many more there are.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import xarray as xr

from plausible.data.validation import fmt, id_array, integer_counts, raise_first
from plausible.data.votes import Votes

ITEM = "item"
CLASS = "class"
#: Default tolerance on ``|sum_k q_ik - 1|``.
SUM_TOL = 1e-6


@dataclass(frozen=True)
class LabelHistogram:
    """Validated label counts.

    ``counts`` int64 ``(item, class)`` (every entry >= 0, every row >= 1 label);
    ``items`` ``(item,)`` and ``classes`` ``(class,)`` ids. Build with :func:`label_histogram`.
    """

    counts: np.ndarray
    items: np.ndarray
    classes: np.ndarray

    @property
    def n_items(self) -> int:
        """Number of items."""
        return self.counts.shape[0]

    @property
    def n_classes(self) -> int:
        """Number of classes."""
        return self.counts.shape[1]

    @property
    def totals(self) -> np.ndarray:
        """``n_i``: int64 ``(item,)``, labels per item."""
        return self.counts.sum(axis=1)

    @property
    def muhat(self) -> np.ndarray:
        """``muhat_ik = n_ik / n_i``: float64 ``(item, class)``."""
        return self.counts / self.totals[:, None]

    def subset(self, index) -> LabelHistogram:
        """The rows ``index`` (boolean mask or integer positions)."""
        return LabelHistogram(self.counts[index], self.items[index], self.classes)


def label_histogram(data, items=None, classes=None) -> LabelHistogram:
    """A :class:`LabelHistogram` from a :class:`~plausible.data.Votes`, another
    :class:`LabelHistogram` or an ``(item, class)`` array of counts.

    ``items`` / ``classes`` name the rows / columns of an array (default ``0..N-1`` /
    ``0..K-1``); they are taken from the container otherwise. Raises ``ValueError`` for
    a non-2-D array, non-integer, non-finite or negative counts, and rows without labels,
    naming the item (and class).
    """
    if isinstance(data, LabelHistogram):
        return data
    if isinstance(data, Votes):  # validated on construction with the same rules
        return LabelHistogram(data.counts, data.items, data.classes)
    if isinstance(data, xr.DataArray) and {ITEM, CLASS} <= set(data.dims):
        data = data.transpose(ITEM, CLASS)
        items = data[ITEM].values if items is None and ITEM in data.coords else items
        classes = data[CLASS].values if classes is None and CLASS in data.coords else classes
    counts = np.asarray(data)
    if counts.ndim != 2:
        raise ValueError(f"label histogram must be 2-D (item, class), got shape {counts.shape}")
    items = id_array(np.arange(counts.shape[0]) if items is None else items, counts.shape[0], "item")
    classes = id_array(
        np.arange(counts.shape[1]) if classes is None else classes, counts.shape[1], "class"
    )

    counts = integer_counts(
        counts, items, classes, prefix="label histogram: ",
        dtype_error="label histogram must hold integer counts", empty="has no labels (all counts are 0)",
    )
    return LabelHistogram(counts, items, classes)


def _as_item_array(values, ndim: int, what: str) -> np.ndarray:
    if isinstance(values, xr.DataArray):
        dims = (ITEM, CLASS)[:ndim]
        if set(dims) <= set(values.dims):
            values = values.transpose(*dims, ...)
    values = np.asarray(values, dtype=float)
    if values.ndim != ndim:
        shape = "(item, class)" if ndim == 2 else "(item,)"
        raise ValueError(f"{what} must be {ndim}-D {shape}, got shape {values.shape}")
    return values


def _item_name(hist: LabelHistogram | None, i: int) -> str:
    return f"item {fmt(hist.items[i])}" if hist is not None else f"item {i}"


def check_cpe(cpe, hist: LabelHistogram | None = None, *, what: str = "cpe", atol: float = SUM_TOL):
    """Validate class probability estimates: float64 ``(item, class)``.

    Every entry finite and in ``[0, 1]``, every row summing to 1 within ``atol``, and
    the shape equal to the histogram's ``(item, class)`` when ``hist`` is given. The
    ``ValueError`` names the offending item (by its histogram id when ``hist`` is given).
    """
    q = _as_item_array(cpe, 2, what)
    if hist is not None and q.shape != hist.counts.shape:
        raise ValueError(
            f"{what} has shape {q.shape} but the label histogram has shape "
            f"{hist.counts.shape} (item, class)"
        )

    def culprit(flat: int) -> str:
        i, k = divmod(flat, q.shape[1])
        cls = fmt(hist.classes[k]) if hist is not None else k
        return f"{what}: {_item_name(hist, i)}, class {cls}: value {fmt(q[i, k])}"

    raise_first(~np.isfinite(q).ravel(), lambda f: culprit(f) + " is not finite")
    raise_first((q < 0).ravel(), lambda f: culprit(f) + " is negative")
    raise_first((q > 1).ravel(), lambda f: culprit(f) + " exceeds 1")
    sums = q.sum(axis=1)
    raise_first(
        np.abs(sums - 1.0) > atol,
        lambda i: f"{what}: {_item_name(hist, i)} sums to {fmt(sums[i])}, not 1 (tolerance {atol:g})",
    )
    return q


def check_dpe(dpe, hist: LabelHistogram | None = None, *, what: str = "dpe") -> np.ndarray:
    """Validate disagreement probability estimates: float64 ``(item,)`` in ``[0, 1]``,
    one per histogram row when ``hist`` is given."""
    phi = _as_item_array(dpe, 1, what)
    if hist is not None and phi.shape[0] != hist.n_items:
        raise ValueError(
            f"{what} has {phi.shape[0]} items but the label histogram has {hist.n_items}"
        )
    raise_first(
        ~np.isfinite(phi) | (phi < 0) | (phi > 1),
        lambda i: f"{what}: {_item_name(hist, i)}: value {fmt(phi[i])} is not a probability in [0, 1]",
    )
    return phi


def check_weights(weights, n_items: int) -> np.ndarray:
    """Item weights ``(item,)``: finite, >= 0, summing to 1 (default ``1/N`` each)."""
    if weights is None:
        return np.full(n_items, 1.0 / n_items)
    w = np.asarray(weights, dtype=float)
    if w.shape != (n_items,):
        raise ValueError(f"weights must have shape ({n_items},), got {w.shape}")
    raise_first(~np.isfinite(w) | (w < 0), lambda i: f"weights: item {i}: {fmt(w[i])} is not >= 0")
    if abs(w.sum() - 1.0) > SUM_TOL:
        raise ValueError(f"weights must sum to 1, got {fmt(w.sum())}")
    return w
