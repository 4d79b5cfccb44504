"""Rank summaries from worth draws (:mod:`plausible.metrics.worth_ranks`) against the dense
rank table: the one-hot of every draw's ranks, averaged, cumulated and read off."""

import numpy as np
import pytest
import xarray as xr

from plausible.metrics import set_options
from plausible.metrics.worth_ranks import draw_ranks, rank_summary


def dense_summary(log_worth: np.ndarray):
    """``(mean rank table (item, rank), modal rank)`` from the one-hot of each draw's ranks
    (``(sample, item)`` draws)."""
    n = log_worth.shape[1]
    order = np.argsort(-log_worth, axis=1, kind="stable")
    one_hot = np.zeros((*log_worth.shape, n))
    for s, row in enumerate(order):  # a plain loop: position r holds the (r+1)-th best
        for r, i in enumerate(row):
            one_hot[s, i, r] = 1.0
    table = one_hot.mean(axis=0)
    return table, table.argmax(axis=1) + 1


@pytest.mark.parametrize("chunk", [None, 20])  # one block, or a few draws per block
def test_summary_equals_the_dense_rank_table_read_off(chunk):
    rng = np.random.default_rng(3)
    draws = rng.normal(np.linspace(1.0, -1.0, 9), 0.8, size=(2, 37, 9))
    draws[0, 0, 3] = draws[0, 0, 4]  # a tie: the lower item index ranks first
    log_worth = xr.DataArray(draws, dims=("chain", "draw", "item"),
                             coords={"item": [f"x{i}" for i in range(9)]})
    with set_options(chunk_elements=chunk or 10**7):
        summary = rank_summary(log_worth)
    table, modal = dense_summary(draws.reshape(-1, 9))
    cumulative = np.cumsum(table, axis=1)
    ranks = np.arange(1, 10)
    np.testing.assert_array_equal(summary["top_class"], modal)
    np.testing.assert_allclose(summary["probability_top_class"], table.max(axis=1))
    np.testing.assert_allclose(summary["expected_rank"], table @ ranks)
    for name, q in (("rank_q05", 0.05), ("rank_q95", 0.95)):
        np.testing.assert_array_equal(summary[name],
                                      ranks[(cumulative < q - 1e-9).sum(axis=1)])
    for k in (1, 3):
        np.testing.assert_allclose(summary[f"p_top{k}"], cumulative[:, k - 1])
    assert "p_top10" not in summary  # 9 items: every item is in the top 10
    assert list(summary.index) == [f"x{i}" for i in range(9)]
    assert draw_ranks(draws[0, :1])[0, 3] < draw_ranks(draws[0, :1])[0, 4]
