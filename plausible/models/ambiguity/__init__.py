"""Item ambiguity with annotator confusion: each item has its own distribution over the
classes, and each annotator reports the class they intended through their own Dawid–Skene
confusion matrix.

The latent-class models (Dawid & Skene 1979 and after) give every item one true class and
read all disagreement as annotator error, so an item that careful annotators genuinely split
on concentrates on one class as its labels accumulate. The Dirichlet vote models (Stutz et al.
2023) keep each item's split but take every vote at face value. This model keeps both: an
item's plausibility ``lambda_i`` says how ambiguous the item is, each annotator's confusion
matrix how reliably they report what they see. It is the item-level ambiguity of Dumitrache
et al.'s CrowdTruth (2018) and of Peterson et al.'s CIFAR-10H (2019: a distribution of human
judgements per image) combined with Dawid–Skene's annotators; learning the item
distributions' Dirichlet population from all items follows the hierarchical models of Paun et
al. (2018).

Annotation ``r`` is label ``x_r`` of item ``i_r`` by annotator ``j_r``::

    kappa        ~ Gamma(1, 1 / C)                concentration (as hierarchical-dirichlet)
    mu           ~ Dirichlet(1, ..., 1)           base measure, (class,)
    lambda_i     ~ Dirichlet(kappa mu)            the item's distribution, (item, class)
    theta_j[c]   ~ Dirichlet(beta_c)              annotator j's labels when they intend c
    t_r          ~ Categorical(lambda_{i_r})      the class annotator j_r saw in item i_r
    x_r          ~ Categorical(theta_{j_r}[t_r])  (likelihood to the power gamma)

**One-coin annotators** (:func:`build_one_coin`, ``ambiguity-one-coin``): ``theta_j =
acc_j`` on the diagonal and ``(1 - acc_j) / (C - 1)`` elsewhere, ``acc_j ~ Beta(4, 1)``, as
the one-coin member of the Dawid–Skene family (:func:`plausible.models.dawid_skene.
build_one_coin`). With a handful of labels per annotator the ``C (C - 1)`` free entries of a
confusion matrix are mostly prior, and the full matrices of a crowd can take up a split
between two neighbouring classes as a directed confusion shared by many annotators; one
accuracy cannot, so the split stays on the item (see ``benchmarks/study_auto_candidates.py``).

**Priors.** ``beta_c`` is Dawid–Skene's default
(:func:`plausible.models.dawid_skene.confusion_concentration`, ``confusion_prior = (4, 1)``:
4 on the diagonal, 1 elsewhere, prior mean accuracy ``4 / (C + 3)``), which also orients the
model: without it relabelling the intended classes and the confusion rows together leaves the
likelihood unchanged. ``kappa`` and ``mu`` take the hierarchical Dirichlet vote model's
priors (:func:`plausible.models.dirichlet.build_hierarchical`): an exponential ``kappa`` whose
mean is ``alpha = 1`` per class, a uniform base measure. ``concentration=`` (a vector
``alpha (class,)``) holds the population fixed instead, for checks against enumeration and for
a prior known from elsewhere.

**Identifiability.** With one label per annotator and item, a split item looks like a
confusable annotator; the two are told apart through the annotators' other items: an
annotator who agrees with the others on clear items is reliable, so their disagreement on an
item is the item's. The confusion prior's diagonal weight decides how much of an unexplained
split is put on the item rather than on the annotators.

**Reliability** ``gamma`` multiplies the labels' log-likelihood with the intended classes
summed out, ``gamma log sum_c lambda_{i c} theta_j[c, x]``; the Gibbs build repeats every
annotation ``gamma`` times, each copy with its own intended class, so it needs a whole number
(``gibbs=False``: NUTS, any real ``gamma > 0``).

**Gibbs** (:class:`~plausible.models.ambiguity.sampler.AmbiguityKernel`, compiled, every
step exact): the confusion rows given the intended classes, the population ``(kappa, mu)``
given the per-item counts of intended classes with every ``lambda_i`` integrated out (a
Dirichlet-multinomial population, as the hierarchical Dirichlet vote model draws it), each
intended class ``t_r`` with ``lambda`` integrated out, ``P(t_r = c | rest) ∝ (alpha_c +
n_{i c}^{-r}) theta_j[c, x_r]`` (``sampler="single-site"``) or, where the Pólya urn below is
cheap, ``kappa`` with the intended classes summed out too and then each item's intended
classes jointly (``sampler="urn"``), and at kept draws ``lambda_i ~ Dirichlet(alpha + n_i)``. The
kernel is :func:`plausible.sample`'s sampler and the model's one PyMC step
(``pm.sample(model=model, step=pl.inference.steps(model))``). ``gibbs=False`` leaves the PyMC
graph, with the intended classes summed out, to NUTS: the independent check.

**Plausibility** is ``lambda_i``, the item's distribution over the classes (the registry's
*item distribution*), not the posterior of one true class: an item that reliable annotators
split on stays split however many labels it gets.

**Per-item log-likelihood** (``az.loo``): ``log p(x_i | theta, alpha)``, the item's labels
with its ``lambda_i`` integrated out, as the latent-class models integrate out the item's
class, so the two families compare item for item. It is a Dirichlet mixture over every
assignment of the item's intended classes, summed exactly by the Pólya urn over their counts
(:mod:`plausible.maths.dirichlet_mixture`); a whole-number ``gamma`` repeats the labels. Its
cost grows as ``binom(n + C - 1, C)`` for an item with ``n`` labels: beyond
:data:`MARGINAL_COST` products a draw the model declares none and warns. (Conditioning on
each draw's own ``lambda_i`` instead would be cheap, but leaving item ``i`` out must take its
``lambda_i`` with it, which importance sampling over the draws cannot do: Pareto ``k`` was
large for most items.)

**Known classes** are refused: a gold label says which class an item is, while this model's
plausibility is how the item's readers split on it, which one gold label does not fix.
"""

from __future__ import annotations

import warnings

import numpy as np
import pymc as pm
import pytensor.tensor as pt
import xarray as xr

from plausible.data.labels import Labels
from plausible.data.tables import reads
from plausible.data.validation import positive, positive_integer
from plausible.diagnostics.annotation_predictive import thinned_draws
from plausible.models.ambiguity.sampler import AmbiguityKernel
from plausible.models.dawid_skene.members import OneCoin
from plausible.inference.step_methods.dirichlet_draws import dense_draws
from plausible.inference.declarations import declare_log_likelihood
from plausible.inference.bridges.as_pymc_step import declare_kernel
from plausible.metrics.chunks import iter_sample_blocks
from plausible.maths.categorical import categorical_draws
from plausible.maths.dirichlet_mixture import compositions, log_marginal, pass_cost
from plausible.models.dawid_skene import confusion_concentration, confusion_draws
from plausible.models.latent_class import _read, check_labels, coords
from plausible.models.model_entry import ModelEntry
from plausible.metrics.meaning import ITEM_DISTRIBUTION
from plausible.models import dawid_skene

WHOLE_RELIABILITY = ("the ambiguity model's Gibbs sampler repeats every label; pass "
                     "gibbs=False to temper with NUTS")


MARGINAL_COST = 10**7
"""Most products one draw's marginal log-likelihood may take
(:func:`plausible.maths.dirichlet_mixture.pass_cost`): 4 x 1000 draws then take about
``4 10^10``, under a minute on two cores. Beyond it the model declares no log-likelihood
and says why (LOO cannot rank it)."""


def marginal_cost(labels: Labels, reliability: int = 1) -> int:
    """Products one draw of :func:`log_likelihood` takes on ``labels`` (its items' labels
    repeated ``reliability`` times)."""
    return pass_cost(reliability * np.bincount(labels.item, minlength=labels.n_items),
                     labels.n_classes)


def log_likelihood(trace, labels: Labels, concentration=None) -> xr.DataArray:
    """Per item ``log p(x_i | theta, alpha)`` with ``lambda_i`` integrated out (module):
    the Pólya-urn sum over the item's intended classes
    (:func:`plausible.maths.dirichlet_mixture.log_marginal`) at each draw's confusion
    matrices (:func:`~plausible.models.dawid_skene.confusion_draws`) and population ``alpha
    = kappa mu`` (or the fixed ``concentration``), its labels repeated ``gamma`` times,
    ``(chain, draw, item)``, in blocks of draws."""
    posterior = trace["posterior"]
    gamma = int(round(float(trace["constant_data"]["reliability"])))
    shape = (posterior.sizes["chain"], posterior.sizes["draw"])
    C, I, J = labels.n_classes, labels.n_items, labels.n_annotators
    order = np.argsort(labels.item, kind="stable")
    annotator = np.repeat(labels.annotator[order].astype(np.int64), gamma)
    label = np.repeat(labels.label[order].astype(np.int64), gamma)
    n_labels = gamma * np.bincount(labels.item, minlength=I)
    start = np.concatenate([[0], np.cumsum(n_labels)]).astype(np.int64)
    counts, successor, offset = compositions(C, int(n_labels.max(initial=0)))
    out = np.empty((shape[0] * shape[1], I))
    for samples, index in iter_sample_blocks(shape, J * C * C + C):
        theta_block = np.ascontiguousarray(confusion_draws(posterior, *index)).reshape(
            -1, J, C, C)
        if concentration is None:
            alpha = (posterior["concentration"].values[index].reshape(-1, 1)
                     * posterior["base_measure"].transpose("chain", "draw", "class")
                     .values[index].reshape(-1, C)).astype(np.float64)
        else:
            alpha = np.broadcast_to(np.asarray(concentration, dtype=np.float64),
                                    (theta_block.shape[0], C)).copy()
        log_marginal(theta_block, alpha, annotator, label, start, counts, successor, offset,
                     out[samples])
    return xr.DataArray(out.reshape(*shape, I), dims=("chain", "draw", "item"),
                        coords={"chain": posterior["chain"].values,
                                "draw": posterior["draw"].values, "item": labels.items})


def replicate_labels(trace, labels: Labels, *, draws: int = 500, seed: int | None = None,
                     items: str = "new") -> np.ndarray:
    """Replicated labels in the observed design, int ``(sample, annotation)``: for each of
    ``draws`` thinned draws, each item's distribution drawn afresh from the population,
    ``lambda_i ~ Dirichlet(kappa mu)`` (``items="new"``: new items like these, the check of
    the population and the confusion matrices), or the item's own posterior draw
    (``"posterior"``); then every label's own intended class ``t_r ~ lambda_{i_r}`` and ``x_r
    ~ theta_{j_r}[t_r]``. ``"new"`` needs the learned population (a fixed ``concentration``
    is not in the trace)."""
    if items not in ("new", "posterior"):
        raise ValueError(f"items must be 'new' or 'posterior', got {items!r}")
    posterior = trace["posterior"]
    if items == "new" and "concentration" not in posterior:
        raise ValueError("items='new' draws from the learned population; this run held it "
                         "fixed (concentration=): pass items='posterior'")
    chain, draw = thinned_draws(posterior, draws)
    rng = np.random.default_rng(seed)
    C, I = labels.n_classes, labels.n_items
    out = np.empty((chain.size, labels.n_annotations), dtype=np.int64)
    # blocks of draws: the temporaries are (draws, labels or items, class) and the rows
    width = I * C + 2 * labels.n_annotations * C + labels.n_annotators * C * C
    for block, _ in iter_sample_blocks((chain.size,), width):
        c, d = chain[block], draw[block]
        theta = confusion_draws(posterior, c, d)  # (sample, annotator, class, label_class)
        if items == "new":
            alpha = (_read(posterior, "concentration", c, d)[:, None]
                     * _read(posterior, "base_measure", c, d))
            # exact for tiny shapes (log space), as the sampler's; one row per (draw, item)
            lam = np.empty((1, c.size * I, C))
            dense_draws(rng, np.repeat(alpha, I, axis=0), lam)
            lam = lam.reshape(c.size, I, C)
        else:
            lam = _read(posterior, "plausibility", c, d).astype(np.float64)
        intended = categorical_draws(rng, lam[:, labels.item])  # (sample, annotation)
        rows = theta[np.arange(c.size)[:, None], labels.annotator[None, :], intended]
        out[block] = categorical_draws(rng, rows)
    return out


def simulate(rng: np.random.Generator, n_items: int, n_annotators: int, n_classes: int = 2, *,
             confusion_prior: tuple = (4.0, 1.0), accuracy_prior: tuple | None = None
             ) -> tuple[dict, Labels]:
    """Parameters and labels drawn from the model's prior (the default priors of
    :func:`build`, or with ``accuracy_prior`` those of :func:`build_one_coin`), every
    annotator labelling every item once, each label through its own intended class: ``kappa
    ~ Gamma(1, rate 1 / C)``, ``mu ~ Dirichlet(1)``, ``lambda_i ~ Dirichlet(kappa mu)``,
    ``theta_j[c] ~ Dirichlet(beta_c)`` (one-coin: ``acc_j ~ Beta(accuracy_prior)`` spread
    over ``theta_j``), ``t ~ lambda_i``, ``x ~ theta_j[t]``. Returns the truth (``"alpha"
    (class,)``, ``"plausibility" (item, class)``, ``"confusion" (annotator, class,
    label_class)``, one-coin also ``"accuracy" (annotator,)``) and the labels, for
    simulation-based calibration."""
    C, I, J = n_classes, n_items, n_annotators
    alpha = rng.gamma(1.0, C) * rng.dirichlet(np.ones(C))
    lam = rng.dirichlet(alpha, I)
    truth = {"alpha": alpha, "plausibility": lam}
    if accuracy_prior is None:
        beta = confusion_concentration(C, confusion_prior)
        theta = np.stack([[rng.dirichlet(beta[c]) for c in range(C)] for _ in range(J)])
    else:
        truth["accuracy"] = rng.beta(*accuracy_prior, size=J)
        theta = OneCoin.confusion(truth, C)
    truth["confusion"] = theta
    item, annotator = np.repeat(np.arange(I), J), np.tile(np.arange(J), I)
    intended = categorical_draws(rng, lam[item])
    label = categorical_draws(rng, theta[annotator, intended])
    labels = Labels(item, annotator, label, np.arange(I), np.arange(J), np.arange(C))
    return truth, labels


@reads("labels")
def build(labels: Labels, *, reliability: float = 1, confusion_prior: tuple = (4.0, 1.0),
          gibbs: bool = True, concentration=None, concentration_prior: tuple | None = None,
          sampler: str | None = None) -> pm.Model:
    """PyMC model of item ambiguity with Dawid–Skene annotators (module) for ``labels``.

    Variables: ``concentration`` (``kappa``) and ``base_measure (class)`` (``mu``), unless
    the population is fixed; ``plausibility (item, class)`` (``lambda``), ``confusion
    (annotator, class, label_class)``. ``reliability``: ``gamma``, a whole number with
    ``gibbs=True`` (the sampler repeats every label), any real > 0 otherwise.
    ``confusion_prior``: ``(diagonal, off-diagonal)`` of the confusion rows' Dirichlet.
    ``concentration``: a fixed ``alpha (class,)`` (positive; a number: the same for every
    class) instead of the learned ``kappa
    mu``; ``concentration_prior``: Gamma ``(shape, rate)`` of ``kappa`` (default ``(1, 1 /
    C)``). ``gibbs``: the compiled exact kernel (module) or, False, NUTS on the graph with the
    intended classes summed out. ``sampler``: how the kernel draws the intended classes,
    ``"urn"`` (``kappa`` with them summed out, then each item's jointly), ``"single-site"``
    or None, the urn where its forward pass is cheap
    (:func:`plausible.models.ambiguity.sampler.choose_sampler`). Known classes are
    refused (module)."""
    check_labels(labels)
    beta = confusion_concentration(labels.n_classes, confusion_prior)
    return _build(labels, "ambiguity-dawid-skene", {"beta": beta}, reliability, gibbs,
                  concentration, concentration_prior, sampler)


@reads("labels")
def build_one_coin(labels: Labels, *, reliability: float = 1, accuracy_prior: tuple = (4.0, 1.0),
                   gibbs: bool = True, concentration=None,
                   concentration_prior: tuple | None = None,
                   sampler: str | None = None) -> pm.Model:
    """PyMC model of item ambiguity with one-coin annotators (module) for ``labels``:
    ``acc_j ~ Beta(accuracy_prior)`` (default ``(4, 1)``, prior mean 0.8, as the one-coin
    latent-class model) and ``theta_j = acc_j`` on the diagonal, ``(1 - acc_j) / (C - 1)``
    elsewhere. One number per annotator instead of ``C (C - 1)``: an annotator with a handful
    of labels is still measured, and a neighbouring-class split cannot be read as an
    annotator's directed confusion. Variables as :func:`build` with ``accuracy (annotator)``
    in place of ``confusion``; the other arguments as :func:`build`."""
    check_labels(labels)
    a, b = (positive("accuracy_prior", v) for v in accuracy_prior)
    return _build(labels, "ambiguity-one-coin", {"accuracy_prior": (a, b)}, reliability, gibbs,
                  concentration, concentration_prior, sampler)


def _build(labels: Labels, name: str, annotators: dict, reliability, gibbs: bool,
           concentration, concentration_prior, sampler) -> pm.Model:
    """:func:`build` and :func:`build_one_coin`; ``annotators``: ``{"beta": (class,
    label_class)}`` (confusion rows) or ``{"accuracy_prior": (a, b)}`` (one-coin), as
    :class:`~plausible.models.ambiguity.sampler.AmbiguityKernel` takes them."""
    gamma = (positive_integer("reliability", reliability, WHOLE_RELIABILITY) if gibbs
             else positive("reliability", reliability))
    if labels.known is not None and (labels.known >= 0).any():
        raise ValueError(f"{name} does not take known classes: its plausibility is the item's "
                         "distribution over the classes, which a known class does not fix")
    C, I, J = labels.n_classes, labels.n_items, labels.n_annotators
    fixed = None
    if concentration is not None:
        fixed = np.asarray(positive("concentration", concentration, scalar=False),
                           dtype=np.float64)
        if fixed.ndim == 0:
            fixed = np.full(C, float(fixed))
        if fixed.shape != (C,):
            raise ValueError(f"concentration must have one value per class ({C}), got shape "
                             f"{fixed.shape}")
    if concentration_prior is None:
        concentration_prior = (1.0, 1.0 / C)
    shape, rate = (positive("concentration_prior", v) for v in concentration_prior)
    item, annotator, label = (pt.constant(v) for v in (labels.item, labels.annotator,
                                                        labels.label))
    with pm.Model(coords={**coords(labels), "label_class": labels.classes}) as model:
        pm.Data("reliability", float(gamma))
        if fixed is None:
            kappa = pm.Gamma("concentration", alpha=shape, beta=rate)
            mu = pm.Dirichlet("base_measure", a=np.ones(C), dims="class")
            alpha = kappa * mu
        else:
            alpha = pt.constant(fixed)
        lam = pm.Dirichlet("plausibility", a=pt.broadcast_to(alpha, (I, C)),
                           dims=("item", "class"))
        if "beta" in annotators:
            theta = pm.Dirichlet("confusion", a=np.broadcast_to(annotators["beta"], (J, C, C)),
                                 dims=("annotator", "class", "label_class"))
        else:
            accuracy = pm.Beta("accuracy", *annotators["accuracy_prior"], dims="annotator")
            theta = OneCoin.confusion({"accuracy": accuracy}, C)
        # log p(x_r | lambda, theta) = log sum_c lambda_{i_r c} theta_{j_r}[c, x_r]
        terms = pt.log((lam[item] * theta[annotator, :, label]).sum(axis=1))
        pm.Potential("labels", gamma * terms.sum())
    if gibbs:
        repeat = int(gamma)
        kernel = AmbiguityKernel(
            np.repeat(labels.item, repeat), np.repeat(labels.annotator, repeat),
            np.repeat(labels.label, repeat), n_items=I, n_annotators=J, n_classes=C,
            **annotators, concentration_prior=(shape, rate), fixed_alpha=fixed,
            sampler=sampler)
        declare_kernel(model, kernel, coords={**coords(labels), "label_class": labels.classes},
                       constant_data={"reliability": float(gamma)})
    if gibbs or float(gamma).is_integer():
        cost = marginal_cost(labels, int(gamma))
        if cost <= MARGINAL_COST:
            declare_log_likelihood(model, "labels",
                                   lambda trace: log_likelihood(trace, labels, fixed),
                                   observed=labels.to_dataarray())
        else:
            warnings.warn(f"{name}: the per-item log-likelihood with each item's distribution "
                          f"integrated out would take {cost:.1e} products a draw (its items "
                          f"have up to {int(gamma) * np.bincount(labels.item).max()} labels "
                          f"over {C} classes), more than {MARGINAL_COST:.0e}: not computed, "
                          "so LOO cannot rank this model", stacklevel=3)
    else:
        warnings.warn(f"{name}: the per-item log-likelihood with each item's distribution "
                      "integrated out needs a whole-number reliability: not computed, so LOO "
                      "cannot rank this model", stacklevel=3)
    return model


__all__ = ["MARGINAL_COST", "WHOLE_RELIABILITY", "build", "build_one_coin", "log_likelihood",
           "marginal_cost", "replicate_labels", "simulate"]


ENTRIES = (
    ModelEntry("ambiguity-dawid-skene", build, "labels", "repetitions", False,
               "each item's own distribution over the classes (its ambiguity) read through "
               "each annotator's Dawid-Skene confusion matrix, exact Gibbs (compiled; real "
               "reliability: gibbs=False)",
               label_probabilities=dawid_skene.label_probabilities,
               replicate=replicate_labels, plausibility=ITEM_DISTRIBUTION,
               annotator_parameters=dawid_skene.annotator_parameters,
               annotator_plot=dawid_skene.SENSITIVITY, confusion=dawid_skene.mean_confusion_rows),
    ModelEntry("ambiguity-one-coin", build_one_coin, "labels", "repetitions", False,
               "each item's own distribution over the classes (its ambiguity) read through "
               "one accuracy per annotator, exact Gibbs (compiled; real reliability: "
               "gibbs=False)", label_probabilities=dawid_skene.label_probabilities,
               replicate=replicate_labels, plausibility=ITEM_DISTRIBUTION,
               annotator_parameters=dawid_skene.annotator_parameters),
)
"""The registry entries of this family (:mod:`plausible.models.registry`)."""
