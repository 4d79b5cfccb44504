"""Multi-class testing with noisy labels (Algorithm 4 of Su 2024).

Confusion matrix ``K[l, n] = P(yhat = n | y = l)``; label posterior
``p(y | yhat_i, z_i) ∝ K[y, yhat_i] l_i(y) pi(y)``
(:func:`plausible.evaluation.binary.label_posterior`). Algorithm 4: start ``K = 1/C``; repeat:
draw ``M = 2500 C`` label vectors from the label posteriors, average their empirical
conditional confusion matrices, project each row onto ``{x : alpha <= x <= 1 - alpha,
sum x = 1}``, until the max change < ``tol``.

With ``P = p(y | yhat, z)`` ``(item, class)`` and items independent, the count confusion
matrix ``C[n, l] = #{yhat = n, y = l}`` has cells that are sums of independent Bernoullis:
mean ``sum_{yhat_i = n} P[i, l]``, variance ``sum_{yhat_i = n} P[i, l] (1 - P[i, l])``
(approximately normal); accuracy ``(1/N) sum_i 1[y_i = yhat_i]`` has mean
``(1/N) sum_i P[i, yhat_i]`` and variance ``(1/N^2) sum_i P[i, yhat_i](1 - P[i, yhat_i])``.
Checked against sampled label vectors in ``tests/evaluation/test_multiclass.py``.

Algorithm 4's intervals condition on its estimate of ``K`` and leave that estimate's
uncertainty out (they under-cover, ``tests/evaluation/test_studies.py``);
:func:`plausible.evaluation.confusion_gibbs.confusion_gibbs` samples the joint posterior of the
classes and ``K`` instead.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from plausible.evaluation.binary import check_likelihood, check_prediction, label_posterior


def project_rows(K, alpha: float) -> np.ndarray:
    """Euclidean projection of each row of ``K`` ``(C, C)`` onto
    ``{alpha <= x <= 1 - alpha, sum x = 1}``: ``x = clip(k - tau, alpha, 1 - alpha)`` with the
    row's ``tau`` found by bisection (vectorised over rows)."""
    K = np.asarray(K, dtype=np.float64)
    C = K.shape[1]
    if not 0 <= alpha * C <= 1:
        raise ValueError(f"alpha = {alpha} is infeasible for {C} classes (need alpha <= 1/C)")
    lo = (K.min(axis=1) - 1)[:, None]
    hi = K.max(axis=1)[:, None]
    for _ in range(100):
        tau = 0.5 * (lo + hi)
        too_big = np.clip(K - tau, alpha, 1 - alpha).sum(axis=1, keepdims=True) > 1
        lo = np.where(too_big, tau, lo)
        hi = np.where(too_big, hi, tau)
    return np.clip(K - 0.5 * (lo + hi), alpha, 1 - alpha)


def sample_classes(posterior, n_samples: int, seed=None, chunk: int = 500):
    """``(n_samples, item)`` int labels, ``y_i ~ Cat(posterior[i])`` independently, in chunks."""
    rng = np.random.default_rng(seed)
    P = np.asarray(posterior, dtype=np.float64)
    cdf = np.cumsum(P, axis=1)
    cdf[:, -1] = 1.0
    out = np.empty((n_samples, P.shape[0]), dtype=np.int64)
    for s in range(0, n_samples, chunk):
        u = rng.random((min(chunk, n_samples - s), P.shape[0], 1))
        out[s:s + u.shape[0]] = (u > cdf[None, :, :-1]).sum(axis=2)
    return out


def sampled_confusion_counts(y, prediction, n_classes) -> np.ndarray:
    """``(M, C_yhat, C_y)`` counts ``#{yhat = n, y = l}`` of label vectors ``y`` ``(M, item)``."""
    M = y.shape[0]
    idx = (np.arange(M)[:, None] * n_classes + prediction[None, :]) * n_classes + y
    return np.bincount(idx.ravel(), minlength=M * n_classes**2).reshape(M, n_classes, n_classes)


def sample_confusion_counts(posterior, prediction, n_samples: int, seed=None,
                            chunk: int = 500) -> np.ndarray:
    """``(n_samples, C_yhat, C_y)`` count matrices ``#{yhat = n, y = l}`` of label vectors
    ``y_i ~ Cat(posterior[i])`` drawn independently, without materialising the labels.

    With ``F_i(l) = sum_{k <= l} posterior[i, k]`` and ``u_i ~ U(0, 1)``, ``y_i > l`` iff
    ``u_i > F_i(l)``, so ``G[n, l] = #{yhat_i = n, u_i > F_i(l)}`` (``G[n, -1]`` the group
    size, ``G[n, C - 1] = 0``) gives ``#{yhat = n, y = l} = G[n, l - 1] - G[n, l]``: the
    distribution of ``sampled_confusion_counts(sample_classes(posterior, M), prediction, C)``
    at ``C - 1`` comparisons per item and draw.
    """
    P = np.asarray(posterior, dtype=np.float64)
    N, C = P.shape
    yhat = check_prediction(prediction, N, C)
    rng = np.random.default_rng(seed)
    order = np.argsort(yhat, kind="stable")
    cdf = np.cumsum(P[order], axis=1)[:, :-1]  # (item sorted by yhat, C - 1)
    sizes = np.bincount(yhat, minlength=C)
    bounds = np.r_[0, np.cumsum(sizes)]
    out = np.empty((n_samples, C, C), dtype=np.int64)
    for s in range(0, n_samples, chunk):
        u = rng.random((min(chunk, n_samples - s), N))
        G = np.zeros((u.shape[0], C, C + 1), dtype=np.int64)  # (draw, n, threshold + 1)
        G[:, :, 0] = sizes
        for n in range(C):
            group = slice(bounds[n], bounds[n + 1])
            for l in range(C - 1):
                G[:, n, l + 1] = np.count_nonzero(u[:, group] > cdf[group, l], axis=1)
        out[s:s + u.shape[0]] = G[:, :, :-1] - G[:, :, 1:]
    return out


@dataclass(frozen=True)
class MulticlassResult:
    """Algorithm 4's outcome. ``confusion`` ``(C, C)`` = ``P(yhat = n | y = l)`` (rows ``l``);
    ``posterior`` ``(item, class)``; ``counts_mean``, ``counts_sd``, ``counts_interval``
    ``(2, C, C)``: the count confusion matrix ``C[n, l]`` (rows ``yhat``), its sd and 95 %
    normal intervals; ``accuracy`` a frozen ``scipy.stats.norm``."""

    confusion: np.ndarray
    iterations: int
    converged: bool
    posterior: np.ndarray
    counts_mean: np.ndarray
    counts_sd: np.ndarray
    counts_interval: np.ndarray
    accuracy: object


def count_moments(posterior, prediction):
    """``(mean, variance)`` ``(C, C)`` of ``C[n, l] = #{yhat = n, y = l}`` and the accuracy
    normal, from independent per-item posteriors ``(item, class)``."""
    P = np.asarray(posterior, dtype=np.float64)
    N, C = P.shape
    yhat = check_prediction(prediction, N, C)
    onehot = np.eye(C)[yhat]  # (item, n)
    mean = onehot.T @ P
    var = onehot.T @ (P * (1 - P))
    hit = P[np.arange(N), yhat]
    acc = stats.norm(hit.mean(), np.sqrt((hit * (1 - hit)).sum()) / N)
    return mean, var, acc


def algorithm_multiclass(likelihood, prior, prediction, *, n_samples=None, log=False, tol=1e-3,
                         j_max=30, alpha=1e-3, seed=None) -> MulticlassResult:
    """Algorithm 4 (see the module docstring); ``n_samples`` defaults to ``2500 C``."""
    L = check_likelihood(likelihood, log)
    N, C = L.shape
    yhat = check_prediction(prediction, N, C)
    M = 2500 * C if n_samples is None else int(n_samples)
    rng = np.random.default_rng(seed)
    K = np.full((C, C), 1.0 / C)
    converged = False
    j = 0
    while j < j_max:
        P = label_posterior(L, prior, yhat, K, log=True)
        counts = sample_confusion_counts(P, yhat, M, rng)  # (M, n, l)
        per_class = counts.sum(axis=1, keepdims=True)
        with np.errstate(invalid="ignore", divide="ignore"):
            cond = counts / per_class  # P(yhat = n | y = l) per draw, (M, n, l)
        new = project_rows(np.nan_to_num(np.nanmean(cond, axis=0), nan=1.0 / C).T, alpha)
        j += 1
        change = np.abs(new - K).max()
        K = new
        if change < tol:
            converged = True
            break
    P = label_posterior(L, prior, yhat, K, log=True)
    mean, var, acc = count_moments(P, yhat)
    sd = np.sqrt(var)
    z = stats.norm.ppf(0.975)
    return MulticlassResult(K, j, converged, P, mean, sd, np.stack([mean - z * sd, mean + z * sd]),
                            acc)
