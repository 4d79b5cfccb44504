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


TABLE_LIMIT = 1 << 22
"""Most entries of full Dawid–Skene's table of numerator logs (``C^2 (M + 1)`` for ``C``
classes and ``M`` labels of the busiest annotator): beyond it (hundreds of classes) the sweep
takes the logs as it goes."""


def log_tables(beta: np.ndarray, gamma: int, most: int) -> tuple[np.ndarray, np.ndarray]:
    """``log_num[c, x, n] = log prod_{r < gamma} (beta[c, x] + gamma n + r)`` and
    ``log_den[c, n]`` the same of ``B_c = sum_x beta[c, x]``, for ``n = 0..most``: the
    predictive terms of :func:`full_sweep` for every count an annotator can reach (an empty
    ``log_num`` past :data:`TABLE_LIMIT`)."""
    n = gamma * np.arange(most + 1, dtype=np.float64)
    C = beta.shape[0]
    log_den = _rising_table(beta.sum(axis=1)[:, None] + n, gamma)
    if C * C * (most + 1) > TABLE_LIMIT:
        return np.empty((C, C, 0)), log_den
    return _rising_table(beta[:, :, None] + n, gamma), log_den


def _rising_table(base: np.ndarray, gamma: int) -> np.ndarray:
    if gamma == 1:
        return np.log(base)
    from scipy.special import gammaln
    return gammaln(base + gamma) - gammaln(base)


@numba.njit(cache=True, nogil=True, inline="always")
def _shift_full(code, start, stop, c, step, counts, row_totals):  # pragma: no cover
    """Labels ``start..stop`` counted ``step`` more times (+1 or -1) under class ``c``."""
    n_classes = counts.shape[1]
    for k in range(start, stop):
        counts[code[k], c] += step
        row_totals[code[k] // n_classes, c] += step


@numba.njit(cache=True, nogil=True)
def full_sweep(offsets, code, beta, a, gamma, u, z, counts, row_totals, class_counts, log_num,
               log_den):  # pragma: no cover - compiled
    """Full Dawid–Skene's collapsed sweep (module docstring) over every item: ``counts
    (annotator * C + label, class)``, ``row_totals (annotator, class)`` and ``class_counts
    (class,)`` hold the classes ``z`` and are kept current; ``log_num``, ``log_den``: the
    predictive terms by count (:func:`log_tables`; ``log_num`` empty: computed here).
    Returns the number of items whose class changed."""
    n_items, n_classes = offsets.size - 1, a.size
    tabled = log_num.shape[2] > 0
    log_q = np.empty(n_classes)
    changed = 0
    for i in range(n_items):
        start, stop, old = offsets[i], offsets[i + 1], z[i]
        class_counts[old] -= 1
        _shift_full(code, start, stop, old, -1, counts, row_totals)
        for c in range(n_classes):
            s = math.log(a[c] + class_counts[c])
            for k in range(start, stop):  # each label's copies join the counts before the next
                r = code[k]
                j, x = r // n_classes, r % n_classes
                numerator = (log_num[c, x, counts[r, c]] if tabled else
                             _log_rising(beta[c, x] + gamma * counts[r, c], gamma))
                s += numerator - log_den[c, row_totals[j, c]]
                counts[r, c] += 1
                row_totals[j, c] += 1
            _shift_full(code, start, stop, c, -1, counts, row_totals)
            log_q[c] = s
        z[i] = _draw(log_q, u[i])
        changed += z[i] != old
        class_counts[z[i]] += 1
        _shift_full(code, start, stop, z[i], 1, counts, row_totals)
    return changed


@numba.njit(cache=True, nogil=True, inline="always")
def _shift_one_coin(code, start, stop, c, step, counts, right, total):  # pragma: no cover
    """Labels ``start..stop`` counted ``step`` more times (+1 or -1) under class ``c``."""
    n_classes = counts.shape[1]
    for k in range(start, stop):
        j = code[k] // n_classes
        if code[k] % n_classes == c:
            right[j] += step
        total[j] += step
        counts[code[k], c] += step


@numba.njit(cache=True, nogil=True)
def one_coin_sweep(offsets, code, a, u, z, counts, right, total, class_counts, log_right,
                   log_wrong, log_total):  # pragma: no cover - compiled
    """One-coin's collapsed sweep (module docstring): ``right (annotator,)`` and ``total
    (annotator,)`` count each annotator's right and all labels under the classes ``z``,
    ``counts (annotator * C + label, class)`` and ``class_counts (class,)`` as in
    :func:`full_sweep`; all kept current. ``log_right[n]``, ``log_wrong[n]``,
    ``log_total[n]``: the predictive terms by count (:func:`one_coin_tables`). Returns the
    number of items whose class changed."""
    n_items, n_classes = offsets.size - 1, a.size
    log_q = np.empty(n_classes)
    changed = 0
    for i in range(n_items):
        start, stop, old = offsets[i], offsets[i + 1], z[i]
        class_counts[old] -= 1
        _shift_one_coin(code, start, stop, old, -1, counts, right, total)
        for c in range(n_classes):
            s = math.log(a[c] + class_counts[c])
            for k in range(start, stop):  # each label's copies join the counts before the next
                j = code[k] // n_classes
                if code[k] % n_classes == c:
                    s += log_right[right[j]] - log_total[total[j]]
                    right[j] += 1
                else:
                    s += log_wrong[total[j] - right[j]] - log_total[total[j]]
                total[j] += 1
                counts[code[k], c] += 1
            _shift_one_coin(code, start, stop, c, -1, counts, right, total)
            log_q[c] = s
        z[i] = _draw(log_q, u[i])
        changed += z[i] != old
        class_counts[z[i]] += 1
        _shift_one_coin(code, start, stop, z[i], 1, counts, right, total)
    return changed


def one_coin_tables(prior_a: float, prior_b: float, n_classes: int, gamma: int, most: int):
    """``log_right[n] = log prod_{r < gamma} (a + gamma n + r)``, ``log_wrong[n]`` the same of
    ``b`` less ``gamma log(C - 1)``, ``log_total[n]`` of ``a + b``, for ``n = 0..most``: the
    predictive terms of :func:`one_coin_sweep`."""
    n = gamma * np.arange(most + 1, dtype=np.float64)
    return (_rising_table(prior_a + n, gamma),
            _rising_table(prior_b + n, gamma) - gamma * math.log(max(n_classes - 1, 1)),
            _rising_table(prior_a + prior_b + n, gamma))
