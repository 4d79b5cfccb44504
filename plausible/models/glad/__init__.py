"""GLAD (Whitehill et al. 2009), fully Bayesian, binary and multi-class.

Annotation ``k`` is label ``x_k`` of item ``i_k`` by annotator ``j_k``::

    alpha_j      ~ Normal(1, 1)        ability of annotator j, (annotator,)
    log beta_i   ~ Normal(1, 1)        log inverse difficulty of item i, (item,); beta_i > 0
    pi           ~ Dirichlet(1)        class prior, (class,)
    z_i          ~ Categorical(pi)
    r_k = sigmoid(alpha_{j_k} beta_{i_k})     P(x_k = z_{i_k});  wrong labels uniform:
    P(x_k = c | z_{i_k} != c) = (1 - r_k) / (C - 1)

(``alpha_j < 0``: adversarial; ``1 / beta_i``: item difficulty, ``beta_i -> 0`` gives labels
uniform over the classes). The priors are those of the reference EM implementations
(Whitehill's code, crowd-kit), which use them as penalties of a point estimate.

Variables: ``ability (annotator)``, ``log_inverse_difficulty (item)``, ``class_prior
(class)``, ``true_class (item)`` (Gibbs build only), deterministic ``plausibility (item,
class)``; the class layer, the two builds (exact Gibbs for ``z`` and ``pi`` + exact slice scan
of ``alpha`` and ``log beta``; or ``z`` summed out, NUTS only) and the plausibility are those
of :mod:`plausible.models.latent_class`. ``pm.Data``: ``reliability`` and
``log_inverse_difficulty_prior`` (mean, sd).

**Model criticism.** Both builds declare the per-item log-likelihood :func:`log_likelihood`
(``log_likelihood/labels`` of a :func:`plausible.sample` trace, the class summed out, the
draw's ``log beta_i``; ``observed_data/labels``), so ``az.loo`` / ``az.compare`` compare GLAD
with the other label models; :func:`replicate_labels` gives posterior predictive labels.

**Speed.** The Gibbs build has no gradient step. Given ``z`` the likelihood factorises over
annotators and over items, so each ``alpha_j`` and each ``log beta_i`` is drawn by a
univariate slice update on its full conditional (a sum of ``log sigmoid(+-alpha_j beta_i)``
over that annotator's or that item's labels plus the ``N(1, 1)`` prior), all of a block in
one compiled pass over the labels grouped by annotator / by item, and a scale move
``alpha -> e^u alpha``, ``log beta -> log beta - u`` (which leaves every ``alpha_j beta_i``,
hence the likelihood, unchanged) moves the direction only the priors identify
(:class:`~plausible.inference.step_methods.difficulty_slice.DifficultySlice`). The class draw and the
recorded ``plausibility`` use the class posterior of :class:`ClassPosterior`, one compiled
pass over the labels grouped by item with one multiply-add per label
(:func:`~plausible.inference.step_methods.difficulty_classes.class_evidence`).
An iteration on 50,000 labels costs about 3 ms (``benchmarks/bench_glad_crowdkit.py``: 4 x
1000 draws in 14-16 s, against 15-21 s for crowd-kit's GLAD EM), against about 24 ms with
NUTS on the continuous parameters.

**Identifiability / label switching.** For ``C = 2`` the likelihood is invariant under
``alpha -> -alpha`` with ``z -> 1 - z``, ``pi -> pi[::-1]`` (every annotator adversarial,
classes swapped); for ``C > 2`` the image is not an exact symmetry but a second, "anti-
consensus" region. The reported mode is the one where annotators are better than chance
on average, ``mean_j alpha_j > 0``. It is favoured by the prior (``N(1, 1)`` on ``alpha``:
the mirror point has prior density lower by ``exp(-2 sum_j alpha_j)``). The same flip,
restricted to a group of items and the annotators who label them, is a local mirror mode
where the group shares few labels with the rest (on Snow et al.'s RTE, batches of 20 items
labelled by the same annotators), and a chain that starts there stays there. The start
avoids both: the true classes start at the majority vote and each iteration begins with the
slice scan of the abilities given the classes, so from the first draw every annotator's
ability takes the orientation the majority gives it, whatever its jittered start
(:func:`plausible.sample` disperses the abilities around 1, some below 0); the class draw
follows. The scale move multiplies the abilities by ``e^u > 0``, so it never flips them.
None of this is a hard constraint: :func:`label_switching_check` verifies after sampling
that no draw has ``mean_j alpha_j <= 0``, and a local flip in one chain shows as R-hat far
above 1 for the group's abilities and classes (chains disagree).
"""

from __future__ import annotations

import hashlib
import inspect
from functools import partial

import numba
import numpy as np
import pymc as pm
import pytensor
import pytensor.tensor as pt
import xarray as xr
from pytensor.graph.basic import Apply
from pytensor.graph.op import Op
from pytensor.link.numba.dispatch.basic import numba_njit, register_funcify_default_op_cache_key

from plausible.data.labels import Labels
from plausible.data.tables import reads
from plausible.data.validation import positive
from plausible.inference.declarations import declare_gibbs, declare_log_likelihood
from plausible.inference.step_methods.difficulty_classes import class_evidence
from plausible.inference.step_methods.latent_class_gibbs import class_posterior
from plausible.data.label_groups import LabelGroups
from plausible.inference.step_methods.difficulty_slice import DifficultySlice
from plausible.models import latent_class as class_layer
from plausible.models.latent_class import add_class_layer, check_labels, coords, label_indices
from plausible.models.model_entry import ModelEntry


@numba.njit(cache=True)
def glad_class_posterior(log_prior, gamma, ability, log_beta, offsets, annotator, label):
    """``P(z_i = c | pi, alpha, beta, x) = softmax_c(log pi_c + gamma E[i, c])``,
    ``(item, class)``, with ``E`` of :func:`~plausible.inference.step_methods.difficulty_classes.
    class_evidence` (``log_prior`` ``(class,)``,
    ``gamma`` the reliability; the constant per item that ``E`` leaves out of ``L`` cancels
    in the softmax whatever ``gamma``)."""
    E = class_evidence(ability, log_beta, offsets, annotator, label, log_prior.size)
    return class_posterior(log_prior, gamma * E)


class ClassPosterior(Op):
    """Pytensor Op: inputs ``(log_prior, gamma, ability, log_beta, offsets, annotator, label)``
    (the labels grouped by item, as for its ``class_evidence``), output the class
    posterior ``(item, class)`` of :func:`glad_class_posterior`. No gradient: the Gibbs build
    samples without one; the marginal build differentiates the graph of
    :func:`plausible.models.latent_class.class_log_likelihood_graph`."""

    __props__ = ()

    def make_node(self, log_prior, gamma, ability, log_beta, offsets, annotator, label):
        inputs = [pt.as_tensor_variable(v)
                  for v in (log_prior, gamma, ability, log_beta, offsets, annotator, label)]
        return Apply(self, inputs, [pt.dmatrix()])

    def perform(self, node, inputs, outputs):
        log_prior, gamma, ability, log_beta, offsets, annotator, label = inputs
        outputs[0][0] = glad_class_posterior(
            np.asarray(log_prior, dtype=float), float(gamma), np.asarray(ability, dtype=float),
            np.asarray(log_beta, dtype=float), offsets, annotator, label)


def _kernel_version() -> int:
    """A fingerprint of the compiled code the Op runs (the source and module of every function
    it calls): PyTensor keys its on-disk numba cache by the Op's class and props only, so
    without it a cache written by an earlier version of these functions (or before a module
    was renamed) would be loaded in their place."""
    functions = (glad_class_posterior, class_evidence, class_posterior)
    text = "".join(f"{f.py_func.__module__}.{f.py_func.__qualname__}\n"
                   f"{inspect.getsource(f.py_func)}" for f in functions)
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:6], "big")


@register_funcify_default_op_cache_key(ClassPosterior)
def _numba_class_posterior(op, node, **kwargs):
    """Native numba implementation (PyTensor's default numba linker calls it directly), with
    :func:`_kernel_version` as the version of PyTensor's cache key."""

    @numba_njit
    def class_posterior_op(log_prior, gamma, ability, log_beta, offsets, annotator, label):
        return glad_class_posterior(log_prior, gamma, ability, log_beta, offsets, annotator,
                                    label)

    return class_posterior_op, _kernel_version()


def _class_posterior(labels: Labels, log_prior, gamma, ability, log_beta):
    """The class posterior ``(item, class)`` of the model's ``log pi``, ``ability`` and
    ``log_beta`` by :class:`ClassPosterior`.

    The label layout enters as shared variables, not graph constants: with constants,
    PyTensor's numba backend ran the Op at twice the kernel's own cost (0.40 against 0.19 ms
    a call on 50,000 labels), and the Op runs twice per draw (class draw, plausibility)."""
    by_item = LabelGroups.by(labels.item, labels.annotator, labels.label, labels.n_items)
    layout = (pytensor.shared(a) for a in (by_item.offsets, by_item.partner, by_item.label))
    return ClassPosterior()(log_prior, gamma, ability, log_beta, *layout)


@reads("labels")
def build(labels: Labels, *, reliability: float = 1.0, gibbs: bool = True,
          ability_prior: tuple = (1.0, 1.0),
          log_inverse_difficulty_prior: tuple = (1.0, 1.0), class_concentration: float = 1.0,
          plausibility: bool = True, sweeps: int = 1) -> pm.Model:
    """PyMC model of GLAD for ``labels`` with ``C >= 2`` classes.

    Parameters
    ----------
    labels : Labels
        Long labels; missing and replicated annotations allowed.
    reliability : float
        ``gamma > 0``, the power of the labels' likelihood given the classes
        (:mod:`plausible.models.latent_class`).
    gibbs : bool
        ``True``: true classes and class prior by the exact Gibbs step, ``ability`` and
        ``log_inverse_difficulty`` by the exact slice scan given the classes (no NUTS);
        ``False``: classes summed out, NUTS on everything (the cross-check).
    ability_prior, log_inverse_difficulty_prior : (mean, sd)
        Normal priors of ``alpha_j`` and ``log beta_i``.
    class_concentration : float
        Symmetric Dirichlet concentration of ``pi``.
    plausibility : bool
        Record the deterministic ``plausibility (item, class)`` (drop it for timing runs).
    sweeps : int
        Slice sweeps of ``ability`` and ``log_inverse_difficulty`` per recorded draw (Gibbs
        build; the classes are drawn once per draw).
    """
    check_labels(labels)
    gamma = positive("reliability", reliability)
    for name, (mean, sd) in [("ability_prior", ability_prior),
                             ("log_inverse_difficulty_prior", log_inverse_difficulty_prior)]:
        if not (np.isfinite(mean) and np.isfinite(sd) and sd > 0):
            raise ValueError(f"{name} must be (finite mean, sd > 0), got {(mean, sd)}")
    with pm.Model(coords=coords(labels)) as model:
        ability = pm.Normal("ability", *ability_prior, dims="annotator",
                            initval=np.ones(labels.n_annotators))
        item_prior = pm.Data("log_inverse_difficulty_prior",
                             np.asarray(log_inverse_difficulty_prior, dtype=float))
        log_beta = pm.Normal("log_inverse_difficulty", item_prior[0], item_prior[1], dims="item")
        item, annotator = label_indices(labels)
        score = ability[annotator] * pt.exp(log_beta)[item]
        # log sigmoid(s) = -softplus(-s), log(1 - sigmoid(s)) = -softplus(s)
        log_correct, log_incorrect = -pt.softplus(-score), -pt.softplus(score)
    add_class_layer(model, labels, log_correct, log_incorrect, gibbs=gibbs,
                    class_concentration=class_concentration, plausibility=plausibility,
                    reliability=gamma, class_posterior=partial(_class_posterior, labels, ability=ability,
                                            log_beta=log_beta) if gibbs else None)
    if gibbs:
        declare_gibbs(model, DifficultySlice, [ability, log_beta], first=True,
                      true_class=model["true_class"], item=labels.item,
                      annotator=labels.annotator, label=labels.label,
                      n_classes=labels.n_classes, link="glad", annotator_prior=ability_prior,
                      item_prior=log_inverse_difficulty_prior, sweeps=sweeps,
                      reliability=gamma)
    declare_log_likelihood(model, "labels", partial(log_likelihood, labels=labels),
                           observed=labels.to_dataarray())
    return model


def _draw_log_inverse_difficulty(rng, prior, size):
    return rng.normal(prior[0], prior[1], size)


PARAMETERS = class_layer.DifficultyParameters(
    "glad", "ability", "log_inverse_difficulty", "log_inverse_difficulty_prior",
    _draw_log_inverse_difficulty)
"""GLAD's parameters as :mod:`plausible.models.latent_class` reads them from a trace."""


def log_likelihood(trace, labels: Labels) -> xr.DataArray:
    """Per-item log-likelihood ``logsumexp_c(log pi_c + gamma L[i, c])``, ``(chain, draw,
    item)``, at every draw's ``pi``, ``alpha`` and ``log beta`` (the class summed out,
    ``gamma`` the trace's reliability; :func:`plausible.models.latent_class.marginal_log_likelihood`).
    :func:`build` declares it: :func:`plausible.sample` writes it as ``log_likelihood/labels``."""
    return class_layer.marginal_log_likelihood(trace, labels, PARAMETERS)


def label_probabilities(trace, chain, draw, item, annotator) -> np.ndarray:
    """``P(x = y | z = c)`` of a new label by annotator ``annotator[p]`` on item ``item[p]``,
    ``(sample, pair, class, label_class)`` (:func:`plausible.models.latent_class.label_probabilities`)."""
    return class_layer.label_probabilities(trace, PARAMETERS, chain, draw, item, annotator)


def replicate_labels(trace, labels: Labels, *, draws: int = 500, seed: int | None = None,
                     classes: str = "new") -> np.ndarray:
    """Replicated labels in the observed design, int ``(sample, annotation)`` class indices,
    from ``draws`` thinned posterior draws: ``classes="new"``, new items (``log beta_i`` from
    its prior, ``z_i ~ Categorical(pi)``); ``classes="posterior"``, the same items (the
    draw's ``log beta_i``, ``z_i`` from its class posterior). See
    :func:`plausible.models.latent_class.replicate_labels`; feed the result to
    :func:`plausible.diagnostics.annotation_predictive.annotation_predictive_check`."""
    return class_layer.replicate_labels(trace, labels, PARAMETERS, draws=draws, seed=seed,
                                        classes=classes)


def label_switching_check(trace) -> xr.DataArray:
    """Share of draws per chain in the mirror mode (``mean_j alpha_j <= 0``), ``(chain,)``.

    The reported mode has 0 in every chain; anything else means a chain sits in (or visits)
    the mirror image — do not average such a trace.
    """
    posterior = trace.posterior if hasattr(trace, "posterior") else trace
    return (posterior["ability"].mean("annotator") <= 0).mean("draw")


__all__ = ["PARAMETERS", "build", "label_probabilities", "label_switching_check", "log_likelihood", "replicate_labels"]


ENTRIES = (
    ModelEntry("glad", build, "labels", "tempering", False,
               "GLAD: annotator ability x item difficulty, Gibbs classes + slice parameters",
               replicate=replicate_labels,
               label_probabilities=label_probabilities,
               cluster_chain=True),
)
"""The registry entries of this family (:mod:`plausible.models.registry`)."""
