"""A Dirichlet population ``alpha = kappa mu`` learned from many count rows, the rows'
own Dirichlet vectors integrated out (a Dirichlet-multinomial), by slice sampling.

Rows ``r`` (the items of a vote table; one class's confusion rows of every annotator in
hierarchical Dawid–Skene) have tempered counts ``m_r (class,)`` (``gamma`` times the counts)
and vectors ``theta_r ~ Dirichlet(alpha)``. ``int Dirichlet(theta; alpha) prod_x
theta_x^(m_x) dtheta = B(alpha + m) / B(alpha)`` (``B`` the multivariate Beta function; exact
for any real ``m >= 0``), so with ``alpha = kappa mu``::

    log p(kappa, mu | m) = sum_r [lgamma(kappa) - lgamma(kappa + M_r)
                                  + sum_x lgamma(alpha_x + m_rx) - lgamma(alpha_x)]
                           + log Gamma(kappa; s, r) + log Dirichlet(mu; beta) + const,

``M_r = sum_x m_rx``; a zero count (and a row without counts) contributes nothing. The sum
depends on the rows only through how often each value occurs, so the density is evaluated
from a :func:`count_summary` — per class the distinct positive counts and their
multiplicities, and the distinct positive row totals and theirs — in ``O(distinct values)``
``lgamma`` pairs instead of ``O(rows x classes)`` (the 10,000 items of CIFAR-10H have about
50 distinct counts per class).

``mu`` is written ``g / sum_x g_x`` with ``g_x ~ Gamma(beta_x, 1)`` independent (then ``mu ~
Dirichlet(beta)``, independent of ``sum_x g_x``), and the coordinates ``v = (log kappa, log
g_1, ..., log g_C)`` are updated in turn by Neal's slice sampler
(:mod:`plausible.inference.step_methods.univariate_slice`), each update leaving the conditional
invariant. :func:`draw_population` then draws the scale ``sum_x g_x`` afresh from its
conditional, which given ``mu`` is its prior ``Gamma(sum_x beta_x, 1)`` (the counts see ``mu``
only), so that a well-determined ``mu`` does not pin every ``g_x`` to its neighbours. With a
fixed base measure only ``log kappa`` moves.

Followed by the rows' exact draw ``theta_r | kappa, mu ~ Dirichlet(kappa mu + m_r)``, the
update is a partially collapsed Gibbs step: a joint draw of ``(kappa, mu, theta)`` with no
funnel between the concentration and the rows.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from plausible.inference.step_methods.univariate_slice import slice_update
from plausible.maths.logspace import log_gamma_draw


@numba.njit(cache=True, nogil=True)
def _runs(sorted_values, values, weights, start):  # pragma: no cover - compiled
    """Write the distinct positive entries of ``sorted_values`` and their multiplicities from
    ``start`` on; return the next free slot."""
    slot = start
    for value in sorted_values:
        if value <= 0.0:
            continue
        if slot > start and values[slot - 1] == value:
            weights[slot - 1] += 1.0
        else:
            values[slot] = value
            weights[slot] = 1.0
            slot += 1
    return slot


@numba.njit(cache=True, nogil=True)
def count_summary(counts):  # pragma: no cover - compiled
    """The summary of tempered counts ``m (row, class)`` the density reads: ``values,
    weights (class, width)`` the distinct positive counts of each class and how many rows have
    them (zero weight pads), and ``totals, total_weights (width,)`` the same for the row
    totals ``M_r``."""
    n_rows, n_classes = counts.shape
    values = np.zeros((n_classes, max(n_rows, 1)))
    weights = np.zeros((n_classes, max(n_rows, 1)))
    width = 1
    for c in range(n_classes):
        width = max(width, _runs(np.sort(counts[:, c]), values[c], weights[c], 0))
    totals = np.zeros(max(n_rows, 1))
    total_weights = np.zeros(max(n_rows, 1))
    n_totals = _runs(np.sort(counts.sum(axis=1)), totals, total_weights, 0)
    return (values[:, :width].copy(), weights[:, :width].copy(), totals[:max(n_totals, 1)].copy(),
            total_weights[:max(n_totals, 1)].copy())


@numba.njit(cache=True, nogil=True)
def population_log_density(x, k, v, values, weights, totals, total_weights, beta, shape,
                           rate):  # pragma: no cover - compiled
    """Log density (module) of ``v = (log kappa, log g_1, ..., log g_C)`` with ``v[k]``
    replaced by ``x``, from a :func:`count_summary`; ``beta (class,)`` the base measure's
    Dirichlet prior, Gamma ``(shape, rate)`` of ``kappa``. Includes the Jacobians of the log
    coordinates."""
    n_classes = beta.size
    log_kappa = x if k == 0 else v[0]
    top = -np.inf
    for c in range(n_classes):
        top = max(top, x if k == c + 1 else v[c + 1])
    total = 0.0
    for c in range(n_classes):
        total += math.exp((x if k == c + 1 else v[c + 1]) - top)
    log_sum = top + math.log(total)
    kappa = math.exp(log_kappa)
    out = shape * log_kappa - rate * kappa
    for c in range(n_classes):
        log_g = x if k == c + 1 else v[c + 1]
        out += beta[c] * log_g - math.exp(log_g)
        alpha = math.exp(log_kappa + log_g - log_sum)
        lgamma_alpha = math.lgamma(alpha)
        for m in range(values.shape[1]):
            if weights[c, m] > 0.0:
                out += weights[c, m] * (math.lgamma(alpha + values[c, m]) - lgamma_alpha)
    lgamma_kappa = math.lgamma(kappa)
    for t in range(totals.size):
        if total_weights[t] > 0.0:
            out += total_weights[t] * (lgamma_kappa - math.lgamma(kappa + totals[t]))
    return out


_population_update = slice_update(population_log_density)


@numba.njit(cache=True, nogil=True)
def population_scan(rng, v, n_coordinates, values, weights, totals, total_weights, beta, shape,
                    rate, width):  # pragma: no cover - compiled
    """One slice update of each of the first ``n_coordinates`` coordinates of ``v`` in turn
    (``1``: ``kappa`` only, the base measure fixed; ``v.size``: all), in place; returns the
    density evaluations made."""
    args = (values, weights, totals, total_weights, beta, shape, rate)
    log_fx = population_log_density(v[0], 0, v, *args)
    evaluations = 0
    for k in range(n_coordinates):
        v[k], log_fx, used = _population_update(rng, v[k], log_fx, -np.inf, np.inf, width, 0,
                                                (k, v, *args))
        evaluations += used
    return evaluations


@numba.njit(cache=True, nogil=True)
def draw_population(rng, v, summary, learn_base, beta, shape, rate, width):  # pragma: no cover
    """One update of ``v`` (module) given the :func:`count_summary` of the tempered counts,
    in place: the slice scan over ``log kappa`` (and ``log g`` with ``learn_base``), then the
    scale of ``g`` from ``Gamma(sum beta, 1)``; returns ``log alpha (class,)``."""
    values, weights, totals, total_weights = summary
    population_scan(rng, v, v.size if learn_base else 1, values, weights, totals, total_weights,
                    beta, shape, rate, width)
    log_g = v[1:]
    top = log_g.max()
    log_sum = top + math.log(np.exp(log_g - top).sum())
    if learn_base:
        shift = log_gamma_draw(rng, beta.sum()) - log_sum
        for c in range(log_g.size):
            log_g[c] += shift
        log_sum += shift
    return v[0] + log_g - log_sum


__all__ = ["count_summary", "draw_population", "population_log_density", "population_scan"]
