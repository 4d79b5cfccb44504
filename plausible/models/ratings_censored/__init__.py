"""Normal–Inverse-Gamma ratings censored at the ends of the rating scale and recorded to a
resolution: the ratings model for sliders with a floor (Snow et al.'s emotion ratings, 0..100,
57–74 % of them exactly 0).

Each rating ``x_r`` of item ``i`` reports a latent intensity ``y_r ~ N(mu_i, sigma2_i)``:

* **censored** (default) at the declared scale ``[l, u]``: a rating at the floor says only
  ``y_r <= l``, one at the ceiling ``y_r > u`` (a Tobit likelihood). The Gaussian model of
  :mod:`plausible.models.ratings` instead puts the floor's pile of ratings at ``y_r = 0``
  exactly, so ten zeros drive an item's ``sigma2`` to 0 and its replicated ratings below the
  floor;
* **recorded to a resolution** ``h`` (``resolution=h``; e.g. 1 for integer sliders): every
  rating says ``y_r`` lies within ``h/2`` of it (the floor's interval reaches down to
  ``-inf``, the ceiling's up to ``inf`` when censored). Without a resolution the interior
  ratings are exact values (a density), with one they are probabilities of their intervals,
  so models of the same recorded ratings compare with LOO whether or not they censor.

``censored=False`` keeps the Gaussian (on the real line), with or without a resolution: the
base model of the comparison on the same observation scale. The intervals are
:func:`rating_bins`.

The item parameters have the NIG prior ``sigma2_i ~ InvGamma(alpha0, beta0)``, ``mu_i |
sigma2_i ~ N(mu0, sigma2_i / kappa0)``; the hyper-parameters are fixed (an
:class:`~plausible.models.ratings.nig.NIGPrior`) or sampled (``prior="hierarchical"``,
default) under conjugate hyper-priors scaled to the data (:func:`default_hyperprior`).
Reliability ``gamma`` repeats every rating ``gamma`` times (a whole number).

**Plausibility** as in the Gaussian model: at threshold ``t`` the classes ``below`` and
``at_or_above`` get ``(Phi((t - mu_i)/sigma_i), 1 - Phi((t - mu_i)/sigma_i))`` per draw, and the
top-1 class is ``[mu_i >= t]``: the latent intensity's mean, on the scale's units, below or above
``t``. An item every rater put at the floor has ``mu_i`` below the floor, as far as the
population allows.

Inference: the compiled route is the Gibbs sampler with data augmentation of
:mod:`plausible.models.ratings_censored.sampler` (exact NIG draws of the items given the latent
values); ``compiled=False`` leaves the PyMC model (intervals in the likelihood, nothing
augmented) to NUTS, the independent check. :func:`log_likelihood` is ``gamma sum_r log P(x_r |
mu_i, sigma2_i)`` per rating (the interval probability, or the density of an exact rating), and
:func:`replicate_ratings` replicates the recorded ratings for the predictive checks.
"""

from __future__ import annotations

import functools

import numpy as np
import pymc as pm
import pytensor.tensor as pt
import xarray as xr
from scipy import sparse

from plausible.data.ratings import Ratings
from plausible.data.tables import reads
from plausible.data.validation import fmt, positive, positive_integer
from plausible.models.ratings_censored.sampler import CensoredNIGKernel, Hyperprior
from plausible.inference.declarations import declare_log_likelihood
from plausible.inference.bridges.as_pymc_step import declare_kernel
from plausible.maths.normal_intervals import log_interval_probability
from plausible.metrics.chunks import iter_sample_blocks
from plausible.models.ratings import replicate_ratings as gaussian_replicates
from plausible.models.ratings import threshold_plausibility
from plausible.models.ratings.consensus import consensus
from plausible.models.ratings.nig import CLASSES, NIGPrior, check_threshold
from plausible.models.model_entry import ModelEntry


def check_scale(ratings: Ratings, scale) -> tuple[float, float]:
    """``(low, high)`` from ``scale`` or the ratings' declared scale; ``ValueError`` when
    neither is given or a rating lies outside."""
    scale = ratings.scale if scale is None else scale
    if scale is None:
        raise ValueError("censoring needs the rating scale (low, high): declare it on the "
                         "ratings or pass scale= (--scale on the command line)")
    low, high = float(scale[0]), float(scale[1])
    if not (np.isfinite(low) and np.isfinite(high) and low < high):
        raise ValueError(f"scale must be finite (low, high) with low < high, got {scale!r}")
    outside = (ratings.score < low) | (ratings.score > high)
    if outside.any():
        k = int(np.argmax(outside))
        raise ValueError(f"item {fmt(ratings.items[ratings.item[k]])}, annotator "
                         f"{fmt(ratings.annotators[ratings.annotator[k]])}: score "
                         f"{ratings.score[k]:g} outside the scale [{low:g}, {high:g}]")
    return low, high


def rating_bins(ratings: Ratings, *, scale=None, resolution: float | None = None,
                censored: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """``(lower, upper)`` float64 ``(rating,)``: the interval ``(lower, upper]`` of each
    rating's latent value (``lower == upper``: known exactly), as the module describes."""
    return _intervals(ratings.score, **recording(ratings, scale=scale, resolution=resolution,
                                                 censored=censored))


def _intervals(score, *, censor_low: float, censor_high: float, resolution: float,
               grid_anchor: float) -> tuple[np.ndarray, np.ndarray]:
    """:func:`rating_bins` from the :data:`RECORDING` values: ``score -+ resolution / 2``
    (the score itself at resolution 0), open below at the floor and above at the ceiling (at
    resolution 0 closed at the floor or ceiling itself)."""
    lower, upper = score - 0.5 * resolution, score + 0.5 * resolution
    at_floor, at_ceiling = score <= censor_low, score >= censor_high
    if resolution == 0:
        upper = np.where(at_floor, censor_low, upper)
        lower = np.where(at_ceiling, censor_high, lower)
    return np.where(at_floor, -np.inf, lower), np.where(at_ceiling, np.inf, upper)


def default_hyperprior(ratings: Ratings) -> Hyperprior:
    """Weakly informative conjugate hyper-priors scaled to the data: with ``m`` the mean of the
    item means, ``s`` the sd of all ratings and ``s_w^2`` the pooled within-item variance,
    ``mu0 ~ N(m, (2 s)^2)``, ``kappa0 ~ Gamma(1, 1)`` (a prior "sample size" near 1),
    ``alpha0 ~ Gamma(2, 0.5)`` and ``beta0 ~ Gamma(1, 1 / (2 s_w^2))`` (exponential, mean
    ``2 s_w^2``)."""
    count, mean, ss = ratings.per_item()
    dof = (count - 1).sum()
    spread = float(np.std(ratings.score)) or 1.0
    within = float(ss.sum() / dof) if dof > 0 and ss.sum() > 0 else spread**2
    return Hyperprior(mu0_mean=float(mean.mean()), mu0_sd=2 * spread, kappa0=(1.0, 1.0),
                      alpha0=(2.0, 0.5), beta0=(1.0, 1.0 / (2 * within)))


def _log_likelihood_terms(lower: np.ndarray, upper: np.ndarray, loc, sd):
    """pytensor ``log P(x_r | loc_r, sd_r)`` ``(rating,)``: the density of an exact rating,
    ``log Phi`` of a floor's or a ceiling's open interval, and ``log(Phi(b) - Phi(a))`` of a
    finite one with both ends moved into the lower tail (as
    :mod:`plausible.maths.normal_intervals` does). The groups are split before any infinity
    enters the graph, whose gradient would otherwise be ``nan``."""
    standard = pm.Normal.dist(0.0, 1.0)
    terms = pt.zeros(lower.size)
    exact = lower == upper
    floor, ceiling = np.isneginf(lower), np.isposinf(upper)
    finite = ~exact & ~floor & ~ceiling
    if exact.any():
        terms = pt.set_subtensor(terms[exact], pm.logp(pm.Normal.dist(loc[exact], sd[exact]),
                                                       lower[exact]))
    if floor.any():
        terms = pt.set_subtensor(terms[floor], pm.logcdf(standard, (upper[floor] - loc[floor])
                                                         / sd[floor]))
    if ceiling.any():
        terms = pt.set_subtensor(terms[ceiling], pm.logcdf(
            standard, (loc[ceiling] - lower[ceiling]) / sd[ceiling]))
    if finite.any():
        a = (lower[finite] - loc[finite]) / sd[finite]
        b = (upper[finite] - loc[finite]) / sd[finite]
        flip = a > 0
        a, b = pt.switch(flip, -b, a), pt.switch(flip, -a, b)
        terms = pt.set_subtensor(terms[finite], pm.math.logdiffexp(pm.logcdf(standard, b),
                                                                   pm.logcdf(standard, a)))
    return terms


@reads("ratings")
def build(ratings: Ratings, *, threshold: float, scale=None, resolution: float | None = None,
          censored: bool = True, prior="hierarchical", reliability: int = 1,
          compiled: bool = True) -> pm.Model:
    """PyMC model of censored (and/or rounded) NIG ratings (module). Free variables: ``mu``,
    ``sigma2`` ``(item,)`` and the sampled ``mu0``, ``kappa0``, ``alpha0``, ``beta0``;
    ``plausibility (item, class)``.

    Parameters
    ----------
    ratings : Ratings
        Long ratings; ``ratings.scale`` is the censoring scale unless ``scale`` is given.
    threshold : float
        ``t`` of the classes ``below`` and ``at_or_above``.
    scale : (low, high), optional
        The rating scale's ends (needed when ``censored``).
    resolution : float, optional
        ``h``: ratings were recorded to ``h`` (1 for an integer slider).
    censored : bool
        Censor at the scale's ends; False keeps the Gaussian.
    prior : "hierarchical", NIGPrior or Hyperprior
        Sampled hyper-parameters under :func:`default_hyperprior` (or the given
        :class:`~plausible.models.ratings_censored.sampler.Hyperprior`), or fixed ones (a proper
        ``NIGPrior``).
    reliability : int
        ``gamma``, a whole number of repetitions of every rating.
    compiled : bool
        :func:`plausible.sample` runs the Gibbs sampler with augmentation; False leaves the
        model to NUTS.
    """
    if not isinstance(ratings, Ratings):
        raise TypeError(f"build needs a Ratings, got {type(ratings).__name__}")
    threshold = check_threshold(threshold)
    gamma = positive_integer("reliability", reliability,
                             "the augmented sampler repeats every rating gamma times")
    recorded = recording(ratings, scale=scale, resolution=resolution, censored=censored)
    lower, upper = _intervals(ratings.score, **recorded)
    if isinstance(prior, str):
        if prior != "hierarchical":
            raise ValueError(f"prior must be 'hierarchical', a Hyperprior or an NIGPrior, got {prior!r}")
        prior = default_hyperprior(ratings)
    if isinstance(prior, NIGPrior):
        if not prior.proper:
            raise ValueError("the censored ratings model needs a proper NIG prior "
                             "(kappa0, alpha0, beta0 > 0)")
        fixed, hyperprior = prior.as_dict(), None
    elif isinstance(prior, Hyperprior):
        fixed, hyperprior = None, prior
    else:
        raise TypeError(f"prior must be 'hierarchical', a Hyperprior or an NIGPrior, got "
                        f"{type(prior).__name__}")

    with pm.Model(coords={"item": ratings.items, "class": list(CLASSES)}) as model:
        pm.Data("reliability", float(gamma))
        t = pm.Data("threshold", threshold)
        for name, value in recorded.items():
            pm.Data(name, value)
        if fixed is not None:
            hyper = {name: pm.Data(name, value) for name, value in fixed.items()}
        else:
            hyper = {"mu0": pm.Normal("mu0", hyperprior.mu0_mean, hyperprior.mu0_sd)}
            for name in ("kappa0", "alpha0", "beta0"):
                shape, rate = getattr(hyperprior, name)
                hyper[name] = pm.Gamma(name, alpha=shape, beta=rate)
        sigma2 = pm.InverseGamma("sigma2", alpha=hyper["alpha0"], beta=hyper["beta0"], dims="item")
        mu = pm.Normal("mu", mu=hyper["mu0"], sigma=pt.sqrt(sigma2 / hyper["kappa0"]), dims="item")
        loc, sd = mu[ratings.item], pt.sqrt(sigma2)[ratings.item]
        pm.Potential("ratings", gamma * _log_likelihood_terms(lower, upper, loc, sd).sum())
        pm.Deterministic("plausibility", threshold_plausibility(mu, sigma2, t),
                         dims=("item", "class"))
    if compiled:
        constant = {"reliability": float(gamma), "threshold": threshold, **recorded,
                    **(fixed or {})}
        declare_kernel(model, _kernel(ratings, lower, upper, gamma, threshold, hyperprior, fixed),
                       coords={"item": ratings.items, "class": list(CLASSES)},
                       constant_data=constant)
    declare_log_likelihood(model, "ratings", lambda trace: log_likelihood(trace, ratings, lower, upper),
                           observed=ratings.to_dataarray(), dim="rating")
    return model


def _kernel(ratings: Ratings, lower, upper, repetitions: int, threshold: float, prior, fixed
            ) -> CensoredNIGKernel:
    """The augmented Gibbs sweep of :func:`build`'s model: every rating repeated
    ``repetitions`` times."""
    return CensoredNIGKernel(
        np.tile(ratings.item, repetitions), np.tile(lower, repetitions),
        np.tile(upper, repetitions), ratings.n_items, prior=prior, fixed=fixed,
        plausibility=functools.partial(threshold_plausibility, threshold=threshold),
        n_classes=len(CLASSES))


def log_likelihood(trace, ratings: Ratings, lower, upper) -> xr.DataArray:
    """Per-rating ``gamma log P(x_r | mu_i, sigma2_i)``, ``(chain, draw, rating)``: the
    interval probability of every rating (the density of an exact one), in blocks of draws.
    Per rating, as for the Gaussian model (:func:`plausible.models.ratings.log_likelihood`
    says why)."""
    posterior = trace["posterior"]
    gamma = float(trace["constant_data"]["reliability"])
    shape = (posterior.sizes["chain"], posterior.sizes["draw"])
    out = np.empty((shape[0] * shape[1], ratings.n_ratings))
    mu = posterior["mu"].transpose("chain", "draw", "item")
    sigma2 = posterior["sigma2"].transpose("chain", "draw", "item")
    for samples, index in iter_sample_blocks(shape, 4 * ratings.n_ratings):
        loc = np.asarray(mu.data[index])[:, ratings.item]
        sd = np.sqrt(np.asarray(sigma2.data[index]))[:, ratings.item]
        out[samples] = gamma * log_interval_probability(lower, upper, loc, sd)
    return xr.DataArray(out.reshape(*shape, ratings.n_ratings), dims=("chain", "draw", "rating"),
                        coords={"chain": posterior["chain"].values,
                                "draw": posterior["draw"].values,
                                **ratings.to_dataarray().coords})


def item_log_likelihood(trace, ratings: Ratings, *, draws: int = 200, samples: int = 2000,
                        seed: int | None = 0) -> xr.DataArray:
    """Per item, the log-probability of its recorded ratings (times the reliability ``gamma``
    inside, as :func:`log_likelihood`) with the item's own ``mu_i, sigma2_i`` integrated out
    over the population, ``(chain, draw, item)`` at ``draws``
    evenly thinned draws per chain: ``log E[prod_r P(x_r | mu, sigma2)]`` over ``(mu,
    sigma2) ~ NIG(mu0, kappa0, alpha0, beta0)`` of the draw, by Monte Carlo with ``samples``
    prior draws (a log of a mean: biased low by about the estimate's relative variance over
    2, small at a few thousand for tens of coarse ratings per item).

    What PSIS-LOO compares with a label model's per-item likelihood, whose latent class is
    summed out the same way: with the item's own parameters kept (:func:`log_likelihood`
    summed per item), leaving an item out removes every rating that informs them, and the
    importance ratios fail (Pareto k above 0.7 for most items). Needs the sampled
    hyper-parameters (the default ``prior="hierarchical"``); the recording (scale ends,
    resolution) is read from the trace's ``constant_data``."""
    posterior = trace["posterior"]
    hyper = ("mu0", "kappa0", "alpha0", "beta0")
    if not all(name in posterior.data_vars for name in hyper):
        raise ValueError("item_log_likelihood integrates over the population's sampled "
                         "hyper-parameters (mu0, kappa0, alpha0, beta0): fit with "
                         "prior='hierarchical'")
    constant = trace["constant_data"]
    gamma = float(constant["reliability"])
    lower, upper = _intervals(ratings.score, **{k: float(constant[k]) for k in RECORDING})
    if np.any(lower == upper):
        raise ValueError("item_log_likelihood needs ratings recorded to a resolution (interval "
                         "probabilities), not exact values")
    chains, n_draws = posterior.sizes["chain"], posterior.sizes["draw"]
    kept = np.unique(np.linspace(0, n_draws - 1, min(int(draws), n_draws)).round().astype(int))
    values = {name: posterior[name].transpose("chain", "draw").values[:, kept].reshape(-1)
              for name in hyper}
    # the ratings take few distinct intervals (a grid): each interval's log-probability once,
    # then counted into the items, (item, interval) @ (interval, sample)
    bins, which = np.unique(np.stack([lower, upper], axis=1), axis=0, return_inverse=True)
    counts = sparse.csr_matrix((np.ones(ratings.n_ratings), (ratings.item, which.ravel())),
                               shape=(ratings.n_items, bins.shape[0]))
    rng = np.random.default_rng(seed)
    M = positive_integer("samples", samples)
    out = np.empty((values["mu0"].size, ratings.n_items))
    for block, _ in iter_sample_blocks((out.shape[0],), (bins.shape[0] + ratings.n_items) * M):
        n = block.stop - block.start
        sigma2 = values["beta0"][block, None] / rng.gamma(values["alpha0"][block, None], 1.0,
                                                         (n, M))
        mu = values["mu0"][block, None] + np.sqrt(sigma2 / values["kappa0"][block, None]) * \
            rng.standard_normal((n, M))
        log_p = gamma * log_interval_probability(bins[:, :1, None], bins[:, 1:, None],
                                                 mu[None], np.sqrt(sigma2)[None])
        per_item = (counts @ log_p.reshape(bins.shape[0], n * M)).reshape(ratings.n_items, n, M)
        top = per_item.max(axis=2, keepdims=True)
        out[block] = (top[..., 0] + np.log(np.exp(per_item - top).mean(axis=2))).T
    return xr.DataArray(out.reshape(chains, kept.size, ratings.n_items),
                        dims=("chain", "draw", "item"),
                        coords={"chain": posterior["chain"].values,
                                "draw": posterior["draw"].values[kept], "item": ratings.items})


RECORDING = ("censor_low", "censor_high", "resolution", "grid_anchor")
"""How latent values become recorded ratings, in ``constant_data``: clipped to ``[censor_low,
censor_high]`` (infinite without censoring), rounded to multiples of ``resolution`` from
``grid_anchor`` (no rounding at resolution 0)."""


def recording(ratings: Ratings, *, scale=None, resolution: float | None = None,
              censored: bool = True) -> dict[str, float]:
    """The :data:`RECORDING` values of the model's options."""
    low, high = check_scale(ratings, scale) if censored else (-np.inf, np.inf)
    declared = scale if scale is not None else ratings.scale
    anchor = float(declared[0]) if declared is not None else 0.0
    return {"censor_low": low, "censor_high": high,
            "resolution": 0.0 if resolution is None else positive("resolution", resolution),
            "grid_anchor": anchor}


def record(latent, *, censor_low: float, censor_high: float, resolution: float,
           grid_anchor: float) -> np.ndarray:
    """Latent values as recorded (:data:`RECORDING`): rounded to the grid, then clipped."""
    out = np.asarray(latent, dtype=np.float64)
    if resolution > 0:
        out = grid_anchor + resolution * np.round((out - grid_anchor) / resolution)
    return np.clip(out, censor_low, censor_high)


def replicate_ratings(trace, ratings: Ratings, *, draws: int = 500, seed: int | None = None
                      ) -> np.ndarray:
    """Replicated ratings in the observed design, float ``(sample, rating)``: the Gaussian
    model's replicated latent values (:func:`plausible.models.ratings.replicate_ratings`, the
    same draws and stream) recorded by :func:`record` as the trace's ``constant_data`` says."""
    latent = gaussian_replicates(trace, ratings, draws=draws, seed=seed)
    constant = trace["constant_data"]
    return record(latent, **{name: float(constant[name]) for name in RECORDING})


__all__ = ["RECORDING", "build", "check_scale",
           "default_hyperprior", "log_likelihood", "rating_bins", "record",
           "recording", "replicate_ratings"]


ENTRIES = (
    ModelEntry("censored-normal-inverse-gamma", build, "ratings", "repetitions",
               False, "NIG ratings censored at the scale's ends (and recorded to a "
               "resolution), learned hyper-parameters: Gibbs with data augmentation",
               required=("threshold",), replicate=replicate_ratings,
               consensus=consensus),
)
"""The registry entries of this family (:mod:`plausible.models.registry`)."""
