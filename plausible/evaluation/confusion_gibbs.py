"""Joint Gibbs sampler of the classes and the confusion matrix for multi-class testing with
noisy labels (Su 2024).

Algorithm 4 (:mod:`plausible.evaluation.multiclass`) conditions on its estimate of ``K`` and its
intervals leave that estimate's uncertainty out. :func:`confusion_gibbs` samples the joint
posterior of the classes and ``K`` instead (rows ``K[l] ~ Dirichlet(a)`` a priori), by exact
Gibbs:

* ``y_i | K ~ Cat(∝ pi_l l_i(l) K[l, yhat_i])``, independently over items;
* ``K[l] | y ~ Dirichlet(a + (#{y = l, yhat = n})_n)``, independently over rows,

so its count intervals carry the uncertainty of ``K``. Checked against the exact posterior
of a tiny case, enumerated with ``K`` integrated out (Dirichlet-multinomial:
``p(y) ∝ prod_i pi_{y_i} l_i(y_i) prod_l B(a + n_l) / B(a)``, ``n_l`` the row
``(#{y = l, yhat = n})_n``), in ``tests/evaluation/test_multiclass.py``.
"""

from __future__ import annotations

from dataclasses import dataclass

import math

import numba
import numpy as np

from plausible.diagnostics.convergence import RHAT_MAX
from plausible.diagnostics.estimators import ess_bulk, rhat
from plausible.inference.driver import run_kernel
from plausible.inference.kernel import Kernel, Variable
from plausible.maths.logspace import log_dirichlet_draws, log_gamma_draw
from plausible.evaluation.binary import check_likelihood, check_prediction, label_posterior


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
        """Every non-constant cell has R-hat at most :data:`~plausible.diagnostics.
        convergence.RHAT_MAX` (Vehtari et al. 2021)."""
        return bool(np.all(self.rhat[np.isfinite(self.rhat)] <= RHAT_MAX))


@numba.njit(nogil=True, cache=True)
def _sweep(rng, log_K, a, P, yhat, counts, posterior, accumulate):  # pragma: no cover - compiled
    """One sweep, in place: every ``y_i | K``, counted in ``counts[n, l] = #{yhat = n, y =
    l}``, then ``K[l] | y ~ Dirichlet(a + counts[:, l])`` into ``log_K`` (rows ``l``, drawn on
    the log scale by :func:`~plausible.maths.logspace.log_gamma_draw`). With ``w_l = P[l, i]
    K[l, yhat_i] / max_l' K[l', yhat_i]`` (exact unless a ratio underflows below ~1e-308),
    ``y_i = #{l < C - 1 : u_i sum_l' w_l' > sum_{l' <= l} w_l'}``, ``u_i ~ U(0, 1)``. With
    ``accumulate``, ``posterior[:, i] += w / sum w`` (the Rao-Blackwellised ``p(y_i | K,
    yhat_i, z_i)``)."""
    C, N = P.shape
    scaled = np.empty((C, C))
    for n in range(C):
        top = -np.inf
        for l in range(C):
            top = max(top, log_K[l, n])
        for l in range(C):
            scaled[l, n] = math.exp(log_K[l, n] - top)
    counts[:] = 0
    w = np.empty(C)
    for i in range(N):
        n = yhat[i]
        total = 0.0
        for l in range(C):
            w[l] = P[l, i] * scaled[l, n]
            total += w[l]
        target = rng.random() * total
        y, cdf = 0, w[0]
        for l in range(1, C):
            if target > cdf:
                y += 1
            cdf += w[l]
        counts[n, y] += 1
        if accumulate:
            for l in range(C):
                posterior[l, i] += w[l] / total
    for l in range(C):
        top = -np.inf
        for n in range(C):
            log_K[l, n] = log_gamma_draw(rng, a[n] + counts[n, l])
            top = max(top, log_K[l, n])
        total = 0.0
        for n in range(C):
            total += math.exp(log_K[l, n] - top)
        norm = top + math.log(total)
        for n in range(C):
            log_K[l, n] -= norm


class ConfusionKernel(Kernel):
    """The sweep of :func:`confusion_gibbs` for one chain (a kernel of
    :mod:`plausible.inference.kernel`): ``P (class, item)`` the classes' probabilities given
    the labels only, ``yhat (item,)`` the predictions, ``a (class,)`` the rows' prior. State:
    ``log K (l, n)``, the sum over kept sweeps of ``p(y_i | K, yhat_i, z_i)`` and buffers."""

    name = "plausible.evaluation.confusion_gibbs"
    default_tune = 200
    default_thin = 1

    def __init__(self, P: np.ndarray, yhat: np.ndarray, a: np.ndarray):
        self.P, self.yhat = P, yhat
        self.a = np.ascontiguousarray(a, dtype=np.float64)
        C, N = P.shape
        self.variables = {"confusion": Variable(("class", "prediction"), (C, C)),
                          "counts": Variable(("prediction", "class"), (C, C), np.int64)}
        self.stats = {}
        self.chain_stats = {"class_posterior": Variable(("item", "class"), (N, C))}

    def start(self, rng):
        """``K`` drawn from its prior (dispersed starts)."""
        C, N = self.P.shape
        return {"log_K": log_dirichlet_draws(rng, np.broadcast_to(self.a, (C, C))),
                "posterior": np.zeros((C, N)), "kept": 0,
                "counts": np.empty((C, C), dtype=np.int64)}

    def sweep(self, rng, st, out):
        """``y | K``, then ``K | y``: one compiled pass (:func:`_sweep`)."""
        kept = out is not None
        _sweep(rng, st["log_K"], self.a, self.P, self.yhat, st["counts"], st["posterior"], kept)
        if kept:
            out["confusion"][...] = np.exp(st["log_K"])
            out["counts"][...] = st["counts"]
            st["kept"] += 1
        return st

    def finish(self, st, out):
        out["class_posterior"][...] = st["posterior"].T / max(st["kept"], 1)


def confusion_gibbs(likelihood, prior, prediction, *, draws: int = 1000, tune: int = 200,
                    chains: int = 4, concentration=1.0, mass: float = 0.95, log: bool = False,
                    seed=None, cores: int | None = None) -> ConfusionGibbsResult:
    """Joint posterior of the classes ``y`` ``(item,)`` and the confusion matrix ``K``
    ``(C, C)`` (rows ``K[l] = P(yhat | y = l) ~ Dirichlet(concentration)``, a scalar or
    ``(C,)``) given ``likelihood`` ``l_i(y)`` ``(item, class)`` (log-likelihoods with
    ``log=True``), the class ``prior`` ``pi`` ``(C,)`` and ``prediction`` ``yhat``
    ``(item,)``, by the exact Gibbs sampler of the module docstring.

    ``chains`` chains (:class:`ConfusionKernel`, run by :mod:`plausible.inference.driver`:
    each from its own seed, in ``cores`` threads), each started from its own draw of ``K``
    from the prior (dispersed starts) and iterated ``tune`` times before ``draws`` kept
    iterations; iteration ``t`` draws ``y^(t) | K^(t-1)``, then ``K^(t) | y^(t)``, and keeps
    ``K^(t)`` with the counts of ``y^(t)``.

    The class draw is one compiled pass over the items per sweep (:func:`_class_sweep`), by
    inversion with one uniform per item.
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
    values = run_kernel(ConfusionKernel(P, np.asarray(yhat, dtype=np.int64), a), draws=draws,
                        chains=chains, seed=seed, tune=tune, cores=cores)
    K_draws, count_draws = values["confusion"], values["counts"]
    lo, hi = np.quantile(count_draws, [(1 - mass) / 2, (1 + mass) / 2], axis=(0, 1),
                         method="inverted_cdf")
    return ConfusionGibbsResult(
        K_draws, count_draws, K_draws.mean(axis=(0, 1)), values["class_posterior"].mean(axis=0),
        count_draws.mean(axis=(0, 1)), count_draws.std(axis=(0, 1)), np.stack([lo, hi]),
        rhat(count_draws), ess_bulk(count_draws))
