"""Closed-form Normal–Inverse-Gamma (NIG) maths for numeric ratings (Stutz et al. 2023).

Per item ``i`` with ratings ``x_i1..x_in``::

    sigma2_i ~ InvGamma(alpha0, beta0),   mu_i | sigma2_i ~ N(mu0, sigma2_i / kappa0),
    x_ij | mu_i, sigma2_i ~ N(mu_i, sigma2_i)          (log-likelihood times gamma)

Reliability ``gamma`` multiplies the ratings' log-likelihood, which in the conjugate update
replaces ``n -> gamma n`` and the sum of squared deviations ``SS -> gamma SS``. With
``w = gamma n`` and the item mean ``xbar`` (both unchanged by ``gamma``)::

    kappa_n = kappa0 + w
    mu_n    = (kappa0 mu0 + w xbar) / kappa_n
    alpha_n = alpha0 + gamma n / 2
    beta_n  = beta0 + gamma SS / 2 + kappa0 w (xbar - mu0)^2 / (2 kappa_n)

and ``mu_i | x ~ Student-t(df = 2 alpha_n, loc = mu_n, scale^2 = beta_n / (alpha_n kappa_n))``,
``sigma2_i | x ~ InvGamma(alpha_n, beta_n)``. The log normaliser of the tempered model (the
log marginal likelihood for ``gamma = 1``)::

    log Z = lgamma(alpha_n) - lgamma(alpha0) + alpha0 log beta0 - alpha_n log beta_n
            + (log kappa0 - log kappa_n) / 2 - (gamma n / 2) log(2 pi)

Precision-weighted ratings (annotator scales, :mod:`plausible.models.ratings`) use the
same update with ``n`` the count and ``w = gamma sum_j weight_j``.

Improper limits are allowed where the posterior stays proper: ``kappa0 = 0`` (flat in
``mu``; the prior density is then ``(sigma2)^-(alpha0 + 3/2) exp(-beta0 / sigma2)``) and
``beta0 = 0`` or ``alpha0 <= 0``. :meth:`NIGPrior.reference` is Jeffreys' prior
``p(mu, sigma2) ∝ 1/sigma2`` (``kappa0 = 0, alpha0 = -1/2, beta0 = 0``), under which an item
needs ``gamma n > 1`` and a non-zero spread (classically: two different ratings).
All functions are vectorised over items; arrays are ``(item,)``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import xarray as xr
from scipy import special, stats

from plausible.data.validation import fmt, positive, raise_first
from plausible.data.ratings import Ratings, RatingSummary
from plausible.inference.step_methods.nig_gibbs import draw_nig
from plausible.maths.normal_inverse_gamma import conjugate_update

CLASSES = ("below", "at_or_above")
"""Classes of the thresholded plausibility: ``mu < t`` and ``mu >= t``."""


@dataclass(frozen=True)
class NIGPrior:
    """Hyper-parameters ``(mu0, kappa0, alpha0, beta0)`` of the NIG prior.

    Proper when ``kappa0, alpha0, beta0 > 0``; ``kappa0 = 0``, ``beta0 = 0`` and
    ``alpha0 <= 0`` are the improper limits described in the module docstring.
    """

    mu0: float
    kappa0: float
    alpha0: float
    beta0: float

    def __post_init__(self):
        for name in ("mu0", "kappa0", "alpha0", "beta0"):
            value = getattr(self, name)
            if not isinstance(value, (int, float, np.integer, np.floating)) or isinstance(value, bool) \
                    or not np.isfinite(value):
                raise ValueError(f"NIG prior: {name} must be a finite number, got {value!r}")
            object.__setattr__(self, name, float(value))
        if self.kappa0 < 0 or self.beta0 < 0:
            raise ValueError(
                f"NIG prior: kappa0 and beta0 must be >= 0, got kappa0={self.kappa0}, beta0={self.beta0}"
            )

    @property
    def proper(self) -> bool:
        """``kappa0``, ``alpha0`` and ``beta0`` all positive (a proper prior)."""
        return self.kappa0 > 0 and self.alpha0 > 0 and self.beta0 > 0

    @classmethod
    def reference(cls) -> NIGPrior:
        """Jeffreys' independence prior ``p(mu, sigma2) ∝ 1/sigma2`` (improper)."""
        return cls(mu0=0.0, kappa0=0.0, alpha0=-0.5, beta0=0.0)

    def as_dict(self) -> dict[str, float]:
        """The four hyper-parameters by name: ``mu0``, ``kappa0``, ``alpha0``, ``beta0``."""
        return {"mu0": self.mu0, "kappa0": self.kappa0, "alpha0": self.alpha0, "beta0": self.beta0}


def check_threshold(threshold) -> float:
    value = np.asarray(threshold, dtype=float)
    if value.shape != () or not np.isfinite(value):
        raise ValueError(f"threshold must be a finite number, got {threshold!r}")
    return float(value)


def as_summary(data, items=None) -> tuple[RatingSummary, np.ndarray]:
    """Per-item sufficient statistics and item ids from :class:`Ratings` or a
    :class:`RatingSummary` (validated: counts >= 1, finite means, finite SS >= 0)."""
    if isinstance(data, Ratings):
        return data.per_item(), data.items if items is None else np.asarray(items)
    if not isinstance(data, RatingSummary):
        raise TypeError(f"expected Ratings or RatingSummary, got {type(data).__name__}")
    count = np.asarray(data.count)
    mean = np.asarray(data.mean, dtype=np.float64)
    ss = np.asarray(data.sum_sq_dev, dtype=np.float64)
    if not count.ndim == mean.ndim == ss.ndim == 1 or not count.shape == mean.shape == ss.shape:
        raise ValueError(
            f"count, mean, sum_sq_dev must be 1-D of equal length, got {count.shape}, "
            f"{mean.shape}, {ss.shape}"
        )
    items = np.arange(count.size) if items is None else np.asarray(items)
    if items.shape != count.shape:
        raise ValueError(f"{items.size} item ids for {count.size} items")
    if count.dtype.kind not in "iu":
        raise ValueError(f"count must hold integers, got dtype {count.dtype}")
    raise_first(count < 1, lambda i: f"item {fmt(items[i])} has {count[i]} ratings (needs >= 1)")
    raise_first(~np.isfinite(mean), lambda i: f"item {fmt(items[i])}: mean score {mean[i]} is not finite")
    raise_first(
        ~(np.isfinite(ss) & (ss >= 0)),
        lambda i: f"item {fmt(items[i])}: sum of squared deviations {ss[i]} is not finite and >= 0",
    )
    return RatingSummary(count.astype(np.int64), mean, ss), items


@dataclass(frozen=True)
class NIGPosterior:
    """Per-item NIG posterior: ``kappa_n, mu_n, alpha_n, beta_n`` float64 ``(item,)``.

    ``mu ~ Student-t(2 alpha_n, mu_n, sqrt(beta_n / (alpha_n kappa_n)))``,
    ``sigma2 ~ InvGamma(alpha_n, beta_n)``, ``mu | sigma2 ~ N(mu_n, sigma2 / kappa_n)``.
    """

    kappa_n: np.ndarray
    mu_n: np.ndarray
    alpha_n: np.ndarray
    beta_n: np.ndarray
    items: np.ndarray | None = None
    """Item ids ``(item,)``; default ``0..n-1``."""

    def __post_init__(self):
        arrays = np.broadcast_arrays(*(np.asarray(getattr(self, name), dtype=np.float64)
                                       for name in ("kappa_n", "mu_n", "alpha_n", "beta_n")))
        if arrays[0].ndim != 1:
            raise ValueError(f"NIG posterior parameters must be 1-D (item,), got shape {arrays[0].shape}")
        for name, value in zip(("kappa_n", "mu_n", "alpha_n", "beta_n"), arrays):
            object.__setattr__(self, name, value)
        items = np.arange(arrays[0].size) if self.items is None else np.asarray(self.items)
        if items.shape != arrays[0].shape:
            raise ValueError(f"{items.size} item ids for {arrays[0].size} items")
        object.__setattr__(self, "items", items)

    @property
    def n_items(self) -> int:
        """Number of items."""
        return self.mu_n.size

    @property
    def mu_scale(self) -> np.ndarray:
        """Scale of the Student-t marginal of ``mu``: ``sqrt(beta_n / (alpha_n kappa_n))``."""
        return np.sqrt(self.beta_n / (self.alpha_n * self.kappa_n))

    def mu_marginal(self):
        """Frozen ``scipy.stats.t`` of ``mu`` per item (vectorised)."""
        return stats.t(df=2 * self.alpha_n, loc=self.mu_n, scale=self.mu_scale)

    def sigma2_marginal(self):
        """Frozen ``scipy.stats.invgamma`` of ``sigma2`` per item."""
        return stats.invgamma(a=self.alpha_n, scale=self.beta_n)

    def moments(self) -> dict[str, np.ndarray]:
        """Posterior means and variances (NaN where they do not exist):
        ``E mu = mu_n``, ``Var mu = beta_n / (kappa_n (alpha_n - 1))`` (``alpha_n > 1``),
        ``E sigma2 = beta_n / (alpha_n - 1)`` (``alpha_n > 1``),
        ``Var sigma2 = E[sigma2]^2 / (alpha_n - 2)`` (``alpha_n > 2``)."""
        a = self.alpha_n
        with np.errstate(divide="ignore", invalid="ignore"):
            mean_sigma2 = np.where(a > 1, self.beta_n / (a - 1), np.nan)
            return {
                "mu_mean": self.mu_n,
                "mu_var": mean_sigma2 / self.kappa_n,
                "sigma2_mean": mean_sigma2,
                "sigma2_var": np.where(a > 2, mean_sigma2**2 / (a - 2), np.nan),
            }

    def prob_below(self, threshold: float) -> np.ndarray:
        """``P(mu < t | x)`` per item from the Student-t marginal."""
        return special.stdtr(2 * self.alpha_n, (threshold - self.mu_n) / self.mu_scale)

    def certainty(self, threshold: float) -> xr.DataArray:
        """Closed-form annotation certainty ``max(P(mu < t), P(mu >= t))`` per item.

        float64 ``("item",)``, named ``annotation_certainty`` like
        :func:`plausible.metrics.annotation_certainty`.
        """
        below = self.prob_below(threshold)
        value = np.maximum(below, 1.0 - below)
        return xr.DataArray(
            value, dims=("item",), coords={"item": self.items}, name="annotation_certainty",
            attrs={"top": 1, "threshold": float(threshold)},
        )

    def sample(self, rng: np.random.Generator, draws: int) -> tuple[np.ndarray, np.ndarray]:
        """``draws`` exact posterior draws ``(mu, sigma2)``, each float64 ``(draws, item)``."""
        return draw_nig(rng, self.kappa_n, self.mu_n, self.alpha_n, self.beta_n, size=(draws, self.n_items))


def check_proper(kappa_n, alpha_n, beta_n, count, items, prior: NIGPrior, reliability: float) -> None:
    """Raise ``ValueError`` naming the first item whose posterior is improper
    (``kappa_n, alpha_n, beta_n`` must all be > 0)."""
    need = max(1, int(np.floor(-2 * prior.alpha0 / reliability)) + 1)

    def message(i: int) -> str:
        if alpha_n[i] <= 0 or kappa_n[i] <= 0:
            return (
                f"item {fmt(items[i])} has {count[i]} rating(s); this prior "
                f"(alpha0={prior.alpha0:g}, kappa0={prior.kappa0:g}) at reliability "
                f"{reliability:g} needs at least {need}"
            )
        return (
            f"item {fmt(items[i])}: all {count[i]} ratings are equal; with beta0=0 the "
            "posterior of sigma2 is improper (needs ratings that differ, or beta0 > 0)"
        )

    raise_first(~((kappa_n > 0) & (alpha_n > 0) & (beta_n > 0)), message)


def nig_posterior(data, prior: NIGPrior, *, reliability: float = 1.0, items=None) -> NIGPosterior:
    """Conjugate NIG posterior of every item.

    Parameters
    ----------
    data : Ratings or RatingSummary
        Ratings (long) or their per-item sufficient statistics ``(count, mean, SS)``.
    prior : NIGPrior
    reliability : float
        ``gamma > 0``, the power of the ratings' likelihood.
    items : array_like, optional
        Item ids for a RatingSummary (default ``0..n-1``); used in errors and coords.

    Raises ``ValueError`` naming the first item with too few ratings for an improper prior.
    """
    summary, items = as_summary(data, items)
    reliability = positive("reliability", reliability)
    count, mean, ss = summary
    params = conjugate_update(*prior.as_dict().values(), count, count, mean, ss, reliability)
    kappa_n, mu_n, alpha_n, beta_n = (np.asarray(p, dtype=np.float64) for p in params)
    check_proper(kappa_n, alpha_n, beta_n, count, items, prior, reliability)
    return NIGPosterior(kappa_n, mu_n, alpha_n, beta_n, items)


def log_marginal_likelihood(data, prior: NIGPrior, *, reliability: float = 1.0, items=None) -> np.ndarray:
    """``log Z`` per item (module docstring), float64 ``(item,)``; needs a proper prior.

    For ``gamma = 1`` this is ``log p(x_i1..x_in | mu0, kappa0, alpha0, beta0)``; otherwise
    the log normaliser of the tempered posterior, whose sum over items is what empirical
    Bayes maximises and what the hierarchical model's hyper-posterior is proportional to.
    """
    if not prior.proper:
        raise ValueError(f"the marginal likelihood needs a proper prior, got {prior}")
    summary, _ = as_summary(data, items)
    reliability = positive("reliability", reliability)
    count, mean, ss = summary
    kappa_n, _, alpha_n, beta_n = conjugate_update(
        *prior.as_dict().values(), count, count, mean, ss, reliability
    )
    return (
        special.gammaln(alpha_n) - special.gammaln(prior.alpha0)
        + prior.alpha0 * np.log(prior.beta0) - alpha_n * np.log(beta_n)
        + 0.5 * (np.log(prior.kappa0) - np.log(kappa_n))
        - 0.5 * reliability * count * np.log(2 * np.pi)
    )
