"""Hierarchical Beta annotator model (Carpenter 2008) for binary labels.

Annotation ``k`` is label ``x_k`` in {0, 1} (``labels.classes[1]`` is "positive") of item
``i_k`` by annotator ``j_k``; missing and replicated annotations are allowed::

    q    ~ Beta(1, 1)                                   prevalence
    a0_j ~ Beta(mu0 s0, (1 - mu0) s0)                   specificity  P(x = 0 | c = 0)
    a1_j ~ Beta(mu1 s1, (1 - mu1) s1)                   sensitivity  P(x = 1 | c = 1)
    c_i  ~ Bernoulli(q)
    x_k  ~ Bernoulli(c_{i_k} a1_{j_k} + (1 - c_{i_k}) (1 - a0_{j_k}))

**Hyper-prior.** Carpenter's ``p(alpha, beta) ∝ (alpha + beta)^(-5/2)`` with ``alpha / (alpha +
beta) ~ U(0, 1)`` (Gelman et al., BDA §5.3). In mean/scale coordinates ``mu = alpha / s``,
``s = alpha + beta`` the Jacobian is ``|d(alpha, beta) / d(mu, s)| = s``, so the same prior is
``p(mu, s) ∝ s^(-3/2)`` — *not* ``s^(-5/2)`` — i.e. uniform on ``mu`` and on ``u = s^(-1/2)``.
That is the parametrisation used: ``u ~ U(0, min_scale^(-1/2))`` (variable
``<group>_scale_inv_sqrt``) and ``s = u^(-2)`` (deterministic ``<group>_scale``). The
density is integrable as ``s -> inf`` but not at ``s -> 0``: the floor ``s >= min_scale``
(default 1, a population Beta never more U-shaped than ``Beta(mu, 1 - mu)``) makes it proper.
Under the floor ``u`` has prior median ``0.5 / sqrt(min_scale)`` (``s`` median 4).

**Label switching.** The likelihood is invariant under swapping the classes together with
the accuracies (``c -> 1 - c``, ``q -> 1 - q``, ``a0 <-> 1 - a1``). The reported mode is the
one where annotators are better than chance on average, enforced *in the model* on the group
means: ``mu0 + mu1 > 1``, which the swap maps to ``< 1``, so exactly one of each pair of
mirror-image points has prior support. It is a hard constraint without a ``-inf`` potential:
the uniform prior on the half-square is ``mu1 ~ Beta(2, 1)``, ``mu0 | mu1 ~ U(1 - mu1, 1)``.
The per-annotator accuracies keep their conjugate Beta priors (so their Gibbs draws stay
exact); chains start at accuracies 0.8 (dispersed around it), and
:func:`label_switching_check` verifies after sampling that every draw has mean sensitivity
+ mean specificity over annotators > 1. Variants: ``accuracy="symmetric"`` (one accuracy per
annotator, sensitivity = specificity, mean ``mu ~ U(1/2, 1)``), ``accuracy="pooled"`` (one
sensitivity and one specificity shared by all annotators, Beta(1, 1) priors; identified by
the start at 0.8 and the post-check only).

**Classes marginalised.** The model's density sums ``c`` out of the likelihood, per item
``log p(x_i | q, a) = logaddexp(log q + gamma L1_i, log(1 - q) + gamma L0_i)`` with
``L_c,i = sum_{k: i_k = i} log P(x_k | c)`` and the reliability ``gamma`` (1 for the plain
model; it tempers the labels' likelihood given the class, as in every aggregation model), so
NUTS runs on it directly (``gibbs=False``).
With ``gibbs=True`` (default) an exact sweep covers every free variable, so no gradient step
is needed and :func:`plausible.sample` runs it alone: either data augmentation
(``sampler="joint"``, :class:`~plausible.models.annotator_beta.gibbs.AnnotatorBetaGibbs`:
``c`` from its conditional, then ``q`` and the accuracies from their Beta conditionals, then
a slice scan of the group hyper-parameters given the accuracies) or the collapsed sweep
(``sampler="collapsed"``,
:class:`~plausible.models.annotator_beta.collapsed.AnnotatorBetaCollapsedGibbs`: each
``c_i`` given the others with ``q`` and the accuracies integrated out, the hyper-parameters
given the classes, then ``q`` and the accuracies given both), which mixes better where
workers have few labels each.
Both routes target the same posterior: a direct cross-check.
No discrete variable is in the model, so PyMC never needs a step for ``c`` and the trace does
not carry ``(chain, draw, item)`` integer classes.

**Item patterns.** Items with identical (annotator, label) multisets share their
likelihood terms, so the likelihood is computed once per distinct pattern and weighted by
its number of items (``item_patterns``; 32 patterns for the 3869 dentistry patients).

**Plausibility.** Rao-Blackwellised: per draw ``P(c_i = 1 | q, a, x) =
sigmoid(logit q + gamma (L1_i - L0_i))``; ``plausibility (item, class)`` is the deterministic
``[1 - p, p]``.

**Per-item log-likelihood.** :func:`log_likelihood`, the item's term of the potential
``labels`` (``c_i`` summed out), is declared to :func:`plausible.sample`
(:func:`~plausible.inference.declarations.declare_log_likelihood`), which writes it as
``log_likelihood/labels (chain, draw, item)`` and the labels (``Labels.to_dataarray``) as
``observed_data/labels``: ``az.loo`` / ``az.compare`` read the trace as it comes.
"""

from __future__ import annotations

from functools import partial

import numpy as np
import pymc as pm
import pytensor.tensor as pt
import xarray as xr
from scipy.special import expit

from plausible.data.item_patterns import item_patterns
from plausible.data.labels import Labels
from plausible.data.tables import reads
from plausible.data.validation import positive
from plausible.diagnostics.annotation_predictive import thinned_draws
from plausible.models.annotator_beta.collapsed import (AnnotatorBetaCollapsedGibbs,
                                                          check_whole_reliability)
from plausible.models.annotator_beta.gibbs import AccuracyBlock, AnnotatorBetaGibbs
from plausible.inference.declarations import declare_gibbs, declare_log_likelihood
from plausible.inference.step_methods.slice_hyper import BetaHyperSpec
from plausible.metrics.chunks import iter_sample_blocks
from plausible.maths.known_classes import known_log_mask
from plausible.models.model_entry import ModelEntry

ACCURACY_KINDS = ("hierarchical", "symmetric", "pooled")
SAMPLERS = ("collapsed", "joint")
DEFAULT_SWEEPS = {"collapsed": 1, "joint": 10}
"""Sweeps per recorded draw by default: the joint sweep over item patterns costs ~10 us on the
dentistry data, so 10 amortise the per-draw overhead; the collapsed sweep is O(labels)."""
PATTERN_SHARE = 2 / 3
"""``sampler=None`` takes the joint sweep when the distinct item patterns' labels are fewer than
this share of all labels. One collapsed sweep mixes more than one joint sweep, but costs
O(labels) where the joint sweep costs O(labels of the distinct patterns). Measured
(``benchmarks/bench_label_mixing.py``, ESS per second of the worst plausibility, collapsed ÷
joint): simulated binary crowds (share ~1.0) 3.3-8.3, RTE (0.79) 1.1, TEMP (0.58) 0.7, the
dentistry data (0.008: 32 patterns for 3869 patients) 0.2; the threshold lies between RTE and
TEMP."""
INITIAL_ACCURACY = 0.8


def _check_binary(labels: Labels) -> None:
    if not isinstance(labels, Labels):
        raise TypeError(f"labels must be plausible.data.Labels, got {type(labels).__name__}")
    if labels.n_classes != 2:
        raise ValueError(
            f"the annotator Beta model needs binary labels (2 classes), got {labels.n_classes}: "
            f"{list(labels.classes)[:10]}"
        )


def _group_scale(name: str, min_scale: float):
    """``u ~ U(0, min_scale^-1/2)``, deterministic ``s = u^-2`` (see module docstring)."""
    u = pm.Uniform(f"{name}_scale_inv_sqrt", 0.0, 1.0 / np.sqrt(min_scale))
    return pm.Deterministic(f"{name}_scale", u**-2)


def _beta_group(name: str, mean, scale):
    initval = np.full(pm.modelcontext(None).dim_lengths["annotator"].eval(), INITIAL_ACCURACY)
    return pm.Beta(name, alpha=mean * scale, beta=(1.0 - mean) * scale, dims="annotator",
                   initval=initval)


@reads("labels")
def build(labels: Labels, *, reliability: float = 1.0, accuracy: str = "hierarchical",
          gibbs: bool = True, min_scale: float = 1.0, plausibility: bool = True,
          sweeps: int | None = None, sampler: str | None = None) -> pm.Model:
    """PyMC model of binary labels with annotator sensitivities and specificities.

    Parameters
    ----------
    labels : Labels
        Binary long labels (``labels.classes`` of length 2; the second is "positive").
    reliability : float
        ``gamma > 0``, the power of the labels' likelihood given the classes (see module).
    accuracy : {"hierarchical", "symmetric", "pooled"}
        Carpenter's model; sensitivity = specificity per annotator (hierarchical); one
        sensitivity and one specificity for all annotators.
    gibbs : bool
        Declare the exact Gibbs sweep over every free variable (classes drawn and discarded,
        prevalence, accuracies, and a slice scan of the group hyper-parameters); ``False``:
        NUTS on everything (classes marginalised either way).
    min_scale : float
        Floor of the group scale ``alpha + beta`` (the hyper-prior is improper without it).
    plausibility : bool
        Record the deterministic ``plausibility (item, class)`` (drop it for timing runs).
    sweeps : int or None
        Gibbs sweeps per recorded draw (exact either way); by default
        :data:`DEFAULT_SWEEPS` of the sampler.
    sampler : {"collapsed", "joint"} or None
        The Gibbs sweep: ``"collapsed"`` draws each item's class with the prevalence and
        the accuracies integrated out
        (:class:`~plausible.models.annotator_beta.collapsed.AnnotatorBetaCollapsedGibbs`;
        a whole-number ``reliability`` only), ``"joint"`` the classes given the accuracies
        and the accuracies given the classes, pooled over the item patterns
        (:class:`~plausible.models.annotator_beta.gibbs.AnnotatorBetaGibbs`). None:
        joint where the item patterns compress the labels (their representatives hold
        fewer than :data:`PATTERN_SHARE` of them, as for a few annotators who label every
        item) or the reliability is not whole, collapsed otherwise (crowds: many workers
        with few labels each).

    Notes
    -----
    Dims ``item``, ``annotator``, ``class``. Free variables (hierarchical): ``prevalence``,
    ``specificity (annotator)``, ``sensitivity (annotator)``, ``specificity_mean``,
    ``sensitivity_mean``, ``specificity_scale_inv_sqrt``, ``sensitivity_scale_inv_sqrt``;
    deterministics ``*_scale`` and ``plausibility (item, class)``; potential ``labels``
    (the marginal log-likelihood). ``pm.Data``: ``label_item``, ``label_annotator``,
    ``label_value`` (the long data, in ``constant_data``). Declared per-item log-likelihood
    ``labels`` (:func:`log_likelihood`): :func:`plausible.sample` writes the
    ``log_likelihood`` and ``observed_data`` groups.
    """
    _check_binary(labels)
    gamma = positive("reliability", reliability)
    whole = gamma == round(gamma) and gamma >= 1
    if sampler is not None and sampler not in SAMPLERS:
        raise ValueError(f"sampler must be one of {SAMPLERS} or None, got {sampler!r}")
    if sampler == "collapsed":
        check_whole_reliability(gamma)
    if accuracy not in ACCURACY_KINDS:
        raise ValueError(f"accuracy must be one of {ACCURACY_KINDS}, got {accuracy!r}")
    if not (np.isfinite(min_scale) and min_scale > 0):
        raise ValueError(f"min_scale must be finite and > 0, got {min_scale}")
    I, J = labels.n_items, labels.n_annotators
    coords = {"item": labels.items, "annotator": labels.annotators, "class": labels.classes}
    every = np.arange(J)
    with pm.Model(coords=coords) as model:
        pm.Data("label_item", labels.item, dims="annotation")
        pm.Data("label_annotator", labels.annotator, dims="annotation")
        pm.Data("label_value", labels.label, dims="annotation")
        pm.Data("reliability", gamma)
        prevalence = pm.Beta("prevalence", 1.0, 1.0)
        if accuracy == "hierarchical":
            sens_mean = pm.Beta("sensitivity_mean", 2.0, 1.0)
            spec_mean = pm.Uniform("specificity_mean", lower=1.0 - sens_mean, upper=1.0)
            spec_scale = _group_scale("specificity", min_scale)
            sens_scale = _group_scale("sensitivity", min_scale)
            spec = _beta_group("specificity", spec_mean, spec_scale)
            sens = _beta_group("sensitivity", sens_mean, sens_scale)
            accuracy_vars = [spec, sens]
            blocks = [AccuracyBlock((0,), every, None), AccuracyBlock((1,), every, None)]
            hyper = BetaHyperSpec(("specificity_mean", "sensitivity_mean"),
                                  ("specificity_scale_inv_sqrt", "sensitivity_scale_inv_sqrt"),
                                  "half_square", 1.0 / np.sqrt(min_scale))
            spec_j, sens_j = spec, sens
        elif accuracy == "symmetric":
            mean = pm.Uniform("accuracy_mean", 0.5, 1.0)
            scale = _group_scale("accuracy", min_scale)
            acc = _beta_group("accuracy", mean, scale)
            accuracy_vars = [acc]
            blocks = [AccuracyBlock((0, 1), every, None)]
            hyper = BetaHyperSpec(("accuracy_mean",), ("accuracy_scale_inv_sqrt",), "symmetric",
                                  1.0 / np.sqrt(min_scale))
            spec_j = sens_j = acc
        else:
            spec = pm.Beta("specificity", 1.0, 1.0, initval=INITIAL_ACCURACY)
            sens = pm.Beta("sensitivity", 1.0, 1.0, initval=INITIAL_ACCURACY)
            accuracy_vars = [spec, sens]
            zeros = np.zeros(J, dtype=np.int64)
            blocks = [AccuracyBlock((0,), zeros, (1.0, 1.0)), AccuracyBlock((1,), zeros, (1.0, 1.0))]
            hyper = None
            spec_j, sens_j = pt.broadcast_to(spec, (J,)), pt.broadcast_to(sens, (J,))

        # likelihood on the distinct item patterns (items with identical labels), weighted
        pat = item_patterns(labels.item, labels.annotator, labels.label, I, J,
                            known=labels.known)
        if sampler is None:
            sampler = ("collapsed" if whole and PATTERN_SHARE * labels.n_annotations < pat.item.size
                       else "joint")
        if sweeps is None:
            sweeps = DEFAULT_SWEEPS[sampler]
        says_positive = pat.label == 1
        l1 = pt.switch(says_positive, pt.log(sens_j)[pat.annotator], pt.log1p(-sens_j)[pat.annotator])
        l0 = pt.switch(says_positive, pt.log1p(-spec_j)[pat.annotator], pt.log(spec_j)[pat.annotator])
        L1 = pt.inc_subtensor(pt.zeros(pat.n_patterns)[pat.item], l1)
        L0 = pt.inc_subtensor(pt.zeros(pat.n_patterns)[pat.item], l0)
        log_q, log1m_q = pt.log(prevalence), pt.log1p(-prevalence)
        # a pattern of known class keeps that class's term only (known classes: clamped)
        known = np.full(pat.n_patterns, -1) if pat.known is None else pat.known
        pm.Potential("labels", (pat.weight * pt.switch(
            pt.eq(known, 1), log_q + gamma * L1, pt.switch(
                pt.eq(known, 0), log1m_q + gamma * L0,
                pt.logaddexp(log_q + gamma * L1, log1m_q + gamma * L0)))).sum())
        if plausibility:
            z = (log_q - log1m_q + gamma * (L1 - L0))
            p1 = pt.switch(pt.eq(known, 1), 1.0, pt.switch(pt.eq(known, 0), 0.0, pt.sigmoid(z)))
            p1 = p1[pat.item_pattern]
            pm.Deterministic("plausibility", pt.stack([1.0 - p1, p1], axis=-1),
                             dims=("item", "class"))
        if gibbs:
            hyper_vars = [] if hyper is None else [model[n] for n in (*hyper.means, *hyper.scales)]
            step, extra = ((AnnotatorBetaCollapsedGibbs, {"labels": labels}) if sampler == "collapsed"
                           else (AnnotatorBetaGibbs, {}))
            declare_gibbs(model, step, [prevalence, *accuracy_vars, *hyper_vars],
                          patterns=pat, blocks=blocks, hyper=hyper, sweeps=sweeps,
                          reliability=gamma, **extra)
    declare_log_likelihood(model, "labels", partial(log_likelihood, labels=labels),
                           observed=labels.to_dataarray())
    return model


# --------------------------------------------------------------------------------------
# Reading a trace: per-draw accuracies, log-likelihood, replication, label switching
# --------------------------------------------------------------------------------------


def annotator_accuracies(posterior, annotators=None) -> tuple[xr.DataArray, xr.DataArray]:
    """``(sensitivity, specificity)``, each ``(chain, draw, annotator)``, from a posterior
    of any of the three variants (the symmetric accuracy serves as both; pooled values are
    broadcast over ``annotators``, by default the posterior's ``annotator`` coordinate).
    ``posterior`` is ``trace.posterior`` (or a Dataset)."""
    if "accuracy" in posterior:
        return posterior["accuracy"], posterior["accuracy"]
    sens, spec = posterior["sensitivity"], posterior["specificity"]
    if "annotator" not in sens.dims:
        if annotators is None:
            annotators = posterior.coords.get("annotator")
        if annotators is None:
            raise ValueError("pooled accuracies: pass the annotator ids (no 'annotator' coordinate)")
        annotators = np.asarray(annotators)
        ones = xr.DataArray(np.ones(annotators.size), dims="annotator", coords={"annotator": annotators})
        sens, spec = sens * ones, spec * ones
    return sens, spec


def trace_reliability(trace) -> float:
    """The reliability ``gamma`` a trace was sampled with (``constant_data/reliability``;
    1 when the trace does not record one)."""
    constant = trace.get("constant_data") if hasattr(trace, "get") else None
    if constant is None or "reliability" not in constant:
        return 1.0
    return float(constant["reliability"].values)


def _posterior_arrays(trace, labels: Labels):
    posterior = trace.posterior if hasattr(trace, "posterior") else trace
    sens, spec = annotator_accuracies(posterior, labels.annotators)
    q = posterior["prevalence"]
    return (q.values, sens.transpose("chain", "draw", "annotator").values,
            spec.transpose("chain", "draw", "annotator").values, posterior)


def _class_log_likelihoods(labels: Labels, sens: np.ndarray, spec: np.ndarray):
    """``(L0, L1)``, each ``(..., item)``, for accuracies ``(..., annotator)``.

    Computed once per distinct item pattern (:func:`item_patterns`) and gathered per item,
    so the temporaries are ``(draws, labels of distinct patterns)``. An accuracy of exactly
    1 (a Beta draw rounded) gives ``-inf`` for the labels it rules out.
    """
    pat = item_patterns(labels.item, labels.annotator, labels.label, labels.n_items, labels.n_annotators)
    says_positive = pat.label == 1
    lead = sens.shape[:-1]
    flat_sens, flat_spec = sens.reshape(-1, sens.shape[-1]), spec.reshape(-1, spec.shape[-1])
    with np.errstate(divide="ignore"):
        l1 = np.where(says_positive, np.log(flat_sens[:, pat.annotator]),
                      np.log1p(-flat_sens[:, pat.annotator]))
        l0 = np.where(says_positive, np.log1p(-flat_spec[:, pat.annotator]),
                      np.log(flat_spec[:, pat.annotator]))
    # segment sums over patterns for every draw at once: one bincount on (draw, pattern) codes
    n, U = flat_sens.shape[0], pat.n_patterns
    codes = (np.arange(n)[:, None] * U + pat.item[None, :]).ravel()
    L1 = np.bincount(codes, weights=l1.ravel(), minlength=n * U).reshape(n, U)[:, pat.item_pattern]
    L0 = np.bincount(codes, weights=l0.ravel(), minlength=n * U).reshape(n, U)[:, pat.item_pattern]
    shape = (*lead, labels.n_items)
    return L0.reshape(shape), L1.reshape(shape)


def log_likelihood(trace, labels: Labels) -> xr.DataArray:
    """Per-item marginal log-likelihood ``log p(x_i | q, a)`` (``c_i`` summed out),
    ``(chain, draw, item)``: the pointwise terms for ``az.loo`` / ``az.compare``. At a
    reliability ``gamma != 1`` (:func:`trace_reliability`) they are the model's tempered terms
    ``logaddexp(log q + gamma L1_i, log(1 - q) + gamma L0_i)``, whose sum is the model's
    log-likelihood; compare models at ``gamma = 1`` for a predictive density.

    :func:`build` declares it, so :func:`plausible.sample` writes it into the trace
    (``log_likelihood/labels``). Computed in blocks of draws
    (:func:`~plausible.metrics.chunks.iter_sample_blocks`): the temporaries are ``(draws of a
    block, labels + items)``."""
    q, sens, spec, posterior = _posterior_arrays(trace, labels)
    gamma = trace_reliability(trace)
    sample_shape, J = q.shape, labels.n_annotators
    q, sens, spec = q.reshape(-1), sens.reshape(-1, J), spec.reshape(-1, J)
    value = np.empty((q.size, labels.n_items))
    mask = known_log_mask(labels.known, labels.n_items, 2)  # known class: its term only
    for samples, _ in iter_sample_blocks((q.size,), labels.n_annotations + 2 * labels.n_items):
        L0, L1 = _class_log_likelihoods(labels, sens[samples], spec[samples])
        value[samples] = np.logaddexp(np.log(q[samples])[:, None] + mask[:, 1] + gamma * L1,
                                      np.log1p(-q[samples])[:, None] + mask[:, 0] + gamma * L0)
    return xr.DataArray(value.reshape(*sample_shape, labels.n_items), dims=("chain", "draw", "item"),
                        coords={"chain": posterior["chain"].values, "draw": posterior["draw"].values,
                                "item": labels.items})


def replicate_labels(trace, labels: Labels, *, draws: int = 500, seed: int | None = None,
                     classes: str = "new") -> np.ndarray:
    """Replicated labels in the observed design, int ``(sample, annotation)``.

    For each of ``draws`` evenly thinned posterior draws ``(q, a0, a1)``: item classes
    ``c_i ~ Bernoulli(q)`` (``classes="new"``: new items, the replication for checking
    pattern counts) or ``c_i ~ P(c_i | q, a, x)`` (``classes="posterior"``: the same
    items), then ``x_k ~ Bernoulli(c a1 + (1 - c)(1 - a0))`` for every observed
    (item, annotator) slot. Feed the result to
    :func:`plausible.diagnostics.annotation_predictive.annotation_predictive_check`.
    """
    if classes not in ("new", "posterior"):
        raise ValueError(f"classes must be 'new' or 'posterior', got {classes!r}")
    q, sens, spec, posterior = _posterior_arrays(trace, labels)
    chain, draw = thinned_draws(posterior, draws)
    q, sens, spec = q[chain, draw], sens[chain, draw], spec[chain, draw]
    rng = np.random.default_rng(seed)
    if classes == "new":
        p_item = np.broadcast_to(q[:, None], (q.size, labels.n_items))
    else:
        L0, L1 = _class_log_likelihoods(labels, sens, spec)
        gamma = trace_reliability(trace)
        mask = known_log_mask(labels.known, labels.n_items, 2)
        p_item = expit(np.log(q)[:, None] - np.log1p(-q)[:, None] + gamma * (L1 - L0)
                       + mask[:, 1] - mask[:, 0])
    c = rng.random(p_item.shape) < p_item
    c_k = c[:, labels.item]
    p_positive = np.where(c_k, sens[:, labels.annotator], 1.0 - spec[:, labels.annotator])
    return (rng.random(p_positive.shape) < p_positive).astype(np.int64)


def label_probabilities(trace, chain, draw, item, annotator) -> np.ndarray:
    """``P(x = y | z = c)`` of a new label by annotator ``annotator[p]`` on item ``item[p]``,
    float64 ``(sample, pair, class, label_class)`` at the draws ``(chain, draw)`` (index
    arrays): ``[[spec, 1 - spec], [1 - sens, sens]]`` of the annotator, whatever the item."""
    posterior = trace["posterior"]
    sens, spec = annotator_accuracies(posterior)
    sens = sens.transpose("chain", "draw", "annotator").values[chain, draw][:, annotator]
    spec = spec.transpose("chain", "draw", "annotator").values[chain, draw][:, annotator]
    return np.stack([np.stack([spec, 1 - spec], axis=-1),
                     np.stack([1 - sens, sens], axis=-1)], axis=-2)


def label_switching_check(trace) -> xr.DataArray:
    """Share of draws per chain in the mirror-image mode, ``(chain,)``.

    A draw is mirrored when mean sensitivity + mean specificity over annotators is
    ``<= 1`` (annotators worse than chance on average). The reported mode has 0 in every
    chain; anything else means a chain sits in (or visits) the mirror mode — do not
    average such a trace.
    """
    posterior = trace.posterior if hasattr(trace, "posterior") else trace
    sens, spec = (posterior["accuracy"],) * 2 if "accuracy" in posterior else (
        posterior["sensitivity"], posterior["specificity"])
    dims = [d for d in ("annotator",) if d in sens.dims]
    return ((sens.mean(dims) + spec.mean(dims)) <= 1.0).mean("draw")


def item_log_likelihood_point(labels: Labels, prevalence: float, sensitivity, specificity) -> np.ndarray:
    """Per-item marginal log-likelihood at one parameter point, ``(item,)`` (numpy)."""
    sens = np.broadcast_to(np.asarray(sensitivity, float), (labels.n_annotators,))[None]
    spec = np.broadcast_to(np.asarray(specificity, float), (labels.n_annotators,))[None]
    L0, L1 = _class_log_likelihoods(labels, sens, spec)
    return np.logaddexp(np.log(prevalence) + L1[0], np.log1p(-prevalence) + L0[0])


__all__ = [
    "ACCURACY_KINDS",
    "annotator_accuracies",
    "build",
    "item_log_likelihood_point",
    "label_switching_check",
    "log_likelihood",
    "replicate_labels",
    "trace_reliability",
]


ENTRIES = (
    ModelEntry("annotator-beta", build, "labels", "tempering", False,
               "Carpenter's hierarchical Beta sensitivities and specificities, exact Gibbs",
               classes="binary", replicate=replicate_labels,
               label_probabilities=label_probabilities,
               annotator_plot=("sensitivity", "specificity"),
               cluster_chain=True),
)
"""The registry entries of this family (:mod:`plausible.models.registry`)."""
