"""Multi-class testing with noisy labels (spec 03 §3, Algorithm 4 of Su 2024).

Confusion matrix ``K[l, n] = P(yhat = n | y = l)``; label posterior
``p(y | yhat_i, z_i) ∝ K[y, yhat_i] l_i(y) pi(y)``
(:func:`plausible.metrics.testing.label_posterior`). Algorithm 4: start ``K = 1/C``; repeat:
draw ``M = 2500 C`` label vectors from the label posteriors, average their empirical
conditional confusion matrices, project each row onto ``{x : alpha <= x <= 1 - alpha,
sum x = 1}``, until the max change < ``tol``.

With ``P = p(y | yhat, z)`` ``(item, class)`` and items independent, the count confusion
matrix ``C[n, l] = #{yhat = n, y = l}`` has cells that are sums of independent Bernoullis:
mean ``sum_{yhat_i = n} P[i, l]``, variance ``sum_{yhat_i = n} P[i, l] (1 - P[i, l])``
(approximately normal); accuracy ``(1/N) sum_i 1[y_i = yhat_i]`` has mean
``(1/N) sum_i P[i, yhat_i]`` and variance ``(1/N^2) sum_i P[i, yhat_i](1 - P[i, yhat_i])``.
Checked against sampled label vectors in ``tests/test_testing_multiclass.py``.

Algorithm 4's intervals condition on its estimate of ``K`` and leave that estimate's
uncertainty out (they under-cover, ``tests/test_testing_study.py``).
:func:`confusion_gibbs` samples the joint posterior of the classes and ``K`` instead (rows
``K[l] ~ Dirichlet(a)`` a priori), by exact Gibbs:

* ``y_i | K ~ Cat(∝ pi_l l_i(l) K[l, yhat_i])``, independently over items;
* ``K[l] | y ~ Dirichlet(a + (#{y = l, yhat = n})_n)``, independently over rows,

so its count intervals carry the uncertainty of ``K``. Checked against the exact posterior
of a tiny case, enumerated with ``K`` integrated out (Dirichlet-multinomial:
``p(y) ∝ prod_i pi_{y_i} l_i(y_i) prod_l B(a + n_l) / B(a)``, ``n_l`` the row
``(#{y = l, yhat = n})_n``), in ``tests/test_testing_multiclass.py``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from plausible.diagnostics.convergence import ess_bulk, rhat
from plausible.metrics.testing import check_likelihood, check_prediction, label_posterior


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


@dataclass(frozen=True)
class ConfusionGibbsResult:
    """Outcome of :func:`confusion_gibbs`; ``C`` classes, ``S`` chains of ``D`` kept draws.

    ``confusion_draws`` ``(S, D, C, C)``: ``K[l, n] = P(yhat = n | y = l)`` (rows ``l``);
    ``count_draws`` ``(S, D, C, C)`` int: ``C[n, l] = #{yhat = n, y = l}`` (rows ``yhat``,
    each row summing to its group size); ``confusion`` ``(C, C)`` the posterior mean of
    ``K``; ``posterior`` ``(item, class)``: ``p(y_i | yhat, z)``, the Rao-Blackwellised mean
    over the draws of ``p(y_i | K, yhat_i, z_i)``; ``counts_mean``, ``counts_sd`` ``(C, C)``
    and ``counts_interval`` ``(2, C, C)``: mean, sd and central ``mass`` interval (the
    ``(1 -+ mass) / 2`` quantiles of the draws, inverted CDF, so integer bounds holding at
    least ``mass``) of every cell; ``rhat``, ``ess_bulk`` ``(C, C)``: rank-normalised split
    R-hat and bulk ESS of the count cells over the chains
    (:mod:`plausible.diagnostics.convergence`; NaN for a cell constant in every draw)."""

    confusion_draws: np.ndarray
    count_draws: np.ndarray
    confusion: np.ndarray
    posterior: np.ndarray
    counts_mean: np.ndarray
    counts_sd: np.ndarray
    counts_interval: np.ndarray
    rhat: np.ndarray
    ess_bulk: np.ndarray

    @property
    def accuracy(self) -> np.ndarray:
        """``(S, D)`` draws of the accuracy ``(1/N) sum_n C[n, n]``."""
        counts = self.count_draws
        return np.trace(counts, axis1=2, axis2=3) / counts[0, 0].sum()

    @property
    def converged(self) -> bool:
        """Every non-constant cell has R-hat <= 1.01 (Vehtari et al. 2021)."""
        return bool(np.all(self.rhat[np.isfinite(self.rhat)] <= 1.01))


def _log_dirichlet(rng, alpha) -> np.ndarray:
    """``log`` of Dirichlet draws over the last axis with parameters ``alpha`` (> 0), by
    ``log G = log G' + log(U) / alpha`` with ``G' ~ Gamma(alpha + 1)``, ``U ~ U(0, 1)`` (so
    that ``G ~ Gamma(alpha)`` does not underflow for small ``alpha``), normalised in log space."""
    log_gamma = np.log(rng.standard_gamma(alpha + 1)) + np.log(rng.random(alpha.shape)) / alpha
    log_gamma -= log_gamma.max(axis=-1, keepdims=True)
    return log_gamma - np.log(np.exp(log_gamma).sum(axis=-1, keepdims=True))


def confusion_gibbs(likelihood, prior, prediction, *, draws: int = 1000, tune: int = 200,
                    chains: int = 4, concentration=1.0, mass: float = 0.95, log: bool = False,
                    seed=None) -> ConfusionGibbsResult:
    """Joint posterior of the classes ``y`` ``(item,)`` and the confusion matrix ``K``
    ``(C, C)`` (rows ``K[l] = P(yhat | y = l) ~ Dirichlet(concentration)``, a scalar or
    ``(C,)``) given ``likelihood`` ``l_i(y)`` ``(item, class)`` (log-likelihoods with
    ``log=True``), the class ``prior`` ``pi`` ``(C,)`` and ``prediction`` ``yhat``
    ``(item,)``, by the exact Gibbs sampler of the module docstring.

    ``chains`` chains run side by side, each started from its own draw of ``K`` from the
    prior (dispersed starts) and iterated ``tune`` times before ``draws`` kept iterations;
    iteration ``t`` draws ``y^(t) | K^(t-1)``, then ``K^(t) | y^(t)``, and keeps ``K^(t)``
    with the counts of ``y^(t)``. Seeded by ``seed`` (one generator for all chains).

    Vectorised over chains and items (a Python loop over iterations and classes only): with
    ``P = p(y | z)`` (labels only), ``w[s, l, i] = P[i, l] K_s[l, yhat_i] / max_l'
    K_s[l', yhat_i]`` (the column scaling keeps the largest factor at 1; exact unless a ratio
    underflows below ~1e-308), ``y_i = #{l < C - 1 : u_i sum_l' w[l'] > sum_{l' <= l} w[l']}``
    with ``u_i ~ U(0, 1)``; the buffers are reused across iterations.
    """
    L = check_likelihood(likelihood, log)
    N, C = L.shape
    yhat = check_prediction(prediction, N, C)
    a = np.broadcast_to(np.asarray(concentration, dtype=np.float64), (C,))
    if not np.all(a > 0):
        raise ValueError(f"concentration must be > 0, got {concentration}")
    if chains < 2 or draws < 4 or tune < 0:
        raise ValueError(f"need chains >= 2 (for R-hat), draws >= 4, tune >= 0; got {chains}, "
                         f"{draws}, {tune}")
    if not 0 < mass < 1:
        raise ValueError(f"mass must lie in (0, 1), got {mass}")
    P = np.ascontiguousarray(label_posterior(L, prior, log=True).T)  # p(y_i = l | z_i), (l, item)
    rng = np.random.default_rng(seed)
    log_K = _log_dirichlet(rng, np.broadcast_to(a, (chains, C, C)))  # (chain, l, n)
    cell = (np.arange(chains)[:, None] * C + yhat) * C  # flat (chain, n, 0) index, (chain, item)
    K_draws = np.empty((chains, draws, C, C))
    count_draws = np.empty((chains, draws, C, C), dtype=np.int64)
    posterior = np.zeros((C, N))
    w = np.empty((chains, C, N))
    total, u, cdf = (np.empty((chains, N)) for _ in range(3))
    y = np.empty((chains, N), dtype=np.int64)
    for t in range(tune + draws):
        np.take(np.exp(log_K - log_K.max(axis=1, keepdims=True)), yhat, axis=2, out=w)
        w *= P
        w.sum(axis=1, out=total)
        rng.random(out=u)
        u *= total
        y[:] = 0
        cdf[:] = w[:, 0]
        for l in range(1, C):
            y += u > cdf
            cdf += w[:, l]
        counts = np.bincount((cell + y).ravel(), minlength=chains * C * C).reshape(
            chains, C, C)  # (chain, n, l)
        log_K = _log_dirichlet(rng, a + counts.transpose(0, 2, 1))
        if t >= tune:
            K_draws[:, t - tune] = np.exp(log_K)
            count_draws[:, t - tune] = counts
            w /= total[:, None]
            posterior += w.sum(axis=0)
    lo, hi = np.quantile(count_draws, [(1 - mass) / 2, (1 + mass) / 2], axis=(0, 1),
                         method="inverted_cdf")
    return ConfusionGibbsResult(
        K_draws, count_draws, K_draws.mean(axis=(0, 1)), posterior.T / (chains * draws),
        count_draws.mean(axis=(0, 1)), count_draws.std(axis=(0, 1)), np.stack([lo, hi]),
        rhat(count_draws), ess_bulk(count_draws))
