"""Normal–Inverse-Gamma (NIG) model for numeric ratings (Stutz et al. 2023).

Per item ``i``: ``sigma2_i ~ InvGamma(alpha0, beta0)``, ``mu_i | sigma2_i ~ N(mu0, sigma2_i / kappa0)``
and ratings ``x_r ~ N(mu_i, sigma2_i)`` whose log-likelihood is multiplied by the
reliability ``gamma`` (the conjugate update then uses ``gamma n`` and ``gamma SS``; maths in
:mod:`plausible.models.ratings.nig`). The hyper-parameters ``(mu0, kappa0, alpha0, beta0)``
are

* fixed (a :class:`NIGPrior`, including Jeffreys' improper :meth:`NIGPrior.reference`),
* ``"empirical"``: estimated by maximum marginal likelihood over all items
  (:func:`fit_empirical_bayes`), then fixed, or
* ``"hierarchical"`` (or a dict mixing fixed values and hyper-prior factories): sampled.

``plausible.sample`` draws ``(mu, sigma2)`` with the exact :class:`NIGGibbs` step, which reads
the *current* hyper-parameters (and annotator offsets) from the point, and NUTS samples
whatever else is free, in one run. With fixed hyper-parameters every draw is exact.

**Plausibility.** A threshold ``t`` turns ``(mu, sigma2)`` into two classes
``("below", "at_or_above")`` with, per draw, ``(Phi((t - mu)/sigma), 1 - Phi((t - mu)/sigma))``:
the deterministic ``plausibility (item, class)``, so every metric of
:mod:`plausible.metrics` reads the trace. The top-1 class of a draw is ``[mu >= t]`` (the
measure-zero tie ``mu = t`` goes to ``below``, the metrics' lowest-index rule), hence
annotation certainty ``max(P(mu < t), P(mu >= t))``, in closed form from the Student-t
marginal (:meth:`NIGPosterior.certainty`), streamed for huge data (:func:`stream_certainty`),
or Rao-Blackwellised over hyper-parameter draws (:func:`rao_blackwell_prob_below`).

**Annotator offsets** (beyond the paper; ``annotator_effects=True``): rating ``r`` by annotator
``a`` is ``N(mu_i + b_a, sigma2_i s_a^2)`` with zero-sum ``b`` and ``log s``
(``ZeroSumNormal``). Given ``b, s`` the per-item conditional is still NIG with weights
``1/s_a^2`` (count ``n``, weight ``sum 1/s_a^2``), so ``NIGGibbs`` keeps ``(mu, sigma2)`` and NUTS
samples the offsets. Empirical Bayes ignores the offsets (it fits the raw scores).

Dims: ``item``, ``class``, ``rating`` (and ``annotator``). Variables: ``mu``, ``sigma2``
``(item,)``; hyper-parameters ``mu0, kappa0, alpha0, beta0`` (``pm.Data`` when fixed);
observed ``ratings (rating,)``; ``plausibility (item, class)``; ``pm.Data`` ``reliability``
and ``threshold`` (change them with :func:`set_reliability` / :func:`set_threshold`).

**Per-rating log-likelihood.** The model declares :func:`log_likelihood`, ``gamma log N(x_k |
mu_i, sigma2_i)`` per rating (with the annotator offsets when present) at every draw:
:func:`plausible.sample` writes it as ``log_likelihood/ratings (chain, draw, rating)`` on every
route (exact batches, a Zarr store, PyMC, shards of items), with the scores
(``Ratings.to_dataarray``) as ``observed_data/ratings``, for ``az.loo`` / ``az.compare``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial

import numpy as np
import pymc as pm
import pytensor.tensor as pt
import xarray as xr
from scipy import special

from plausible.data.ratings import Ratings, RatingSummary
from plausible.data.tables import reads
from plausible.data.validation import positive
from plausible.diagnostics.annotation_predictive import thinned_draws
from plausible.inference.declarations import declare_gibbs, declare_log_likelihood
from plausible.inference.step_methods.nig_gibbs import NIGGibbs
from plausible.metrics.chunks import iter_sample_blocks
from plausible.models.ratings.empirical import EmpiricalBayesFit, fit_empirical_bayes
from plausible.models.ratings.nig import (
    CLASSES,
    NIGPosterior,
    NIGPrior,
    check_threshold,
    conjugate_update,
    log_marginal_likelihood,
    nig_posterior,
)
from plausible.models.ratings.stream import StreamedCertainty, iter_draws, stream_certainty
from plausible.models.model_entry import ModelEntry
from plausible.models.ratings.consensus import consensus

__all__ = [
    "CLASSES",
    "EmpiricalBayesFit",
    "HYPERPARAMETERS",
    "NIGPosterior",
    "NIGPrior",
    "StreamedCertainty",
    "build",
    "default_hyperpriors",
    "fit_empirical_bayes",
    "iter_draws",
    "log_likelihood",
    "log_marginal_likelihood",
    "nig_posterior",
    "rao_blackwell_prob_below",
    "replicate_ratings",
    "set_reliability",
    "set_threshold",
    "shard_options",
    "stream_certainty",
    "threshold_plausibility",
]

HYPERPARAMETERS = ("mu0", "kappa0", "alpha0", "beta0")


def _pooled_within_variance(summary: RatingSummary) -> float:
    count, mean, ss = summary
    dof = (count - 1).sum()
    within = ss.sum() / dof if dof > 0 else 0.0
    return float(within) if within > 0 else float(max(mean.var(), 1.0))


def default_hyperpriors(summary: RatingSummary) -> dict[str, Callable[[str], pt.TensorVariable]]:
    """Weakly informative hyper-priors scaled to the data (factories ``name -> RV``).

    With ``m`` the mean of the item means, ``s_w^2`` the pooled within-item variance and
    ``s^2 = s_w^2 + var(item means)``: ``mu0 ~ N(m, 2 s)``, ``kappa0 ~ LogNormal(0, 1.5)``
    (prior "sample size", dimensionless), ``alpha0 ~ Gamma(2, 0.5)``,
    ``beta0 ~ LogNormal(log(2 s_w^2), 2)`` (``E sigma2 = beta0 / (alpha0 - 1)`` near ``s_w^2``).
    """
    within = _pooled_within_variance(summary)
    loc = float(summary.mean.mean())
    spread = float(np.sqrt(within + summary.mean.var()))
    return {
        "mu0": lambda name: pm.Normal(name, mu=loc, sigma=2 * spread),
        "kappa0": lambda name: pm.LogNormal(name, mu=0.0, sigma=1.5),
        "alpha0": lambda name: pm.Gamma(name, alpha=2.0, beta=0.5),
        "beta0": lambda name: pm.LogNormal(name, mu=float(np.log(2 * within)), sigma=2.0),
    }


def _hyper_spec(prior, ratings: Ratings, summary: RatingSummary, reliability: float) -> dict:
    """``name -> float | factory`` for the four hyper-parameters."""
    if isinstance(prior, NIGPrior):
        return prior.as_dict()
    if isinstance(prior, EmpiricalBayesFit):
        return prior.prior.as_dict()
    if isinstance(prior, str):
        if prior == "empirical":
            return fit_empirical_bayes(ratings, reliability=reliability).prior.as_dict()
        if prior == "hierarchical":
            return default_hyperpriors(summary)
        raise ValueError(f"prior must be 'empirical', 'hierarchical', an NIGPrior or a dict, got {prior!r}")
    if not isinstance(prior, Mapping):
        raise TypeError(f"prior must be 'empirical', 'hierarchical', an NIGPrior or a dict, got {type(prior).__name__}")
    unknown = set(prior) - set(HYPERPARAMETERS)
    if unknown:
        raise ValueError(f"unknown hyper-parameters {sorted(unknown)}; expected {HYPERPARAMETERS}")
    spec = {**default_hyperpriors(summary), **prior}
    for name, value in spec.items():
        if callable(value):
            continue
        value = float(value)
        if not np.isfinite(value) or (name != "mu0" and value <= 0):
            raise ValueError(f"fixed {name} must be finite{' and > 0' if name != 'mu0' else ''}, got {value}")
        spec[name] = value
    return spec


def _item_parameters(hyper: dict, fixed: NIGPrior | None):
    """``mu``, ``sigma2`` ``(item,)`` under the NIG prior; improper fixed priors use flat
    priors plus a ``Potential`` with the limiting density (module ``ratings_nig``)."""
    mu0, kappa0, alpha0, beta0 = (hyper[name] for name in HYPERPARAMETERS)
    if fixed is None or fixed.proper:
        sigma2 = pm.InverseGamma("sigma2", alpha=alpha0, beta=beta0, dims="item")
        mu = pm.Normal("mu", mu=mu0, sigma=pt.sqrt(sigma2 / kappa0), dims="item")
        return mu, sigma2
    sigma2 = pm.HalfFlat("sigma2", dims="item")
    if fixed.kappa0 > 0:
        mu = pm.Normal("mu", mu=mu0, sigma=pt.sqrt(sigma2 / kappa0), dims="item")
        power = fixed.alpha0 + 1.0
    else:
        mu = pm.Flat("mu", dims="item")
        power = fixed.alpha0 + 1.5
    pm.Potential("sigma2_prior", (-power * pt.log(sigma2) - fixed.beta0 / sigma2).sum())
    return mu, sigma2


def _segment_sum(values, index: np.ndarray, n: int):
    return pt.inc_subtensor(pt.zeros(n)[index], values)


def threshold_plausibility(mu, sigma2, threshold):
    """``(Phi((t - mu)/sigma), 1 - Phi((t - mu)/sigma))`` stacked on a last axis of 2.

    Works on numpy arrays (returns numpy, via ``scipy.special.ndtr``) and on pytensor
    tensors; the upper tail is computed as ``Phi(-z)``, exact for tiny tail probabilities.
    """
    if isinstance(mu, pt.TensorVariable) or isinstance(sigma2, pt.TensorVariable):
        z = (threshold - mu) / pt.sqrt(sigma2)
        return pt.stack([0.5 * pt.erfc(-z / np.sqrt(2)), 0.5 * pt.erfc(z / np.sqrt(2))], axis=-1)
    z = (threshold - np.asarray(mu)) / np.sqrt(sigma2)
    return np.stack([special.ndtr(z), special.ndtr(-z)], axis=-1)


@reads("ratings")
def build(
    ratings: Ratings,
    *,
    threshold: float,
    prior="empirical",
    reliability: float = 1.0,
    annotator_effects: bool = False,
    annotator_bias_sd: float | None = None,
    annotator_log_scale_sd: float = 0.5,
) -> pm.Model:
    """PyMC NIG model of numeric ratings with thresholded plausibilities.

    Parameters
    ----------
    ratings : Ratings
        Long ratings; ``ratings.items`` become the ``item`` coords.
    threshold : float
        ``t`` of the classes ``below`` (``mu < t``) and ``at_or_above``.
    prior : NIGPrior, EmpiricalBayesFit, "empirical", "hierarchical" or dict
        Fixed hyper-parameters; ``"empirical"`` fits them by maximum marginal likelihood
        (at this reliability); ``"hierarchical"`` samples all four under
        :func:`default_hyperpriors`; a dict maps some of ``mu0, kappa0, alpha0, beta0`` to
        fixed floats or to factories ``name -> RV`` (called in the model context), the
        rest getting the default hyper-priors.
    reliability : float
        ``gamma > 0``, the power of the ratings' likelihood.
    annotator_effects : bool
        Add zero-sum annotator biases ``b`` (``sd annotator_bias_sd``, default the pooled
        within-item sd) and log-scales ``log s`` (``sd annotator_log_scale_sd``), sampled
        by NUTS; needs at least two annotators.

    Raises
    ------
    ValueError
        For an invalid prior, threshold or reliability, and naming the first item with
        fewer ratings than an improper prior needs.
    """
    if not isinstance(ratings, Ratings):
        raise TypeError(f"build needs a Ratings, got {type(ratings).__name__}")
    reliability = positive("reliability", reliability)
    threshold = check_threshold(threshold)
    summary = ratings.per_item()
    spec = _hyper_spec(prior, ratings, summary, reliability)
    fixed = None
    if not any(callable(v) for v in spec.values()):
        fixed = NIGPrior(**spec)
        nig_posterior(ratings, fixed, reliability=reliability)  # names items with too few ratings
    if annotator_effects and ratings.n_annotators < 2:
        raise ValueError("annotator_effects needs at least two annotators")

    coords = {"item": ratings.items, "class": list(CLASSES), "rating": np.arange(ratings.n_ratings)}
    if annotator_effects:
        coords["annotator"] = ratings.annotators
    n_items, item_of = ratings.n_items, ratings.item
    with pm.Model(coords=coords) as model:
        gamma = pm.Data("reliability", reliability)
        t = pm.Data("threshold", threshold)
        hyper = {
            name: value(name) if callable(value) else pm.Data(name, value)
            for name, value in spec.items()
        }
        mu, sigma2 = _item_parameters(hyper, fixed)
        loc, sd = mu[item_of], pt.sqrt(sigma2)[item_of]
        if annotator_effects:
            bias_sd = annotator_bias_sd or float(np.sqrt(_pooled_within_variance(summary)))
            bias = pm.ZeroSumNormal("annotator_bias", sigma=bias_sd, dims="annotator")
            log_scale = pm.ZeroSumNormal("annotator_log_scale", sigma=annotator_log_scale_sd, dims="annotator")
            shifted = ratings.score - bias[ratings.annotator]
            weight = pt.exp(-2.0 * log_scale[ratings.annotator])
            weight_sum = _segment_sum(weight, item_of, n_items)
            mean = _segment_sum(weight * shifted, item_of, n_items) / weight_sum
            ss = _segment_sum(weight * (shifted - mean[item_of]) ** 2, item_of, n_items)
            loc = loc + bias[ratings.annotator]
            sd = sd * pt.exp(log_scale[ratings.annotator])
        else:
            weight_sum, mean, ss = summary.count, summary.mean, summary.sum_sq_dev
        observed = pm.Normal("ratings", mu=loc, sigma=sd, observed=ratings.score, dims="rating")
        pm.Potential(
            "tempering", (gamma - 1.0) * pm.logp(pm.Normal.dist(mu=loc, sigma=sd), observed).sum()
        )
        pm.Deterministic("plausibility", threshold_plausibility(mu, sigma2, t), dims=("item", "class"))
        posterior = conjugate_update(
            *(hyper[name] for name in HYPERPARAMETERS), summary.count, weight_sum, mean, ss, gamma
        )
        declare_gibbs(model, NIGGibbs, [mu, sigma2], posterior=posterior)
    declare_log_likelihood(model, "ratings", partial(log_likelihood, ratings=ratings),
                           observed=ratings.to_dataarray(), dim="rating")
    return model


def log_likelihood(trace, ratings: Ratings) -> xr.DataArray:
    """Per-rating log-likelihood ``gamma log N(x_r | mu_i + b_a, sigma2_i s_a^2)``, ``(chain,
    draw, rating)``, at every draw's ``mu``, ``sigma2`` (and annotator offsets ``b``, ``log s``
    when the trace has them; else ``b = 0``, ``s = 1``), ``gamma`` the trace's
    ``constant_data/reliability``: the factor rating ``r`` contributes to the log posterior.

    Ratings models are scored per rating, not per item: an item's ``(mu_i, sigma2_i)`` are
    informed by its own ratings only, so leaving a whole item out moves them far and PSIS
    fails (Pareto k above 0.7 for most items on the Snow et al. data), while leaving one
    rating out is stable; LOO then estimates the predictive density of one more rating of a
    rated item. Computed in blocks of draws (temporaries ``(draws of a block, ratings)``), also
    from a lazily opened trace; :func:`build` declares it."""
    posterior = trace["posterior"]
    gamma = float(trace["constant_data"]["reliability"])
    item, annotator, score = ratings.item, ratings.annotator, ratings.score
    effects = "annotator_bias" in posterior
    sample_shape = (posterior.sizes["chain"], posterior.sizes["draw"])
    out = np.empty((np.prod(sample_shape), ratings.n_ratings))
    for samples, index in iter_sample_blocks(sample_shape, 4 * ratings.n_ratings):
        loc = np.asarray(posterior["mu"].data[index])[:, item]
        log_sd = 0.5 * np.log(np.asarray(posterior["sigma2"].data[index]))[:, item]
        if effects:
            loc = loc + np.asarray(posterior["annotator_bias"].data[index])[:, annotator]
            log_sd = log_sd + np.asarray(posterior["annotator_log_scale"].data[index])[:, annotator]
        z = (score - loc) * np.exp(-log_sd)
        out[samples] = gamma * (-0.5 * z * z - log_sd - 0.5 * np.log(2 * np.pi))
    return xr.DataArray(out.reshape(*sample_shape, ratings.n_ratings),
                        dims=("chain", "draw", "rating"),
                        coords={"chain": posterior["chain"].values,
                                "draw": posterior["draw"].values,
                                **ratings.to_dataarray().coords})


def replicate_ratings(trace, ratings: Ratings, *, draws: int = 500, seed: int | None = None
                      ) -> np.ndarray:
    """Replicated ratings in the observed design, float ``(sample, rating)``: for each of
    ``draws`` thinned draws, ``x_r ~ N(mu_i + b_a, sigma2_i s_a^2)`` (``b = 0``, ``s = 1``
    without annotator offsets), on the real line as the model says."""
    posterior = trace["posterior"]
    chain, draw = thinned_draws(posterior, draws)

    def read(name):
        variable = posterior[name]
        return variable.transpose("chain", "draw", *variable.dims[2:]).values[chain, draw]

    loc = read("mu")[:, ratings.item]
    sd = np.sqrt(read("sigma2"))[:, ratings.item]
    if "annotator_bias" in posterior:
        loc = loc + read("annotator_bias")[:, ratings.annotator]
        sd = sd * np.exp(read("annotator_log_scale"))[:, ratings.annotator]
    return np.random.default_rng(seed).normal(loc, sd)


def shard_options(ratings: Ratings, *, prior="empirical", reliability: float = 1.0,
                  annotator_effects: bool = False, **options) -> dict:
    """The options of :func:`build` for sampling ``ratings`` in shards of items: items are
    independent given fixed hyper-parameters, so an empirical-Bayes prior is fitted once, on
    all items, and every shard gets it as fixed values (a plain dict). Hierarchical priors and
    annotator offsets are shared across items: ``ValueError``."""
    if annotator_effects:
        raise ValueError("annotator offsets are shared across items: a ratings model with "
                         "annotator_effects=True cannot be sampled in shards")
    reliability = positive("reliability", reliability)
    if isinstance(prior, str) and prior == "empirical":
        prior = fit_empirical_bayes(ratings, reliability=reliability).prior
    if isinstance(prior, EmpiricalBayesFit):
        prior = prior.prior
    if isinstance(prior, NIGPrior):
        prior = prior.as_dict()
    if not isinstance(prior, Mapping) or set(prior) != set(HYPERPARAMETERS) or any(
            callable(value) for value in prior.values()):
        raise ValueError("sampled (hierarchical) hyper-parameters are shared across items: fix "
                         "them (prior='empirical' or an NIGPrior) to sample ratings in shards")
    return {**options, "prior": {name: float(prior[name]) for name in HYPERPARAMETERS},
            "reliability": reliability}


def set_reliability(model: pm.Model, reliability: float) -> None:
    """Change ``gamma`` of a built ratings model in place (fixed hyper-parameters fitted
    by empirical Bayes at the old reliability stay as they are)."""
    pm.set_data({"reliability": positive("reliability", reliability)}, model=model)


def set_threshold(model: pm.Model, threshold: float) -> None:
    """Change the threshold ``t`` of a built ratings model in place."""
    pm.set_data({"threshold": check_threshold(threshold)}, model=model)


def rao_blackwell_prob_below(
    trace: xr.DataTree, ratings: Ratings, threshold: float, *, reliability: float = 1.0
) -> xr.DataArray:
    """``P(mu_i < t | x)`` averaged over the hyper-parameter draws of a hierarchical trace.

    ``(1/M) sum_m F_t(t; 2 alpha_n^(m), mu_n^(m), scale^(m))`` with the NIG posterior of item
    ``i`` given draw ``m`` of ``(mu0, kappa0, alpha0, beta0)`` (closed form given the
    hyper-parameters, Monte Carlo over them). Certainty is ``max(p, 1 - p)``. Not valid for
    models with annotator offsets. float64 ``("item",)``.
    """
    reliability = positive("reliability", reliability)
    if "annotator_bias" in trace.posterior:
        raise ValueError("rao_blackwell_prob_below does not apply to models with annotator offsets")
    draws = {}
    for name in HYPERPARAMETERS:
        if name in trace.posterior:
            draws[name] = trace.posterior[name].values.reshape(-1, 1)
        else:
            draws[name] = np.asarray(trace.constant_data[name].values).reshape(1, 1)
    count, mean, ss = ratings.per_item()
    kappa_n, mu_n, alpha_n, beta_n = conjugate_update(
        *(draws[name] for name in HYPERPARAMETERS), count, count, mean, ss, reliability
    )
    scale = np.sqrt(beta_n / (alpha_n * kappa_n))
    prob = special.stdtr(2 * alpha_n, (threshold - mu_n) / scale).mean(axis=0)
    return xr.DataArray(prob, dims=("item",), coords={"item": ratings.items}, name="prob_below")


ENTRIES = (
    ModelEntry("normal-inverse-gamma", build, "ratings", "tempering", True,
               "Normal-Inverse-Gamma ratings thresholded into two classes, exact NIG draws",
               required=("threshold",), shard_options=shard_options,
               replicate=replicate_ratings, consensus=consensus),
)
"""The registry entries of this family (:mod:`plausible.models.registry`)."""
