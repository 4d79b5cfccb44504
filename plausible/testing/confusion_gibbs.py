"""Joint Gibbs sampler of the classes and the confusion matrix for multi-class testing with
noisy labels (spec 03 §3).

Algorithm 4 (:mod:`plausible.testing.multiclass`) conditions on its estimate of ``K`` and its
intervals leave that estimate's uncertainty out. :func:`confusion_gibbs` samples the joint
posterior of the classes and ``K`` instead (rows ``K[l] ~ Dirichlet(a)`` a priori), by exact
Gibbs:

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

from plausible.diagnostics.estimators import ess_bulk, rhat
from plausible.maths.logspace import log_dirichlet_draws
from plausible.testing.binary import check_likelihood, check_prediction, label_posterior


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
    (:mod:`plausible.diagnostics.estimators`; NaN for a cell constant in every draw)."""

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
    log_K = log_dirichlet_draws(rng, np.broadcast_to(a, (chains, C, C)))  # (chain, l, n)
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
        log_K = log_dirichlet_draws(rng, a + counts.transpose(0, 2, 1))
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
