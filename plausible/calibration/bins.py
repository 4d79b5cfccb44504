"""Equal-width binning and the binned calibration loss, plug-in and debiased (Mimori et al. 2021).

Predictions ``p_i`` in ``[0, 1]`` fall into ``B`` equal-width bins
``[0, 1/B), [1/B, 2/B), ..., [(B-1)/B, 1]`` (the last bin closed; values are assigned
with ``np.digitize`` on the inner edges, so anything below 0 lands in the first bin
and anything above 1 in the last). With targets ``t_i`` (per item, an unbiased estimate
of the quantity ``p_i`` predicts: ``muhat_ik`` for a CPE, the disagreement U-statistic
for a DPE) and ``N`` items, bin ``b`` holding ``m_b`` items contributes

    plug-in   CL_b = (m_b / N) (tbar_b - pbar_b)^2
    bias      c_b  = s_b^2 / N                 (only bins with m_b >= 2; else 0)
    debiased  CL_b - c_b

where ``s_b^2`` is the within-bin sample variance (ddof 1) of the targets (``within =
"labels"``, the paper's rule). Viewing the items of a bin as i.i.d. draws
given the bin, ``E (tbar_b - pbar_b)^2 = (E[t - p | b])^2 + Var(t - p | b) / m_b``, so
the exactly unbiased correction uses the sample variance of the residuals ``t_i - p_i``
(``within = "residuals"``); the two differ by ``Var(p | b) / N`` per bin, at most
``1 / (4 B^2 N)`` -- negligible against the label noise, but stated.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

#: The spec's number of bins.
N_BINS = 15
WITHIN = ("labels", "residuals")


def bin_edges(n_bins: int = N_BINS) -> np.ndarray:
    """``(n_bins + 1,)`` equal-width edges on ``[0, 1]``."""
    if int(n_bins) != n_bins or n_bins < 1:
        raise ValueError(f"n_bins must be a positive integer, got {n_bins!r}")
    return np.linspace(0.0, 1.0, int(n_bins) + 1)


def bin_index(values, n_bins: int = N_BINS) -> np.ndarray:
    """Bin of each value: int64, ``edges[b] <= v < edges[b + 1]``, the last bin closed."""
    return np.digitize(np.asarray(values, dtype=float), bin_edges(n_bins)[1:-1]).astype(np.int64)


def binned_calibration(target, prediction, n_bins: int = N_BINS, within: str = "labels") -> pd.DataFrame:
    """Per-bin calibration loss of ``prediction`` against ``target``.

    Both ``(item,)``, or both ``(item, column)`` to bin every column (class) separately
    with the same ``N`` (class-wise calibration; the dataset value sums over columns).

    Returns a DataFrame with one row per (column, bin): ``column`` (only for 2-D input),
    ``bin``, ``lower``, ``upper``, ``count`` (``m_b``), ``mean_prediction``,
    ``mean_target`` (NaN for empty bins), ``within_var`` (``s_b^2``, NaN for bins with
    fewer than 2 items), ``cl_plugin``, ``cl_bias`` and ``cl_debiased`` (their sums are
    the dataset values). ``within`` picks the variance the bias term uses (module
    docstring).
    """
    if within not in WITHIN:
        raise ValueError(f"within must be one of {WITHIN}, got {within!r}")
    t = np.asarray(target, dtype=float)
    p = np.asarray(prediction, dtype=float)
    if t.shape != p.shape or t.ndim not in (1, 2):
        raise ValueError(
            f"target and prediction must be 1-D or 2-D of one shape, got {t.shape} and {p.shape}"
        )
    flat = t.ndim == 1
    if flat:
        t, p = t[:, None], p[:, None]
    edges = bin_edges(n_bins)
    n_bins = edges.size - 1
    n, n_cols = t.shape
    size = n_cols * n_bins
    key = (bin_index(p, n_bins) + n_bins * np.arange(n_cols)).ravel()  # column-major bins
    t, p = t.ravel(), p.ravel()
    count = np.bincount(key, minlength=size)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_t = np.bincount(key, t, size) / count
        mean_p = np.bincount(key, p, size) / count
    spread = t - mean_t[key] if within == "labels" else (t - p) - (mean_t - mean_p)[key]
    ss = np.bincount(key, spread**2, size)
    s2 = np.where(count >= 2, ss / np.maximum(count - 1, 1), 0.0)
    gap = np.where(count > 0, mean_t - mean_p, 0.0)
    cl_plugin = count / max(n, 1) * gap**2
    cl_bias = s2 / max(n, 1)
    table = pd.DataFrame(
        {
            "column": np.repeat(np.arange(n_cols), n_bins),
            "bin": np.tile(np.arange(n_bins), n_cols),
            "lower": np.tile(edges[:-1], n_cols),
            "upper": np.tile(edges[1:], n_cols),
            "count": count,
            "mean_prediction": mean_p,
            "mean_target": mean_t,
            "within_var": np.where(count >= 2, s2, np.nan),
            "cl_plugin": cl_plugin,
            "cl_bias": cl_bias,
            "cl_debiased": cl_plugin - cl_bias,
        }
    )
    return table.drop(columns="column") if flat else table
