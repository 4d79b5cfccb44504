"""The class evidence of the item-difficulty models (GLAD, Su's model) given their
parameters: what the class posterior of an item needs, one term per label.

Both models give label ``k`` (label ``x_k`` of item ``i_k`` by annotator ``j_k``) the
probability ``r_k`` of being the item's true class and ``(1 - r_k) / (C - 1)`` of each other
class, so the class log-likelihood of item ``i`` is, up to a constant per item,

    E[i, c] = sum_{k: i_k = i, x_k = c} e_k,    e_k = log r_k - log((1 - r_k) / (C - 1)),

and the class posterior is ``softmax_c(log pi_c + gamma E[i, c])`` (``gamma`` the
reliability; the constant cancels whatever ``gamma``):

* GLAD (Whitehill et al. 2009), ``r_k = sigmoid(s_k)``, ``s_k = alpha_{j_k} beta_{i_k}``:
  ``e_k = s_k + log(C - 1)`` (as ``log(1 - sigmoid(s)) = log sigmoid(s) - s``), one
  multiply-add per label, no ``exp`` or ``log``;
* Su (2024), ``r_k = 1/C + ((C - 1)/C) s_k``, ``s_k = (1 - phi_{j_k})(1 - delta_{i_k})``:
  ``e_k = log(1 + (C - 1) s_k) - log(1 - s_k)``.

The labels come grouped by item (``offsets (item + 1,)``; ``annotator``, ``label``
``(annotation,)`` in item order).
"""

import numba
import numpy as np


@numba.njit(cache=True)
def class_evidence(ability, log_beta, offsets, annotator, label, n_classes):
    """GLAD's ``E (item, class)`` (module) from ``ability (annotator,)`` and ``log_beta
    (item,)``."""
    log_wrong = np.log(n_classes - 1)
    n_items = offsets.size - 1
    E = np.zeros((n_items, n_classes))
    for i in range(n_items):
        beta = np.exp(log_beta[i])
        for k in range(offsets[i], offsets[i + 1]):
            E[i, label[k]] += ability[annotator[k]] * beta + log_wrong
    return E


@numba.njit(cache=True)
def su_class_evidence(fallibility, difficulty, offsets, annotator, label, n_classes):
    """Su's ``E (item, class)`` (module) from ``fallibility (annotator,)`` and ``difficulty
    (item,)``, both in ``(0, 1)``."""
    n_items = offsets.size - 1
    E = np.zeros((n_items, n_classes))
    for i in range(n_items):
        easy = 1.0 - difficulty[i]
        for k in range(offsets[i], offsets[i + 1]):
            s = (1.0 - fallibility[annotator[k]]) * easy
            E[i, label[k]] += np.log1p((n_classes - 1) * s) - np.log1p(-s)
    return E


__all__ = ["class_evidence", "su_class_evidence"]
