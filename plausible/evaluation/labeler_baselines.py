"""Per-labeler baselines (Su 2024): each labeler's labels taken as the truth on the items
it labeled, reported per labeler, as their mean and median, and for joint metrics as the
Vardi–Zhang multivariate (spatial) median."""

from __future__ import annotations

import numpy as np

from plausible.data.labels import Labels
from plausible.evaluation.binary import METRICS, check_prediction, metrics_from_uv


def per_labeler_metrics(labels: Labels, prediction, beta: float = 1.0) -> dict:
    """``{metric: (labeler,)}`` of ``prediction`` ``(item,)`` against each labeler's labels on
    the items it labeled (binary; replicated labels all count). NaN where undefined."""
    if labels.n_classes != 2:
        raise ValueError(f"per-labeler binary metrics need 2 classes, got {labels.n_classes}")
    yhat = check_prediction(prediction, labels.n_items, 2)[labels.item]
    y = labels.label == 1
    T = labels.n_annotators
    count = np.bincount(labels.annotator, minlength=T).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        u = np.bincount(labels.annotator, weights=y & (yhat == 1), minlength=T) / count
        v = np.bincount(labels.annotator, weights=y & (yhat == 0), minlength=T) / count
        n1 = np.bincount(labels.annotator, weights=yhat == 1, minlength=T) / count
        return metrics_from_uv(u, v, n1, beta)


def vardi_zhang_median(points, *, tol: float = 1e-10, max_iter: int = 1000) -> np.ndarray:
    """Spatial median ``argmin_m sum_k ||x_k - m||`` of ``points`` ``(n, d)`` by the Vardi–Zhang
    (2000) modified Weiszfeld iteration, which stays correct when the iterate hits a data point:
    ``T(m) = sum_{x_k != m} w_k x_k / sum w_k`` (``w_k = 1 / ||x_k - m||``),
    ``m <- max(0, 1 - eta / r) T(m) + min(1, eta / r) m`` with ``eta`` the multiplicity of ``m``
    among the points and ``r = ||sum_{x_k != m} w_k (x_k - m)||``."""
    x = np.asarray(points, dtype=np.float64)
    if x.ndim != 2 or x.shape[0] < 1:
        raise ValueError(f"points must be (n, d) with n >= 1, got shape {x.shape}")
    x = x[np.all(np.isfinite(x), axis=1)]
    if x.shape[0] == 0:
        raise ValueError("no point with all coordinates finite")
    m = x.mean(axis=0)
    for _ in range(max_iter):
        dist = np.linalg.norm(x - m, axis=1)
        at = dist < 1e-14
        w = 1 / dist[~at]
        if w.size == 0:
            return m
        t = (w[:, None] * x[~at]).sum(0) / w.sum()
        eta = at.sum()
        r = np.linalg.norm((w[:, None] * (x[~at] - m)).sum(0))
        ratio = eta / r if r > 0 else 0.0
        new = max(0.0, 1 - ratio) * t + min(1.0, ratio) * m
        if np.linalg.norm(new - m) < tol:
            return new
        m = new
    return m


def labeler_summary(labels: Labels, prediction, beta: float = 1.0) -> dict:
    """``{"each": {metric: (labeler,)}, "mean": {...}, "median": {...}, "joint_median":
    {"precision_recall": (2,), "operating_point": (2,)}}`` (NaNs skipped)."""
    each = per_labeler_metrics(labels, prediction, beta)
    return {
        "each": each,
        "mean": {k: float(np.nanmean(each[k])) for k in METRICS},
        "median": {k: float(np.nanmedian(each[k])) for k in METRICS},
        "joint_median": {
            "precision_recall": vardi_zhang_median(np.c_[each["precision"], each["recall"]]),
            "operating_point": vardi_zhang_median(np.c_[each["recall"], each["p_fa"]]),
        },
    }
