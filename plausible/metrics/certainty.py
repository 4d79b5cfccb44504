"""Certainty of labels, of top-j annotations and of class groups.

With draws ``lambda^(m)``, ``m = 1..M`` (``M`` = number of samples over all sample dims):

* ``Certainty_i(y) = (1/M) sum_m 1[y = argmax_c lambda^(m)_{i,c}]`` (ties: lowest index),
* ``AC_j(i) = max_C (1/M) sum_m 1[Y_top-j(lambda^(m)_i) = C]`` over the unordered top-j
  sets ``C`` occurring among the draws; ``AC_1(i) = max_y Certainty_i(y)``. Always 1 for a
  point estimate. Dataset level: ``.mean("item")``.
* group certainty ``GC_i(g) = sum_{y: group(y) = g} Certainty_i(y)`` (fraction of draws
  whose top-1 class falls into group ``g``; ``.max("group")`` is the group certainty of
  Stutz et al. 2023) and the expected group ``E_i = sum_g g GC_i(g)`` (expected risk for ordinal
  risk groups low=0, medium=1, high=2).

Counting streams over the draws: top-1 classes become codes ``item * K + class`` counted
with ``np.bincount``; a top-j set (sorted class indices ``c_1 < ... < c_j``) becomes one
integer through the combinatorial number system ``sum_r binom(c_r, r)`` (a bijection onto
``0..binom(K, j)-1``), counted per item densely with ``np.bincount`` when
``n_items * binom(K, j)`` is small, else by ``np.unique`` on ``item * binom(K, j) + code``.
"""

from __future__ import annotations

from math import comb

import numba
import numpy as np
import xarray as xr

from plausible.metrics.accumulated import accumulated, pooled
from plausible.metrics.draws import Draws, as_draws
from plausible.metrics.options import OPTIONS
from plausible.metrics.selection import check_k
from plausible.metrics.storage import CLASS, ITEM

#: Largest ``n_items * binom(K, j)`` that still fits an int64 key (``item``, ``set``).
MAX_SET_KEY = 2**62
#: Pending (key, count) rows from chunks before they are merged into the running table.
SET_MERGE_ROWS = 2**22
#: Up to this many (item, sample) set codes are held whole and each item's mode found by
#: sorting its codes (1 GiB of int64; the size of a UA metric's output at most).
MAX_HELD_CODES = 2**27


@numba.njit(cache=True, parallel=True)
def _largest_run(codes):  # pragma: no cover - compiled
    """Per row of ``codes`` ``(item, sample)``: the count of its most frequent value (the row
    is sorted in place)."""
    best = np.zeros(codes.shape[0], dtype=np.int64)
    for i in numba.prange(codes.shape[0]):
        row = codes[i]
        row.sort()
        run = 1
        top = 1
        for s in range(1, row.size):
            run = run + 1 if row[s] == row[s - 1] else 1
            top = max(top, run)
        best[i] = top if row.size else 0
    return best


def top1_counts(draws: Draws) -> np.ndarray:
    """int64 ``(item, class)``: number of draws in which each class is the top-1 class."""
    lay = draws.layout
    n_classes = lay.n_classes
    counts = np.zeros(lay.n_items * n_classes, dtype=np.int64)
    for block, top in draws.iter_top(1):
        n_i = top.shape[1]
        codes = np.add(top[..., 0], np.arange(0, n_i * n_classes, n_classes), dtype=np.intp)
        counts[block.items.start * n_classes : block.items.stop * n_classes] += np.bincount(
            codes.ravel(), minlength=n_i * n_classes
        )
    return counts.reshape(lay.n_items, n_classes)


def label_certainty(plausibility) -> xr.DataArray:
    """Certainty of every label: the fraction of draws in which it is the top-1 class.

    ``Certainty_i(y) = (1/M) sum_m 1[y = argmax lambda^(m)_i]``, ties to the lowest class
    index; rows sum to 1.

    Parameters
    ----------
    plausibility : DataTree, Dataset, DataArray or top classes
        Plausibility draws in either storage (:func:`plausible.metrics.as_draws`).

    Returns
    -------
    xarray.DataArray
        float64, dims ``("item", "class")``, named ``certainty``. Read from the summaries
        accumulated while sampling (:mod:`plausible.metrics.accumulated`) where the draws
        are not stored.
    """
    summary = accumulated(plausibility)
    if summary is not None:
        return pooled(summary, "top1_share").rename("certainty")
    draws = as_draws(plausibility)
    certainty = top1_counts(draws) / draws.layout.n_samples
    return xr.DataArray(certainty, dims=(ITEM, CLASS),
                        coords={**draws.item_coords(), **draws.class_coords()}, name="certainty")


@numba.njit(nogil=True, cache=True)
def _set_codes(sets, table, out):  # pragma: no cover - compiled
    """``out[s, i]``: the combinatorial code ``sum_r binom(c_r, r + 1)`` of the set
    ``sets[s, i]`` (sorted here, ascending ``c_1 < ... < c_j``)."""
    n, m, j = sets.shape
    ordered = np.empty(j, dtype=np.int64)
    for s in range(n):
        for i in range(m):
            for r in range(j):  # insertion sort of j small entries
                c = sets[s, i, r]
                q = r
                while q > 0 and ordered[q - 1] > c:
                    ordered[q] = ordered[q - 1]
                    q -= 1
                ordered[q] = c
            code = 0
            for r in range(j):
                code += table[ordered[r], r]
            out[s, i] = code


def _combinadic_table(n_classes: int, j: int) -> np.ndarray:
    """int64 ``(K, j)`` with ``table[c, r] = binom(c, r + 1)``."""
    return np.array([[comb(c, r + 1) for r in range(j)] for c in range(n_classes)], dtype=np.int64)


class _SetCounter:
    """Counts of (item, top-j set) pairs over all draws; max count per item at the end.

    Three ways, by size: per item a dense count of every possible set (few sets); every
    draw's set code held per item and sorted at the end (:data:`MAX_HELD_CODES`); or
    ``np.unique`` counts of each block merged into a running table."""

    def __init__(self, n_items: int, n_classes: int, j: int, n_samples: int):
        self.n_items, self.j = n_items, j
        self.n_sets = comb(n_classes, j)
        self.dense = n_items * self.n_sets <= OPTIONS["chunk_elements"]
        self.keyed = n_items * self.n_sets < MAX_SET_KEY
        self.held = self.keyed and not self.dense and n_items * n_samples <= MAX_HELD_CODES
        if self.keyed:
            self.table = _combinadic_table(n_classes, j)
        if self.dense:
            self.counts = np.zeros(n_items * self.n_sets, dtype=np.int64)
        elif self.held:
            self.codes = np.empty((n_items, n_samples), dtype=np.int64)
        else:
            self.keys = np.empty((0,) if self.keyed else (0, 1 + j), dtype=np.int64)
            self.key_counts = np.empty(0, dtype=np.int64)
            self.pending: list[tuple[np.ndarray, np.ndarray]] = []
            self.n_pending = 0

    def add(self, samples: slice, items: slice, sets: np.ndarray) -> None:
        """``sets`` ``(n, ni, j)``: top-j class indices of ``samples`` x ``items``, in any
        order."""
        n, n_i, j = sets.shape
        item_index = np.arange(items.start, items.stop, dtype=np.int64)
        if self.keyed:
            code = np.empty((n, n_i), dtype=np.int64)
            _set_codes(sets, self.table, code)
            if self.dense:
                code += (item_index - items.start) * self.n_sets
                lo, hi = items.start * self.n_sets, items.stop * self.n_sets
                self.counts[lo:hi] += np.bincount(code.ravel(), minlength=hi - lo)
                return
            if self.held:
                self.codes[items, samples] = code.T
                return
            code += item_index * self.n_sets
            keys, counts = np.unique(code.ravel(), return_counts=True)
        else:  # binom(K, j) too large for an int64 key: unique rows (item, c_1..c_j)
            rows = np.empty((n, n_i, 1 + j), dtype=np.int64)
            rows[..., 0] = item_index
            rows[..., 1:] = np.sort(sets, axis=-1)
            keys, counts = np.unique(rows.reshape(-1, 1 + j), axis=0, return_counts=True)
        self.pending.append((keys, counts))
        self.n_pending += len(counts)
        if self.n_pending > max(SET_MERGE_ROWS, 2 * len(self.key_counts)):  # amortised merging
            self._merge()

    def _merge(self) -> None:
        if not self.pending:
            return
        keys = np.concatenate([self.keys, *(k for k, _ in self.pending)])
        counts = np.concatenate([self.key_counts, *(c for _, c in self.pending)])
        self.pending, self.n_pending = [], 0
        axis = None if self.keyed else 0
        self.keys, inverse = np.unique(keys, axis=axis, return_inverse=True)
        self.key_counts = np.bincount(
            inverse.ravel(), weights=counts, minlength=len(self.keys)
        ).astype(np.int64)

    def max_per_item(self) -> np.ndarray:
        """int64 ``(item,)``: count of each item's most frequent top-j set."""
        if self.dense:
            return self.counts.reshape(self.n_items, self.n_sets).max(axis=1)
        if self.held:
            return _largest_run(self.codes)
        self._merge()
        item = self.keys // self.n_sets if self.keyed else self.keys[:, 0]
        starts = np.flatnonzero(np.r_[True, item[1:] != item[:-1]])
        best = np.zeros(self.n_items, dtype=np.int64)
        best[item[starts]] = np.maximum.reduceat(self.key_counts, starts)
        return best


def annotation_certainty(plausibility, top: int = 1) -> xr.DataArray:
    """Annotation certainty ``AC_j`` per item (``j = top``).

    ``AC_j(i) = max_C (1/M) sum_m 1[Y_top-j(lambda^(m)_i) = C]``: the share of draws
    agreeing on the most frequent unordered top-j set (only sets occurring among the
    draws compete). ``AC_1 = max_y Certainty(y)``. Ties in plausibilities go to the lowest
    class index. 1 for a point estimate.

    Parameters
    ----------
    plausibility : DataTree, Dataset, DataArray or top classes
        Plausibility draws in either storage (:func:`plausible.metrics.as_draws`).
    top : int
        ``j``, the size of the top set, ``1 <= top <= n_classes``.

    Returns
    -------
    xarray.DataArray
        float64, dims ``("item",)``, named ``annotation_certainty``, ``attrs["top"] = j``.
        ``.mean("item")`` is the dataset-level value. ``top=1`` is read from the summaries
        accumulated while sampling where the draws are not stored.
    """
    summary = accumulated(plausibility)
    if summary is not None and top == 1:
        return pooled(summary, "top1_share").max(CLASS).rename("annotation_certainty") \
            .assign_attrs(top=1)
    draws = as_draws(plausibility)
    lay = draws.layout
    top = check_k(top, lay.n_classes, "top")
    if top == 1:
        best = top1_counts(draws).max(axis=1)
    else:
        counter = _SetCounter(lay.n_items, lay.n_classes, top, lay.n_samples)
        for block, sets in draws.iter_top(top):
            counter.add(block.samples, block.items, sets)
        best = counter.max_per_item()
    return xr.DataArray(best / lay.n_samples, dims=(ITEM,), coords=draws.item_coords(),
                        name="annotation_certainty", attrs={"top": top})


def _as_groups(groups, draws: Draws) -> np.ndarray:
    """Group index per class as int64 ``(class,)`` aligned to the draws' classes."""
    n_classes = draws.layout.n_classes
    if isinstance(groups, xr.DataArray):
        if groups.dims != (CLASS,):
            raise ValueError(f"groups must have the single dim 'class', got {groups.dims}")
        if CLASS in groups.coords and draws.classes is not None:
            own, target = groups[CLASS].values, draws.classes
            if not (own.shape == target.shape and np.array_equal(own, target)):
                missing = target[~np.isin(target, own)]
                if missing.size or own.size != np.unique(own).size:
                    raise ValueError(f"groups has no group for classes {missing.tolist()[:5]}")
                groups = groups.sel({CLASS: target})
        groups = groups.values
    groups = np.asarray(groups)
    if groups.shape != (n_classes,):
        raise ValueError(f"groups has shape {groups.shape}, expected (class={n_classes},)")
    if groups.dtype.kind not in "iu":
        raise ValueError(f"groups must hold integer group indices, got dtype {groups.dtype}")
    if (groups < 0).any():
        raise ValueError(f"group indices must be >= 0, got {int(groups.min())}")
    return groups.astype(np.int64)


def group_certainty(plausibility, groups) -> xr.DataArray:
    """Fraction of draws whose top-1 class falls into each group.

    ``GC_i(g) = (1/M) sum_m 1[group(argmax lambda^(m)_i) = g]
    = sum_{y: group(y) = g} Certainty_i(y)``; ``.max("group")`` is the certainty of the
    group decision (e.g. risk level).

    Parameters
    ----------
    plausibility : DataTree, Dataset, DataArray or top classes
        Plausibility draws in either storage (:func:`plausible.metrics.as_draws`).
    groups : array_like of int, shape (class,), or DataArray with dim ``class``
        Group index ``0..G-1`` of every class (e.g. risk low=0, medium=1, high=2);
        a DataArray is aligned by class label.

    Returns
    -------
    xarray.DataArray
        float64, dims ``("item", "group")``, ``group = 0..G-1`` (``G = max(groups) + 1``),
        named ``group_certainty``; rows sum to 1.
    """
    draws = as_draws(plausibility)
    group_index = _as_groups(groups, draws)
    lay = draws.layout
    n_groups = int(group_index.max(initial=-1)) + 1
    membership = np.zeros((lay.n_classes, n_groups))
    membership[np.arange(lay.n_classes), group_index] = 1.0
    certainty = top1_counts(draws) @ membership / lay.n_samples
    return xr.DataArray(certainty, dims=(ITEM, "group"),
                        coords={**draws.item_coords(), "group": np.arange(n_groups)},
                        name="group_certainty")


def expected_group(plausibility, groups) -> xr.DataArray:
    """Expected group index of the top-1 class (expected risk for ordinal risk groups).

    ``E_i = (1/M) sum_m group(argmax lambda^(m)_i) = sum_g g GC_i(g)``.

    Parameters and alignment as :func:`group_certainty`. Returns float64 ``("item",)``,
    named ``expected_group``.
    """
    certainty = group_certainty(plausibility, groups)
    expected = certainty.values @ certainty["group"].values.astype(np.float64)
    return xr.DataArray(
        expected, dims=(ITEM,), coords={k: v for k, v in certainty.coords.items() if k == ITEM},
        name="expected_group",
    )
