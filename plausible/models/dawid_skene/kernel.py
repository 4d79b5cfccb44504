"""Compiled (numba) Dawid–Skene kernels: the class half of the exact Gibbs sweep, and the
Rao-Blackwellised plausibilities of stored draws.

The labels are grouped by item (``offsets (item + 1,)``) and each is coded ``r_k = j_k C +
x_k`` (annotator ``j_k``, label ``x_k``, ``C`` classes), so that one row of the table

    T[r, c] = log theta_j[c, x]          (annotator * label_class, class)

holds every class's term of a label. Item ``i``'s class log-likelihood is then ``L[i, c] =
sum_{k in item i} T[r_k, c]`` (:func:`_accumulate`), summed label by label in their stored
order, and its class posterior ``p_i = softmax(log pi + gamma L[i])``.

:func:`draw_rows` draws every confusion row of full Dawid–Skene from its conjugate Dirichlet
(on the log scale, finite for tiny concentrations) straight into the table (the other members
draw theirs in :mod:`plausible.models.dawid_skene.members`); :func:`draw_class_prior` the
prevalence and the sweep's uniforms. :func:`class_sweep` draws ``z_i ~ p_i`` for a range of items by inverse CDF from the caller's
uniforms (so the draws do not depend on how items are split between threads) and keeps the
sufficient statistics current: ``counts[r, c]`` (labels of code ``r`` on items of class
``c``) and ``class_counts[c]``, updated only for items whose class changed — in a typical
sweep few do, so the counts cost almost nothing. :func:`count_labels` builds them from
scratch. :func:`plausibility_kernel` evaluates ``p_i`` for many stored draws at once (the
lazily computed plausibilities of :mod:`plausible.models.dawid_skene.sampler`),
:func:`class_log_likelihood_kernel` ``L`` itself, :func:`marginal_log_likelihood` its sum over
items with the classes summed out at one table, and :func:`marginal_log_likelihood_kernel`
the per-item log-likelihood ``logsumexp_c(log pi_c + gamma L[i, c])`` (``az.loo``; every
member of the family, through its confusion matrices).

Nothing here is compiled with fast-math (see :mod:`plausible.maths.logspace`): a seed gives
the same draws on every machine.
"""

from __future__ import annotations

import math

import numba
import numpy as np
from numba.extending import overload

from plausible.maths.categorical import inverse_cdf
from plausible.maths.logspace import exp_nonpositive, log_gamma_draw, tempered_logsumexp


@numba.njit(cache=True, nogil=True, inline="always")
def _accumulate(table, code, start, stop, row):  # pragma: no cover - compiled
    """``row[c] = sum_{k = start}^{stop - 1} table[code[k], c]``, with four independent
    scalar accumulators in every pass over the labels (numba keeps scalars in registers, a
    row array in memory; one accumulator would wait on every add): four classes at a time,
    then two classes with two partial sums each (labels alternating), then one class with
    four. Each class's sum is thus taken in a fixed order whatever the machine."""
    n_classes = row.size
    c = 0
    while c + 4 <= n_classes:
        a0 = a1 = a2 = a3 = 0.0
        for k in range(start, stop):
            r = code[k]
            a0 += table[r, c]
            a1 += table[r, c + 1]
            a2 += table[r, c + 2]
            a3 += table[r, c + 3]
        row[c], row[c + 1], row[c + 2], row[c + 3] = a0, a1, a2, a3
        c += 4
    middle = start + (stop - start) // 2 * 2
    if c + 2 <= n_classes:
        a0 = a1 = b0 = b1 = 0.0
        for k in range(start, middle, 2):
            r, q = code[k], code[k + 1]
            a0 += table[r, c]
            a1 += table[r, c + 1]
            b0 += table[q, c]
            b1 += table[q, c + 1]
        if middle < stop:
            a0 += table[code[middle], c]
            a1 += table[code[middle], c + 1]
        row[c], row[c + 1] = a0 + b0, a1 + b1
        c += 2
    if c < n_classes:
        quarter = start + (stop - start) // 4 * 4
        a0 = a1 = a2 = a3 = 0.0
        for k in range(start, quarter, 4):
            a0 += table[code[k], c]
            a1 += table[code[k + 1], c]
            a2 += table[code[k + 2], c]
            a3 += table[code[k + 3], c]
        for k in range(quarter, stop):
            a0 += table[code[k], c]
        row[c] = (a0 + a1) + (a2 + a3)


def prior_row(log_pi, i):
    """Item ``i``'s log class prior: ``log_pi`` itself when it is one row ``(class,)`` (the
    class prevalence), row ``i`` when it is ``(item, class)`` (a prior per item, such as a
    classifier's, :mod:`plausible.models.classifier_prior`)."""
    return log_pi if log_pi.ndim == 1 else log_pi[i]


@overload(prior_row, inline="always")
def _prior_row(log_pi, i):  # pragma: no cover - compiled
    if log_pi.ndim == 1:
        return lambda log_pi, i: log_pi
    return lambda log_pi, i: log_pi[i]


BLOCK = 256
"""Items whose exponentials are taken in one flat loop (which LLVM vectorises)."""


@numba.njit(cache=True, nogil=True, inline="always")
def _block_posteriors(table, code, offsets, log_pi, gamma, start, stop, buffer, totals):
    # pragma: no cover - compiled
    """``buffer[b, c] = exp(log_pi[c] + gamma L[start + b, c] - max_c)`` (unnormalised class
    posteriors of items ``start..stop``, at most ``BLOCK``) and ``totals[b]`` their sums;
    ``log_pi (class,)`` or per item ``(item, class)`` (:func:`prior_row`)."""
    n_classes = buffer.shape[1]
    n = stop - start
    for b in range(n):
        row = buffer[b]
        prior = prior_row(log_pi, start + b)
        _accumulate(table, code, offsets[start + b], offsets[start + b + 1], row)
        top = -np.inf
        for c in range(n_classes):
            row[c] = prior[c] + gamma * row[c]
            top = max(top, row[c])
        for c in range(n_classes):
            row[c] -= top
    flat = buffer.reshape(-1)
    for t in range(n * n_classes):  # vectorised
        flat[t] = exp_nonpositive(flat[t])
    for b in range(n):
        total = 0.0
        for c in range(n_classes):
            total += buffer[b, c]
        totals[b] = total


@numba.njit(cache=True, nogil=True, inline="always")
def _log_dirichlet(rng, concentration, out):  # pragma: no cover - compiled
    """``out = log pi``, ``pi ~ Dirichlet(concentration)`` (softmax of log-Gamma draws)."""
    top = -np.inf
    for x in range(out.size):
        out[x] = log_gamma_draw(rng, concentration[x])
        top = max(top, out[x])
    total = 0.0
    for x in range(out.size):
        total += math.exp(out[x] - top)
    log_total = top + math.log(total)
    for x in range(out.size):
        out[x] -= log_total


@numba.njit(cache=True, nogil=True)
def draw_rows(rng, counts, beta, gamma, table):  # pragma: no cover - compiled
    """Full Dawid–Skene's annotator half-sweep from the generator ``rng``: ``table[j C + x,
    c] = log theta_j[c, x]`` with ``theta_j[c] ~ Dirichlet(beta[c] + gamma n_j[c, :])``,
    ``n`` the sum over parts of ``counts (part, code, class)``."""
    n_parts, n_codes, n_classes = counts.shape
    row = np.empty(n_classes)
    concentration = np.empty(n_classes)
    for j in range(n_codes // n_classes):
        for c in range(n_classes):
            for x in range(n_classes):
                n = 0
                for p in range(n_parts):
                    n += counts[p, j * n_classes + x, c]
                concentration[x] = beta[c, x] + gamma * n
            _log_dirichlet(rng, concentration, row)
            for x in range(n_classes):
                table[j * n_classes + x, c] = row[x]


@numba.njit(cache=True, nogil=True)
def draw_class_prior(rng, class_counts, a, log_pi, u):  # pragma: no cover - compiled
    """``log_pi = log pi``, ``pi ~ Dirichlet(a + m)``, ``m`` the sum of ``class_counts (part,
    class)``; then ``u`` filled with uniforms for the class draws."""
    n_parts, n_classes = class_counts.shape
    concentration = np.empty(n_classes)
    for c in range(n_classes):
        m = 0
        for p in range(n_parts):
            m += class_counts[p, c]
        concentration[c] = a[c] + m
    _log_dirichlet(rng, concentration, log_pi)
    for i in range(u.size):
        u[i] = rng.random()


@numba.njit(cache=True, nogil=True)
def label_shares(offsets, code, out):  # pragma: no cover - compiled
    """``out[i, x]``: the share of item ``i``'s labels that are ``x`` (``out`` zeros ``(item,
    class)``), without a temporary per label."""
    n_classes = out.shape[1]
    for i in range(out.shape[0]):
        for k in range(offsets[i], offsets[i + 1]):
            out[i, code[k] % n_classes] += 1.0
        n = offsets[i + 1] - offsets[i]
        for x in range(n_classes):
            out[i, x] /= n


@numba.njit(cache=True, nogil=True)
def count_labels(offsets, code, z, counts, class_counts, start, stop):  # pragma: no cover
    """Add items ``start..stop``'s labels to ``counts (code, class)`` under their classes
    ``z`` and the items to ``class_counts (class,)``."""
    for i in range(start, stop):
        c = z[i]
        class_counts[c] += 1
        for k in range(offsets[i], offsets[i + 1]):
            counts[code[k], c] += 1


@numba.njit(cache=True, nogil=True)
def class_sweep(offsets, code, table, log_pi, gamma, u, z, fixed, counts, class_counts, out,
                start, stop):  # pragma: no cover - compiled
    """For items ``start..stop``: ``p_i = softmax(log_pi + gamma L[i])`` (written to
    ``out[i]`` when ``out`` has rows, e.g. a float32 ``(item, class)`` view of the trace),
    then ``z_i`` = the first class whose cumulative ``p_i`` exceeds ``u[i]``, or ``fixed[i]``
    and its one-hot ``p_i`` where ``fixed[i] >= 0`` (a known class,
    :mod:`plausible.maths.known_classes`); ``counts`` and ``class_counts`` (this range's)
    follow every class that changes; ``log_pi (class,)`` or ``(item, class)``. Returns the
    number of items whose class changed."""
    n_classes = table.shape[1]
    changed = 0
    store = out.shape[0] > 0
    buffer = np.empty((BLOCK, n_classes))
    totals = np.empty(BLOCK)
    for block in range(start, stop, BLOCK):
        end = min(block + BLOCK, stop)
        _block_posteriors(table, code, offsets, log_pi, gamma, block, end, buffer, totals)
        for i in range(block, end):
            row, total = buffer[i - block], totals[i - block]
            if fixed[i] >= 0:
                new = fixed[i]
                if store:
                    for c in range(n_classes):
                        out[i, c] = 1.0 if c == new else 0.0
            else:
                if store:
                    for c in range(n_classes):
                        out[i, c] = row[c] / total
                new = inverse_cdf(row, u[i] * total)
            old = z[i]
            if new != old:
                changed += 1
                z[i] = new
                class_counts[old] -= 1
                class_counts[new] += 1
                for k in range(offsets[i], offsets[i + 1]):
                    counts[code[k], old] -= 1
                    counts[code[k], new] += 1
    return changed


@numba.njit(cache=True, nogil=True)
def class_posteriors(offsets, code, table, log_pi, gamma, out):  # pragma: no cover - compiled
    """``out[i] = p_i = softmax(log_pi + gamma L[i])`` for every item ``i`` (any float
    ``(item, class)`` view): the Rao-Blackwellised plausibilities of one draw."""
    n_items, n_classes = offsets.size - 1, table.shape[1]
    buffer = np.empty((BLOCK, n_classes))
    totals = np.empty(BLOCK)
    for block in range(0, n_items, BLOCK):
        end = min(block + BLOCK, n_items)
        _block_posteriors(table, code, offsets, log_pi, gamma, block, end, buffer, totals)
        for i in range(block, end):
            for c in range(n_classes):
                out[i, c] = buffer[i - block, c] / totals[i - block]


@numba.njit(cache=True, nogil=True, parallel=True)
def plausibility_kernel(log_pi, table, gamma, offsets, code, start, stop):  # pragma: no cover
    """``p (sample, stop - start, class)`` float32: items ``start..stop``'s class posteriors
    at each sample's ``log_pi (sample, class)`` (or per item, ``(sample, item, class)``) and
    ``table (sample, code, class)``; parallel over items."""
    n_samples, n_classes = log_pi.shape[0], table.shape[2]
    out = np.empty((n_samples, stop - start, n_classes), dtype=np.float32)
    n_blocks = (stop - start + BLOCK - 1) // BLOCK
    for block in numba.prange(n_blocks):
        a = start + block * BLOCK
        b = min(a + BLOCK, stop)
        buffer = np.empty((BLOCK, n_classes))
        totals = np.empty(BLOCK)
        for s in range(n_samples):
            _block_posteriors(table[s], code, offsets, log_pi[s], gamma, a, b, buffer, totals)
            for i in range(a, b):
                for c in range(n_classes):
                    out[s, i - start, c] = buffer[i - a, c] / totals[i - a]
    return out


@numba.njit(cache=True, nogil=True, parallel=True)
def class_log_likelihood_kernel(table, offsets, code):  # pragma: no cover - compiled
    """``L (sample, item, class)`` from ``table (sample, code, class)``; parallel over
    samples."""
    n_samples, _, n_classes = table.shape
    n_items = offsets.size - 1
    out = np.empty((n_samples, n_items, n_classes))
    for s in numba.prange(n_samples):
        for i in range(n_items):
            _accumulate(table[s], code, offsets[i], offsets[i + 1], out[s, i])
    return out


@numba.njit(cache=True, nogil=True, inline="always")
def _item_marginal(table, code, offsets, log_pi, gamma, fixed, i, row):  # pragma: no cover
    """``logsumexp_c(log_pi[c] + gamma L[i, c])``, or ``log_pi[k] + gamma L[i, k]`` for an
    item of known class ``k = fixed[i] >= 0`` (``row``: work space ``(class,)``)."""
    _accumulate(table, code, offsets[i], offsets[i + 1], row)
    prior = prior_row(log_pi, i)
    k = fixed[i]
    return tempered_logsumexp(row, prior, gamma) if k < 0 else prior[k] + gamma * row[k]


@numba.njit(cache=True, nogil=True)
def marginal_log_likelihood(offsets, code, table, log_pi, gamma, fixed):  # pragma: no cover
    """``sum_i logsumexp_c(log_pi[c] + gamma L[i, c])`` at one ``table (code, class)``, the
    labels' log-likelihood with every item's class summed out (:func:`_item_marginal`)."""
    row = np.empty(table.shape[1])
    total = 0.0
    for i in range(offsets.size - 1):
        total += _item_marginal(table, code, offsets, log_pi, gamma, fixed, i, row)
    return total


@numba.njit(cache=True, nogil=True, parallel=True)
def marginal_log_likelihood_kernel(log_pi, table, gamma, offsets, code, fixed):  # pragma: no cover
    """``logsumexp_c(log_pi[s, c] + gamma L[s, i, c])`` ``(sample, item)`` without holding
    ``L``, or ``log_pi[s, k] + gamma L[s, i, k]`` for an item of known class ``k = fixed[i]
    >= 0``; ``log_pi`` may hold a prior per item, ``(sample, item, class)``; parallel over
    samples."""
    n_samples, n_classes = log_pi.shape[0], table.shape[2]
    n_items = offsets.size - 1
    out = np.empty((n_samples, n_items))
    for s in numba.prange(n_samples):
        row = np.empty(n_classes)
        for i in range(n_items):
            out[s, i] = _item_marginal(table[s], code, offsets, log_pi[s], gamma, fixed, i, row)
    return out
