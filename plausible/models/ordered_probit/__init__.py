"""Ordered-probit annotator model for ordinal grades (severity 1–4, relevance 0–4, Likert
scales): a grade-3 vs grade-4 disagreement costs less than a grade-1 vs grade-4 one.

Unordered models (Dawid & Skene 1979 and its relatives) treat grades as classes: each
annotator's confusion row spreads its errors over the other grades with no notion of
distance, and needs ``K - 1`` free probabilities per grade to learn that errors fall on
neighbours. Here an annotator's errors come from one continuous perception (Albert & Chib
1993's latent-variable view of ordered probit; Johnson & Albert 1999, *Ordinal Data
Modeling*, ch. 5, for raters)::

    pi   ~ Dirichlet(1, ..., 1)                 grade prevalence
    b_j  ~ Normal(0, bias_scale^2)              annotator j's bias, in grades
    s_j^2 ~ InvGamma(noise_shape, noise_rate)   annotator j's noise variance
    e_j  ~ Beta(spam_prior)                     annotator j's rate of random answers
    z_i  ~ Categorical(pi)                      item i's true grade
    r_k  ~ Bernoulli(e_{j_k})                   a random answer ...
    x_k  ~ Uniform(0..K-1)                        ... is any grade alike
    y_k  ~ Normal(z_{i_k} + b_{j_k}, s_{j_k}^2) an earnest answer's perception ...
    x_k  = c  where  c - 1/2 < y_k <= c + 1/2     ... rounded (the end grades take the tails)

so ``P(x = c | z, b, s, e) = e / K + (1 - e) [Phi((c + 1/2 - z - b) / s) - Phi((c - 1/2 - z
- b) / s)]``: an annotator with small noise is right or one grade off, one with a bias of
``+0.6`` grades tends one grade high, one with a high ``e`` answers at random (a spammer,
or errors that ignore the order: with ``e`` the model contains one-coin Dawid–Skene), and
three parameters per annotator describe a ``K x K`` confusion matrix. The grades are the
classes in their order (numbers sort as numbers; name the order with
``Labels.from_frame(..., classes=[...])``).

**Priors and why.** ``bias_scale = 0.5``: an annotator is rarely a whole grade off on
average; ``(noise_shape, noise_rate) = (3, 0.5)``: noise variance with mean 0.25 (sd about
0.5 grades, so about a third of labels are one grade off) and little mass above sd 1, which
keeps annotators with a handful of labels from being read as pure noise; ``spam_prior = (1,
4)``: random answers a fifth of the time on average a priori, weakly (most annotators answer
in earnest, and tens of labels outweigh it). A prior on the
noise is what identifies an annotator with few labels; the data identify the grade
prevalence, the items' grades and the bias and noise of annotators with tens of labels or
more.

**Plausibility**: the posterior of the item's one true grade, ``P(z_i = c | data)``, as in
the other latent-class label models.

**Inference**: exact slice-within-Gibbs updates with the perceptions and random-answer
indicators integrated out (:mod:`plausible.models.ordered_probit.sampler`);
``gibbs=False`` leaves the PyMC model, grades summed out, to NUTS (the independent check).
The per-item
log-likelihood is ``logsumexp_c(log pi_c + gamma L_ic)`` (:func:`log_likelihood`),
:func:`replicate_labels` replicates labels in the observed design, and
:func:`label_probabilities` gives :mod:`plausible.active` a new label's probabilities.
"""

from __future__ import annotations

import numpy as np
import pymc as pm
import pytensor.tensor as pt
import xarray as xr
from pymc.distributions.dist_math import normal_lcdf

from plausible.data.labels import Labels
from plausible.data.tables import reads
from plausible.data.validation import positive
from plausible.diagnostics.annotation_predictive import thinned_draws
from plausible.models.dawid_skene import kernel as kernel_code
from plausible.models.ordered_probit import kernel as compiled
from plausible.models.dawid_skene.sampler import Design
from plausible.inference.declarations import declare_log_likelihood
from plausible.inference.bridges.as_pymc_step import declare_kernel
from plausible.models.ordered_probit.sampler import OrderedProbitKernel, thresholds
from plausible.maths.categorical import categorical_draws
from plausible.metrics.chunks import iter_sample_blocks
from plausible.models.latent_class import _read as read_draws
from plausible.models.latent_class import check_labels, coords, known_mask
from plausible.models.model_entry import ModelEntry, answers_at_random

FAR = 1e3
"""The outer thresholds in the PyMC graph (grades from the end ones are never this far): finite,
so that NUTS's gradients stay finite."""


def _log_interval(lower, upper, loc, scale):
    """Pytensor ``log P(lower < Y <= upper)``, ``Y ~ N(loc, scale^2)``, both ends moved into the
    lower tail first (as :func:`plausible.maths.normal_intervals.log_interval_probability`)."""
    a, b = (lower - loc) / scale, (upper - loc) / scale
    flip = a > 0
    a, b = pt.switch(flip, -b, a), pt.switch(flip, -a, b)
    log_b = normal_lcdf(0.0, 1.0, b)
    return log_b + pt.log1mexp(normal_lcdf(0.0, 1.0, a) - log_b)


@reads("labels")
def build(labels: Labels, *, reliability: float = 1, bias_scale: float = 0.5,
          noise_prior: tuple = (3.0, 0.5), spam_prior: tuple = (1.0, 4.0),
          class_concentration: float = 1.0, gibbs: bool = True) -> pm.Model:
    """PyMC model of the ordered-probit annotator model (module) for ``labels``, whose
    classes are the grades in order.

    Free variables ``class_prior (class)``, ``bias (annotator)``, ``noise_variance
    (annotator)`` and ``spam (annotator)`` (the rate of random answers); ``noise
    (annotator)`` (the variance's square root) and ``plausibility (item, class)``.
    ``reliability``: ``gamma > 0``, every label's likelihood raised to that power;
    ``noise_prior``: ``(shape, rate)`` of the noise variance's inverse gamma prior;
    ``spam_prior``: ``(a, b)`` of the random answers' Beta prior; ``class_concentration``:
    the grade prevalence's symmetric Dirichlet concentration; ``gibbs``:
    :func:`plausible.sample` runs the exact sampler, False leaves the grades-summed-out model
    to NUTS.
    """
    check_labels(labels)
    gamma = positive("reliability", reliability)
    scale = positive("bias_scale", bias_scale)
    shape, rate = (positive("noise_prior", v) for v in noise_prior)
    spam_a, spam_b = (positive("spam_prior", v) for v in spam_prior)
    alpha = positive("class_concentration", class_concentration)
    K = labels.n_classes
    lower, upper = (np.clip(end, -FAR, FAR)[labels.label] for end in thresholds(K))
    item, annotator = pt.constant(labels.item), pt.constant(labels.annotator)
    with pm.Model(coords=coords(labels)) as model:
        pm.Data("reliability", gamma)
        pi = pm.Dirichlet("class_prior", a=np.full(K, alpha), dims="class")
        bias = pm.Normal("bias", 0.0, scale, dims="annotator")
        variance = pm.InverseGamma("noise_variance", alpha=shape, beta=rate, dims="annotator",
                                   initval=np.full(labels.n_annotators, rate / (shape + 1)))
        noise = pm.Deterministic("noise", pt.sqrt(variance), dims="annotator")
        spam = pm.Beta("spam", spam_a, spam_b, dims="annotator")
        loc = np.arange(K)[None, :] + bias[annotator][:, None]
        earnest = _log_interval(lower[:, None], upper[:, None], loc, noise[annotator][:, None])
        per_label = pt.logaddexp(pt.log(spam[annotator])[:, None] - np.log(K),
                                 pt.log1p(-spam[annotator])[:, None] + earnest)
        L = pt.inc_subtensor(pt.zeros((labels.n_items, K))[item], per_label)
        log_joint = pt.log(pi)[None, :] + known_mask(labels) + gamma * L
        pm.Potential("labels", pt.logsumexp(log_joint, axis=1).sum())
        pm.Deterministic("plausibility", pt.exp(pt.special.log_softmax(log_joint, axis=1)),
                         dims=("item", "class"))
    if gibbs:
        kernel = OrderedProbitKernel(labels, bias_scale=scale, noise_shape=shape,
                                     noise_rate=rate, spam_prior=(spam_a, spam_b), gamma=gamma,
                                     class_concentration=alpha)
        declare_kernel(model, kernel, coords={"item": labels.items, "class": labels.classes,
                                              "annotator": labels.annotators},
                       constant_data={"reliability": gamma})
    declare_log_likelihood(model, "labels", lambda trace: log_likelihood(trace, labels),
                           observed=labels.to_dataarray())
    return model


def _read(posterior, name, chain, draw) -> np.ndarray:
    """:func:`plausible.models.latent_class._read` (just those draws) in float64."""
    return read_draws(posterior, name, chain, draw).astype(np.float64, copy=False)


def _tables(bias, noise, spam, n_grades) -> np.ndarray:
    """``log P(x | c, b_j, s_j, e_j)`` per draw, ``(draw, annotator * label, grade)``
    (:func:`plausible.models.ordered_probit.kernel.fill_table`)."""
    with np.errstate(divide="ignore"):
        logit = np.log(spam) - np.log1p(-spam)
    tables = np.empty((bias.shape[0], bias.shape[1] * n_grades, n_grades))
    for s in range(bias.shape[0]):  # J K^2 values a draw: the loop costs nothing beside them
        compiled.fill_table(bias[s], noise[s], logit[s], n_grades, tables[s])
    return tables


def log_likelihood(trace, labels: Labels) -> xr.DataArray:
    """Per-item ``logsumexp_c(log pi_c + gamma L_ic)``, ``(chain, draw, item)``, the grade
    summed out (``L_ic`` the item's labels' log probabilities under grade ``c``), in blocks
    of draws."""
    posterior = trace["posterior"]
    gamma = float(trace["constant_data"]["reliability"])
    shape = (posterior.sizes["chain"], posterior.sizes["draw"])
    design = Design(labels)
    out = np.empty((shape[0] * shape[1], labels.n_items))
    for block, _ in iter_sample_blocks((out.shape[0],), labels.n_annotators
                                       * labels.n_classes ** 2 + labels.n_items):
        chain, draw = np.divmod(np.arange(out.shape[0])[block], shape[1])
        bias, noise, spam = (_read(posterior, name, chain, draw)
                             for name in ("bias", "noise", "spam"))
        out[block] = kernel_code.marginal_log_likelihood_kernel(
            np.log(_read(posterior, "class_prior", chain, draw)),
            _tables(bias, noise, spam, labels.n_classes), gamma, design.offsets, design.code,
            design.fixed)
    return xr.DataArray(out.reshape(*shape, labels.n_items), dims=("chain", "draw", "item"),
                        coords={"chain": posterior["chain"].values,
                                "draw": posterior["draw"].values, "item": labels.items})


def label_probabilities(trace, chain, draw, item, annotator) -> np.ndarray:
    """``P(x = y | z = c)`` of a new label by annotator ``annotator[p]`` on item ``item[p]``,
    float64 ``(sample, pair, class, label_class)`` at the draws ``(chain, draw)``."""
    posterior = trace["posterior"]
    K = posterior.sizes["class"]
    bias, noise, spam = (_read(posterior, name, chain, draw)[:, annotator]
                         for name in ("bias", "noise", "spam"))
    tables = _tables(bias, noise, spam, K).reshape(bias.shape[0], bias.shape[1], K, K)
    return np.exp(tables.transpose(0, 1, 3, 2))



def replicate_labels(trace, labels: Labels, *, draws: int = 500, seed: int | None = None
                     ) -> np.ndarray:
    """Replicated labels in the observed design, int ``(sample, annotation)``: for each of
    ``draws`` thinned draws, new grades from ``pi``, then each label a uniform grade with
    probability ``e_j``, else its perception ``z + b_j + s_j u`` rounded to the nearest grade
    (the end grades take the tails)."""
    posterior = trace["posterior"]
    chain, draw = thinned_draws(posterior, draws)
    pi = _read(posterior, "class_prior", chain, draw)
    bias, noise, spam = (_read(posterior, name, chain, draw)
                         for name in ("bias", "noise", "spam"))
    rng = np.random.default_rng(seed)
    out = np.empty((pi.shape[0], labels.n_annotations), dtype=np.int64)
    for block, _ in iter_sample_blocks((pi.shape[0],), labels.n_annotations + labels.n_items):
        n = block.stop - block.start
        grades = categorical_draws(rng, pi[block, None, :], (n, labels.n_items))
        j = labels.annotator
        y = (grades[:, labels.item] + bias[block][:, j]
             + noise[block][:, j] * rng.standard_normal((n, labels.n_annotations)))
        earnest = np.clip(np.floor(y + 0.5), 0, labels.n_classes - 1)
        random = rng.random((n, labels.n_annotations)) < spam[block][:, j]
        out[block] = np.where(random, rng.integers(labels.n_classes, size=random.shape), earnest)
    return out


__all__ = ["build", "label_probabilities", "log_likelihood", "replicate_labels"]


ENTRIES = (
    ModelEntry("ordered-probit", build, "labels", "tempering", False,
               "ordinal grades: each annotator's bias and noise around the item's true grade "
               "(ordered probit) and rate of random answers, compiled slice-within-Gibbs with "
               "the perceptions integrated out", replicate=replicate_labels,
               label_probabilities=label_probabilities,
               spammer=answers_at_random, ordinal=True),
)
"""The registry entries of this family (:mod:`plausible.models.registry`)."""
