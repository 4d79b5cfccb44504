"""The latent-class layer of the label models: the true class of every item, its prior and the
Rao-Blackwellised plausibility, shared by GLAD, Su's model, one-coin and MACE (the
Dawid–Skene family builds its own confusion layer on the same majority-vote start and checks,
:func:`check_labels`, :func:`coords`, :func:`majority_vote`).

Both models say annotation ``k`` (label ``x_k`` of item ``i_k`` by annotator ``j_k``) is
correct with probability ``r_k`` and otherwise uniform over the ``C - 1`` wrong classes::

    pi  ~ Dirichlet(a)                                    class prior, (class,)
    z_i ~ Categorical(pi)                                 true class, (item,)
    p(x_k | z) = r_k                if x_k = z_{i_k}
               = (1 - r_k)/(C - 1)  otherwise

:func:`add_class_layer` adds ``pi``, the likelihood and the Rao-Blackwellised
``plausibility`` to a model in which the caller has defined ``log r_k`` and
``log(1 - r_k)`` from its continuous parameters (:mod:`plausible.models.glad`,
:mod:`plausible.models.su_difficulty`). Two builds target the same posterior of the
continuous parameters and ``pi``:

* ``gibbs=True``: ``z`` is a model variable, ``true_class (item)`` (initial value: the
  majority vote). Each iteration first moves the continuous parameters given ``z`` (as
  data, likelihood ``sum_k [x_k = z_{i_k}] log r_k + [x_k != z_{i_k}] log((1 - r_k)/(C-1))``;
  the model builder declares the step,
  :class:`~plausible.inference.step_methods.difficulty_slice.DifficultySlice`, an exact slice scan: no
  NUTS), then :class:`~plausible.inference.step_methods.latent_class_gibbs.ClassGibbs` draws ``z`` and
  ``pi`` from their exact conditionals (``z`` given the new continuous parameters and
  ``pi``, so its previous value is never read).
* ``gibbs=False``: ``z`` summed out, ``sum_i logsumexp_c(log pi_c + L[i, c])`` with
  ``L[i, c] = sum_{k: i_k = i} log p(x_k | z_i = c)``; NUTS on everything (the cross-check).

**Reliability** ``gamma`` raises the labels' likelihood given the classes to the power
``gamma`` (``gamma L`` everywhere ``L`` appears; the priors are not tempered): the Gibbs
steps stay exact for any real ``gamma > 0``.

**Plausibility.** Per draw ``P(z_i = c | pi, r, x) = softmax_c(log pi_c + gamma L[i, c])``, the
deterministic ``plausibility (item, class)`` in both builds; its posterior mean is the
posterior class probability, its argmax the posterior-mode label (:func:`posterior_labels`).

**Per-item log-likelihood** (for ``az.loo`` / ``az.compare``): item ``i``'s factor in the
log posterior with its class summed out, ``logsumexp_c(log pi_c + gamma L[i, c])`` per draw
(:func:`marginal_log_likelihood`), the same in both builds (the Gibbs build's ``true_class``
draws are not used); the item's continuous parameter is the draw's (not integrated out).
Each model declares it with the :class:`DifficultyParameters` that say how its parameters set
``r_k``; :func:`replicate_labels` draws labels in the observed design from the same
description, for :func:`~plausible.diagnostics.annotation_predictive.annotation_predictive_check`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numba
import numpy as np
import pymc as pm
import pytensor.tensor as pt
import xarray as xr
from scipy.special import softmax

from plausible.data.labels import Labels
from plausible.diagnostics.annotation_predictive import thinned_draws
from plausible.inference.declarations import declare_gibbs
from plausible.inference.step_methods.latent_class_gibbs import ClassGibbs
from plausible.data.label_groups import LabelGroups
from plausible.inference.step_methods.difficulty_slice import GLAD, LINKS
from plausible.maths.known_classes import clamp_known, known_log_mask
from plausible.maths.logspace import tempered_logsumexp
from plausible.metrics.chunks import iter_sample_blocks


def check_labels(labels: Labels) -> None:
    """``labels`` is a :class:`Labels` with at least two classes (its own validation has
    already rejected labels outside the classes, unknown annotators and unlabelled items)."""
    if not isinstance(labels, Labels):
        raise TypeError(f"labels must be plausible.data.Labels, got {type(labels).__name__}")
    if labels.n_classes < 2:
        raise ValueError(f"latent-class label models need >= 2 classes (a class to tell "
                         f"apart), got {list(labels.classes)}")


def majority_vote(labels: Labels) -> np.ndarray:
    """Most frequent label per item (ties: the lowest class index), int ``(item,)``; an item
    of known class (:attr:`Labels.known`) has it."""
    counts = np.bincount(labels.item * labels.n_classes + labels.label,
                         minlength=labels.n_items * labels.n_classes)
    z = counts.reshape(labels.n_items, labels.n_classes).argmax(axis=1)
    if labels.known is not None:
        z = np.where(labels.known >= 0, labels.known, z)
    return z


def known_mask(labels: Labels):
    """The known classes' log mask ``m (item, class)`` (0 or ``-inf``,
    :mod:`plausible.maths.known_classes`) to add to ``log pi``; the scalar 0 when no class
    is known, so the graphs of unknown-class data are unchanged."""
    if labels.known is None:
        return 0.0
    return known_log_mask(labels.known, labels.n_items, labels.n_classes)


def clamp_graph(labels: Labels, posterior):
    """Pytensor ``posterior (item, class)`` with every known item's row its class's one-hot
    (a class posterior computed without :func:`known_mask`)."""
    if labels.known is None:
        return posterior
    rows = labels.known >= 0
    one_hot = np.eye(labels.n_classes)[np.where(rows, labels.known, 0)]
    return pt.where(rows[:, None], one_hot, posterior)


def coords(labels: Labels) -> dict:
    """Model coordinates ``item``, ``annotator``, ``class`` from the labels' ids."""
    return {"item": labels.items, "annotator": labels.annotators, "class": labels.classes}


def label_indices(labels: Labels):
    """``(item, annotator)`` of the labels as pytensor constants, to index model variables
    with (indexing with a numpy array makes PyTensor inspect every index in Python: seconds
    for 10^5 labels)."""
    return pt.constant(labels.item), pt.constant(labels.annotator)


def class_log_likelihood_graph(labels: Labels, log_correct, log_incorrect):
    """Pytensor ``L (item, class)``, ``L[i, c] = sum_{k: i_k = i} log p(x_k | z_i = c)``.

    The ``(annotation, class)`` terms are summed into ``(item, class)``, so a perfect label
    (``log(1 - r_k) = -inf``) gives ``-inf`` for the classes it rules out, never ``nan``."""
    I, C = labels.n_items, labels.n_classes
    wrong = log_incorrect - np.log(C - 1)
    terms = pt.where(np.equal.outer(labels.label, np.arange(C)), log_correct[:, None], wrong[:, None])
    item, _ = label_indices(labels)
    return pt.inc_subtensor(pt.zeros((I, C))[item], terms)


def add_class_layer(model: pm.Model, labels: Labels, log_correct, log_incorrect, *, gibbs: bool,
                    class_concentration: float, plausibility: bool, reliability: float = 1.0,
                    class_posterior=None) -> None:
    """Add ``class_prior``, the likelihood (potential ``labels``), ``true_class`` and its
    Gibbs step (Gibbs build) and ``plausibility`` to ``model`` (see module).
    ``log_correct``, ``log_incorrect``: pytensor ``(annotation,)`` expressions of ``log r_k``,
    ``log(1 - r_k)``. ``reliability``: ``gamma``, the power of the labels' likelihood given
    the classes (``pm.Data`` ``reliability``). ``class_posterior(log_prior, gamma)``: optional
    faster expression of the class posterior ``softmax_c(log pi_c + gamma L[i, c])``
    ``(item, class)`` given the pytensor ``log pi`` and ``gamma`` (the class draws and the
    plausibility; no gradient needed)."""
    C = labels.n_classes
    if not (np.isfinite(class_concentration) and class_concentration > 0):
        raise ValueError(f"class_concentration must be finite and > 0, got {class_concentration}")
    concentration = np.full(C, float(class_concentration))
    with model:
        gamma = pm.Data("reliability", reliability)
        pi = pm.Dirichlet("class_prior", a=concentration, dims="class")
        if class_posterior is None or not gibbs:
            L = class_log_likelihood_graph(labels, log_correct, log_incorrect)
            log_joint = pt.log(pi)[None, :] + known_mask(labels) + gamma * L
        if class_posterior is None:
            posterior = pt.exp(pt.special.log_softmax(log_joint, axis=1))
        else:
            posterior = clamp_graph(labels, class_posterior(pt.log(pi), gamma))
        if gibbs:
            z = pm.Categorical("true_class", p=pi, dims="item", initval=majority_vote(labels))
            agree = pt.eq(labels.label, z[label_indices(labels)[0]])
            pm.Potential("labels", gamma * pt.switch(agree, log_correct,
                                                     log_incorrect - np.log(C - 1)).sum())
            declare_gibbs(model, ClassGibbs, [z, pi], concentration=concentration,
                          class_probabilities=posterior)
        else:
            pm.Potential("labels", pt.logsumexp(log_joint, axis=1).sum())
        if plausibility:
            pm.Deterministic("plausibility", posterior, dims=("item", "class"))


def posterior_labels(trace) -> xr.DataArray:
    """Posterior-mode class per item (argmax of the posterior mean plausibility), as class
    ids with coordinate ``item``."""
    posterior = trace.posterior if hasattr(trace, "posterior") else trace
    mean = posterior["plausibility"].mean(("chain", "draw"))
    return mean["class"][mean.argmax("class")].drop_vars("class")


# --------------------------------------------------------------------------------------
# Reading a trace: per-item log-likelihood, replicated labels
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DifficultyParameters:
    """A difficulty model's continuous parameters as a trace holds them.

    ``link``: ``"glad"`` (annotator ``alpha_j``, item ``log beta_i``, ``r_k = sigmoid(alpha_j
    beta_i)``) or ``"su"`` (annotator ``phi_j``, item ``delta_i``, ``r_k = 1/C + ((C - 1)/C)
    (1 - delta_i)(1 - phi_j)``); ``annotator``, ``item``: the names of the annotator parameter
    ``(annotator,)`` and the item parameter ``(item,)`` in the posterior; ``item_prior``: the
    name, in ``constant_data``, of the item parameter's prior parameters ``(2,)``;
    ``draw_item(rng, prior, size)``: item parameters of new items from their prior (numpy).
    """

    link: str
    annotator: str
    item: str
    item_prior: str
    draw_item: Callable

    @property
    def family(self) -> int:
        """The link's code for the kernels (``GLAD`` or ``SU`` of
        :mod:`plausible.inference.step_methods.difficulty_slice`)."""
        return LINKS[self.link][0]


@numba.njit(cache=True, inline="always")
def _terms(family, annotator_x, item_x):
    """Per-annotator and per-item terms of ``log r``: GLAD ``alpha_j`` and ``beta_i =
    exp(log beta_i)``; Su ``log(1 - phi_j)`` and ``log(1 - delta_i)``."""
    if family == GLAD:
        return annotator_x.copy(), np.exp(item_x)
    return np.log1p(-annotator_x), np.log1p(-item_x)


@numba.njit(cache=True, inline="always")
def _label_log_probabilities(family, annotator_term, item_term, n_classes):
    """``(log r_k, log(1 - r_k))`` of one label from its annotator's and item's terms
    (:func:`_terms`). GLAD: ``s = alpha beta``, ``log sigmoid(+-s) = min(+-s, 0) - log(1 +
    exp(-|s|))``. Su: ``log e = log(1 - phi) + log(1 - delta)``, ``log r = logaddexp(-log C,
    log((C - 1)/C) + log e)``, ``log(1 - r) = log((C - 1)/C) + log(1 - e)`` (``-inf`` for a
    perfect label, ``e = 1``)."""
    if family == GLAD:
        score = annotator_term * item_term
        shared = np.log1p(np.exp(-abs(score)))
        return min(score, 0.0) - shared, min(-score, 0.0) - shared
    log_share = np.log((n_classes - 1) / n_classes)
    log_e = annotator_term + item_term
    log1m_e = np.log(-np.expm1(log_e)) if log_e > -np.log(2.0) else np.log1p(-np.exp(log_e))
    a, b = -np.log(n_classes), log_share + log_e
    top = max(a, b)
    return top + np.log1p(np.exp(min(a, b) - top)), log_share + log1m_e


@numba.njit(cache=True, inline="always")
def _item_class_log_likelihood(family, annotator_term, item_term, start, stop, annotator, label,
                               row):
    """``row[c] = L[i, c] = sum_k log p(x_k | z_i = c)`` over one item's labels
    ``start:stop``: ``log r_k`` for ``c = x_k``, ``log(1 - r_k) - log(C - 1)`` otherwise.

    GLAD, with ``log sigmoid(s) - log sigmoid(-s) = s``: ``L[i, c] = sum_k (log sigmoid(-s_k) -
    log(C - 1)) + sum_{k: x_k = c} (s_k + log(C - 1))``, and ``sum_k log sigmoid(-s_k) =
    sum_k min(-s_k, 0) - log prod_k (1 + exp(-|s_k|))``: one ``exp`` per label and one ``log``
    per item (per ``1e300`` of product). Su: per label both log-probabilities of
    :func:`_label_log_probabilities`, added class by class, so that a perfect label gives
    ``-inf`` for the classes it rules out, never ``nan``."""
    n_classes = row.size
    log_wrong = np.log(n_classes - 1)
    row[:] = 0.0
    if family == GLAD:
        base = 0.0
        product = 1.0
        for k in range(start, stop):
            score = annotator_term[annotator[k]] * item_term
            base += min(-score, 0.0) - log_wrong
            product *= 1.0 + np.exp(-abs(score))
            if product > 1e300:
                base -= np.log(product)
                product = 1.0
            row[label[k]] += score + log_wrong
        base -= np.log(product)
        for c in range(n_classes):
            row[c] += base
        return
    for k in range(start, stop):
        correct, incorrect = _label_log_probabilities(family, annotator_term[annotator[k]],
                                                      item_term, n_classes)
        for c in range(n_classes):
            row[c] += correct if c == label[k] else incorrect - log_wrong


@numba.njit(cache=True)
def class_log_likelihoods(family, annotator_x, item_x, offsets, annotator, label, n_classes):
    """``L[s, i, c] = sum_{k: i_k = i} log p(x_k | z_i = c)``, ``(sample, item, class)``, for
    the parameters ``annotator_x (sample, annotator)`` and ``item_x (sample, item)`` of the
    model ``family`` (``GLAD`` or ``SU``) and the labels grouped by item (``offsets (item +
    1,)``; ``annotator``, ``label`` ``(annotation,)`` in item order)."""
    n_samples, n_items = item_x.shape
    L = np.empty((n_samples, n_items, n_classes))
    for s in range(n_samples):
        annotator_term, item_term = _terms(family, annotator_x[s], item_x[s])
        for i in range(n_items):
            _item_class_log_likelihood(family, annotator_term, item_term[i], offsets[i],
                                       offsets[i + 1], annotator, label, L[s, i])
    return L


@numba.njit(cache=True)
def marginal_log_likelihoods(family, log_prior, gamma, annotator_x, item_x, offsets, annotator,
                             label):
    """``logsumexp_c(log pi_c + gamma L[s, i, c])``, ``(sample, item)``, with ``L`` of
    :func:`class_log_likelihoods` computed one item at a time (no ``(sample, item, class)``
    temporary) and ``log_prior`` ``(sample, class)``. About 1 ms per draw for GLAD on 50,000
    labels of 10,000 items (two classes)."""
    n_samples, n_items = item_x.shape
    n_classes = log_prior.shape[1]
    out = np.empty((n_samples, n_items))
    row = np.empty(n_classes)
    for s in range(n_samples):
        annotator_term, item_term = _terms(family, annotator_x[s], item_x[s])
        for i in range(n_items):
            _item_class_log_likelihood(family, annotator_term, item_term[i], offsets[i],
                                       offsets[i + 1], annotator, label, row)
            out[s, i] = tempered_logsumexp(row, log_prior[s], gamma)
    return out


@numba.njit(cache=True)
def correct_probabilities(family, annotator_x, item_x, item, annotator, n_classes):
    """``r_k`` ``(sample, annotation)`` for the parameters ``annotator_x (sample, annotator)``,
    ``item_x (sample, item)`` and the labels' ``item``, ``annotator`` ``(annotation,)``."""
    n_samples = item_x.shape[0]
    out = np.empty((n_samples, item.size))
    for s in range(n_samples):
        annotator_term, item_term = _terms(family, annotator_x[s], item_x[s])
        for k in range(item.size):
            correct, _ = _label_log_probabilities(family, annotator_term[annotator[k]],
                                                  item_term[item[k]], n_classes)
            out[s, k] = np.exp(correct)
    return out


def _reliability(trace) -> float:
    """The trace's ``constant_data/reliability`` (``gamma``)."""
    return float(trace["constant_data"]["reliability"])


def _read(posterior, name: str, chain, draw) -> np.ndarray:
    """``posterior[name]`` at ``chain``, ``draw`` (an index and a slice, or two index arrays
    taken pointwise) as numpy ``(samples, ...)``: just those draws, also for a lazily
    opened trace."""
    if np.ndim(chain):
        chain, draw = (xr.DataArray(a, dims="sample") for a in (chain, draw))
    return np.asarray(posterior[name].isel(chain=chain, draw=draw).values)


def _by_item(labels: Labels) -> LabelGroups:
    """The labels grouped by item (``partner``: the annotator of each label)."""
    return LabelGroups.by(labels.item, labels.annotator, labels.label, labels.n_items)


def marginal_log_likelihood(trace, labels: Labels,
                            parameters: DifficultyParameters) -> xr.DataArray:
    """Per-item log-likelihood with the class summed out, ``(chain, draw, item)``:
    ``logsumexp_c(log pi_c + gamma L[i, c])`` at every draw's ``pi`` and continuous
    parameters, ``gamma`` the trace's ``constant_data/reliability`` (see module).

    Read in blocks of draws (:func:`~plausible.metrics.chunks.iter_sample_blocks`) and
    computed by the compiled :func:`marginal_log_likelihoods` over the labels grouped by
    item: the memory is the parameters of a block of draws and the ``(chain, draw, item)``
    result, whatever the number of labels.
    """
    posterior = trace["posterior"]
    groups, gamma = _by_item(labels), _reliability(trace)
    sample_shape = (posterior.sizes["chain"], posterior.sizes["draw"])
    out = np.empty((np.prod(sample_shape), labels.n_items))
    width = labels.n_annotators + 2 * labels.n_items + labels.n_classes
    known = np.flatnonzero(labels.known >= 0) if labels.known is not None else None
    if known is not None:
        known_groups = _by_item(labels.subset(known))
    for samples, index in iter_sample_blocks(sample_shape, width):
        log_pi = np.log(_read(posterior, "class_prior", *index))
        annotator_x = _read(posterior, parameters.annotator, *index)
        item_x = _read(posterior, parameters.item, *index)
        out[samples] = marginal_log_likelihoods(
            parameters.family, log_pi, gamma, annotator_x, item_x,
            groups.offsets, groups.partner, groups.label)
        if known is not None:  # log pi_k + gamma L[i, k] at the known class k
            L = class_log_likelihoods(parameters.family, annotator_x, item_x[:, known],
                                      known_groups.offsets, known_groups.partner,
                                      known_groups.label, labels.n_classes)
            k = labels.known[known]
            out[samples, known] = log_pi[:, k] + gamma * L[:, np.arange(known.size), k]
    return xr.DataArray(out.reshape(*sample_shape, labels.n_items), dims=("chain", "draw", "item"),
                        coords={"chain": posterior["chain"].values,
                                "draw": posterior["draw"].values, "item": labels.items})


def label_probabilities(trace, parameters: DifficultyParameters, chain, draw, item,
                        annotator) -> np.ndarray:
    """``P(x = y | z = c)`` of a new label by annotator ``annotator[p]`` on item ``item[p]``,
    float64 ``(sample, pair, class, label_class)`` at the draws ``(chain, draw)`` (index
    arrays): ``r`` on the diagonal and ``(1 - r) / (C - 1)`` elsewhere, ``r`` of the pair's
    annotator and item parameters (:func:`correct_probabilities`)."""
    posterior = trace["posterior"]
    C = posterior.sizes["class"]
    r = correct_probabilities(parameters.family, _read(posterior, parameters.annotator, chain, draw),
                              _read(posterior, parameters.item, chain, draw),
                              np.asarray(item, dtype=np.int64),
                              np.asarray(annotator, dtype=np.int64), C)
    eye = np.eye(C, dtype=bool)
    return np.where(eye, r[..., None, None], ((1 - r) / (C - 1))[..., None, None])


def _draw_classes(rng, probabilities):
    """One class per row of ``probabilities`` ``(..., class)`` (rows summing to 1) by
    inverse CDF, int ``(...)``."""
    u = rng.random(probabilities.shape[:-1])
    below = np.cumsum(probabilities, axis=-1) < u[..., None]
    return np.minimum(below.sum(axis=-1), probabilities.shape[-1] - 1)


def replicate_labels(trace, labels: Labels, parameters: DifficultyParameters, *, draws: int = 500,
                     seed: int | None = None, classes: str = "new") -> np.ndarray:
    """Replicated labels in the observed design, int ``(sample, annotation)`` class indices.

    For each of ``draws`` evenly thinned posterior draws
    (:func:`~plausible.diagnostics.annotation_predictive.thinned_draws`) of ``pi`` and the
    annotator parameters: with ``classes="new"`` (new items, the replication for checking
    pattern counts and annotator rates) item parameters from their prior (the trace's
    ``constant_data/<item_prior>``) and classes ``z_i ~ Categorical(pi)``; with
    ``classes="posterior"`` (the same items) the draw's item parameters and ``z_i`` from its
    class posterior ``softmax_c(log pi_c + gamma L[i, c])``. Then every observed (item,
    annotator) slot gets ``z_{i_k}`` with probability ``r_k``, otherwise one of the ``C - 1``
    other classes uniformly. Classes are drawn in blocks of draws (bounded temporaries).
    """
    if classes not in ("new", "posterior"):
        raise ValueError(f"classes must be 'new' or 'posterior', got {classes!r}")
    posterior = trace["posterior"]
    rng = np.random.default_rng(seed)
    chain, draw = thinned_draws(posterior, draws)
    annotator_x = _read(posterior, parameters.annotator, chain, draw)
    log_prior = np.log(_read(posterior, "class_prior", chain, draw))
    n_samples, I, C = chain.size, labels.n_items, labels.n_classes
    if classes == "new":
        prior = np.asarray(trace["constant_data"][parameters.item_prior].values, dtype=float)
        item_x = parameters.draw_item(rng, prior, (n_samples, I))
    else:
        item_x = _read(posterior, parameters.item, chain, draw)
        groups, gamma = _by_item(labels), _reliability(trace)
    z = np.empty((n_samples, I), dtype=np.int64)
    for samples, _ in iter_sample_blocks((n_samples,), 3 * I * C):
        if classes == "new":
            probabilities = np.broadcast_to(np.exp(log_prior[samples])[:, None, :],
                                            (samples.stop - samples.start, I, C))
        else:
            L = class_log_likelihoods(parameters.family, annotator_x[samples], item_x[samples],
                                      groups.offsets, groups.partner, groups.label, C)
            probabilities = clamp_known(softmax(log_prior[samples, None, :] + gamma * L,
                                                axis=-1), labels.known)
        z[samples] = _draw_classes(rng, probabilities)
    r = correct_probabilities(parameters.family, annotator_x, item_x, labels.item,
                              labels.annotator, C)
    true = z[:, labels.item]
    correct = rng.random(true.shape) < r
    wrong = (true + rng.integers(1, C, size=true.shape)) % C
    return np.where(correct, true, wrong)


__all__ = ["DifficultyParameters", "add_class_layer", "check_labels", "clamp_graph",
           "class_log_likelihood_graph", "known_mask",
           "class_log_likelihoods", "correct_probabilities", "label_indices", "label_probabilities", "majority_vote",
           "marginal_log_likelihood", "marginal_log_likelihoods", "posterior_labels",
           "replicate_labels"]
