"""Empirical Bayes for the NIG ratings model: hyper-parameters by maximum marginal likelihood.

``(mu0, kappa0, alpha0, beta0) = argmax sum_i log Z_i`` with ``log Z_i`` the closed-form log
normaliser of item ``i``'s (tempered) NIG posterior
(:func:`plausible.models.ratings.nig.log_marginal_likelihood`; the marginal likelihood for
reliability 1). The sum and its gradient are vectorised over items; L-BFGS-B works on
``theta = (m, log kappa0, log alpha0, log b)`` for scores standardised as
``x' = (x - loc) / scale`` (``mu0 = loc + scale m``, ``beta0 = scale^2 b``). With
``n' = gamma n``, ``d = xbar - m`` and the posterior parameters of the update::

    dL/dm          = sum_i alpha_n kappa0 n' d / (kappa_n beta_n)
    dL/dlog kappa0 = kappa0 sum_i [1/(2 kappa0) - 1/(2 kappa_n) - alpha_n n'^2 d^2 / (2 kappa_n^2 beta_n)]
    dL/dlog alpha0 = alpha0 sum_i [digamma(alpha_n) - digamma(alpha0) + log beta0 - log beta_n]
    dL/dlog b      = b sum_i [alpha0 / b - alpha_n / beta_n]

The maximum exists only when the data show both spread within items (some item with two
different ratings) and items whose means differ; otherwise ``ValueError``. A solution on a
bound of the box (``kappa0``, ``alpha0``, ``b`` in ``[1e-6, 1e6]``) means the likelihood
keeps rising towards a degenerate prior and is reported in ``at_bound`` with a warning.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
from scipy import optimize, special

from plausible.data.validation import positive
from plausible.models.ratings.nig import (
    NIGPrior,
    as_summary,
    conjugate_update,
    log_marginal_likelihood,
)

LOG_BOUND = np.log(1e6)


@dataclass(frozen=True)
class EmpiricalBayesFit:
    """The fitted prior, the maximised ``sum_i log Z_i`` (original units) and the optimiser's
    report; ``at_bound`` names hyper-parameters that ended on a bound of the search box."""

    prior: NIGPrior
    log_marginal_likelihood: float
    converged: bool
    message: str
    at_bound: tuple[str, ...]


def _objective(theta, count, mean, ss, reliability):
    """``-(1/N) sum_i log Z_i`` and its gradient in ``theta`` (standardised scores)."""
    m, kappa0, alpha0, b = theta[0], *np.exp(theta[1:])
    n_eff = reliability * count
    kappa_n, _, alpha_n, beta_n = conjugate_update(m, kappa0, alpha0, b, count, count, mean, ss, reliability)
    d = mean - m
    value = (
        special.gammaln(alpha_n) - special.gammaln(alpha0) + alpha0 * np.log(b)
        - alpha_n * np.log(beta_n) + 0.5 * (np.log(kappa0) - np.log(kappa_n))
    ).sum()
    ratio = alpha_n / beta_n
    grad = np.array([
        (ratio * kappa0 * n_eff * d / kappa_n).sum(),
        kappa0 * (0.5 / kappa0 - 0.5 / kappa_n - ratio * n_eff**2 * d**2 / (2 * kappa_n**2)).sum(),
        alpha0 * (special.digamma(alpha_n) - special.digamma(alpha0) + np.log(b) - np.log(beta_n)).sum(),
        b * (alpha0 / b - ratio).sum(),
    ])
    scale = count.size
    return -value / scale, -grad / scale


def _start(count, mean, ss) -> np.ndarray:
    """Method-of-moments start (standardised scores): ``E sigma2`` = pooled within-item
    variance, ``Var mu`` = between-item variance of the means net of their noise."""
    within = ss.sum() / max((count - 1).sum(), 1)
    between = max(mean.var() - np.mean(within / count), 0.05 * within)
    alpha0 = 3.0
    return np.array([mean.mean(), np.log(within / between), np.log(alpha0), np.log((alpha0 - 1) * within)])


def fit_empirical_bayes(data, *, reliability: float = 1.0, items=None) -> EmpiricalBayesFit:
    """Maximum marginal likelihood NIG hyper-parameters over all items.

    Parameters
    ----------
    data : Ratings or RatingSummary
    reliability : float
        ``gamma``; the objective is the tempered model's normaliser (module docstring),
        so the result is the mode the hierarchical model's hyper-posterior approaches
        under flat hyper-priors.
    items : array_like, optional
        Item ids of a RatingSummary, for error messages.

    Returns
    -------
    EmpiricalBayesFit
    """
    summary, items = as_summary(data, items)
    reliability = positive("reliability", reliability)
    count, mean, ss = summary
    if not (ss > 0).any():
        raise ValueError(
            "empirical Bayes needs spread within items: no item has two different ratings"
        )
    if np.ptp(mean) == 0:
        raise ValueError("empirical Bayes needs items whose mean scores differ; all means are equal")
    loc = float(mean.mean())
    scale = float(np.sqrt(ss.sum() / max((count - 1).sum(), 1)))
    z_mean, z_ss = (mean - loc) / scale, ss / scale**2
    bounds = [(None, None)] + [(-LOG_BOUND, LOG_BOUND)] * 3
    result = optimize.minimize(
        _objective, _start(count, z_mean, z_ss), args=(count, z_mean, z_ss, reliability),
        jac=True, method="L-BFGS-B", bounds=bounds, options={"maxiter": 500},
    )
    m, kappa0, alpha0, b = result.x[0], *np.exp(result.x[1:])
    prior = NIGPrior(mu0=loc + scale * m, kappa0=kappa0, alpha0=alpha0, beta0=b * scale**2)
    at_bound = tuple(
        name for name, x in zip(("kappa0", "alpha0", "beta0"), result.x[1:])
        if abs(abs(x) - LOG_BOUND) < 1e-6
    )
    if at_bound:
        warnings.warn(
            f"empirical Bayes: {', '.join(at_bound)} ended on the bound of the search box "
            "(the marginal likelihood keeps rising towards a degenerate prior)",
            stacklevel=2,
        )
    total = float(log_marginal_likelihood(summary, prior, reliability=reliability, items=items).sum())
    return EmpiricalBayesFit(prior, total, bool(result.success), str(result.message), at_bound)
