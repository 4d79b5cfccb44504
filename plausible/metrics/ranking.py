"""Top classes per plausibility draw: the primitive every metric uses.

``Y_top-j(lambda)`` is the list of the ``j`` classes with largest plausibility, in
descending order, ties broken by lowest class index first -- exactly the first ``j``
entries of a stable descending sort (``np.argsort(-x, kind="stable")[:j]``), as in the
reference implementation (``jax.lax.top_k``).

Selection runs on one chunk at a time (see :mod:`plausible.metrics.chunks`) with small
compiled kernels (numba, a dependency of PyTensor) that read each row once: top-1 is a
strict ``>`` scan (the same answer as ``np.argmax``; 4x faster for ten classes, equal
near 50; beyond ``ARGMAX_SCAN_MAX_CLASSES`` ``np.argmax``'s SIMD loop is used instead),
top-``k`` an insertion into a ``k``-long buffer (O(K k) per row instead of an
O(K log K) sort: 4x faster than a stable argsort of the chunk for K = 10, 40x for
K = 419). Plausibilities must not be NaN (not checked in the hot loop).
"""

from __future__ import annotations

import numba
import numpy as np
import xarray as xr

from plausible.metrics.chunks import iter_chunks, sample_item_array
from plausible.metrics.plausibility import as_plausibility
from plausible.metrics.storage import layout

#: Up to this many classes the compiled top-1 scan beats ``np.argmax``.
ARGMAX_SCAN_MAX_CLASSES = 48


def index_dtype(n_classes: int) -> np.dtype:
    """Smallest signed integer dtype holding class indices ``0..n_classes-1``."""
    for dtype in (np.int8, np.int16, np.int32):
        if n_classes <= np.iinfo(dtype).max:
            return np.dtype(dtype)
    return np.dtype(np.int64)


@numba.njit(nogil=True, cache=True)
def _top1_kernel(values, out):  # pragma: no cover - compiled
    n, m, n_classes = values.shape
    for s in range(n):
        for i in range(m):
            best = values[s, i, 0]
            arg = 0
            for j in range(1, n_classes):
                v = values[s, i, j]
                if v > best:
                    best = v
                    arg = j
            out[s, i] = arg


@numba.njit(nogil=True, cache=True)
def _topk_kernel(values, out):  # pragma: no cover - compiled
    n, m, n_classes = values.shape
    k = out.shape[2]
    best = np.empty(k, dtype=np.float64)
    for s in range(n):
        for i in range(m):
            # fill with the first k classes, insertion-sorted (stable: equal stays behind)
            for j in range(k):
                v = values[s, i, j]
                q = j
                while q > 0 and v > best[q - 1]:
                    best[q] = best[q - 1]
                    out[s, i, q] = out[s, i, q - 1]
                    q -= 1
                best[q] = v
                out[s, i, q] = j
            # a later class enters only if strictly larger than the current k-th
            for j in range(k, n_classes):
                v = values[s, i, j]
                if v > best[k - 1]:
                    q = k - 1
                    while q > 0 and v > best[q - 1]:
                        best[q] = best[q - 1]
                        out[s, i, q] = out[s, i, q - 1]
                        q -= 1
                    best[q] = v
                    out[s, i, q] = j


def select_top1(values: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """Index of the largest value along the last axis, lowest index on ties.

    ``values`` ``(n, m, K)`` -> ``(n, m)`` of :func:`index_dtype` ``(K)`` (or ``out``'s).
    """
    n, m, n_classes = values.shape
    if out is None:
        out = np.empty((n, m), dtype=index_dtype(n_classes))
    if n_classes <= ARGMAX_SCAN_MAX_CLASSES:
        _top1_kernel(values, out)
    else:
        out[...] = np.argmax(values, axis=-1)
    return out


def select_top(values: np.ndarray, k: int, out: np.ndarray | None = None) -> np.ndarray:
    """Indices of the ``k`` largest values along the last axis, descending, ties lowest
    index first (= ``np.argsort(-values, axis=-1, kind="stable")[..., :k]``).

    ``values`` ``(n, m, K)`` -> ``(n, m, k)`` of :func:`index_dtype` ``(K)`` (or ``out``'s).
    """
    n, m, n_classes = values.shape
    if not 1 <= k <= n_classes:
        raise ValueError(f"k must be in 1..{n_classes} (the number of classes), got {k}")
    if out is None:
        out = np.empty((n, m, k), dtype=index_dtype(n_classes))
    if k == 1:
        select_top1(values, out[..., 0])
    else:
        _topk_kernel(values, out)
    return out


def check_k(k, n_classes: int, name: str = "k") -> int:
    """``k`` as an int in ``1..n_classes`` or a ValueError."""
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        raise ValueError(f"{name} must be an int, got {k!r}")
    if not 1 <= k <= n_classes:
        raise ValueError(f"{name} must be in 1..{n_classes} (the number of classes), got {k}")
    return int(k)


def top_classes(plausibility, k: int = 1) -> xr.DataArray:
    """The ``k`` most plausible classes of every draw and item.

    ``top_classes[..., i, r-1]`` is the class index (position along ``class``, not its
    label) with the ``r``-th largest ``lambda^(m)_i``; ties go to the lowest class index.
    This is ``Y_top-k(lambda)`` of the spec, in order.

    Parameters
    ----------
    plausibility : DataArray, Dataset or DataTree
        Plausibility draws (see :func:`as_plausibility`), dims include ``item``, ``class``.
    k : int
        Number of classes, ``1 <= k <= n_classes``.

    Returns
    -------
    xarray.DataArray
        Integer (smallest dtype holding the class indices), dims
        ``(sample dims..., "item", "rank")``, ``rank = 1..k``, named ``top_class``.
        Memory: ``n_samples * n_items * k`` small ints; computed chunk by chunk.
    """
    plausibility = as_plausibility(plausibility)
    lay = layout(plausibility)
    k = check_k(k, lay.n_classes)
    out = np.empty((lay.n_samples, lay.n_items, k), dtype=index_dtype(lay.n_classes))
    for chunk in iter_chunks(plausibility):
        select_top(chunk.values, k, out=out[chunk.samples, chunk.items])
    return sample_item_array(
        plausibility, out, "top_class", extra_dims=("rank",), extra_coords={"rank": np.arange(1, k + 1)}
    )
