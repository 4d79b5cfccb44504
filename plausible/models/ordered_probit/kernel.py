"""Compiled (numba) parts of the ordered-probit sweep
(:mod:`plausible.models.ordered_probit.sampler`): the label probabilities, the annotators'
moves given the grades (steps 1 and 2) and the shift of every bias with the grades summed
out (step 4).

A label ``x`` of annotator ``j`` on an item of grade ``c`` has probability

    P(x | c, b_j, s_j, e_j) = e_j / K + (1 - e_j) [Phi((x + 1/2 - c - b_j) / s_j)
                                                    - Phi((x - 1/2 - c - b_j) / s_j)]

(the outer ends infinite). The normal interval is taken in the lower tail (``a > 0`` read as
``(-b, -a]``) as ``log Phi(b) + log(1 - exp(log Phi(a) - log Phi(b)))``, with ``log Phi``
from ``erfc`` down to ``-30`` and its asymptotic series beyond (relative error below
``1e-12``), so a label 70 standard deviations from an annotator's perception still has a
finite log probability.

Given the grades, annotator ``j``'s labels enter only through ``counts[j K + x, c]``, the
number of its labels ``x`` on items of grade ``c`` (the Dawid–Skene kernel's layout,
:mod:`plausible.models.dawid_skene.kernel`, which keeps it current as grades change), so
its parameters' log-likelihood given the grades is ``gamma sum_{x, c} counts[j K + x, c] log
P(x | c, b_j, s_j, e_j)``: at most ``K^2`` terms whatever the number of labels. The moves take
``(b_j, log s_j, logit e_j)``, each prior with its Jacobian in those coordinates:
``N(0, bias_scale^2)``, ``InvGamma(a, r)`` on ``s^2`` (``-2 a log s - r / s^2``) and ``Beta(a',
b')`` on ``e`` (``a' log e + b' log(1 - e)``), from ``prior = (bias_scale, a, r, a', b')``.

Nothing here is compiled with fast-math: a seed gives the same draws on every machine.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from plausible.models.dawid_skene.kernel import marginal_log_likelihood
from plausible.inference.step_methods.univariate_slice import slice_update
from plausible.maths.logspace import log_sigmoid

SQRT_HALF = math.sqrt(0.5)
LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
TAIL = -30.0
"""Below this ``log Phi`` is its asymptotic series (``erfc`` underflows near ``-37``)."""
BIAS, LOG_NOISE, LOGIT_SPAM = 0, 1, 2
"""The coordinates of an annotator that :func:`annotator_moves` updates, in its order."""


@numba.njit(cache=True, inline="always")
def log_ndtr(x):  # pragma: no cover - compiled
    """``log Phi(x)``, the standard normal's log CDF (module)."""
    if x >= 0.0:
        return math.log1p(-0.5 * math.erfc(x * SQRT_HALF))
    if x > TAIL:
        return math.log(0.5 * math.erfc(-x * SQRT_HALF))
    q = 1.0 / (x * x)  # Phi(x) = phi(x) / -x (1 - q + 3 q^2 - 15 q^3 + 105 q^4 - ...)
    series = 1.0 - q * (1.0 - q * (3.0 - q * (15.0 - q * 105.0)))
    return -0.5 * x * x - math.log(-x) - LOG_SQRT_2PI + math.log(series)


@numba.njit(cache=True, inline="always")
def log_earnest(x, location, noise, n_grades):  # pragma: no cover - compiled
    """``log P(x - 1/2 < location + noise u <= x + 1/2)``, ``u ~ N(0, 1)``, the end grades
    taking the tails."""
    a = -np.inf if x == 0 else (x - 0.5 - location) / noise
    b = np.inf if x == n_grades - 1 else (x + 0.5 - location) / noise
    if a > 0.0:
        a, b = -b, -a
    log_b = log_ndtr(b)
    if a == -np.inf:
        return log_b
    return log_b + math.log1p(-math.exp(log_ndtr(a) - log_b))


@numba.njit(cache=True, inline="always")
def log_mixed(log_random, log_not_random, earnest):  # pragma: no cover - compiled
    """``log(e / K + (1 - e) exp(earnest))`` from ``log_random = log(e / K)`` and
    ``log_not_random = log(1 - e)``."""
    a, b = log_random, log_not_random + earnest
    top = max(a, b)
    if top == -np.inf:
        return top
    return top + math.log1p(math.exp(-abs(a - b)))


@numba.njit(cache=True, inline="always")
def earnest_table(bias, noise, n_grades, boundaries, out):  # pragma: no cover - compiled
    """``out[x, c] = log_earnest(x, c + bias, noise)`` for every label ``x`` and grade ``c``
    ``(label, grade)``, from the ``2 (K - 1)`` interval ends ``x + 1/2 - c`` they share:
    ``boundaries (2, 2 K - 2)`` is work space for ``log Phi`` and ``log (1 - Phi)`` at each."""
    n_ends = 2 * n_grades - 2
    for k in range(n_ends):  # end k is at k - (K - 1) + 1/2 - bias, in units of noise
        t = (k - n_grades + 1.5 - bias) / noise
        boundaries[0, k], boundaries[1, k] = log_ndtr(t), log_ndtr(-t)
    for x in range(n_grades):
        for c in range(n_grades):
            upper, lower = x - c + n_grades - 1, x - c + n_grades - 2  # their ends' indices
            if n_grades == 1:
                value = 0.0
            elif x == 0:
                value = boundaries[0, upper]
            elif x == n_grades - 1:
                value = boundaries[1, lower]
            elif x - c - 0.5 - bias > 0.0:  # both ends above the mean: in the upper tail
                value = boundaries[1, lower] + math.log1p(
                    -math.exp(boundaries[1, upper] - boundaries[1, lower]))
            else:
                value = boundaries[0, upper] + math.log1p(
                    -math.exp(boundaries[0, lower] - boundaries[0, upper]))
            out[x, c] = value


@numba.njit(cache=True, nogil=True)
def fill_table(bias, noise, logit_spam, n_grades, table):  # pragma: no cover - compiled
    """``table[j K + x, c] = log P(x | c, b_j, s_j, e_j)`` ``(annotator * label, grade)``,
    unmixed (``e_j = 0``) where ``logit_spam`` is empty."""
    mixed = logit_spam.size > 0
    earnest = np.empty((n_grades, n_grades))
    boundaries = np.empty((2, max(2 * n_grades - 2, 1)))
    for j in range(bias.size):
        earnest_table(bias[j], noise[j], n_grades, boundaries, earnest)
        log_random = log_sigmoid(logit_spam[j]) - math.log(n_grades) if mixed else -np.inf
        log_not_random = log_sigmoid(-logit_spam[j]) if mixed else 0.0
        for x in range(n_grades):
            for c in range(n_grades):
                table[j * n_grades + x, c] = (
                    log_mixed(log_random, log_not_random, earnest[x, c]) if mixed
                    else earnest[x, c])


@numba.njit(cache=True, inline="always")
def annotator_log_likelihood(j, bias, noise, logit_spam, counts, gamma, earnest=None
                             ):  # pragma: no cover - compiled
    """``gamma sum_{x, c} counts[j K + x, c] log P(x | c, bias, noise, e)``, ``e`` the
    sigmoid of ``logit_spam``; the earnest log probabilities from ``earnest (label, grade)``
    when given (they do not depend on ``e``), else each one taken where it is counted."""
    n_grades = counts.shape[1]
    log_random = log_sigmoid(logit_spam) - math.log(n_grades)
    log_not_random = log_sigmoid(-logit_spam)
    total = 0.0
    for x in range(n_grades):
        row = counts[j * n_grades + x]
        for c in range(n_grades):
            if row[c] > 0:
                term = (log_earnest(x, c + bias, noise, n_grades) if earnest is None
                        else earnest[x, c])
                total += row[c] * log_mixed(log_random, log_not_random, term)
    return gamma * total


@numba.njit(cache=True, inline="always")
def log_noise_prior(log_noise, prior):  # pragma: no cover - compiled
    """``InvGamma(a, r)`` on ``s^2``, in ``log s`` (module)."""
    return -2.0 * prior[1] * log_noise - prior[2] * math.exp(-2.0 * log_noise)


@numba.njit(cache=True, inline="always")
def logit_spam_prior(logit, prior):  # pragma: no cover - compiled
    """``Beta(a', b')`` on ``e``, in ``logit e`` (module)."""
    return prior[3] * log_sigmoid(logit) + prior[4] * log_sigmoid(-logit)


@numba.njit(cache=True)
def coordinate_log_density(value, kind, j, bias, log_noise, logit_spam, counts, gamma, prior,
                           earnest):  # pragma: no cover - compiled
    """Annotator ``j``'s full conditional given the grades in coordinate ``kind`` (one of
    :data:`BIAS`, :data:`LOG_NOISE`, :data:`LOGIT_SPAM`) at ``value``, the others at their
    current values, up to a constant; for :data:`LOGIT_SPAM`, ``earnest (label, grade)``
    holds the earnest log probabilities at the current bias and noise."""
    if kind == LOGIT_SPAM:
        return (annotator_log_likelihood(j, bias[j], math.exp(log_noise[j]), value, counts,
                                         gamma, earnest)
                + logit_spam_prior(value, prior))
    if kind == BIAS:
        return (annotator_log_likelihood(j, value, math.exp(log_noise[j]), logit_spam[j],
                                         counts, gamma)
                - 0.5 * value * value / (prior[0] * prior[0]))
    return (annotator_log_likelihood(j, bias[j], math.exp(value), logit_spam[j], counts, gamma)
            + log_noise_prior(value, prior))


_coordinate_update = slice_update(coordinate_log_density)


@numba.njit(cache=True)
def line_log_density(t, j, base, direction, counts, gamma, prior):  # pragma: no cover
    """Annotator ``j``'s full conditional of ``(b, log s, logit e)`` given the grades at
    ``base + t direction``, up to a constant."""
    b = base[0] + t * direction[0]
    log_s = base[1] + t * direction[1]
    logit = base[2] + t * direction[2]
    return (annotator_log_likelihood(j, b, math.exp(log_s), logit, counts, gamma)
            - 0.5 * b * b / (prior[0] * prior[0]) + log_noise_prior(log_s, prior)
            + logit_spam_prior(logit, prior))


_line_update = slice_update(line_log_density)


@numba.njit(cache=True, inline="always")
def _joint_log_density(j, bias, log_s, logit, counts, gamma, prior
                       ):  # pragma: no cover - compiled
    """Annotator ``j``'s full conditional of ``(log s, logit e)`` given the grades and its
    bias, up to a constant."""
    return (annotator_log_likelihood(j, bias, math.exp(log_s), logit, counts, gamma)
            + log_noise_prior(log_s, prior) + logit_spam_prior(logit, prior))


@numba.njit(cache=True, inline="always")
def _grid_cell(value, edges):  # pragma: no cover - compiled
    """The cell of ``edges`` holding ``value``, -1 off them."""
    if not edges[0] <= value < edges[-1]:
        return -1
    return min(int((value - edges[0]) / (edges[1] - edges[0])), edges.size - 2)


@numba.njit(cache=True)
def grid_move(rng, j, bias, log_noise, logit_spam, counts, gamma, prior, noise_edges,
              spam_edges, earnest, boundaries, log_q):  # pragma: no cover - compiled
    """Step 2 for annotator ``j``: an independence Metropolis–Hastings move of ``(log s_j,
    logit e_j)`` given the grades and ``b_j``. The proposal picks a cell of the ``noise_edges
    x spam_edges`` grid (evenly spaced) with probability ``q`` proportional to the full
    conditional at its centre, then a point uniformly in it; the move is accepted with
    probability ``min(1, f(x') q(x) / (f(x) q(x')))`` (the cells' common area cancels), ``q``
    zero off the grid, so a state off it is never left by this move. ``earnest (noise cell,
    label, grade)``, ``boundaries`` (:func:`earnest_table`) and ``log_q (spam cell * noise
    cell)`` are work space."""
    n_noise, n_spam = noise_edges.size - 1, spam_edges.size - 1
    n_grades = counts.shape[1]
    noise_step, spam_step = noise_edges[1] - noise_edges[0], spam_edges[1] - spam_edges[0]
    b = bias[j]
    for m in range(n_noise):
        earnest_table(b, math.exp(noise_edges[m] + 0.5 * noise_step), n_grades, boundaries,
                      earnest[m])
        for x in range(n_grades):
            for c in range(n_grades):
                earnest[m, x, c] = math.exp(earnest[m, x, c])
    top = -np.inf
    for k in range(n_spam):
        logit = spam_edges[k] + 0.5 * spam_step
        rate = math.exp(log_sigmoid(logit))
        random = rate / n_grades
        term = logit_spam_prior(logit, prior)
        for m in range(n_noise):
            total = 0.0
            for x in range(n_grades):
                row = counts[j * n_grades + x]
                for c in range(n_grades):
                    if row[c] > 0:
                        total += row[c] * math.log(random + (1.0 - rate) * earnest[m, x, c])
            value = (gamma * total + term
                     + log_noise_prior(noise_edges[m] + 0.5 * noise_step, prior))
            log_q[k * n_noise + m] = value
            top = max(top, value)
    mass = 0.0
    for g in range(log_q.size):
        mass += math.exp(log_q[g] - top)
    log_mass = top + math.log(mass)
    target = rng.random() * mass
    cell, cumulative = log_q.size - 1, 0.0
    for g in range(log_q.size - 1):
        cumulative += math.exp(log_q[g] - top)
        if target < cumulative:
            cell = g
            break
    k, m = divmod(cell, n_noise)
    new_s = noise_edges[m] + noise_step * rng.random()
    new_t = spam_edges[k] + spam_step * rng.random()
    accept = math.log(rng.random())
    old_m, old_k = _grid_cell(log_noise[j], noise_edges), _grid_cell(logit_spam[j], spam_edges)
    if old_m < 0 or old_k < 0:
        return
    log_ratio = (_joint_log_density(j, b, new_s, new_t, counts, gamma, prior)
                 - _joint_log_density(j, b, log_noise[j], logit_spam[j], counts, gamma, prior)
                 + (log_q[old_k * n_noise + old_m] - log_mass) - (log_q[cell] - log_mass))
    if accept < log_ratio:  # never where the current state's density is nan
        log_noise[j], logit_spam[j] = new_s, new_t


@numba.njit(cache=True, nogil=True)
def annotator_moves(rng, bias, log_noise, logit_spam, counts, gamma, prior, widths, moves,
                    directions, noise_edges, spam_edges, grid):  # pragma: no cover - compiled
    """Steps 1 and 2 for every annotator in turn (given the grades they are independent):
    ``moves`` rounds of slice updates (Neal 2003; width ``widths[kind]``, unlimited stepping
    out) of ``b_j``, ``log s_j`` and ``logit e_j``, each on its full conditional given the
    grades, and one along each row of ``directions (line, 3)`` in ``(b, log s, logit e)``
    (width 1 in its units); then, where ``grid[j]``, :func:`grid_move`. Updates the three
    arrays in place."""
    n_grades = counts.shape[1]
    earnest = np.empty((noise_edges.size - 1, n_grades, n_grades))
    boundaries = np.empty((2, max(2 * n_grades - 2, 1)))
    log_q = np.empty((spam_edges.size - 1) * (noise_edges.size - 1))
    coordinates = (bias, log_noise, logit_spam)
    base = np.empty(3)
    for j in range(bias.size):
        for _ in range(moves):
            for kind in range(3):
                if kind == LOGIT_SPAM:
                    earnest_table(bias[j], math.exp(log_noise[j]), n_grades, boundaries,
                                  earnest[0])
                values = coordinates[kind]
                args = (kind, j, bias, log_noise, logit_spam, counts, gamma, prior, earnest[0])
                log_fx = coordinate_log_density(values[j], *args)
                values[j], _, _ = _coordinate_update(rng, values[j], log_fx, -np.inf, np.inf,
                                                     widths[kind], 0, args)
            for d in range(directions.shape[0]):
                base[0], base[1], base[2] = bias[j], log_noise[j], logit_spam[j]
                args = (j, base, directions[d], counts, gamma, prior)
                t, _, _ = _line_update(rng, 0.0, line_log_density(0.0, *args), -np.inf,
                                       np.inf, 1.0, 0, args)
                bias[j] = base[0] + t * directions[d, 0]
                log_noise[j] = base[1] + t * directions[d, 1]
                logit_spam[j] = base[2] + t * directions[d, 2]
        if grid[j]:
            grid_move(rng, j, bias, log_noise, logit_spam, counts, gamma, prior, noise_edges,
                      spam_edges, earnest, boundaries, log_q)


@numba.njit(cache=True)
def shift_log_density(shift, bias, noise, logit_spam, log_pi, offsets, code, fixed, gamma,
                      prior, table):  # pragma: no cover - compiled
    """Step 4's target: ``sum_i log sum_c pi_c exp(gamma L_ic) + sum_j log N(b_j + shift |
    0, bias_scale^2)`` with every bias shifted (the grades summed out); ``table`` work space
    ``(annotator * label, grade)``."""
    shifted = bias + shift
    fill_table(shifted, noise, logit_spam, table.shape[1], table)
    return (marginal_log_likelihood(offsets, code, table, log_pi, gamma, fixed)
            - 0.5 * np.sum(shifted * shifted) / (prior[0] * prior[0]))


_shift_update = slice_update(shift_log_density)


@numba.njit(cache=True, nogil=True)
def shift_move(rng, bias, noise, logit_spam, log_pi, offsets, code, fixed, gamma, prior,
               width):  # pragma: no cover - compiled
    """Step 4: a slice update of one shift ``d`` of every bias at once, from ``d = 0``,
    within an interval of ``width`` placed at random around it (Neal's limit ``m = 1``: no
    stepping out, which costs two evaluations of the density over every label while the
    width is already several of the shift's posterior spreads); returns ``d``."""
    table = np.empty((bias.size * log_pi.size, log_pi.size))
    args = (bias, noise, logit_spam, log_pi, offsets, code, fixed, gamma, prior, table)
    shift, _, _ = _shift_update(rng, 0.0, shift_log_density(0.0, *args), -np.inf, np.inf,
                                width, 1, args)
    return shift

