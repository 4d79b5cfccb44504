"""Inverse rank normalisation (IRN): the deterministic aggregation of partial rankings.

A reader with ordered blocks ``b_1 > b_2 > ... > b_L`` (ties inside a block; unnamed
classes form the implicit last block) scores class ``y``::

    score(y) = sum_{i=1}^{L-1} w_i [y in b_i],      w_i = 1 / i            (reference)
                                                    w_i = 1 / (i |b_i|)    (paper, ``divide_by_block_size``)

with ``i`` the *block* index (not the position), no per-reader normalisation, and 0 for
unranked classes. Scores are summed over an item's readers and normalised over classes.
Example: reader ``[[A], [B, C, D]]`` scores A = 1, B = C = D = 1/2 before normalising.
"""

import numpy as np
import xarray as xr


def irn_scores(rankings, *, divide_by_block_size: bool = False) -> np.ndarray:
    """Unnormalised IRN scores summed over readers, float64 ``(item, class)``.

    ``rankings`` is a :class:`plausible.data.Rankings` (flat ``item``, ``reader``,
    ``label``, ``block`` arrays); vectorised with ``np.bincount`` over its entries.
    """
    weight = 1.0 / (rankings.block + 1.0)
    if divide_by_block_size:
        # Size of the block each entry sits in: entries of one block share
        # (item, reader, block), and entries are sorted, so count runs of that key.
        key = np.stack([rankings.item, rankings.reader, rankings.block])
        _, inverse, size = np.unique(key, axis=1, return_inverse=True, return_counts=True)
        weight = weight / size[inverse.ravel()]
    flat = rankings.item * rankings.n_classes + rankings.label
    scores = np.bincount(flat, weights=weight, minlength=rankings.n_items * rankings.n_classes)
    return scores.reshape(rankings.n_items, rankings.n_classes)


def irn(rankings, *, divide_by_block_size: bool = False) -> xr.DataArray:
    """Normalised IRN plausibilities, DataArray ``(item, class)`` summing to 1 per item."""
    scores = irn_scores(rankings, divide_by_block_size=divide_by_block_size)
    return xr.DataArray(
        scores / scores.sum(axis=1, keepdims=True),
        dims=("item", "class"),
        coords={"item": rankings.items, "class": rankings.classes},
        name="irn",
    )
