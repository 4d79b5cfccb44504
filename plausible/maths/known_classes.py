"""Known classes (gold items) in the latent-class models: clamping each known item's class.

An item whose true class ``k`` is known enters every latent-class model with ``z_i = k``
observed instead of sampled. That is conditioning: the posterior of everything else given the
labels and ``z_i = k`` is the full posterior restricted to ``z_i = k``, renormalised. In the
formulas it is an item-specific prior ``log P(z_i = c) = log pi_c + m[i, c]`` with the mask
``m[i, c] = 0`` for ``c = k`` and ``-inf`` otherwise (0 everywhere for an item not known):
the item's class posterior becomes one-hot at ``k``, its class draw always returns ``k``, and
its marginal log-likelihood ``logsumexp_c(log pi_c + m[i, c] + gamma L[i, c]) = log pi_k +
gamma L[i, k]`` (the known class and the labels given it). ``known`` arrays are int
``(item,)``, the class index or -1 (:attr:`plausible.data.Labels.known`).
"""

from __future__ import annotations

import numpy as np


def known_log_mask(known: np.ndarray | None, n_items: int, n_classes: int) -> np.ndarray:
    """``m (item, class)`` float64: 0 where the class is allowed, ``-inf`` for every class but
    a known item's own (all zeros when ``known`` is None)."""
    mask = np.zeros((n_items, n_classes))
    if known is not None:
        rows = np.flatnonzero(known >= 0)
        mask[rows] = -np.inf
        mask[rows, known[rows]] = 0.0
    return mask


def clamp_known(probabilities: np.ndarray, known: np.ndarray | None, item_axis: int = -2
                ) -> np.ndarray:
    """``probabilities (..., item, ..., class)`` with every known item's row set to the
    one-hot of its class, in place (and returned); unchanged when ``known`` is None.
    ``item_axis``: the axis of the items (default the one before the classes)."""
    if known is None:
        return probabilities
    rows = np.flatnonzero(known >= 0)
    view = np.moveaxis(probabilities, item_axis, 0)  # a view: writes reach probabilities
    view[rows] = 0
    view[rows, ..., known[rows]] = 1
    return probabilities
