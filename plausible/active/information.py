"""Expected information from one more annotation, computed on posterior draws.

For one candidate (an item, or an item and the annotator who would label it) and ``S``
posterior draws ``s``, the new annotation ``y`` has probability ``q^s(y)`` in draw ``s``
and likelihood ``L^s(y)`` (``q^s(y)`` at reliability 1; the tempered
``q^s(y)^gamma`` or ``sum_z pi^s(z) P^s(y | z)^gamma`` otherwise). The draws stand for the
posterior, so observing ``y`` reweights them by ``L^s(y)``: exact Bayes on the draws.
``P(y) = (1/S) sum_s q^s(y)``; entropies are in bits.

**The item's class** is what the information is about:

* models whose plausibility is a parameter (votes, rankings): the item's most plausible
  class ``t^s = argmax lambda^s`` (ties to the lowest index), the class annotation certainty
  is about. ``P(t | y) = sum_s [t^s = t] L^s(y) / sum_s L^s(y)``
  (:func:`top_class_information`);
* models with a latent class ``z`` and draws ``pi^s(z) = P(z | parameters^s, data)``
  (annotator models): ``z`` itself, ``P(z, y) = (1/S) sum_s pi^s(z) P^s(y | z)``, Rao-
  Blackwellised over the draws (:func:`latent_class_information`). The new label also moves
  each draw's plausibility, ``pi^s(z | y) ∝ pi^s(z) P^s(y | z)^gamma``, and with it the
  draw's top class.

Both return the expected information gain ``H(class) - sum_y P(y) H(class | y)`` (the mutual
information of the class and the new annotation at reliability 1, so never negative; clipped
at 0 against round-off and tempering), the top-1 certainty now (the share of draws in which the
modal class is the most plausible) and its expectation after the annotation.
"""

from __future__ import annotations

import numpy as np


def _entropy_bits(p: np.ndarray, axis: int) -> np.ndarray:
    """``-sum p log2 p`` along ``axis`` (``0 log 0 = 0``)."""
    safe = np.where(p > 0, p, 1.0)
    return -(p * np.log2(safe)).sum(axis=axis)


def _normalised(weights: np.ndarray, axis: int) -> np.ndarray:
    total = weights.sum(axis=axis, keepdims=True)
    return np.divide(weights, total, out=np.zeros_like(weights), where=total > 0)


def _one_hot(index: np.ndarray, size: int) -> np.ndarray:
    return (index[..., None] == np.arange(size)).astype(np.float64)


def top_class_information(target: np.ndarray, predictive: np.ndarray, likelihood: np.ndarray,
                          n_targets: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(gain in bits, certainty now, expected certainty)``, each ``(candidate,)``, about
    the top class ``target`` int ``(sample, candidate)`` in ``0..n_targets-1``;
    ``predictive``, ``likelihood`` float ``(sample, candidate, outcome)``."""
    onehot = _one_hot(target, n_targets)  # (S, P, T)
    joint = np.matmul(onehot.transpose(1, 2, 0), likelihood.transpose(1, 0, 2))  # (P, T, Y)
    posterior = _normalised(joint, axis=1)
    prior = onehot.mean(axis=0)
    outcome = predictive.mean(axis=0)  # (P, Y)
    gain = _entropy_bits(prior, -1) - (outcome * _entropy_bits(posterior, 1)).sum(-1)
    expected = (outcome * posterior.max(axis=1)).sum(axis=-1)
    return np.maximum(gain, 0.0), prior.max(axis=-1), expected


def latent_class_information(plausibility: np.ndarray, rows: np.ndarray, gamma: float = 1.0
                             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(gain in bits, certainty now, expected certainty)``, each ``(candidate,)``, about the
    latent class, from ``plausibility`` ``pi^s(z)`` ``(sample, candidate, class)`` and the
    new label's ``rows`` ``P^s(y | z)`` ``(sample, candidate, class, label_class)``."""
    S, _, C = plausibility.shape
    tempered = rows if gamma == 1 else rows**gamma
    joint = np.einsum("spz,spzy->pzy", plausibility, rows) / S  # P(z, y), reliability 1
    weighted = plausibility[..., None] * tempered  # (S, P, z, y): pi^s(z) P^s(y | z)^gamma
    posterior = _normalised(weighted.sum(axis=0), axis=1)  # P(z | y)
    outcome = joint.sum(axis=1)  # P(y)
    gain = (_entropy_bits(joint.sum(axis=2), -1)
            - (outcome * _entropy_bits(posterior, 1)).sum(-1))
    now = _one_hot(plausibility.argmax(axis=-1), C).mean(axis=0).max(axis=-1)
    moved = _one_hot(weighted.argmax(axis=2), C)  # (S, P, y, t): the draw's top class after y
    share = _normalised(np.einsum("spyt,spy->pyt", moved, weighted.sum(axis=2)), axis=2)
    expected = (outcome * share.max(axis=2)).sum(axis=-1)
    return np.maximum(gain, 0.0), now, expected


__all__ = ["latent_class_information", "top_class_information"]
