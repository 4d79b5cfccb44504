"""Each item's rank among posterior draws of worths, summarised without the ``n x n`` table.

A comparison model's draws ``log w^(s) (item,)`` order the items: ``rank^(s)_i`` is 1 for the
largest worth (ties to the lower item index, as a stable sort gives). The rank table
``P(rank_i = r | data)`` has ``n^2`` entries, but each item only visits the ranks its draws
reach, so the distribution of every item's rank is kept as sparse counts, ``(item, rank) ->
number of draws``, folded in a block of draws at a time: at most ``min(n^2, S n)`` entries for
``S`` draws, and typically ``n`` times the width of an item's rank interval. Ranking a draw
costs ``O(n log n)``; nothing is ``O(n^2)``.

From the counts, per item (:func:`rank_summary`):

* ``top_class``: the modal rank (the lowest on ties), ``probability_top_class`` its posterior
  probability and ``certainty_top1`` the share of draws in which it is the item's rank (the
  same number: a rank is one-hot in each draw);
* ``expected_rank``, the posterior mean rank;
* ``rank_q05``, ``rank_q95``: the smallest rank whose cumulative probability reaches 5 % and
  95 % (a 90 % interval);
* ``p_top<k>``: the posterior probability that the item is among the ``k`` best, for each
  ``k`` of ``tops`` below ``n``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import xarray as xr

from plausible.metrics.chunks import iter_sample_blocks

TOPS = (1, 3, 10)
"""The ``k`` of the ``p_top<k>`` columns of :func:`rank_summary`."""


def draw_ranks(log_worth: np.ndarray) -> np.ndarray:
    """``rank - 1`` (0 the largest worth) of each item in each draw of ``log_worth (sample,
    item)``, int64 of the same shape; ties to the lower item index."""
    order = np.argsort(-log_worth, axis=-1, kind="stable")
    rank = np.empty_like(order)
    np.put_along_axis(rank, order, np.arange(log_worth.shape[-1]), axis=-1)
    return rank


def rank_counts(log_worth: xr.DataArray) -> tuple[np.ndarray, np.ndarray, int]:
    """The sparse rank table of the draws ``log_worth`` (sample dims..., ``item``): ``(code,
    count, draws)`` with ``code = item * n + (rank - 1)`` sorted and unique, ``count`` the
    draws in which the item had that rank (int64 each), ``draws`` the number of draws."""
    sample_dims = [d for d in log_worth.dims if d != "item"]
    values = log_worth.transpose(*sample_dims, "item")
    n = values.sizes["item"]
    shape = tuple(values.shape[:-1]) or (1,)
    data = values.data if sample_dims else values.data[None]
    codes, counts = np.empty(0, np.int64), np.empty(0, np.int64)
    base = np.arange(n, dtype=np.int64) * n
    for _, index in iter_sample_blocks(shape, n):
        block = np.asarray(data[index], dtype=np.float64).reshape(-1, n)
        new, times = np.unique((base + draw_ranks(block)).ravel(), return_counts=True)
        merged = np.concatenate([codes, new])
        codes, where = np.unique(merged, return_inverse=True)
        counts = np.bincount(where, np.concatenate([counts, times]),
                             minlength=codes.size).astype(np.int64)
    return codes, counts, int(np.prod(shape))


def rank_summary(log_worth: xr.DataArray, tops=TOPS) -> pd.DataFrame:
    """Per item (index: ``log_worth``'s ``item`` coordinate) the columns of the module
    docstring, from posterior draws ``log_worth`` (sample dims..., ``item``)."""
    codes, counts, draws = rank_counts(log_worth)
    n = log_worth.sizes["item"]
    item, rank = codes // n, codes % n + 1
    starts = np.searchsorted(item, np.arange(n))  # every item has at least one entry
    p = counts / draws
    modal = np.lexsort((rank, -counts, item))[starts]  # most draws, then the lowest rank
    cumulative = np.cumsum(p)
    before = np.concatenate([[0.0], cumulative])[starts]
    within = cumulative - before[item]
    table = {"top_class": rank[modal], "probability_top_class": p[modal],
             "certainty_top1": p[modal],
             "expected_rank": np.bincount(item, p * rank, minlength=n)}
    for name, q in (("rank_q05", 0.05), ("rank_q95", 0.95)):
        below = np.add.reduceat((within < q - 1e-9).astype(np.int64), starts)
        last = np.append(starts[1:], codes.size) - 1
        table[name] = rank[np.minimum(starts + below, last)]
    for k in tops:
        if k < n:
            table[f"p_top{k}"] = np.bincount(item, p * (rank <= k), minlength=n)
    return pd.DataFrame(table, index=pd.Index(log_worth["item"].values, name="item"))


__all__ = ["TOPS", "draw_ranks", "rank_counts", "rank_summary"]
