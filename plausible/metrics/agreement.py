"""Leave-one-reader-out agreement: validation of annotation certainty.

For item ``i`` with readers ``1..R_i`` and each reader ``r``: aggregate the *other*
readers by IRN, take their top-1 class(es) -- all classes tied for the largest IRN score,
never a class with score 0 -- and score 1 if the classes ``r`` named (any block) contain
any of them, else 0. ``.mean("reader")`` (NaN skipped) is the per-item agreement of the
spec (the fraction of readers agreeing with the others), which the paper correlates with
PL top-1 annotation certainty (about 0.85).

IRN follows the reference implementation (spec section 3.2): reader ``r`` gives class
``y`` the score ``1 / (b + 1)`` where ``b`` is the 0-based *block* index of ``y`` in
``r``'s ranking (not its position; no per-reader normalisation; unranked classes 0);
scores are summed over readers. Normalising over classes does not change the top-1 set,
so it is skipped. Ties are decided exactly: every weight is the integer
``lcm(1..B) / (b + 1)`` (``B`` = number of blocks), so leave-one-out sums
``total - own`` carry no rounding (a float route with a relative tolerance of ``1e-9``
is used only if those integers could overflow).
"""

from __future__ import annotations

from math import lcm

import numpy as np
import xarray as xr

from plausible.metrics.options import OPTIONS
from plausible.metrics.storage import ITEM

READER = "reader"


def leave_one_out_agreement(rankings) -> xr.DataArray:
    """Agreement of every reader with the IRN top-1 of the item's other readers.

    Parameters
    ----------
    rankings : plausible.data.Rankings
        Partial rankings, read through its flat fields only: int ``item``, ``reader``,
        ``label``, ``block`` (one entry per ranked (item, reader, class)), ``n_readers``
        ``(item,)``, ``items``, ``classes``, ``n_items``, ``n_classes``, ``max_readers``.

    Returns
    -------
    xarray.DataArray
        float64 ``(item, reader)`` (``reader = 0..max_readers-1``), named ``agreement``:
        1.0 if the classes reader ``r`` named contain one of the other readers' top-1 IRN
        classes (ties kept), 0.0 if not, NaN for reader slots an item does not have and
        for items with a single reader.
    """
    item = np.asarray(rankings.item, dtype=np.int64)
    reader = np.asarray(rankings.reader, dtype=np.int64)
    label = np.asarray(rankings.label, dtype=np.int64)
    block = np.asarray(rankings.block, dtype=np.int64)
    n_readers = np.asarray(rankings.n_readers, dtype=np.int64)
    n_items, n_classes, max_readers = int(rankings.n_items), int(rankings.n_classes), int(rankings.max_readers)
    if not (item.shape == reader.shape == label.shape == block.shape) or item.ndim != 1:
        raise ValueError("rankings.item, reader, label and block must be flat arrays of equal length")
    if n_readers.shape != (n_items,):
        raise ValueError(f"rankings.n_readers has shape {n_readers.shape}, expected ({n_items},)")

    if item.size and np.any(item[1:] < item[:-1]):
        order = np.argsort(item, kind="stable")
        item, reader, label, block = item[order], reader[order], label[order], block[order]
    n_blocks = int(block.max(initial=0)) + 1
    scale = lcm(*range(1, n_blocks + 1))
    exact = scale * max(max_readers, 1) < 2**62
    weight = scale // (block + 1) if exact else 1.0 / (block + 1)

    result = np.zeros((n_items, max_readers))
    starts = np.searchsorted(item, np.arange(n_items + 1))
    step = max(1, OPTIONS["chunk_elements"] // (4 * max(max_readers, 1) * max(n_classes, 1)))
    for i0 in range(0, n_items, step):
        i1 = min(i0 + step, n_items)
        rows = slice(starts[i0], starts[i1])
        own = np.zeros((i1 - i0, max_readers, n_classes), dtype=weight.dtype)
        own[item[rows] - i0, reader[rows], label[rows]] = weight[rows]
        others = own.sum(axis=1, keepdims=True) - own  # IRN of the other readers, unnormalised
        best = others.max(axis=-1, keepdims=True)
        if exact:
            top = others == best
        else:
            top = np.isclose(others, best, rtol=1e-9, atol=0.0)
        top &= others > 0
        result[i0:i1] = (top & (own > 0)).any(axis=-1)

    slots = np.arange(max_readers)[np.newaxis, :]
    valid = (slots < n_readers[:, np.newaxis]) & (n_readers[:, np.newaxis] >= 2)
    result[~valid] = np.nan
    return xr.DataArray(
        result,
        dims=(ITEM, READER),
        coords={ITEM: np.asarray(rankings.items), READER: np.arange(max_readers)},
        name="agreement",
    )
