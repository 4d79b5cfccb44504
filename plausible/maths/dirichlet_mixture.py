"""The marginal likelihood of an item's labels when its distribution over the classes is
integrated out: a Dirichlet mixture of annotator channels, summed exactly by the Pólya urn.

An item with distribution ``lambda ~ Dirichlet(alpha)`` over ``C`` classes gets labels
``x_1 .. x_n``; label ``r`` comes from an intended class ``t_r ~ lambda`` through its
annotator's channel ``theta_r[t_r, x_r]``. Its marginal likelihood is::

    p(x | theta, alpha) = E_lambda[ prod_r sum_c lambda_c theta_r[c, x_r] ]
                        = sum_{t_1..t_n} prod_r theta_r[t_r, x_r]
                              (alpha_{t_r} + m_{t_r}(r)) / (A + r - 1)

with ``A = sum_c alpha_c`` and ``m_c(r)`` the intended classes ``c`` among ``t_1 ..
t_{r-1}``: the sequence of intended classes is a Pólya urn (Blackwell & MacQueen 1973). The
urn's weights depend on the earlier classes only through their counts, so the ``C^n`` terms
collapse onto the count vectors: after ``r`` labels the state is a composition of ``r`` into
``C`` parts, ``binom(r + C - 1, C - 1)`` of them, and the sum is a forward pass over them
(:func:`log_marginal`), ``sum_{r<n} binom(r + C - 1, C - 1) C`` products in all. Two classes
and ten labels take 110; four classes and ten labels, 2,860; ten classes and fifty labels,
``6 10^11`` (:func:`pass_cost` says before anything runs).

The same weights give an exact draw of the intended classes given the labels
(:func:`item_backward`): the final count vector in proportion to its weight, then each label's
class backwards, as forward filtering and backward sampling does for a hidden Markov chain.
"""

from __future__ import annotations

import math

import numba
import numpy as np


def compositions(n_classes: int, max_total: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every count vector of ``0 .. max_total`` labels over ``n_classes`` classes, level by
    level: ``counts (state, class)`` int64, ``successor (state, class)`` int64 (the state
    with one more count in the class; -1 on the last level) and ``offset (max_total + 2,)``
    (level ``r``'s states are ``offset[r]:offset[r + 1]``)."""
    levels = [np.zeros((1, n_classes), dtype=np.int64)]
    successors = []
    for _ in range(max_total):
        grown = (levels[-1][:, None, :] + np.eye(n_classes, dtype=np.int64)).reshape(-1, n_classes)
        level, index = np.unique(grown, axis=0, return_inverse=True)
        levels.append(level)
        successors.append(index.reshape(-1, n_classes))
    offset = np.cumsum([0] + [len(level) for level in levels])
    successor = np.full((offset[-1], n_classes), -1, dtype=np.int64)
    for r, index in enumerate(successors):
        successor[offset[r]:offset[r + 1]] = index + offset[r + 1]
    return np.concatenate(levels), successor, offset.astype(np.int64)


def pass_cost(n_labels: np.ndarray, n_classes: int) -> int:
    """Products one forward pass of :func:`log_marginal` takes over items with ``n_labels``
    labels each: ``sum_i sum_{r < n_i} binom(r + C - 1, C - 1) C``, that is ``sum_i
    binom(n_i + C - 1, C) C``."""
    sizes, repeats = np.unique(np.asarray(n_labels, dtype=np.int64), return_counts=True)
    return int(sum(int(k) * math.comb(int(n) + n_classes - 1, n_classes) * n_classes
                   for n, k in zip(sizes, repeats)))


@numba.njit(nogil=True, cache=True)
def item_forward(weight, theta, alpha, annotator, label, n, counts, successor,
                 offset):  # pragma: no cover - compiled
    """The forward pass of one item's ``n`` labels ``annotator, label (n,)`` at ``theta
    (annotator, class, label_class)`` and ``alpha (class,)``: ``weight`` (at least
    ``offset[n + 1]``) holds every level's urn weights, each level rescaled by its largest
    (:func:`item_backward` compares weights within a level only);
    returns ``log p(x | theta, alpha)`` (module), ``-inf`` when no intended class can give
    some label."""
    n_classes = alpha.size
    total_alpha = 0.0
    for c in range(n_classes):
        total_alpha += alpha[c]
    channel = np.empty(n_classes)
    weight[0] = 1.0
    log_scale = 0.0
    for r in range(n):
        j, x = annotator[r], label[r]
        for c in range(n_classes):  # the label's factor and the urn's normaliser, per class
            channel[c] = theta[j, c, x] / (total_alpha + r)
        for state in range(offset[r + 1], offset[r + 2]):
            weight[state] = 0.0
        for state in range(offset[r], offset[r + 1]):
            w = weight[state]
            if w == 0.0:
                continue
            for c in range(n_classes):
                weight[successor[state, c]] += w * (alpha[c] + counts[state, c]) * channel[c]
        largest = 0.0
        for state in range(offset[r + 1], offset[r + 2]):
            largest = max(largest, weight[state])
        if largest == 0.0:  # a label no intended class can give
            return -np.inf
        for state in range(offset[r + 1], offset[r + 2]):
            weight[state] /= largest
        log_scale += math.log(largest)
    total = 0.0
    for state in range(offset[n], offset[n + 1]):
        total += weight[state]
    return log_scale + math.log(total)


def predecessors(successor: np.ndarray) -> np.ndarray:
    """``predecessor (state, class)`` from :func:`compositions`' ``successor``: the state with
    one count fewer in the class (-1 where the class has no count)."""
    predecessor = np.full(successor.shape, -1, dtype=np.int64)
    state, c = np.nonzero(successor >= 0)
    predecessor[successor[state, c], c] = state
    return predecessor


@numba.njit(nogil=True, cache=True)
def item_backward(weight, theta, alpha, annotator, label, n, counts, predecessor, offset, u,
                  t):  # pragma: no cover - compiled
    """Draw one item's intended classes ``t (n,)`` from ``p(t | x, theta, alpha)`` once
    :func:`item_forward` has filled ``weight`` (backward sampling): the final count vector
    in proportion to its weight, then, label by label from the last, the class it took in
    proportion to the weight of the state before it times the urn's and the channel's
    factors, ``w_r(s - e_c) (alpha_c + m_c) theta_r[c, x_r]`` (each level's common scale
    cancels); ``u (n + 1,)`` uniforms."""
    total = 0.0
    for state in range(offset[n], offset[n + 1]):
        total += weight[state]
    target = u[n] * total
    state = offset[n + 1] - 1
    for candidate in range(offset[n], offset[n + 1]):
        target -= weight[candidate]
        if target < 0.0:
            state = candidate
            break
    n_classes = alpha.size
    step = np.empty(n_classes)
    for r in range(n - 1, -1, -1):
        j, x = annotator[r], label[r]
        total = 0.0
        for c in range(n_classes):
            p = predecessor[state, c]
            step[c] = 0.0 if p < 0 else weight[p] * (alpha[c] + counts[p, c]) * theta[j, c, x]
            total += step[c]
        target = u[r] * total
        chosen = -1
        for c in range(n_classes):
            if step[c] > 0.0:
                chosen = c
                target -= step[c]
                if target < 0.0:
                    break
        t[r] = chosen
        state = predecessor[state, chosen]


@numba.njit(parallel=True, nogil=True, cache=True)
def log_marginal(theta, alpha, annotator, label, start, counts, successor, offset,
                 out):  # pragma: no cover - compiled
    """``out[s, i] = log p(x_i | theta[s], alpha[s])`` (module) for ``theta (sample,
    annotator, class, label_class)``, ``alpha (sample, class)`` and every item's labels
    ``start[i]:start[i + 1]`` of ``annotator``, ``label`` (sorted by item); the tables are
    :func:`compositions`' for at least the most labels an item has."""
    for s in numba.prange(theta.shape[0]):
        weight = np.empty(offset[-1])
        for i in range(start.size - 1):
            lo, hi = start[i], start[i + 1]
            out[s, i] = item_forward(weight, theta[s], alpha[s], annotator[lo:hi],
                                     label[lo:hi], hi - lo, counts, successor, offset)


__all__ = ["compositions", "item_backward", "item_forward", "log_marginal", "pass_cost",
           "predecessors"]
