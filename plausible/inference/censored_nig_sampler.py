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
dispersed per chain; chain ``c`` draws from child ``c`` of ``SeedSequence(seed)`` and runs in a
thread, so the draws depend on the seed only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numba
import numpy as np

from plausible.inference.chains import available_cores, run_chains
from plausible.inference.nig_gibbs import draw_nig_log
from plausible.inference.univariate_slice import slice_update
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


def _chain(seed, item, lower, upper, n_items, prior, fixed, tune, thin, out, *, stop):
    rng = np.random.default_rng(seed)
    augmented = lower < upper
    y = np.where(np.isfinite(lower), lower, upper)  # a start inside every interval's closure
    count = np.bincount(item, minlength=n_items).astype(np.float64)
    mean = np.bincount(item, y, minlength=n_items) / count
    spread = float(np.std(y)) + 1e-3
    mu = mean + spread / np.sqrt(count) * rng.standard_normal(n_items)
    log_sigma2 = np.full(n_items, 2 * math.log(spread)) + rng.uniform(-1, 1, n_items)
    hyper = dict(fixed) if fixed is not None else {
        "mu0": float(mean.mean() + spread * rng.standard_normal()),
        "kappa0": float(np.exp(rng.uniform(-1, 1))), "alpha0": float(2 * np.exp(rng.uniform(-1, 1))),
        "beta0": float(spread**2 * np.exp(rng.uniform(-1, 1)))}
    index = np.flatnonzero(augmented)
    at = item[index]
    for t in range(tune + out["mu"].shape[0] * thin):
        if stop.is_set():
            return
        if fixed is None:
            _draw_hyper(rng, hyper, prior, mu, log_sigma2)
            mu = _shift_locations(rng, hyper, prior, item, lower, upper, mu, log_sigma2, spread)
        mu = _refresh_means(rng, hyper, item, lower, upper, mu, log_sigma2, n_items)
        loc, sd = mu[at], np.exp(0.5 * log_sigma2[at])
        y[index] = truncated_normal_draws(rng, lower[index], upper[index], loc, sd)
        mean = np.bincount(item, y, minlength=n_items) / count
        ss = np.bincount(item, (y - mean[item]) ** 2, minlength=n_items)
        params = conjugate_update(hyper["mu0"], hyper["kappa0"], hyper["alpha0"], hyper["beta0"],
                                  count, count, mean, ss)
        mu, log_sigma2 = draw_nig_log(rng, *params)
        kept = t - tune
        if kept >= 0 and (kept + 1) % thin == 0:
            d = kept // thin
            out["mu"][d], out["sigma2"][d] = mu, np.exp(log_sigma2)
            for name in out.keys() & hyper.keys():
                out[name][d] = hyper[name]


def sample_censored_nig(item, lower, upper, n_items: int, *, prior: Hyperprior | None = None,
                        fixed: dict | None = None, draws: int = 1000, tune: int = DEFAULT_TUNE,
                        chains: int = 4, seed: int | None = None, cores: int | None = None,
                        thin: int = DEFAULT_THIN) -> dict[str, np.ndarray]:
    """Run the sampler (module) on ratings given as intervals ``(lower, upper]`` of their
    latent values (``lower == upper``: known exactly) of items ``item`` ``(rating,)``, with
    ``fixed`` hyper-parameters (a dict of the four) or sampled under ``prior``. Returns
    ``{name: (chain, draw, ...)}`` for ``mu``, ``sigma2`` ``(item,)`` and, when sampled, the
    four hyper-parameters."""
    if (fixed is None) == (prior is None):
        raise ValueError("give either fixed hyper-parameters or their prior")
    if thin < 1 or int(thin) != thin:
        raise ValueError(f"thin must be a positive integer, got {thin!r}")
    item = np.asarray(item, dtype=np.int64)
    lower, upper = (np.asarray(v, dtype=np.float64) for v in (lower, upper))
    names = ["mu", "sigma2"] + ([] if fixed is not None else list(HYPERPARAMETERS))
    out = {name: np.empty((chains, draws, n_items) if name in ("mu", "sigma2") else (chains, draws))
           for name in names}
    jobs = [(seed_c, item, lower, upper, n_items, prior, fixed, int(tune), int(thin),
             {name: value[c] for name, value in out.items()})
            for c, seed_c in enumerate(np.random.SeedSequence(seed).spawn(chains))]
    run_chains(_chain, jobs, min(chains, available_cores() if cores is None else int(cores)))
    return out
