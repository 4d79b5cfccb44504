"""A symmetric Dirichlet prior of confusion rows, learned from count rows with the rows'
own vectors integrated out, by slice sampling.

Every annotator's row ``c`` has ``theta_j[c] ~ Dirichlet(beta_c)`` with ``beta_c[c] = d`` (the
true class's label) and ``beta_c[x] = o`` for every other label: two numbers for the whole
crowd, ``d`` how strongly a typical annotator names the true class and ``o`` how strongly it
names any one wrong class (the prior mean accuracy is ``d / (d + (C - 1) o)``, and ``d + (C -
1) o`` is how many labels the prior row weighs). With each row's Dirichlet vector integrated
out (a Dirichlet-multinomial of the tempered counts ``m_jc = gamma n_j[c, :]``)::

    log p(d, o | m) = sum_{j, c} [lgamma(d + m_jcc) - lgamma(d)
                                  + sum_{x != c} (lgamma(o + m_jcx) - lgamma(o))
                                  + lgamma(k) - lgamma(k + M_jc)] + log prior,

``k = d + (C - 1) o``, ``M_jc = sum_x m_jcx``; a zero count (and an empty row) adds nothing,
so the sum depends on the counts only through how often each value occurs on the diagonal,
off it and as a row total (:func:`symmetric_summary`): ``O(distinct values)`` ``lgamma``
pairs per evaluation. The prior is normal on ``(log d, log o)``, truncated to ``o < d`` (a
typical annotator names the true class more often than any one wrong class: the condition
that orients the classes, as the diagonal prior of :mod:`plausible.models.dawid_skene` does).
The posterior of ``log d`` and ``log o`` lies along a ridge (both grow with how alike the
annotators are, at about the same accuracy: correlations of 0.97 on real crowds), so Neal's
slice sampler (:mod:`plausible.inference.step_methods.univariate_slice`) moves along the ridge and across
it instead of along the coordinates: ``(log d, log o) + t (1, 1) / sqrt 2`` (the strength
``d + (C - 1) o`` at a fixed ratio ``d / o``) and then ``+ t (1, -1) / sqrt 2`` (the ratio),
each a slice update of ``t`` on the region ``o < d``; fixed directions, so each update leaves
the conditional invariant. Followed by the rows' exact draw
``theta_j[c] | d, o ~ Dirichlet(beta_c + m_jc)``, the update is a joint draw of ``(d, o,
theta) | z`` with no funnel between the prior and the rows.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from plausible.inference.step_methods.univariate_slice import slice_update


def symmetric_summary(counts: np.ndarray, gamma: float = 1.0) -> tuple[np.ndarray, ...]:
    """The summary of the tempered counts ``gamma m`` (``m (row, class, label_class)`` whole
    counts) the density reads: ``(diagonal values, their multiplicities, off-diagonal values,
    theirs, row totals, theirs)``, the distinct positive values of each kind (counted by
    value: the counts are small whole numbers)."""
    C = counts.shape[-1]
    on = np.eye(C, dtype=bool)
    out = []
    for values in (counts[:, on], counts[:, ~on], counts.sum(axis=2)):
        weights = np.bincount(values.ravel())
        present = np.flatnonzero(weights[1:]) + 1
        out += [gamma * present.astype(np.float64), weights[present].astype(np.float64)]
    return tuple(out)


_HALF = math.sqrt(0.5)


@numba.njit(cache=True, nogil=True)
def symmetric_log_density(t, k, v, diagonal, diagonal_weights, off, off_weights, totals,
                          total_weights, n_classes, mean, sd):  # pragma: no cover - compiled
    """Log density (module) of ``(log d, log o) = v + t e_k``, ``e_0 = (1, 1) / sqrt 2`` and
    ``e_1 = (1, -1) / sqrt 2``, from a :func:`symmetric_summary`; normal prior ``(mean, sd)``
    per coordinate (the truncation is the slice's bounds)."""
    log_d = v[0] + t * _HALF
    log_o = v[1] + (t * _HALF if k == 0 else -t * _HALF)
    d, o = math.exp(log_d), math.exp(log_o)
    out = -0.5 * (((log_d - mean[0]) / sd[0]) ** 2 + ((log_o - mean[1]) / sd[1]) ** 2)
    lgamma_d, lgamma_o = math.lgamma(d), math.lgamma(o)
    for m in range(diagonal.size):
        out += diagonal_weights[m] * (math.lgamma(d + diagonal[m]) - lgamma_d)
    for m in range(off.size):
        out += off_weights[m] * (math.lgamma(o + off[m]) - lgamma_o)
    kappa = d + (n_classes - 1) * o
    lgamma_kappa = math.lgamma(kappa)
    for m in range(totals.size):
        out += total_weights[m] * (lgamma_kappa - math.lgamma(kappa + totals[m]))
    return out


_symmetric_update = slice_update(symmetric_log_density)


@numba.njit(cache=True, nogil=True)
def symmetric_scan(rng, v, diagonal, diagonal_weights, off, off_weights, totals, total_weights,
                   n_classes, mean, sd, width):  # pragma: no cover - compiled
    """One slice update along the ridge, then one across it (module), of ``v = (log d, log
    o)`` in place, staying in ``o < d``; returns the density evaluations made."""
    args = (diagonal, diagonal_weights, off, off_weights, totals, total_weights, n_classes,
            mean, sd)
    evaluations = 0
    for k in range(2):
        lower = -np.inf if k == 0 else -(v[0] - v[1]) * _HALF  # across: keep log o < log d
        log_f0 = symmetric_log_density(0.0, k, v, *args)
        t, _, used = _symmetric_update(rng, 0.0, log_f0, lower, np.inf, width, 0, (k, v, *args))
        v[0] += t * _HALF
        v[1] += t * _HALF if k == 0 else -t * _HALF
        evaluations += used
    return evaluations


def symmetric_concentration(n_classes: int, v: np.ndarray) -> np.ndarray:
    """``beta (class, label_class)``: ``d = exp(v[0])`` on the diagonal, ``o = exp(v[1])``
    elsewhere."""
    beta = np.full((n_classes, n_classes), math.exp(v[1]))
    np.fill_diagonal(beta, math.exp(v[0]))
    return beta


__all__ = ["symmetric_concentration", "symmetric_log_density", "symmetric_scan",
           "symmetric_summary"]
