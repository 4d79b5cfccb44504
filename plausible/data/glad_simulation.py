"""Seeded simulator of GLAD labels (Whitehill et al. 2009).

Per annotator ``j``: ability ``alpha_j ~ N(ability_mean, ability_sd)``; per item ``i``: log
inverse difficulty ``log beta_i ~ N(difficulty_mean, difficulty_sd)`` and true class
``z_i ~ Cat(pi)``. Each annotator labels each item with probability ``coverage`` (an item
left without labels gets one from annotator 0, so nothing is empty); a label is the true
class with probability ``sigmoid(alpha_j beta_i)``, otherwise uniform over the ``C - 1``
other classes. The defaults are the priors of :mod:`plausible.models.glad`, so recovery
studies are calibrated by construction. Same seed, same data.

:func:`simulate_glad_labels` draws new labels on a given design (the ``(item, annotator)``
pairs of existing labels) at fixed classes and parameters: a parametric bootstrap, e.g. of a
real data set at a point estimate, to compare aggregators where the truth is known
(:mod:`plausible.diagnostics.label_accuracy`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import expit

from plausible.data.labels import Labels


@dataclass(frozen=True)
class GLADSimulation:
    """Simulated labels with the truth behind them.

    ``labels``: long-format :class:`~plausible.data.labels.Labels` with item, annotator and
    class ids ``0..n-1``; ``truth`` int64 ``(item,)``; ``ability`` ``(annotator,)``;
    ``log_inverse_difficulty`` ``(item,)``; ``prior`` ``(class,)``.
    """

    labels: Labels
    truth: np.ndarray
    ability: np.ndarray
    log_inverse_difficulty: np.ndarray
    prior: np.ndarray


def simulate_glad(n_items: int, n_annotators: int, n_classes: int = 2, *, prior=None,
                  coverage: float = 0.7, ability=(1.0, 1.0), log_inverse_difficulty=(1.0, 1.0),
                  seed=None) -> GLADSimulation:
    """Draw GLAD labels (see the module docstring).

    ``prior``: class probabilities ``(C,)``, uniform by default. ``ability`` and
    ``log_inverse_difficulty``: ``(mean, sd)`` of their normal distributions.
    ``coverage``: probability that an annotator labels an item, in ``(0, 1]``.
    """
    if n_items < 1 or n_annotators < 1 or n_classes < 2:
        raise ValueError("need n_items >= 1, n_annotators >= 1 and n_classes >= 2, got "
                         f"{n_items}, {n_annotators}, {n_classes}")
    if not 0 < coverage <= 1:
        raise ValueError(f"coverage must lie in (0, 1], got {coverage}")
    prior = np.full(n_classes, 1.0 / n_classes) if prior is None else np.asarray(prior, float)
    if prior.shape != (n_classes,) or (prior < 0).any() or not np.isclose(prior.sum(), 1.0):
        raise ValueError(f"prior must be {n_classes} non-negative probabilities summing to 1, got {prior}")
    rng = np.random.default_rng(seed)
    alpha = rng.normal(*ability, size=n_annotators)
    log_beta = rng.normal(*log_inverse_difficulty, size=n_items)
    truth = rng.choice(n_classes, size=n_items, p=prior)
    labelled = rng.random((n_items, n_annotators)) < coverage
    labelled[~labelled.any(axis=1), 0] = True
    item, annotator = np.nonzero(labelled)
    label = _draw_labels(rng, item, annotator, truth, alpha, log_beta, n_classes)
    labels = Labels(item, annotator, label, np.arange(n_items), np.arange(n_annotators),
                    np.arange(n_classes))
    return GLADSimulation(labels, truth, alpha, log_beta, prior)


def simulate_glad_labels(design: Labels, truth, ability, log_inverse_difficulty, *,
                         seed=None) -> Labels:
    """GLAD labels on ``design``'s ``(item, annotator)`` pairs at fixed parameters.

    The result has ``design``'s annotations, ids and classes with new labels: annotation
    ``k`` is ``truth[i_k]`` with probability ``sigmoid(alpha_{j_k} exp(log beta_{i_k}))``,
    otherwise uniform over the ``C - 1`` other classes. ``truth``: class indices ``(item,)``;
    ``ability`` ``(annotator,)``; ``log_inverse_difficulty`` ``(item,)``, all finite. Same
    seed, same labels.
    """
    if not isinstance(design, Labels):
        raise TypeError(f"design must be plausible.data.Labels, got {type(design).__name__}")
    truth = np.asarray(truth)
    alpha, log_beta = (np.asarray(a, dtype=float) for a in (ability, log_inverse_difficulty))
    for name, value, size in [("truth", truth, design.n_items), ("ability", alpha, design.n_annotators),
                              ("log_inverse_difficulty", log_beta, design.n_items)]:
        if value.shape != (size,):
            raise ValueError(f"{name} must have shape ({size},), got {value.shape}")
    if not np.issubdtype(truth.dtype, np.integer) or ((truth < 0) | (truth >= design.n_classes)).any():
        raise ValueError(f"truth must be class indices in 0..{design.n_classes - 1}")
    if not (np.isfinite(alpha).all() and np.isfinite(log_beta).all()):
        raise ValueError("ability and log_inverse_difficulty must be finite")
    label = _draw_labels(np.random.default_rng(seed), design.item, design.annotator, truth, alpha,
                         log_beta, design.n_classes)
    return Labels(design.item, design.annotator, label, design.items, design.annotators,
                  design.classes)


def _draw_labels(rng, item, annotator, truth, alpha, log_beta, n_classes):
    """One GLAD label per ``(item[k], annotator[k])``, int ``(annotation,)``."""
    correct = rng.random(item.size) < expit(alpha[annotator] * np.exp(log_beta[item]))
    # A wrong label is uniform over the C - 1 other classes.
    wrong = (truth[item] + rng.integers(1, n_classes, size=item.size)) % n_classes
    return np.where(correct, truth[item], wrong)


__all__ = ["GLADSimulation", "simulate_glad", "simulate_glad_labels"]
