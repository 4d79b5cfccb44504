"""Known-parameter mode of Su's sample-difficulty / labeler-fallibility model (Su 2024).

For ``C`` classes, item difficulty ``delta_i`` and labeler fallibility ``phi_t`` in [0, 1]::

    epsilon(delta, phi) = ((C - 1) / C) (1 - (1 - delta)(1 - phi))
    p(z = y | y) = 1 - epsilon,   p(z = c | y) = epsilon / (C - 1) for each c != y

Labelers are conditionally independent given ``y``; missing labels are absent from the
product. These per-item likelihood vectors ``l_i(y) = p(z_i | y)`` are what the testing
algorithms of Su 2024 (:mod:`plausible.evaluation`) consume.
"""

from __future__ import annotations

import numpy as np


def error_rate(difficulty, fallibility, n_classes: int):
    """``epsilon = ((C - 1) / C) (1 - (1 - delta)(1 - phi))``, broadcast over the inputs
    (floats, numpy arrays or pytensor tensors: the PyMC model of
    :mod:`plausible.models.su_difficulty` builds its graph with it)."""
    if n_classes < 2:
        raise ValueError(f"n_classes must be >= 2, got {n_classes}")
    return (n_classes - 1) / n_classes * (1 - (1 - difficulty) * (1 - fallibility))


def _unit_interval(name, value, shape):
    value = np.asarray(value, dtype=np.float64)
    try:
        value = np.broadcast_to(value, shape)
    except ValueError:
        raise ValueError(f"{name} must have shape {shape} (or broadcast to it), "
                         f"got {value.shape}") from None
    bad = ~((value >= 0) & (value <= 1))
    if bad.any():
        k = int(np.flatnonzero(bad.ravel())[0])
        raise ValueError(f"{name}[{k}] = {value.ravel()[k]} is outside [0, 1]")
    return value


def label_log_likelihood(labels, difficulty, fallibility) -> np.ndarray:
    """``log l_i(y) = sum_{k: item_k = i} log p(z_k | y)``, float64 ``(item, class)``.

    ``labels`` is a :class:`plausible.data.Labels` (read through ``item``, ``annotator``,
    ``label``, ``n_items``, ``n_annotators``, ``n_classes``).
    ``difficulty`` ``(item,)`` and ``fallibility`` ``(annotator,)`` (scalars broadcast).
    Each label adds ``log(epsilon_k / (C - 1))`` to every class and
    ``log(1 - epsilon_k) - log(epsilon_k / (C - 1))`` to its own class; a perfect label
    (``epsilon = 0``) sets every other class to ``-inf``.
    """
    C = labels.n_classes
    delta = _unit_interval("difficulty", difficulty, (labels.n_items,))
    phi = _unit_interval("fallibility", fallibility, (labels.n_annotators,))
    eps = error_rate(delta[labels.item], phi[labels.annotator], C)
    perfect = eps == 0
    with np.errstate(divide="ignore"):
        log_wrong = np.where(perfect, 0.0, np.log(eps / (C - 1)))
    out = np.repeat(np.bincount(labels.item, weights=log_wrong, minlength=labels.n_items)[:, None],
                    C, axis=1)
    np.add.at(out, (labels.item, labels.label), np.log1p(-eps) - log_wrong)
    # A perfect label (eps = 0) rules out every class it disagrees with.
    n_perfect = np.zeros((labels.n_items, C))
    np.add.at(n_perfect, (labels.item, labels.label), perfect)
    out[n_perfect.sum(axis=1, keepdims=True) > n_perfect] = -np.inf
    return out


def label_likelihood(labels, difficulty, fallibility) -> np.ndarray:
    """``l_i(y) = prod_{k: item_k = i} p(z_k | y)``, float64 ``(item, class)``.

    Computed in log space (:func:`label_log_likelihood`) and exponentiated; use the log
    version when items carry many labels (underflow).
    """
    return np.exp(label_log_likelihood(labels, difficulty, fallibility))
