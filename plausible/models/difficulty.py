"""Class layer shared by the item-difficulty models (spec 02 §2): GLAD and Su's model.

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
  :class:`~plausible.inference.difficulty_slice.DifficultySlice`, an exact slice scan: no
  NUTS), then :class:`~plausible.inference.difficulty_gibbs.ClassGibbs` draws ``z`` and
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
"""

from __future__ import annotations

import numpy as np
import pymc as pm
import pytensor.tensor as pt
import xarray as xr

from plausible.data.labels import Labels
from plausible.inference.declarations import declare_gibbs
from plausible.inference.difficulty_gibbs import ClassGibbs


def check_labels(labels: Labels) -> None:
    """``labels`` is a :class:`Labels` with at least two classes (its own validation has
    already rejected labels outside the classes, unknown annotators and unlabelled items)."""
    if not isinstance(labels, Labels):
        raise TypeError(f"labels must be plausible.data.Labels, got {type(labels).__name__}")
    if labels.n_classes < 2:
        raise ValueError(f"item-difficulty models need >= 2 classes, got {list(labels.classes)}")


def majority_vote(labels: Labels) -> np.ndarray:
    """Most frequent label per item (ties: the lowest class index), int ``(item,)``."""
    counts = np.bincount(labels.item * labels.n_classes + labels.label,
                         minlength=labels.n_items * labels.n_classes)
    return counts.reshape(labels.n_items, labels.n_classes).argmax(axis=1)


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
            log_joint = pt.log(pi)[None, :] + gamma * L
        if class_posterior is None:
            posterior = pt.exp(pt.special.log_softmax(log_joint, axis=1))
        else:
            posterior = class_posterior(pt.log(pi), gamma)
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


__all__ = ["add_class_layer", "check_labels", "class_log_likelihood_graph", "label_indices",
           "majority_vote", "posterior_labels"]
