"""Gibbs sampler with data augmentation for Normal–Inverse-Gamma ratings that were censored at
the ends of the rating scale and recorded to a resolution
(:func:`plausible.models.ratings_censored.build`).

Every rating ``x_r`` of item ``i`` reports a latent ``y_r ~ N(mu_i, sigma2_i)`` through an
interval ``(l_r, u_r]`` fixed by the data (:func:`plausible.models.ratings_censored.rating_bins`):
a rating at the scale's floor says ``y_r <= l`` (``l_r = -inf``), one at the ceiling ``y_r >
u`` (``u_r = inf``), and a rating recorded to resolution ``h`` says ``y_r`` lies within ``h/2``
of it; a rating known exactly has ``y_r = x_r`` (``l_r = u_r``). The item parameters have the
NIG prior ``sigma2_i ~ InvGamma(alpha0, beta0)``, ``mu_i | sigma2_i ~ N(mu0, sigma2_i /
kappa0)``, and the hyper-parameters are fixed or have the priors ``mu0 ~ N(m, s^2)``,
``kappa0 ~ Gamma(a_k, b_k)``, ``beta0 ~ Gamma(a_b, b_b)`` and ``alpha0 ~ Gamma(a_a, b_a)``
(shape, rate). Reliability ``gamma`` (a whole number) repeats every rating ``gamma`` times,
each repetition with a latent value of its own. One sweep, vectorised over items and ratings:

1. the hyper-parameters given the items' ``(mu, sigma2)``: ``mu0 ~ N`` (precision ``1/s^2 +
   kappa0 sum_i 1/sigma2_i``), ``kappa0 ~ Gamma(a_k + N/2, b_k + sum_i (mu_i - mu0)^2 / (2
   sigma2_i))``, ``alpha0`` by a slice update of its density with ``beta0`` integrated out,
   ``(a_a - 1) log a - b_a a + log Gamma(a_b + N a) - (a_b + N a) log(b_b + sum_i 1/sigma2_i)
   - N log Gamma(a) - a sum_i log sigma2_i``, then ``beta0 ~ Gamma(a_b + N alpha0, b_b +
   sum_i 1/sigma2_i)``;
2. a Metropolis–Hastings shift of ``mu0`` and all ``mu_i`` together (:func:`_shift_locations`)
   and an independence Metropolis–Hastings update of every ``mu_i`` from its prior
   (:func:`_refresh_means`), both with the latent values integrated out (the likelihood is the
   ratings' interval probabilities, :mod:`plausible.maths.normal_intervals`): they move what
   the augmented Gibbs steps move only in small steps, items whose ratings are all censored
   and a ``mu0`` pinned by items with tiny variances;
3. ``y_r | mu, sigma2`` from ``N(mu_i, sigma2_i)`` truncated to ``(l_r, u_r]``, for every
   rating not known exactly (by inversion, stable far in the tails:
   :func:`plausible.maths.normal_intervals.truncated_normal_draws`);
4. ``(mu_i, sigma2_i) | y, hyper`` exactly from the NIG full conditional
   (:func:`plausible.maths.normal_inverse_gamma.conjugate_update` on the completed ratings).

Step 2's moves leave the posterior with the latent values integrated out invariant, and step 3
then draws those values afresh from their conditional, so the sweep leaves the joint posterior
invariant. With fixed hyper-parameters step 1 and the shift are skipped.

Kept draws store ``mu``, ``sigma2``, the sampled hyper-parameters and the two-class
plausibility at the threshold (:func:`plausible.models.ratings.threshold_plausibility`).
Chains start from the items' means and variances, with the hyper-parameters and the item means
dispersed per chain. :class:`CensoredNIGKernel` is the sweep's kernel
(:mod:`plausible.inference.kernel`), run by the driver or by PyMC.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numba
import numpy as np

from plausible.inference.kernel import PyMCKernel, Variable
from plausible.inference.step_methods.nig_gibbs import draw_nig_log
from plausible.inference.step_methods.univariate_slice import slice_update
from plausible.maths.normal_inverse_gamma import conjugate_update
from plausible.maths.normal_intervals import log_interval_probability, truncated_normal_draws

DEFAULT_TUNE = 500
"""Warm-up sweeps."""
DEFAULT_THIN = 5
"""Sweeps per kept draw: ``beta0`` mixes slowest (bulk ESS about 1 in 50 sweeps on Snow et
al.'s joy ratings without censoring, where headlines rated 0 ten times have tiny variances)."""
HYPERPARAMETERS = ("mu0", "kappa0", "alpha0", "beta0")


@dataclass(frozen=True)
class Hyperprior:
    """Conjugate hyper-priors of the NIG hyper-parameters: ``mu0 ~ N(mu0_mean, mu0_sd^2)`` and
    ``Gamma(shape, rate)`` priors of ``kappa0``, ``alpha0`` and ``beta0``."""

    mu0_mean: float
    mu0_sd: float
    kappa0: tuple[float, float]
    alpha0: tuple[float, float]
    beta0: tuple[float, float]


@numba.njit(cache=True)
def _alpha0_log_density(a, n_items, sum_log_sigma2, sum_inv_sigma2, shape, rate, beta_shape,
                        beta_rate):
    """``log p(alpha0 = a | sigma2)`` up to a constant, ``beta0`` integrated out."""
    total = beta_shape + n_items * a
    return ((shape - 1.0) * math.log(a) - rate * a + math.lgamma(total)
            - total * math.log(beta_rate + sum_inv_sigma2) - n_items * math.lgamma(a)
            - a * sum_log_sigma2)


_alpha0_update = slice_update(_alpha0_log_density)


@numba.njit(cache=True)
def _alpha0_step(rng, a, args):
    """One slice update of ``alpha0`` (width 1, unlimited stepping out); cached to disk with
    the update compiled into it."""
    return _alpha0_update(rng, a, _alpha0_log_density(a, *args), 0.0, np.inf, 1.0, 0, args)[0]


def _draw_hyper(rng, hyper: dict, prior: Hyperprior, mu, log_sigma2) -> None:
    """Step 1 of the module: the hyper-parameters given the items' ``(mu, sigma2)``, in place
    (``alpha0`` with ``beta0`` integrated out, then ``beta0`` given it)."""
    n = mu.size
    inv_sigma2 = np.exp(-log_sigma2)
    precision = 1.0 / prior.mu0_sd**2 + hyper["kappa0"] * inv_sigma2.sum()
    mean = (prior.mu0_mean / prior.mu0_sd**2 + hyper["kappa0"] * (mu * inv_sigma2).sum()) / precision
    hyper["mu0"] = mean + rng.standard_normal() / math.sqrt(precision)
    shape, rate = prior.kappa0
    hyper["kappa0"] = rng.gamma(shape + 0.5 * n) / (
        rate + 0.5 * ((mu - hyper["mu0"]) ** 2 * inv_sigma2).sum())
    args = (float(n), float(log_sigma2.sum()), float(inv_sigma2.sum()), *prior.alpha0,
            *prior.beta0)
    hyper["alpha0"] = _alpha0_step(rng, hyper["alpha0"], args)
    shape, rate = prior.beta0
    hyper["beta0"] = rng.gamma(shape + n * hyper["alpha0"]) / (rate + inv_sigma2.sum())


def _refresh_means(rng, hyper, item, lower, upper, mu, log_sigma2, n_items):
    """Independence Metropolis–Hastings for every ``mu_i`` given ``sigma2_i``, the hyper-
    parameters and the intervals, the latent values integrated out: the proposal is the prior
    ``N(mu0, sigma2_i / kappa0)``, accepted with the ratio of the items' interval
    likelihoods. It moves the items whose ratings are all censored, where the likelihood is
    flat and the latent values and ``mu_i`` otherwise move together slowly."""
    sd = np.exp(0.5 * log_sigma2)
    proposal = hyper["mu0"] + sd / math.sqrt(hyper["kappa0"]) * rng.standard_normal(n_items)
    ratio = np.bincount(item, log_interval_probability(lower, upper, proposal[item], sd[item])
                        - log_interval_probability(lower, upper, mu[item], sd[item]),
                        minlength=n_items)
    accept = np.log(rng.random(n_items)) < ratio
    return np.where(accept, proposal, mu)


def _shift_locations(rng, hyper, prior: Hyperprior, item, lower, upper, mu, log_sigma2, spread):
    """Metropolis–Hastings shift of ``mu0`` and every ``mu_i`` by one ``delta`` (their
    differences, hence the NIG prior of the ``mu_i``, unchanged), the latent values integrated
    out: accepted with the ratio of the ratings' interval likelihoods and of ``mu0``'s prior.
    ``delta ~ N(0, (spread 10^-V)^2)``, ``V ~ U(0, 4)``: a symmetric mixture of scales, for
    when items with tiny variances pin ``mu0`` and the ``mu_i`` to each other, so that the
    Gibbs steps move them together only in tiny steps."""
    delta = spread * 10.0 ** -rng.uniform(0.0, 4.0) * rng.standard_normal()
    sd = np.exp(0.5 * log_sigma2)[item]
    ratio = (log_interval_probability(lower, upper, mu[item] + delta, sd)
             - log_interval_probability(lower, upper, mu[item], sd)).sum()
    ratio += ((hyper["mu0"] - prior.mu0_mean) ** 2
              - (hyper["mu0"] + delta - prior.mu0_mean) ** 2) / (2 * prior.mu0_sd**2)
    if math.log(rng.random()) < ratio:
        hyper["mu0"] += delta
        return mu + delta
    return mu


class CensoredNIGKernel(PyMCKernel):
    """The sweep of the module for ratings given as intervals ``(lower, upper]`` of their
    latent values (``lower == upper``: known exactly) of items ``item`` ``(rating,)``, with
    ``fixed`` hyper-parameters (a dict of the four) or sampled under ``prior``;
    ``plausibility(mu, sigma2) -> (item, class)`` the plausibilities of a draw. State: the
    latent values ``y``, ``mu``, ``log sigma2`` and the hyper-parameters."""

    name = "plausible.models.ratings_censored.sampler"
    default_tune = DEFAULT_TUNE
    default_thin = DEFAULT_THIN
    stats = {}

    def __init__(self, item, lower, upper, n_items: int, *, prior: Hyperprior | None = None,
                 fixed: dict | None = None, plausibility=None, n_classes: int = 2):
        if (fixed is None) == (prior is None):
            raise ValueError("give either fixed hyper-parameters or their prior")
        self.item = np.asarray(item, dtype=np.int64)
        self.lower, self.upper = (np.asarray(v, dtype=np.float64) for v in (lower, upper))
        self.n_items, self.prior, self.fixed = int(n_items), prior, fixed
        self.plausibility = plausibility
        self.index = np.flatnonzero(self.lower < self.upper)  # ratings with a latent value
        self.at = self.item[self.index]
        # a start inside every interval's closure
        self.y0 = np.where(np.isfinite(self.lower), self.lower, self.upper)
        self.count = np.bincount(self.item, minlength=self.n_items).astype(np.float64)
        self.spread = float(np.std(self.y0)) + 1e-3
        per_item = Variable(("item",), (self.n_items,))
        self.variables = {"mu": per_item, "sigma2": per_item,
                          **({} if fixed is not None else
                             {name: Variable((), ()) for name in HYPERPARAMETERS}),
                          **({} if plausibility is None else
                             {"plausibility": Variable(("item", "class"),
                                                       (self.n_items, n_classes))})}

    def start(self, rng):
        """The items' means and a common variance, dispersed, and dispersed
        hyper-parameters."""
        y, n, spread = self.y0.copy(), self.n_items, self.spread
        mean = np.bincount(self.item, y, minlength=n) / self.count
        mu = mean + spread / np.sqrt(self.count) * rng.standard_normal(n)
        log_sigma2 = np.full(n, 2 * math.log(spread)) + rng.uniform(-1, 1, n)
        hyper = dict(self.fixed) if self.fixed is not None else {
            "mu0": float(mean.mean() + spread * rng.standard_normal()),
            "kappa0": float(np.exp(rng.uniform(-1, 1))),
            "alpha0": float(2 * np.exp(rng.uniform(-1, 1))),
            "beta0": float(spread**2 * np.exp(rng.uniform(-1, 1)))}
        return y, mu, log_sigma2, hyper

    def load(self, values, rng):
        """The items' and hyper-parameters' values; the latent values are drawn afresh by
        the sweep before they are read."""
        hyper = dict(self.fixed) if self.fixed is not None else {
            name: float(values[name]) for name in HYPERPARAMETERS}
        return (self.y0.copy(), np.asarray(values["mu"], dtype=np.float64),
                np.log(np.asarray(values["sigma2"], dtype=np.float64)), hyper)

    def to_point(self, state, draw):
        return {name: draw[name] for name in ("mu", "sigma2", *(
            () if self.fixed is not None else HYPERPARAMETERS))}

    def sweep(self, rng, state, out):
        """Steps 1 to 4 of the module."""
        y, mu, log_sigma2, hyper = state
        item, lower, upper, n_items = self.item, self.lower, self.upper, self.n_items
        if self.fixed is None:
            _draw_hyper(rng, hyper, self.prior, mu, log_sigma2)
            mu = _shift_locations(rng, hyper, self.prior, item, lower, upper, mu, log_sigma2,
                                  self.spread)
        mu = _refresh_means(rng, hyper, item, lower, upper, mu, log_sigma2, n_items)
        loc, sd = mu[self.at], np.exp(0.5 * log_sigma2[self.at])
        y[self.index] = truncated_normal_draws(rng, lower[self.index], upper[self.index], loc, sd)
        count = self.count
        mean = np.bincount(item, y, minlength=n_items) / count
        ss = np.bincount(item, (y - mean[item]) ** 2, minlength=n_items)
        params = conjugate_update(hyper["mu0"], hyper["kappa0"], hyper["alpha0"], hyper["beta0"],
                                  count, count, mean, ss)
        mu, log_sigma2 = draw_nig_log(rng, *params)
        if out is not None:
            out["mu"][...], out["sigma2"][...] = mu, np.exp(log_sigma2)
            for name in out.keys() & hyper.keys():
                out[name][...] = hyper[name]
            if "plausibility" in out:
                out["plausibility"][...] = self.plausibility(out["mu"], out["sigma2"])
        return y, mu, log_sigma2, hyper


__all__ = ["CensoredNIGKernel", "DEFAULT_THIN", "DEFAULT_TUNE", "HYPERPARAMETERS", "Hyperprior"]
