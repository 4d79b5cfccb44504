"""The top classes of every draw, as an array: the shared input of rank-based metrics."""

from __future__ import annotations

import numpy as np
import xarray as xr

from plausible.metrics.draws import RANK, TOP_CLASS, as_draws
from plausible.metrics.meaning import ATTR
from plausible.metrics.selection import check_k, index_dtype


def top_classes(plausibility, k: int = 1) -> xr.DataArray:
    """The ``k`` most plausible classes of every draw and item.

    ``top_classes[..., i, r-1]`` is the class index (position along ``class``, not its
    label) with the ``r``-th largest ``lambda^(m)_i``; ties go to the lowest class index.
    This is ``Y_top-k(lambda)`` of Stutz et al. 2023, in order.

    Parameters
    ----------
    plausibility : DataArray, Dataset, DataTree or top classes
        Plausibility draws in either storage (see :func:`plausible.metrics.as_draws`).
    k : int
        Number of classes, ``1 <= k <= n_classes``.

    Returns
    -------
    xarray.DataArray
        Integer (smallest dtype holding the class indices), dims
        ``(sample dims..., "item", "rank")``, ``rank = 1..k``, named ``top_class``, with
        ``attrs["classes"]`` the class labels. Every rank-based metric accepts it in place of
        the draws (for depths up to ``k``), so a sweep of metrics selects the top classes
        once. Memory: ``n_samples * n_items * k`` small ints; computed block by block.
    """
    draws = as_draws(plausibility)
    lay = draws.layout
    k = check_k(k, lay.n_classes)
    out = np.empty((lay.n_samples, lay.n_items, k), dtype=index_dtype(lay.n_classes))
    for block, top in draws.iter_top(k):
        out[block.samples, block.items] = top
    return draws.per_sample_item(out, TOP_CLASS, extra_dims=(RANK,),
                                 extra_coords={RANK: np.arange(1, k + 1)},
                                 attrs={"classes": list(draws.class_labels),
                                        **({} if draws.meaning is None else {ATTR: draws.meaning})})
