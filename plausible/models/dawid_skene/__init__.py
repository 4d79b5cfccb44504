"""Bayesian Dawid–Skene (Dawid & Skene 1979; rater's ``dawid_skene``): one confusion matrix
per annotator, independent (:func:`build`) or shrunk towards a population confusion matrix
(:func:`build_hierarchical`); its simplest member, one-coin (:func:`build_one_coin`: one accuracy per
annotator, wrong labels uniform); and MACE (:func:`build_mace`: each annotator truthful or
spamming from its own strategy).

Annotation ``k`` is label ``x_k`` of item ``i_k`` by annotator ``j_k``::

    pi           ~ Dirichlet(a)                 class prevalence, (class,)
    theta_j[c]   ~ Dirichlet(beta_c)            annotator j's labels when the truth is c,
                                                (annotator, class, label_class)
    z_i          ~ Categorical(pi)
    x_k          ~ Categorical(theta_{j_k}[z_{i_k}])       (likelihood to the power gamma)

**Prior.** ``beta_c`` puts ``confusion_prior[0]`` on the diagonal and ``confusion_prior[1]``
elsewhere; the default ``(4, 1)`` has prior mean accuracy ``4 / (C + 3)`` (0.8 for two
classes), which also orients the model (below). ``a = class_concentration`` (1).

**Gibbs** (every step exact), one sweep of the family's kernel
(:class:`~plausible.models.dawid_skene.sampler.DawidSkeneKernel`): ``theta_j[c] | z ~
Dirichlet(beta_c + gamma n_j[c, :])`` for every annotator and row at once (the member's
half-sweep, :mod:`plausible.models.dawid_skene.members`), ``pi | z ~ Dirichlet(a +
counts(z))``, then ``z | pi, theta`` from ``softmax_c(log pi_c + gamma L[i, c])`` with ``L[i,
c] = sum_{k: i_k = i} log theta_{j_k}[c, x_k]``. The Gibbs build declares the kernel as its
one PyMC step (:class:`~plausible.inference.bridges.as_pymc_step.KernelStep`, over ``pi``, ``theta``
and ``z``: ``pm.sample(model=model, step=pl.inference.steps(model))``); by default
:func:`plausible.sample` runs the same kernel in its own driver (about 5 ms a sweep for a
million labels, plausibilities computed from the stored parameters when storing them would
not fit in memory), ``compiled=False`` in PyMC's loop. ``gibbs=False`` sums the classes out
and runs NUTS on ``pi`` and ``theta`` (the independent check).

**Plausibility** is Rao-Blackwellised: per draw the class posterior ``P(z_i | pi, theta, x)``,
not the drawn class.

**Label switching.** The likelihood is invariant under a permutation of the classes applied
to ``z``, ``pi`` and the rows of every ``theta_j``. The reported mode is the one where
classes match the annotators' mean confusion matrix best as they are (no relabelling has a
larger diagonal), favoured by the diagonal prior; chains start with ``z`` at the majority vote.
:func:`label_switching_check` counts the draws outside it. Where the annotators split into
groups that contradict each other, a relabelled reading (the other group right) can hold real
posterior mass that single-item updates never reach; every sweep of full Dawid–Skene,
one-coin and the hierarchical model proposes to exchange two classes in all items at once
(:mod:`plausible.inference.step_methods.class_swap`), so the chains visit such a reading in proportion to
its mass, and the check counts those draws.

**Hierarchical** (:func:`build_hierarchical`; Paun et al. 2018, rater's hierarchical model):
``theta_j[c] ~ Dirichlet(kappa_c mu_c)`` with a population confusion matrix ``mu_c ~
Dirichlet(beta_c)`` (the same diagonal prior) and a concentration per true class ``kappa_c ~
Gamma(2, 0.1)`` (mean 20: an annotator's row weighs like about twenty labels against the
population's; wide enough to let the data pool strongly or barely). The compiled sampler
draws ``(kappa, mu)`` given the classes with every annotator's row integrated out (slice
updates of a Dirichlet-multinomial target,
:class:`~plausible.models.dawid_skene.members.Hierarchical`), then the rows exactly: no
funnel between the concentration and the rows.
A weakly pooled rare class can still be metastable: on Snow's WSD (a class with about four
items) some items move into the rare class with its annotators' rows for hundreds of sweeps.

**Start.** Every member starts ``z`` at the majority vote and each iteration begins with the
annotator parameters drawn given ``z`` (the declared steps' ``first=True``), so the chains
take the orientation the majority gives from the first draw, whatever their start.
The hierarchical model also starts the population at the majority's pooled confusion and
``kappa`` at 1 (jittered to at most ``e^2``), so that a jittered population cannot outweigh
the labels and pull a chain into a relabelled mode before it has learnt its orientation. Annotators with few labels borrow the population's
confusion instead of the prior's.

**One-coin** (:func:`build_one_coin`): ``acc_j ~ Beta(accuracy_prior)`` (default ``(4, 1)``,
prior mean 0.8) and ``theta_j = acc_j`` on the diagonal, ``(1 - acc_j) / (C - 1)`` elsewhere;
exact Gibbs for ``z``, ``pi`` and ``acc_j | z ~ Beta(a + gamma right_j, b + gamma wrong_j)``
(:class:`~plausible.models.dawid_skene.members.OneCoin`). Its trace holds
``accuracy (annotator)``; the log-likelihood, replicates and label-switching check read its
confusion matrices through :func:`confusion_draws`, the same code as the full model.

**MACE** (Hovy et al. 2013; :func:`build_mace`): annotator ``j`` is truthful with
probability ``c_j ~ Beta(competence_prior)`` (default ``(2, 1)``: more often truthful than
not, worth three labels) and otherwise draws from its strategy ``xi_j ~ Dirichlet(1)``, so
``theta_j[c, x] = c_j [x = c] + (1 - c_j) xi_j[x]``. Gibbs: ``z``, ``pi`` as above;
``(c, xi) | z`` through the spam indicators
(:class:`~plausible.models.dawid_skene.members.Mace`); the augmentation repeats
every label, so the Gibbs build needs a whole-number reliability (``gibbs=False``: NUTS,
classes summed out, any real reliability). Annotators whose competence interval sits near 0
are the spammers.

**Per-item log-likelihood** (``az.loo``): ``logsumexp_c(log pi_c + gamma L[i, c])`` per draw
(class summed out). :func:`replicate_labels` gives posterior predictive labels in the
observed design.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pymc as pm
import pytensor.tensor as pt
import xarray as xr
from scipy.optimize import linear_sum_assignment
from scipy.special import logsumexp

from plausible.data.labels import Labels
from plausible.data.tables import reads
from plausible.data.validation import positive, positive_integer
from plausible.diagnostics.annotation_predictive import thinned_draws
from plausible.diagnostics.annotator_quality import annotator_scalars
from plausible.models.dawid_skene import kernel
from plausible.models.dawid_skene import members
from plausible.models.dawid_skene.sampler import (Design, DawidSkeneKernel,
                                                     check_collapsible, sample_dawid_skene)
from plausible.inference.declarations import declare_gibbs, declare_log_likelihood, declare_sampler
from plausible.inference.bridges.as_pymc_step import KernelStep
from plausible.maths.categorical import categorical_draws
from plausible.maths.known_classes import clamp_known
from plausible.metrics.chunks import iter_sample_blocks
from plausible.models.latent_class import (add_class_layer, check_labels, coords, known_mask,
                                           majority_vote)
from plausible.models import classifier_prior
from plausible.models.model_entry import ModelEntry


def confusion_concentration(n_classes: int, confusion_prior) -> np.ndarray:
    """``beta (class, class)``: ``confusion_prior[0]`` on the diagonal, ``[1]`` elsewhere."""
    diagonal, off = (positive("confusion_prior", v) for v in confusion_prior)
    beta = np.full((n_classes, n_classes), off)
    np.fill_diagonal(beta, diagonal)
    return beta


def _confusion_layer(model: pm.Model, labels: Labels, rows, *, gamma: float, gibbs: bool,
                     class_concentration: float, log_p: np.ndarray | None = None) -> None:
    """Add ``class_prior`` (or, with a classifier's ``log_p (item, class)``, its prior:
    :mod:`plausible.models.classifier_prior`), ``confusion (annotator, class, label_class) ~
    Dirichlet(rows)``, the labels' likelihood, ``true_class`` (Gibbs build) or the classes
    summed out (NUTS build), ``plausibility`` and the declared log-likelihood to ``model``.
    ``rows``: the rows' concentration, an array or an expression broadcasting to ``(class,
    label_class)`` per annotator."""
    C = labels.n_classes
    a = np.full(C, positive("class_concentration", class_concentration))
    item, annotator, label = (pt.constant(v) for v in (labels.item, labels.annotator,
                                                        labels.label))
    with model:
        pm.Data("reliability", gamma)
    log_prior = None if log_p is None else classifier_prior.add_prior(model, log_p)
    with model:
        if log_prior is None:
            pi = pm.Dirichlet("class_prior", a=a, dims="class")
            log_prior, class_prior = pt.log(pi)[None, :], {"p": pi}
        else:
            class_prior = {"logit_p": log_prior}
        theta = pm.Dirichlet("confusion", a=pt.broadcast_to(rows, (labels.n_annotators, C, C)),
                             dims=("annotator", "class", "label_class"))
        log_theta = pt.log(theta)
        # L[i, c] = sum over the item's labels of log theta_j[c, x_k]; terms (annotation, class)
        L = pt.inc_subtensor(pt.zeros((labels.n_items, C))[item], log_theta[annotator, :, label])
        log_joint = log_prior + known_mask(labels) + gamma * L
        posterior = pt.exp(pt.special.log_softmax(log_joint, axis=1))
        if gibbs:
            z = pm.Categorical("true_class", **class_prior, dims="item",
                               initval=majority_vote(labels))
            pm.Potential("labels", gamma * log_theta[annotator, z[item], label].sum())
        else:
            pm.Potential("labels", pt.logsumexp(log_joint, axis=1).sum())
        pm.Deterministic("plausibility", posterior, dims=("item", "class"))
    _declare_log_likelihood(model, labels)


SAMPLERS = ("joint", "collapsed")
"""The class sweeps of full Dawid–Skene, one-coin, MACE and hierarchical Dawid–Skene:
``"joint"`` draws the classes given the annotator parameters and back; ``"collapsed"`` draws
each item's class with the parameters integrated out
(:mod:`plausible.models.dawid_skene.collapsed`; whole-number reliability)."""


def _sampler(sampler: str) -> bool:
    """Whether ``sampler`` is the collapsed one (``ValueError`` naming the choices)."""
    if sampler not in SAMPLERS:
        raise ValueError(f"sampler must be one of {SAMPLERS}, got {sampler!r}")
    return sampler == "collapsed"


def _declare_kernel(model: pm.Model, labels: Labels, member, gamma: float,
                    class_concentration: float, *, compiled: bool, collapsed: bool = False,
                    log_p: np.ndarray | None = None, **constant_data) -> None:
    """Declare the family's kernel with ``member``'s annotator half-sweep as the Gibbs build's
    one step (over every free variable, replacing any declared before) and, with
    ``compiled``, as :func:`plausible.sample`'s compiled sampler, whose trace takes per draw
    ``class_prior``, the member's variables and ``classes_changed`` float64, plus the float32
    plausibilities unless they are computed when read."""
    C, J = labels.n_classes, labels.n_annotators
    a = np.full(C, float(class_concentration))
    if collapsed:  # refused when built, not when sampled
        check_collapsible(member, gamma)
    classifier = None if log_p is None else classifier_prior.ClassifierPrior(log_p)
    if classifier is not None:
        constant_data[classifier_prior.CONSTANT] = (("item", "class"), log_p)
    declare_gibbs(model, KernelStep, model.free_RVs, replace=True,
                  kernel=lambda: DawidSkeneKernel(Design(labels), member, a, gamma,
                                                  collapsed=collapsed, classifier=classifier))
    if not compiled:
        return
    parameters = 8 * (C + 1 + sum(int(np.prod(shape))
                                  for _, shape in member.stored(J, C).values()))
    declare_sampler(model, sample_dawid_skene, form="dense",
                    nbytes_per_draw=parameters + 4 * labels.n_items * C,
                    lazy_nbytes_per_draw=parameters, labels=labels, member=member,
                    class_concentration=a, reliability=gamma, constant_data=constant_data,
                    collapsed=collapsed, classifier=classifier)


@reads("labels")
def build(labels: Labels, *, reliability: float = 1.0, gibbs: bool = True, compiled: bool = True,
          confusion_prior: tuple = (4.0, 1.0), class_concentration: float = 1.0,
          sampler: str = "joint", predictions=None) -> pm.Model:
    """PyMC model of Bayesian Dawid–Skene for ``labels`` (``C >= 2`` classes).

    Variables: ``class_prior (class)``, ``confusion (annotator, class, label_class)``,
    ``true_class (item)`` (Gibbs build), deterministic ``plausibility (item, class)``.
    ``reliability``: ``gamma > 0``, the power of the labels' likelihood given the classes.
    ``compiled`` (Gibbs build): :func:`plausible.sample` runs the family's kernel in its own
    driver (:mod:`plausible.models.dawid_skene.sampler`; millions of labels; no
    ``true_class`` in the trace) instead of PyMC's loop with the same kernel as its step.
    ``sampler``: the kernel's class sweep, one of :data:`SAMPLERS`.
    ``predictions``: a classifier's probabilities ``(item, class)`` in the labels' item and
    class order, the prior of each item's class with a learned temperature and class bias
    (:mod:`plausible.models.classifier_prior`; joint sweep) in place of ``class_prior``.
    """
    check_labels(labels)
    return _full(labels, confusion_concentration(labels.n_classes, confusion_prior),
                 reliability=reliability, gibbs=gibbs, compiled=compiled,
                 class_concentration=class_concentration, sampler=sampler,
                 log_p=_log_p(labels, predictions, sampler))


def _log_p(labels: Labels, predictions, sampler: str | None) -> np.ndarray | None:
    """The classifier's log-probabilities of ``predictions`` (None without), refusing the
    collapsed sweep, which integrates out a class prevalence the classifier replaces."""
    if predictions is None:
        return None
    if sampler == "collapsed":
        raise ValueError("a classifier's predictions take the joint class sweep: "
                         "sampler='joint'")
    return classifier_prior.log_probabilities(predictions, labels.items, labels.classes)


def _full(labels: Labels, beta: np.ndarray, *, reliability, gibbs, compiled, class_concentration,
          sampler, log_p=None) -> pm.Model:
    """Full Dawid–Skene with the rows' prior ``beta (class, label_class)``."""
    gamma = positive("reliability", reliability)
    collapsed = _sampler(sampler)
    with pm.Model(coords={**coords(labels), "label_class": labels.classes}) as model:
        pm.Data("confusion_concentration", beta, dims=("class", "label_class"))
    _confusion_layer(model, labels, beta, gamma=gamma, gibbs=gibbs,
                     class_concentration=class_concentration, log_p=log_p)
    if gibbs:
        _declare_kernel(model, labels, members.FullConfusion(beta), gamma, class_concentration,
                        compiled=compiled, collapsed=collapsed, log_p=log_p,
                        confusion_concentration=(("class", "label_class"), beta))
    return model


LEARNED_PRIOR = ((math.log(4.0), 0.0), (1.5, 1.5))
"""``(mean, sd)`` of the normal priors on ``(log d, log o)`` of :func:`build_learned_prior`:
centred on the diagonal prior ``(4, 1)`` of :func:`build`, with a standard deviation of 1.5
on the log scale (a factor of 20 either way within two of them), so that the crowd decides."""


@reads("labels")
def build_learned_prior(labels: Labels, *, reliability: float = 1.0, gibbs: bool = True,
                        compiled: bool = True, prior_prior: tuple = LEARNED_PRIOR,
                        class_concentration: float = 1.0, sampler: str | None = None,
                        predictions=None) -> pm.Model:
    """PyMC model of Dawid–Skene with its confusion prior learned from the crowd: every
    annotator's rows ``theta_j[c] ~ Dirichlet(beta_c)`` with ``beta_c`` ``d`` on the diagonal
    and ``o`` elsewhere, ``log d`` and ``log o`` normal (``prior_prior = ((mean_d, mean_o),
    (sd_d, sd_o))``, default :data:`LEARNED_PRIOR`) and truncated to ``o < d`` (a typical
    annotator names the true class more often than any one wrong class, which orients the
    classes). How accurate a typical annotator is, and how much an annotator's own labels
    weigh against that, are thus learned instead of fixed: the fixed ``(4, 1)`` of
    :func:`build` gives a five-class annotator a prior accuracy of 0.5 worth eight labels a
    row, which swamps the many annotators of a crowd who give a few labels each. Unlike
    :func:`build_hierarchical` the population has no structure of its own (two numbers, not a
    confusion matrix), so it cannot make one class the catch-all of items with mixed labels,
    and the chains mix as full Dawid–Skene's do.

    Variables: ``prior_diagonal`` (``d``), ``prior_off_diagonal`` (``o``), ``confusion
    (annotator, class, label_class)``, ``class_prior``, ``true_class`` (Gibbs build),
    ``plausibility (item, class)``. The kernel draws ``(d, o)`` given the classes with every
    row integrated out (:mod:`plausible.inference.step_methods.symmetric_prior`), then the rows exactly;
    ``compiled``, ``sampler``: as :func:`build_hierarchical` (by default ``"collapsed"`` for
    a whole-number reliability, ``"joint"`` for a tempering one or with ``predictions``);
    ``predictions``: as :func:`build`."""
    check_labels(labels)
    gamma = positive("reliability", reliability)
    log_p = _log_p(labels, predictions, sampler)
    if sampler is None:
        sampler = ("collapsed" if gamma == round(gamma) and gamma >= 1 and log_p is None
                   else "joint")
    collapsed = _sampler(sampler)
    (mean_d, mean_o), (sd_d, sd_o) = prior_prior
    if not mean_o < mean_d:
        raise ValueError(f"prior_prior's means must have log o < log d (o < d), got {mean_o} "
                         f"and {mean_d}")
    sd = (positive("prior_prior sd", sd_d), positive("prior_prior sd", sd_o))
    C = labels.n_classes
    with pm.Model(coords={**coords(labels), "label_class": labels.classes}) as model:
        d = pm.LogNormal("prior_diagonal", mu=mean_d, sigma=sd[0], initval=math.exp(mean_d))
        o = pm.LogNormal("prior_off_diagonal", mu=mean_o, sigma=sd[1],
                         initval=math.exp(mean_o))
        pm.Potential("better_than_chance", pt.switch(pt.lt(o, d), 0.0, -np.inf))
    _confusion_layer(model, labels, o + (d - o) * pt.eye(C), gamma=gamma, gibbs=gibbs,
                     class_concentration=class_concentration, log_p=log_p)
    if gibbs:
        _declare_kernel(model, labels, members.LearnedPrior((mean_d, mean_o), sd), gamma,
                        class_concentration, compiled=compiled, collapsed=collapsed,
                        log_p=log_p)
    return model


@reads("labels")
def build_one_coin(labels: Labels, *, reliability: float = 1.0, gibbs: bool = True,
                   compiled: bool = True, accuracy_prior: tuple = (4.0, 1.0),
                   class_concentration: float = 1.0, sampler: str = "joint") -> pm.Model:
    """PyMC model of the one-coin member (see module): ``accuracy (annotator)``,
    ``class_prior``, ``true_class`` (Gibbs build), ``plausibility (item, class)``.
    ``compiled``, ``sampler``: as :func:`build`."""
    check_labels(labels)
    gamma = positive("reliability", reliability)
    collapsed = _sampler(sampler)
    a, b = (positive("accuracy_prior", v) for v in accuracy_prior)
    with pm.Model(coords=coords(labels)) as model:
        accuracy = pm.Beta("accuracy", a, b, dims="annotator",
                           initval=np.full(labels.n_annotators, a / (a + b)))
        annotator = pt.constant(labels.annotator)
        log_correct, log_incorrect = pt.log(accuracy)[annotator], pt.log1p(-accuracy)[annotator]
    add_class_layer(model, labels, log_correct, log_incorrect, gibbs=gibbs,
                    class_concentration=positive("class_concentration", class_concentration),
                    plausibility=True, reliability=gamma)
    if gibbs:
        _declare_kernel(model, labels, members.OneCoin((a, b)), gamma, class_concentration,
                        compiled=compiled, collapsed=collapsed)
    _declare_log_likelihood(model, labels)
    return model


WHOLE_RELIABILITY = "MACE's Gibbs sampler repeats every label; pass gibbs=False to temper with NUTS"


@reads("labels")
def build_mace(labels: Labels, *, reliability: float = 1, gibbs: bool = True,
               compiled: bool = True, competence_prior: tuple = (2.0, 1.0),
               strategy_concentration: float = 1.0, class_concentration: float = 1.0,
               sampler: str = "joint") -> pm.Model:
    """PyMC model of MACE (see module): ``competence (annotator)``, ``strategy (annotator,
    label_class)``, ``class_prior``, ``true_class`` (Gibbs build), ``plausibility (item,
    class)``. ``reliability``: a whole number with ``gibbs=True``, any real > 0 otherwise.
    ``compiled``, ``sampler``: as :func:`build` (collapsed: each item's class and its labels'
    spam indicators with every competence and strategy integrated out)."""
    check_labels(labels)
    collapsed = _sampler(sampler)
    gamma = (positive_integer("reliability", reliability, WHOLE_RELIABILITY) if gibbs
             else positive("reliability", reliability))
    a, b = (positive("competence_prior", v) for v in competence_prior)
    delta = np.full(labels.n_classes, positive("strategy_concentration", strategy_concentration))
    C = labels.n_classes
    with pm.Model(coords={**coords(labels), "label_class": labels.classes}) as model:
        competence = pm.Beta("competence", a, b, dims="annotator",
                             initval=np.full(labels.n_annotators, a / (a + b)))
        strategy = pm.Dirichlet("strategy", a=np.broadcast_to(delta, (labels.n_annotators, C)),
                                dims=("annotator", "label_class"))
        annotator = pt.constant(labels.annotator)
        spam = (1 - competence[annotator]) * strategy[annotator, pt.constant(labels.label)]
        log_correct = pt.log(competence[annotator] + spam)
        log_incorrect = pt.log(spam) + np.log(C - 1)  # per wrong class: log(spam)
    add_class_layer(model, labels, log_correct, log_incorrect, gibbs=gibbs,
                    class_concentration=positive("class_concentration", class_concentration),
                    plausibility=True, reliability=gamma)
    if gibbs:
        _declare_kernel(model, labels, members.Mace((a, b), delta, gamma), gamma,
                        class_concentration, compiled=compiled, collapsed=collapsed)
    _declare_log_likelihood(model, labels)
    return model


def mace_spammer(parameters: dict) -> np.ndarray:
    """MACE: whether each annotator spams more often than it answers truthfully, competence
    ``c_j < 1/2``, per draw ``(sample, annotator)`` from ``parameters["competence"]``."""
    return parameters["competence"] < 0.5


SENSITIVITY = ("sensitivity", "specificity")
"""The parameters the report plots for two classes: each annotator's sensitivity and
specificity."""


def annotator_parameters(posterior) -> dict[str, np.ndarray]:
    """What the report shows of each annotator: every per-annotator scalar of the posterior
    (one-coin's accuracy, MACE's competence) and, for two classes, each annotator's
    sensitivity ``theta_j[1, 1]`` and specificity ``theta_j[0, 0]`` (class 1 the positive)
    from its confusion rows, each ``(sample, annotator)``."""
    out = annotator_scalars(posterior)
    confusion = posterior.get("confusion")
    if (confusion is not None and "class" in confusion.dims and confusion.sizes["class"] == 2
            and confusion.sizes["label_class"] == 2):
        flat = confusion.transpose("chain", "draw", "annotator", "class", "label_class").values
        flat = flat.reshape(-1, *flat.shape[2:])
        out["sensitivity"], out["specificity"] = flat[:, :, 1, 1], flat[:, :, 0, 0]
    return out


def mean_confusion_rows(posterior, annotators) -> xr.DataArray:
    """Posterior mean confusion matrices of ``annotators``, ``(annotator, class,
    label_class)``, headed by the population's (``"population"``) in the hierarchical model."""
    mean = posterior["confusion"].mean(("chain", "draw")).sel(annotator=list(annotators))
    if "population_confusion" in posterior:
        population = posterior["population_confusion"].mean(("chain", "draw"))
        mean = population.expand_dims(annotator=["population"]).combine_first(mean) \
            .sel(annotator=["population", *annotators])
    return mean


def confusion_draws(posterior, chain, draw) -> np.ndarray:
    """Confusion matrices ``theta (..., annotator, class, label_class)`` float64 at ``[chain,
    draw]``: the full model's ``confusion``; one-coin's ``accuracy`` spread as ``acc`` on the
    diagonal and ``(1 - acc) / (C - 1)`` elsewhere; MACE's ``c [x = c] + (1 - c) xi[x]`` (the
    compiled sampler's members' own :meth:`confusion`, so both routes read one formula)."""
    C = posterior.sizes["class"]
    if "competence" in posterior.data_vars:
        c = _read(posterior["competence"].transpose("chain", "draw", "annotator"), chain, draw)
        xi = _read(posterior["strategy"].transpose("chain", "draw", "annotator", "label_class"),
                   chain, draw)
        return members.Mace.confusion({"competence": c, "strategy": xi}, C)
    if "confusion" in posterior.data_vars:
        theta = posterior["confusion"].transpose("chain", "draw", "annotator", "class",
                                                 "label_class")
        return _read(theta, chain, draw)
    accuracy = _read(posterior["accuracy"].transpose("chain", "draw", "annotator"), chain, draw)
    return members.OneCoin.confusion({"accuracy": accuracy}, C)


def _read(variable: xr.DataArray, chain, draw) -> np.ndarray:
    """``variable[chain, draw]`` as float64 (ints, a slice of draws, or paired index arrays,
    the latter reading the whole variable once)."""
    if isinstance(draw, np.ndarray):
        return np.asarray(variable.values, dtype=np.float64)[chain, draw]
    return np.asarray(variable.data[chain, draw], dtype=np.float64)


def _majority_confusion(labels: Labels, beta: np.ndarray) -> np.ndarray:
    """Pooled confusion of the labels against the majority vote, smoothed by ``beta``
    ``(class, label_class)``: the population's start, oriented like the majority."""
    z = majority_vote(labels)
    C = labels.n_classes
    counts = np.bincount(z[labels.item] * C + labels.label, minlength=C * C).reshape(C, C)
    return (counts + beta) / (counts + beta).sum(axis=1, keepdims=True)


@reads("labels")
def build_hierarchical(labels: Labels, *, reliability: float = 1.0, gibbs: bool = True,
                       compiled: bool = True, confusion_prior: tuple = (4.0, 1.0),
                       concentration_prior: tuple = (2.0, 0.1), class_concentration: float = 1.0,
                       sampler: str | None = None) -> pm.Model:
    """PyMC model of hierarchical Dawid–Skene (see module): ``population_confusion (class,
    label_class)``, ``concentration (class)``, ``confusion (annotator, class, label_class)``,
    ``class_prior``, ``true_class`` (Gibbs build), ``plausibility (item, class)``.
    ``concentration_prior``: Gamma ``(shape, rate)`` of ``kappa_c``. The kernel draws
    ``(kappa, mu)`` with the rows integrated out
    (:class:`~plausible.models.dawid_skene.members.Hierarchical`); ``compiled``,
    ``sampler``: as :func:`build` (collapsed: the classes given the population with the rows
    integrated out); by default ``"collapsed"`` for a whole-number reliability and
    ``"joint"`` for a tempering one. On real and simulated crowds the collapsed scan's ESS per
    second of the worst plausibility is 0.9-3.4 times the joint scan's
    (``benchmarks/bench_label_mixing.py``), and no chain stays stuck with a rare class (Snow
    et al.'s WSD, where the joint scan's chains sit in or out of it for hundreds of sweeps).
    """
    check_labels(labels)
    gamma = positive("reliability", reliability)
    if sampler is None:
        sampler = "collapsed" if gamma == round(gamma) and gamma >= 1 else "joint"
    collapsed = _sampler(sampler)
    shape, rate = (positive("concentration_prior", v) for v in concentration_prior)
    beta = confusion_concentration(labels.n_classes, confusion_prior)
    with pm.Model(coords={**coords(labels), "label_class": labels.classes}) as model:
        mu = pm.Dirichlet("population_confusion", a=beta, dims=("class", "label_class"),
                          initval=_majority_confusion(labels, beta))
        kappa = pm.Gamma("concentration", alpha=shape, beta=rate, dims="class",
                         initval=np.ones(labels.n_classes))
    _confusion_layer(model, labels, kappa[:, None] * mu, gamma=gamma, gibbs=gibbs,
                     class_concentration=class_concentration)
    if gibbs:
        member = members.Hierarchical(beta, (shape, rate), _majority_confusion(labels, beta))
        _declare_kernel(model, labels, member, gamma, class_concentration, compiled=compiled,
                        collapsed=collapsed)
    return model


def _log_class_prior(trace, chain, draw) -> np.ndarray:
    """``log pi (sample, class)`` at ``[chain, draw]``, or, for a model that took a
    classifier's predictions, the items' log prior ``(sample, item, class)``
    (:func:`plausible.models.classifier_prior.log_prior`)."""
    posterior = trace["posterior"]
    if classifier_prior.uses_classifier(trace):
        return classifier_prior.log_prior(posterior, trace["constant_data"], chain, draw)
    pi = _read(posterior["class_prior"].transpose("chain", "draw", "class"), chain, draw)
    with np.errstate(divide="ignore"):
        return np.log(pi.reshape(-1, pi.shape[-1]))


def _confusion_samples(posterior, chain, draw) -> np.ndarray:
    """``theta (sample, annotator, class, label_class)`` at ``[chain, draw]``."""
    theta = confusion_draws(posterior, chain, draw)
    return theta.reshape(-1, *theta.shape[-3:])


def class_log_likelihood(labels: Labels, theta: np.ndarray) -> np.ndarray:
    """``L (sample, item, class)``, ``L[s, i, c] = sum_{k: i_k = i} log theta[s, j_k, c, x_k]``,
    for confusion matrices ``theta (sample, annotator, class, label_class)``."""
    design = Design(labels)
    with np.errstate(divide="ignore"):
        table = design.table(np.log(np.asarray(theta, dtype=np.float64)))
    return kernel.class_log_likelihood_kernel(table, design.offsets, design.code)


def _declare_log_likelihood(model: pm.Model, labels: Labels) -> None:
    """Declare :func:`log_likelihood` with the labels' kernel layout built once, on the first
    read (a log-likelihood computed when read reads it block by block)."""
    design = functools.cache(lambda: Design(labels))
    declare_log_likelihood(model, "labels",
                           lambda trace: log_likelihood(trace, labels, design=design()),
                           observed=labels.to_dataarray())


def log_likelihood(trace, labels: Labels, *, design: Design | None = None) -> xr.DataArray:
    """Per-item ``logsumexp_c(log pi_c + gamma L[i, c])``, ``(chain, draw, item)``, read in
    blocks of draws, one compiled pass over the labels per draw (``design``: the labels'
    :class:`~plausible.models.dawid_skene.sampler.Design`, built here when not given)."""
    posterior = trace["posterior"]
    gamma = float(trace["constant_data"]["reliability"])
    shape = (posterior.sizes["chain"], posterior.sizes["draw"])
    out = np.empty((shape[0] * shape[1], labels.n_items))
    width = labels.n_items + labels.n_annotators * labels.n_classes ** 2
    design = Design(labels) if design is None else design
    if classifier_prior.uses_classifier(trace):
        width += labels.n_items * labels.n_classes
    for samples, (chain, draw) in iter_sample_blocks(shape, width):
        log_pi = _log_class_prior(trace, chain, draw)
        with np.errstate(divide="ignore"):
            table = design.table(np.log(_confusion_samples(posterior, chain, draw)))
        out[samples] = kernel.marginal_log_likelihood_kernel(log_pi, table, gamma,
                                                             design.offsets, design.code,
                                                             design.fixed)
    return xr.DataArray(out.reshape(*shape, labels.n_items), dims=("chain", "draw", "item"),
                        coords={"chain": posterior["chain"].values,
                                "draw": posterior["draw"].values, "item": labels.items})


def replicate_labels(trace, labels: Labels, *, draws: int = 500, seed: int | None = None,
                     classes: str = "new") -> np.ndarray:
    """Replicated labels in the observed design, int ``(sample, annotation)``: for each of
    ``draws`` thinned draws, classes from ``pi`` (``classes="new"``) or from the items'
    posterior (``"posterior"``), then ``x_k ~ theta_{j_k}[z_{i_k}]``."""
    if classes not in ("new", "posterior"):
        raise ValueError(f"classes must be 'new' or 'posterior', got {classes!r}")
    posterior = trace["posterior"]
    chain, draw = thinned_draws(posterior, draws)
    theta = _confusion_samples(posterior, chain, draw)
    gamma = float(trace["constant_data"]["reliability"])
    rng = np.random.default_rng(seed)
    C = labels.n_classes
    out = np.empty((theta.shape[0], labels.n_annotations), dtype=np.int64)
    # blocks of draws: the temporaries are (draws, labels or items, class)
    for block, _ in iter_sample_blocks((theta.shape[0],),
                                       (labels.n_annotations + labels.n_items) * C):
        n = block.stop - block.start
        log_pi = _log_class_prior(trace, chain[block], draw[block])  # a block: (n, item, C)
        if log_pi.ndim == 2:
            log_pi = log_pi[:, None, :]
        if classes == "new":
            p_item = np.broadcast_to(np.exp(log_pi), (n, labels.n_items, C))
        else:
            log_joint = log_pi + gamma * class_log_likelihood(labels, theta[block])
            p_item = clamp_known(np.exp(log_joint - logsumexp(log_joint, axis=-1,
                                                               keepdims=True)), labels.known)
        z = categorical_draws(rng, p_item)
        rows = theta[block][np.arange(n)[:, None], labels.annotator[None, :], z[:, labels.item]]
        out[block] = categorical_draws(rng, rows)
    return out


def label_probabilities(trace, chain, draw, item, annotator) -> np.ndarray:
    """``P(x = y | z = c)`` of a new label by annotator ``annotator[p]`` on item ``item[p]``,
    float64 ``(sample, pair, class, label_class)`` at the draws ``(chain, draw)`` (index
    arrays): the annotator's confusion matrix, whatever the item (every member of the
    family, :func:`confusion_draws`)."""
    return confusion_draws(trace["posterior"], chain, draw)[:, annotator]


def mean_confusion(trace) -> xr.DataArray:
    """The annotators' mean confusion matrix per draw, ``(chain, draw, class, label_class)``,
    for every member of the family (each is linear in its parameters, so the mean is taken on
    them: one-coin's accuracy, MACE's ``c`` and ``(1 - c) xi``)."""
    posterior = trace["posterior"]
    C = posterior.sizes["class"]
    eye = xr.DataArray(np.eye(C), dims=("class", "label_class"))
    if "accuracy" in posterior.data_vars:
        acc = posterior["accuracy"].mean("annotator")
        return acc * eye + (1 - acc) / (C - 1) * (1 - eye)
    if "competence" in posterior.data_vars:
        c, xi = posterior["competence"], posterior["strategy"]
        spam = ((1 - c) * xi).mean("annotator")
        return c.mean("annotator") * eye + spam.expand_dims({"class": C}).assign_coords(
            {"class": posterior["class"]})
    return posterior["confusion"].mean("annotator")


def label_switching_check(trace) -> xr.DataArray:
    """Share of draws per chain outside the reported mode, ``(chain,)``: draws whose classes
    would match the annotators' mean confusion matrix (:func:`mean_confusion`) better
    relabelled — some permutation ``sigma`` of the classes has a larger ``sum_c theta[c,
    sigma(c)]`` than the identity (an assignment problem per draw, so any relabelling counts,
    a swap of two of many classes included, while a rare class whose row is merely uncertain
    does not); 0 in the reported mode."""
    theta = mean_confusion(trace).transpose("chain", "draw", "class", "label_class")
    values = theta.values
    C = values.shape[-1]
    flat = values.reshape(-1, C, C)
    identity = np.trace(flat, axis1=1, axis2=2)
    best = np.array([m[linear_sum_assignment(m, maximize=True)].sum() for m in flat])
    outside = (best > identity + 1e-12).reshape(values.shape[:2])
    return xr.DataArray(outside.mean(axis=1), dims="chain",
                        coords={"chain": theta["chain"].values}, name="outside_mode")


__all__ = ["build", "build_hierarchical", "build_learned_prior", "build_mace", "build_one_coin",
           "class_log_likelihood", "label_probabilities",
           "confusion_concentration", "confusion_draws", "label_switching_check",
           "log_likelihood", "mace_spammer", "mean_confusion", "mean_confusion_rows",
           "annotator_parameters", "replicate_labels"]


ENTRIES = (
    ModelEntry("dawid-skene", build, "labels", "tempering", False,
               "Bayesian Dawid-Skene: a confusion matrix per annotator, exact Gibbs (compiled)",
               replicate=replicate_labels,
               label_probabilities=label_probabilities,
               annotator_parameters=annotator_parameters, annotator_plot=SENSITIVITY,
               confusion=mean_confusion_rows,
               cluster_chain=True),
    ModelEntry("hierarchical-dawid-skene", build_hierarchical, "labels",
               "tempering", False,
               "Dawid-Skene with confusion rows shrunk to a population matrix: collapsed "
               "class sweeps, slice for the population, exact rows (compiled)", replicate=replicate_labels,
               label_probabilities=label_probabilities,
               annotator_parameters=annotator_parameters, annotator_plot=SENSITIVITY,
               confusion=mean_confusion_rows,
               cluster_chain=True),
    ModelEntry("learned-prior-dawid-skene", build_learned_prior, "labels",
               "tempering", False, "Dawid-Skene whose confusion prior (how often a typical "
               "annotator is right, how much its own labels weigh) is learned from the crowd: "
               "collapsed class sweeps, slice for the prior, exact rows (compiled)",
               replicate=replicate_labels,
               label_probabilities=label_probabilities,
               annotator_parameters=annotator_parameters, annotator_plot=SENSITIVITY,
               confusion=mean_confusion_rows,
               cluster_chain=True),
    ModelEntry("one-coin", build_one_coin, "labels", "tempering", False,
               "one accuracy per annotator, wrong labels uniform (Dawid-Skene family), exact "
               "Gibbs (compiled)", replicate=replicate_labels,
               label_probabilities=label_probabilities,
               annotator_parameters=annotator_parameters, annotator_plot=SENSITIVITY,
               cluster_chain=True),
    ModelEntry("mace", build_mace, "labels", "repetitions", False,
               "MACE: each annotator truthful or spamming from its own strategy, exact Gibbs "
               "(compiled; real reliability: gibbs=False)", replicate=replicate_labels,
               label_probabilities=label_probabilities,
               annotator_parameters=annotator_parameters, annotator_plot=SENSITIVITY,
               spammer=mace_spammer,
               cluster_chain=True),
)
"""The registry entries of this family (:mod:`plausible.models.registry`)."""
