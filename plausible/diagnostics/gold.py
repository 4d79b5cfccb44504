"""Plausibilities scored against gold: proper scores and the top-label reliability table.

For items ``i`` with a gold class ``y_i`` and probabilities ``p_i`` over the ``K`` classes
(a model's posterior mean plausibility, an EM posterior, vote shares):

* accuracy of the most probable class (ties to the first class);
* Brier score ``(1/n) sum_i sum_c (p_ic - 1[c = y_i])^2`` (0 to 2);
* log loss ``-(1/n) sum_i log p_{i, y_i}``, with ``p`` floored at :data:`FLOOR` so that a
  confident miss costs at most ``-log FLOOR`` (34.5 nats) instead of infinity;
* expected calibration error of the top label, ``sum_b (n_b / n) |acc_b - conf_b|`` over
  equal-width bins of the top probability (Guo et al. 2017), from :func:`reliability`.

Brier score and log loss are proper: in expectation they are best for the probabilities of
the gold class itself. They reward the reading of a plausibility as the posterior of one true
class; an item's distribution over classes that keeps a real split pays for it against a
single gold class, which is what it claims, not an error.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import xarray as xr

from plausible.data.validation import fmt

FLOOR = 1e-15
N_BINS = 10


def _aligned(probabilities, gold) -> tuple[np.ndarray, np.ndarray]:
    """``(p (n, K), y (n,))`` over the gold items, in the gold's order."""
    if isinstance(probabilities, xr.DataArray):
        if set(probabilities.dims) != {"item", "class"}:
            raise ValueError(f"probabilities must have dims ('item', 'class'), got {probabilities.dims}")
        probabilities = probabilities.transpose("item", "class").to_pandas()
    if not isinstance(probabilities, pd.DataFrame):
        raise TypeError("probabilities must be an (item, class) DataArray or a DataFrame indexed "
                        "by item with a column per class")
    if not isinstance(gold, pd.Series):
        raise TypeError("gold must be a pandas Series of classes indexed by item")
    rows = probabilities.index.get_indexer(gold.index)
    if (rows < 0).any():
        raise ValueError(f"gold item {fmt(gold.index[int(np.argmax(rows < 0))])} has no "
                         "probabilities")
    columns = probabilities.columns.get_indexer(gold.to_numpy())
    if (columns < 0).any():
        at = int(np.argmax(columns < 0))
        raise ValueError(f"gold class {fmt(gold.iloc[at])} of item {fmt(gold.index[at])} is not "
                         f"one of the classes {list(probabilities.columns)}")
    p = probabilities.to_numpy(dtype=np.float64)[rows]
    bad = ~np.isfinite(p).all(axis=1) | (p < 0).any(axis=1)
    if bad.any():
        raise ValueError(f"the probabilities of item {fmt(gold.index[int(np.argmax(bad))])} are "
                         "not finite and non-negative")
    return p, columns


def reliability(probabilities, gold: pd.Series, n_bins: int = N_BINS) -> pd.DataFrame:
    """The top-label reliability table: per equal-width bin of the top probability (bins
    ``[0, 1/B), ..., [(B-1)/B, 1]``), ``confidence`` (mean top probability), ``accuracy``
    (share of its items whose top class is gold) and ``items``; empty bins left out.

    ``probabilities``: an ``(item, class)`` DataArray or a DataFrame indexed by item with a
    column per class; ``gold``: a Series of classes indexed by item (those scored)."""
    return _reliability(*_aligned(probabilities, gold), n_bins)


def _reliability(p: np.ndarray, y: np.ndarray, n_bins: int) -> pd.DataFrame:
    """:func:`reliability` of aligned ``p (n, K)`` and gold class indices ``y (n,)``."""
    top = p.argmax(axis=1)
    confidence = p[np.arange(y.size), top]
    bins = np.minimum((confidence * n_bins).astype(np.int64), n_bins - 1)
    frame = pd.DataFrame({"bin": bins, "confidence": confidence, "accuracy": top == y})
    table = frame.groupby("bin").agg(confidence=("confidence", "mean"),
                                     accuracy=("accuracy", "mean"),
                                     items=("accuracy", "size"))
    table.index = pd.IntervalIndex.from_breaks(np.linspace(0, 1, n_bins + 1), closed="left")[table.index]
    return table.rename_axis("top probability")


def proper_scores(probabilities, gold: pd.Series, n_bins: int = N_BINS) -> pd.Series:
    """``accuracy``, ``brier``, ``log_loss`` and ``ece`` (module docstring) of
    ``probabilities`` against ``gold``, and ``items`` (how many were scored); arguments as
    :func:`reliability`."""
    p, y = _aligned(probabilities, gold)
    rows = np.arange(y.size)
    onehot = np.zeros_like(p)
    onehot[rows, y] = 1.0
    table = _reliability(p, y, n_bins)
    ece = float((table["items"] * (table["accuracy"] - table["confidence"]).abs()).sum() / y.size)
    return pd.Series({"accuracy": float((p.argmax(axis=1) == y).mean()),
                      "brier": float(((p - onehot) ** 2).sum(axis=1).mean()),
                      "log_loss": float(-np.log(np.maximum(p[rows, y], FLOOR)).mean()),
                      "ece": ece, "items": y.size})


__all__ = ["FLOOR", "N_BINS", "proper_scores", "reliability"]
