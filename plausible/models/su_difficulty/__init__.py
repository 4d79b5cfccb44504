"""Su's sample-difficulty / labeler-fallibility model (Su 2024), learned with priors.

For ``C`` classes, item difficulty ``delta_i`` and labeler fallibility ``phi_j`` in [0, 1]::

    epsilon(delta, phi) = ((C - 1) / C) (1 - (1 - delta)(1 - phi))    error rate
    delta_i ~ Beta(a_d, b_d)   (item,);    phi_j ~ Beta(a_f, b_f)   (annotator,)
    pi ~ Dirichlet(1),   z_i ~ Categorical(pi)
    P(x_k = z_{i_k}) = 1 - epsilon_k;   each wrong class: epsilon_k / (C - 1)

``delta = phi = 0`` is a perfect label, ``delta = 1`` or ``phi = 1`` a uniform one. In the
class layer's notation (:mod:`plausible.models.latent_class`) ``r_k = 1 - epsilon_k``.
Default priors: ``delta ~ Beta(1, 5)`` (most items easy, Su's main setting),
``phi ~ Beta(1, 2)`` (labelers more often reliable than not).

Variables: ``difficulty (item)``, ``fallibility (annotator)``, ``class_prior (class)``,
``true_class (item)`` (Gibbs build only), deterministic ``plausibility (item, class)``;
``pm.Data``: ``reliability`` and ``difficulty_prior`` (a, b).
Builds: ``gibbs=True`` (exact Gibbs for ``z`` and ``pi``, exact slice scan of ``delta`` and
``phi`` given ``z``, :class:`~plausible.inference.step_methods.difficulty_slice.DifficultySlice`: no NUTS)
or ``gibbs=False`` (``z`` summed out, NUTS only). Both declare the per-item log-likelihood
:func:`log_likelihood` (class summed out, the draw's ``delta_i``) for ``az.loo`` /
``az.compare``; :func:`replicate_labels` gives posterior predictive labels.

**Identifiability.** ``r_k >= 1/C`` for every parameter value (no adversarial labelers), so
relabelling the classes never maps a parameter point to another with the same likelihood:
there is no label switching. ``delta_i`` and ``phi_j`` enter only through
``(1 - delta_i)(1 - phi_j)``; with few labels per item ``delta_i`` is informed mostly by its
prior, which is why coverage of the item difficulties is only nominal when the prior is
(close to) the distribution the difficulties come from.

**Known-parameter mode** (the testing algorithms of Su 2024): with ``delta``, ``phi`` and ``pi``
known, the true classes are independent over items with the closed-form posterior
:func:`known_class_posterior`.
"""

from __future__ import annotations

from functools import partial

import numpy as np
import pymc as pm
import pytensor.tensor as pt
import xarray as xr

from plausible.data.labels import Labels
from plausible.data.tables import reads
from plausible.data.validation import positive
from plausible.inference.declarations import declare_gibbs, declare_log_likelihood
from plausible.inference.step_methods.latent_class_gibbs import class_posterior
from plausible.inference.step_methods.difficulty_slice import DifficultySlice
from plausible.models import latent_class as class_layer
from plausible.models.latent_class import add_class_layer, check_labels, coords, label_indices
from plausible.maths.fallibility import label_log_likelihood
from plausible.models.model_entry import ModelEntry


def _check_beta(name, prior):
    a, b = prior
    if not (np.isfinite(a) and np.isfinite(b) and a > 0 and b > 0):
        raise ValueError(f"{name} must be Beta parameters (a > 0, b > 0), got {prior}")


@reads("labels")
def build(labels: Labels, *, reliability: float = 1.0, gibbs: bool = True,
          difficulty_prior: tuple = (1.0, 5.0),
          fallibility_prior: tuple = (1.0, 2.0), class_concentration: float = 1.0,
          plausibility: bool = True, sweeps: int = 1) -> pm.Model:
    """PyMC model of Su's bilinear difficulty / fallibility model for ``labels``.

    Parameters
    ----------
    labels : Labels
        Long labels with ``C >= 2`` classes; missing and replicated annotations allowed.
    reliability : float
        ``gamma > 0``, the power of the labels' likelihood given the classes
        (:mod:`plausible.models.latent_class`).
    gibbs : bool
        ``True``: true classes and class prior by the exact Gibbs step, ``difficulty`` and
        ``fallibility`` by the exact slice scan given the classes (no NUTS); ``False``:
        classes summed out, NUTS only (the cross-check).
    difficulty_prior, fallibility_prior : (a, b)
        Beta priors of ``delta_i`` and ``phi_j``.
    class_concentration : float
        Symmetric Dirichlet concentration of ``pi``.
    plausibility : bool
        Record the deterministic ``plausibility (item, class)``.
    sweeps : int
        Slice sweeps of ``difficulty`` and ``fallibility`` per recorded draw (Gibbs build).
    """
    check_labels(labels)
    gamma = positive("reliability", reliability)
    _check_beta("difficulty_prior", difficulty_prior)
    _check_beta("fallibility_prior", fallibility_prior)
    C = labels.n_classes
    with pm.Model(coords=coords(labels)) as model:
        item_prior = pm.Data("difficulty_prior", np.asarray(difficulty_prior, dtype=float))
        delta = pm.Beta("difficulty", item_prior[0], item_prior[1], dims="item")
        phi = pm.Beta("fallibility", *fallibility_prior, dims="annotator")
        # 1 - epsilon = 1/C + ((C-1)/C) (1 - delta)(1 - phi): computed on the log scale
        item, annotator = label_indices(labels)
        log_easy = pt.log1p(-delta)[item] + pt.log1p(-phi)[annotator]
        log_incorrect = np.log((C - 1) / C) + pt.log1mexp(log_easy)
        log_correct = pt.logaddexp(-np.log(C), np.log((C - 1) / C) + log_easy)
    add_class_layer(model, labels, log_correct, log_incorrect, gibbs=gibbs,
                    class_concentration=class_concentration, plausibility=plausibility,
                    reliability=gamma)
    if gibbs:
        declare_gibbs(model, DifficultySlice, [phi, delta], first=True,
                      true_class=model["true_class"], item=labels.item,
                      annotator=labels.annotator, label=labels.label,
                      n_classes=C, link="su", annotator_prior=fallibility_prior,
                      item_prior=difficulty_prior, sweeps=sweeps, reliability=gamma)
    declare_log_likelihood(model, "labels", partial(log_likelihood, labels=labels),
                           observed=labels.to_dataarray())
    return model


def _draw_difficulty(rng, prior, size):
    return rng.beta(prior[0], prior[1], size)


PARAMETERS = class_layer.DifficultyParameters("su", "fallibility", "difficulty", "difficulty_prior",
                                             _draw_difficulty)
"""Su's parameters as :mod:`plausible.models.latent_class` reads them from a trace."""


def log_likelihood(trace, labels: Labels) -> xr.DataArray:
    """Per-item log-likelihood ``logsumexp_c(log pi_c + gamma L[i, c])``, ``(chain, draw,
    item)``, at every draw's ``pi``, ``phi`` and ``delta`` (the class summed out, ``gamma``
    the trace's reliability; :func:`plausible.models.latent_class.marginal_log_likelihood`).
    :func:`build` declares it: :func:`plausible.sample` writes it as ``log_likelihood/labels``."""
    return class_layer.marginal_log_likelihood(trace, labels, PARAMETERS)


def label_probabilities(trace, chain, draw, item, annotator) -> np.ndarray:
    """``P(x = y | z = c)`` of a new label by annotator ``annotator[p]`` on item ``item[p]``,
    ``(sample, pair, class, label_class)`` (:func:`plausible.models.latent_class.label_probabilities`)."""
    return class_layer.label_probabilities(trace, PARAMETERS, chain, draw, item, annotator)


def replicate_labels(trace, labels: Labels, *, draws: int = 500, seed: int | None = None,
                     classes: str = "new") -> np.ndarray:
    """Replicated labels in the observed design, int ``(sample, annotation)`` class indices,
    from ``draws`` thinned posterior draws: ``classes="new"``, new items (``delta_i`` from its
    prior, ``z_i ~ Categorical(pi)``); ``classes="posterior"``, the same items (the draw's
    ``delta_i``, ``z_i`` from its class posterior). See
    :func:`plausible.models.latent_class.replicate_labels`; feed the result to
    :func:`plausible.diagnostics.annotation_predictive.annotation_predictive_check`."""
    return class_layer.replicate_labels(trace, labels, PARAMETERS, draws=draws, seed=seed,
                                        classes=classes)


def known_class_posterior(labels: Labels, difficulty, fallibility, class_prior) -> np.ndarray:
    """``P(z_i = c | delta, phi, pi, x)`` with known parameters, ``(item, class)``.

    ``difficulty`` ``(item,)``, ``fallibility`` ``(annotator,)``, ``class_prior``
    ``(class,)`` (scalars broadcast). ``P ∝ pi_c prod_{k: i_k = i} p(x_k | z_i = c)``.
    """
    check_labels(labels)
    pi = np.broadcast_to(np.asarray(class_prior, float), (labels.n_classes,))
    if not np.all((pi >= 0) & (pi <= 1)):
        raise ValueError("class_prior must lie in [0, 1]")
    L = label_log_likelihood(labels, difficulty, fallibility)
    with np.errstate(divide="ignore"):
        log_prior = np.log(pi / pi.sum())
    impossible = np.isneginf(log_prior + L).all(axis=1)
    if impossible.any():
        i = int(np.flatnonzero(impossible)[0])
        raise ValueError(f"item {labels.items[i]!r}: its labels are impossible under the known "
                         "parameters (a perfect labeler contradicted)")
    return class_posterior(log_prior, L)


__all__ = ["PARAMETERS", "build", "label_probabilities", "known_class_posterior", "log_likelihood", "replicate_labels"]


ENTRIES = (
    ModelEntry("su-difficulty", build, "labels", "tempering", False,
               "Su's item difficulty x annotator fallibility, Gibbs classes + slice parameters",
               replicate=replicate_labels,
               label_probabilities=label_probabilities,
               cluster_chain=True),
)
"""The registry entries of this family (:mod:`plausible.models.registry`)."""
