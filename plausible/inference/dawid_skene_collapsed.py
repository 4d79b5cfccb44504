"""Collapsed class sweeps of the Dawid–Skene family: the annotator parameters integrated out.

With every annotator's confusion rows (or accuracy) and the class prior integrated out under
their conjugate priors, the classes alone have the posterior ``p(z | x)``, and each item's
class given all the others' is a product of Dirichlet–multinomial (Beta–binomial) predictive
terms (Griffiths & Steyvers 2004 for the collapsed scheme; Dawid & Skene 1979 and Paun et al.
2018 for the models):

    P(z_i = c | z_-i, x)  ∝  (a_c + m_c)  prod_{k in item i}  pred_k(c)

with ``m_c`` the other items of class ``c`` and, for label ``x_k`` by annotator ``j_k`` and
``gamma`` repetitions of every label (a whole number),

* full Dawid–Skene: ``pred_k(c) = prod_{r < gamma} (beta[c, x] + gamma n_j[c, x] + r) /
  (B_c + gamma N_j[c] + r)`` (``n_j[c, x]``: the other items' labels ``x`` by ``j`` on class
  ``c``, ``N_j[c] = sum_x n_j[c, x]``, ``B_c = sum_x beta[c, x]``);
* one-coin: the same with ``beta = (a, b)`` over (right, wrong): ``(a + gamma R_j + r) /
  (a + b + gamma T_j + r)`` for ``x = c`` and ``(b + gamma (T_j - R_j) + r) / (a + b + gamma
  T_j + r) / (C - 1)`` otherwise (``R_j`` right of ``T_j`` labels).

Labels of the same item are taken in their stored order, each one's copies added to the
counts before the next (so an annotator who labelled an item twice is exact too). One sweep
draws ``z_i`` for every item in turn, from the caller's uniforms by inverse CDF, with the
counts updated in place: a Markov chain on ``z`` alone, which mixes where the joint scan
(classes given parameters, parameters given classes) crawls because the two blocks are tightly
coupled (workers with few labels each). The sampler then draws the parameters given the
classes exactly (:mod:`plausible.inference.dawid_skene_members`), so the trace keeps them.
"""

from __future__ import annotations

import math

import numba
import numpy as np


@numba.njit(cache=True, nogil=True, inline="always")
def _log_rising(base, gamma):  # pragma: no cover - compiled
    """``log prod_{r < gamma} (base + r)`` for a whole ``gamma >= 1``."""
    if gamma == 1:
        return math.log(base)
    return math.lgamma(base + gamma) - math.lgamma(base)


@numba.njit(cache=True, nogil=True, inline="always")
def _draw(log_q, u):  # pragma: no cover - compiled
    """The first class whose cumulative ``softmax(log_q)`` exceeds ``u``."""
    n_classes = log_q.size
    top = -np.inf
    for c in range(n_classes):
        top = max(top, log_q[c])
    total = 0.0
    for c in range(n_classes):
        log_q[c] = math.exp(log_q[c] - top)
        total += log_q[c]
    target = u * total
    cumulative = 0.0
    for c in range(n_classes - 1):
        cumulative += log_q[c]
        if target < cumulative:
            return c
    return n_classes - 1


@numba.njit(cache=True, nogil=True)
def full_sweep(offsets, code, beta, a, gamma, u, z, counts, row_totals, class_counts):
    # pragma: no cover - compiled
    """Full Dawid–Skene's collapsed sweep (module docstring) over every item: ``counts
    (annotator * C + label, class)``, ``row_totals (annotator, class)`` and ``class_counts
    (class,)`` hold the classes ``z`` and are kept current. Returns the number of items
    whose class changed."""
    n_items, n_classes = offsets.size - 1, a.size
    beta_total = np.empty(n_classes)
    for c in range(n_classes):
        beta_total[c] = 0.0
        for x in range(n_classes):
            beta_total[c] += beta[c, x]
    log_q = np.empty(n_classes)
    changed = 0
    for i in range(n_items):
        start, stop, old = offsets[i], offsets[i + 1], z[i]
        class_counts[old] -= 1
        for k in range(start, stop):
            counts[code[k], old] -= 1
            row_totals[code[k] // n_classes, old] -= 1
        for c in range(n_classes):
            s = math.log(a[c] + class_counts[c])
            for k in range(start, stop):
                r = code[k]
                j, x = r // n_classes, r % n_classes
                s += (_log_rising(beta[c, x] + gamma * counts[r, c], gamma)
                      - _log_rising(beta_total[c] + gamma * row_totals[j, c], gamma))
                counts[r, c] += 1
                row_totals[j, c] += 1
            for k in range(start, stop):
                counts[code[k], c] -= 1
                row_totals[code[k] // n_classes, c] -= 1
            log_q[c] = s
        new = _draw(log_q, u[i])
        if new != old:
            changed += 1
        z[i] = new
        class_counts[new] += 1
        for k in range(start, stop):
            counts[code[k], new] += 1
            row_totals[code[k] // n_classes, new] += 1
    return changed


@numba.njit(cache=True, nogil=True)
def one_coin_sweep(offsets, code, prior_a, prior_b, a, gamma, u, z, counts, right, total,
                   class_counts):  # pragma: no cover - compiled
    """One-coin's collapsed sweep (module docstring): ``right (annotator,)`` and ``total
    (annotator,)`` count each annotator's right and all labels under the classes ``z``,
    ``counts (annotator * C + label, class)`` and ``class_counts (class,)`` as in
    :func:`full_sweep`; all kept current. Returns the number of items whose class changed."""
    n_items, n_classes = offsets.size - 1, a.size
    log_other = math.log(n_classes - 1) if n_classes > 1 else 0.0
    log_q = np.empty(n_classes)
    changed = 0
    for i in range(n_items):
        start, stop, old = offsets[i], offsets[i + 1], z[i]
        class_counts[old] -= 1
        for k in range(start, stop):
            j = code[k] // n_classes
            if code[k] % n_classes == old:
                right[j] -= 1
            total[j] -= 1
            counts[code[k], old] -= 1
        for c in range(n_classes):
            s = math.log(a[c] + class_counts[c])
            for k in range(start, stop):
                j, x = code[k] // n_classes, code[k] % n_classes
                denominator = _log_rising(prior_a + prior_b + gamma * total[j], gamma)
                if x == c:
                    s += _log_rising(prior_a + gamma * right[j], gamma) - denominator
                    right[j] += 1
                else:
                    s += (_log_rising(prior_b + gamma * (total[j] - right[j]), gamma)
                          - denominator - gamma * log_other)
                total[j] += 1
            for k in range(start, stop):
                j = code[k] // n_classes
                if code[k] % n_classes == c:
                    right[j] -= 1
                total[j] -= 1
            log_q[c] = s
        new = _draw(log_q, u[i])
        if new != old:
            changed += 1
        z[i] = new
        class_counts[new] += 1
        for k in range(start, stop):
            j = code[k] // n_classes
            if code[k] % n_classes == new:
                right[j] += 1
            total[j] += 1
            counts[code[k], new] += 1
    return changed
