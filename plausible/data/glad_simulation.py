"""Seeded simulator of GLAD labels (Whitehill et al. 2009; spec 02 §2.1).

Per annotator ``j``: ability ``alpha_j ~ N(ability_mean, ability_sd)``; per item ``i``: log
inverse difficulty ``log beta_i ~ N(difficulty_mean, difficulty_sd)`` and true class
``z_i ~ Cat(pi)``. Each annotator labels each item with probability ``coverage`` (an item
left without labels gets one from annotator 0, so nothing is empty); a label is the true
class with probability ``sigmoid(alpha_j beta_i)``, otherwise uniform over the ``C - 1``
other classes. The defaults are the priors of :mod:`plausible.models.glad`, so recovery
studies are calibrated by construction. Same seed, same data.
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
    correct = rng.random(item.size) < expit(alpha[annotator] * np.exp(log_beta[item]))
    # A wrong label is uniform over the C - 1 other classes.
    wrong = (truth[item] + rng.integers(1, n_classes, size=item.size)) % n_classes
    label = np.where(correct, truth[item], wrong)
    labels = Labels(item, annotator, label, np.arange(n_items), np.arange(n_annotators),
                    np.arange(n_classes))
    return GLADSimulation(labels, truth, alpha, log_beta, prior)


__all__ = ["GLADSimulation", "simulate_glad"]
