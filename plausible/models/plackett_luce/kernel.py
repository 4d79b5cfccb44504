"""Compiled (numba) Plackett–Luce kernels: the whole exact sweep of the candidate sampler.

Per item ``i`` (candidate log-worths ``x_i (C,)``, log pooled mass ``y_i``) one sweep
(:func:`sweep_kernel`) does, with every reader ``r`` of the item counted ``gamma`` times:

1. **augmentation** (:func:`_augment_item`; the maths of
   :func:`plausible.models.plackett_luce.gibbs.augment_reference`, which is vectorised numpy
   and checked by enumeration): per reader the after-masses ``Zbar`` of its blocks (computed
   once), per tied block the subset-lattice table ``R`` (:func:`_lattice`; computed once per
   reader, shared by its ``gamma`` copies), then per copy the within-block order
   (``P(next = a | A) = R(A \\ a) / sum_a' R(A \\ a')``, inverse CDF) and the gaps
   ``Delta ~ Exp(1) / (Zbar + mass of the block not yet arrived)`` (size-1 blocks: the sum
   over copies, one ``Gamma(gamma, 1)`` draw); exposures
   ``E_k = sum_{r, copy} tau_{r,k}`` (``T_r`` when ``r`` left ``k`` unranked) and
   ``E_pool = sum_{r, copy} T_r``;
2. **conjugate worths**: ``log lambda_k = log G(a + gamma n_k) - log(b + E_k)``,
   ``log pool = log G(n_pooled a) - log(b + E_pool)``;
3. **total worth**: every log-worth shifted by ``log G(K a) - log b - log Lambda`` (``Lambda``
   the current total; exact because ``Lambda`` is independent of ``lambda / Lambda`` under the
   prior and the likelihood only sees ``lambda / Lambda``);
4. **Metropolis** (:func:`_metropolis_item`, ``metropolis_rounds`` moves), target
   ``gamma log p(b | lambda) + sum_c (a x_c - b e^{x_c}) + n_pooled a y - b e^y`` with the exact
   tied likelihood :func:`item_log_likelihood` (checked against
   :func:`plausible.maths.plackett_luce.reader_log_likelihood`): independence
   proposals on the item's additive log-ratio coordinates ``z_p = x_p - x_ref``
   (:func:`_log_ratios`; ``d`` = number of parts - 1, the parts being the candidates and the
   pool) from a multivariate t (``df`` degrees of freedom, location and scale fitted per item
   by the caller during warm-up), the total worth ``Lambda`` kept. The map
   ``(z, log Lambda) -> x`` has unit Jacobian, so the acceptance ratio is
   ``target(x') q(z) / (target(x) q(z'))``. The augmentation moves the worths locally and
   crawls where the posterior is wide (minor classes); a proposal fitted to the posterior
   jumps across it in one move, so the draws are close to independent wherever the fit is
   good, and the Gibbs step still moves the chain where it is not.

Randomness: every kernel draws from the caller's ``numpy.random.Generator`` ``rng`` (numba
compiles its methods; the same stream as in Python), so a seed reproduces a run, and threads
with generators of their own never interact
(:func:`plausible.models.plackett_luce.sampler.sample_candidates`).
``log G(s)`` for ``G ~ Gamma(s, 1)`` is :func:`plausible.maths.logspace.log_gamma_draw` (finite
for the tiny default ``a = 1 / K``).

The same tied likelihood, per item at every draw of a trace, is
:func:`log_likelihood_kernel` (the pointwise log-likelihood of
:mod:`plausible.models.plackett_luce`, for ``az.loo``).
"""

from __future__ import annotations

import numba
import numpy as np

from plausible.maths.logspace import log_gamma_draw


@numba.njit(cache=True, nogil=True, inline='always')
def _logaddexp(a, b):
    if a == -np.inf:
        return b
    if b == -np.inf:
        return a
    if a > b:
        return a + np.log1p(np.exp(b - a))
    return b + np.log1p(np.exp(a - b))


LINEAR_FLOOR = 1e-280
"""A tied block's subset lattice runs in linear space when ``(Zbar + m)^size`` exceeds this
(``m`` its smallest member worth; then every ``R(A) <= |A|! / (Zbar + m)^|A|`` is finite for
blocks of up to 12 classes), and in log space otherwise."""


@numba.njit(cache=True, nogil=True, inline='always')
def _lattice(x, shift, w, entry_candidate, e0, size, z, table):
    r"""Subset-lattice table of one tied block (members ``entry_candidate[e0 : e0 + size]``,
    worths ``w = exp(x - shift)``, after-mass ``z = Zbar`` on the same scale):
    ``R(A) = sum_{a in A} R(A \ a) / (Zbar + sum_A lambda)``, ``R({}) = 1``, for every
    subset mask ``A`` into ``table[: 2**size]``. Linear values when ``(z + m)^size`` (``m`` the
    smallest member) exceeds :data:`LINEAR_FLOOR` (returns ``True``), else ``log R`` from the
    log-worths (returns ``False``)."""
    smallest = np.inf
    for j in range(size):
        smallest = min(smallest, w[entry_candidate[e0 + j]])
    if (z + smallest) ** size > LINEAR_FLOOR:
        table[0] = 1.0
        for mask in range(1, 1 << size):
            num = 0.0
            den = z
            for j in range(size):
                if mask & (1 << j):
                    num += table[mask ^ (1 << j)]
                    den += w[entry_candidate[e0 + j]]
            table[mask] = num / den
        return True
    log_z = np.log(z) if z > 0.0 else -np.inf
    table[0] = 0.0
    for mask in range(1, 1 << size):
        num = -np.inf
        den = log_z
        for j in range(size):
            if mask & (1 << j):
                num = _logaddexp(num, table[mask ^ (1 << j)])
                den = _logaddexp(den, x[entry_candidate[e0 + j]] - shift)
        table[mask] = num - den
    return False


@numba.njit(cache=True, nogil=True)
def _max_block(entry_offsets):
    """Largest block size (``entry_offsets`` ``(B + 1,)``)."""
    size = 0
    for b in range(entry_offsets.size - 1):
        size = max(size, entry_offsets[b + 1] - entry_offsets[b])
    return size


@numba.njit(cache=True, nogil=True, inline='always')
def _after_masses(r, block_offsets, entry_offsets, entry_candidate, rank, w, pool, zbar, nc):
    """Linear after-mass ``Zbar`` of each block of reader ``r`` into ``zbar[: n_blocks]``
    (worths ``w (C,)`` and ``pool`` of its item, whose candidates are the first ``nc``
    slots)."""
    after = pool
    for c in range(nc):
        if rank[r, c] == -1:
            after += w[c]
    b0 = block_offsets[r]
    for b in range(block_offsets[r + 1] - 1, b0 - 1, -1):
        zbar[b - b0] = after
        for e in range(entry_offsets[b], entry_offsets[b + 1]):
            after += w[entry_candidate[e]]


@numba.njit(cache=True, nogil=True, inline='always')
def item_log_likelihood(r0, r1, block_offsets, entry_offsets, entry_candidate, rank, x, y, nc,
                        w, zbar, table):
    """``sum_{r0 <= r < r1} log p(b^r | lambda)`` of one item's readers (each once) for
    candidate log-worths ``x (C,)`` (the first ``nc`` slots valid) and log pooled mass ``y``
    (``-inf`` when nothing is pooled).

    Scale-free: worths are divided by the item's largest before the linear after-masses
    (exact unless an after-mass is below ``1e-308`` of that worth, where it becomes ``0``,
    as in the numpy reference). Size-1 blocks multiply ``lambda_k / (Zbar + lambda_k)`` in
    linear space (one ``log`` per ``1e-150`` of product; log space for ``lambda_k`` below
    ``1e-140``; no underflow), tied blocks use the lattice of :func:`_lattice` (linear space
    unless its entries could overflow). ``w``, ``zbar``, ``table``: scratch.
    """
    top = y
    for c in range(nc):
        top = max(top, x[c])
    if not np.isfinite(top):
        top = 0.0
    for c in range(nc):
        w[c] = np.exp(x[c] - top)
    pool = np.exp(y - top)
    total = 0.0
    ratio = 1.0  # running product of size-1 block factors lambda_k / (Zbar + lambda_k)
    for r in range(r0, r1):
        _after_masses(r, block_offsets, entry_offsets, entry_candidate, rank, w, pool, zbar, nc)
        b0 = block_offsets[r]
        for b in range(b0, block_offsets[r + 1]):
            e0 = entry_offsets[b]
            size = entry_offsets[b + 1] - e0
            z = zbar[b - b0]
            if size == 1:
                wk = w[entry_candidate[e0]]
                if wk > 1e-140:  # linear space, folded into one log per 1e-150 of ratio
                    ratio *= wk / (z + wk)
                    if ratio < 1e-150:
                        total += np.log(ratio)
                        ratio = 1.0
                else:
                    xk = x[entry_candidate[e0]] - top
                    total += xk - _logaddexp(np.log(z) if z > 0.0 else -np.inf, xk)
                continue
            for j in range(size):
                total += x[entry_candidate[e0 + j]] - top
            full = (1 << size) - 1
            if _lattice(x, top, w, entry_candidate, e0, size, z, table):
                total += np.log(table[full])
            else:
                total += table[full]
    return total + np.log(ratio)


@numba.njit(cache=True, nogil=True)
def log_likelihood_kernel(reader_start, block_offsets, entry_offsets, entry_candidate, rank,
                          n_candidates, log_cand, log_pool):
    """``(sample, item)``: ``sum_r log p(b^r | lambda)`` of every item's readers (each once;
    :func:`item_log_likelihood`) at every sample's candidate log-worths ``log_cand (sample,
    item, C)`` (the first ``n_candidates[i]`` slots valid) and log pooled mass ``log_pool
    (sample, item)`` (``-inf`` when nothing is pooled); readers of item ``i`` are
    ``reader_start[i] .. reader_start[i + 1] - 1`` of an unrepeated layout. Scale-free:
    plausibilities serve as well as worths."""
    n_samples, n_items, width = log_cand.shape
    w = np.empty(width)
    zbar = np.empty(max(block_offsets.size, 1))
    table = np.empty(1 << _max_block(entry_offsets))
    out = np.empty((n_samples, n_items))
    for s in range(n_samples):
        for i in range(n_items):
            out[s, i] = item_log_likelihood(reader_start[i], reader_start[i + 1], block_offsets,
                                            entry_offsets, entry_candidate, rank, log_cand[s, i],
                                            log_pool[s, i], n_candidates[i], w, zbar, table)
    return out


@numba.njit(cache=True, nogil=True, inline='always')
def _weight(entry, linear, best):
    """Linear weight of a lattice-table entry: itself, or ``exp(entry - best)`` of a
    log-space table."""
    return entry if linear else np.exp(entry - best)


@numba.njit(cache=True, nogil=True)
def _augment_item(rng, r0, r1, gamma, block_offsets, entry_offsets, entry_candidate, rank, x,
                  nc, w, pool, exposure, zbar, table):
    """Steps 1–2 for one item: adds ``sum_{r, copy} E_{r,k}`` to ``exposure (C,)`` and returns
    ``sum_{r, copy} T_r``. ``x`` log-worths, ``w = exp(x)``, ``pool`` linear pooled mass.

    Exposures are linear in the arrival times, so only ``S = sum_copy t_copy`` is tracked:
    a size-1 block adds ``sum_copy Delta_copy ~ Gamma(gamma, 1) / (Zbar + lambda_k)`` (one draw
    for all copies); a tied block samples each copy's order and gaps and adds their sums.
    """
    pool_exposure = 0.0
    for r in range(r0, r1):
        _after_masses(r, block_offsets, entry_offsets, entry_candidate, rank, w, pool, zbar, nc)
        t_sum = 0.0  # sum over copies of the arrival time so far
        b0 = block_offsets[r]
        for b in range(b0, block_offsets[r + 1]):
            e0 = entry_offsets[b]
            size = entry_offsets[b + 1] - e0
            z = zbar[b - b0]
            if size == 1:
                slot = entry_candidate[e0]
                gaps = (rng.standard_exponential() if gamma == 1
                        else rng.standard_gamma(gamma))
                t_sum += gaps / (z + w[slot])
                exposure[slot] += t_sum
                continue
            linear = _lattice(x, 0.0, w, entry_candidate, e0, size, z, table)
            block_sum = 0.0  # sum over copies of the block's duration
            for j in range(size):
                exposure[entry_candidate[e0 + j]] += t_sum
            for copy in range(gamma):
                t = 0.0
                mask = (1 << size) - 1
                for step in range(size):
                    if step == size - 1:
                        chosen = 0
                        while not mask & (1 << chosen):
                            chosen += 1
                    else:
                        # P(next = j | mask) = R(mask \ j) / sum_j' R(mask \ j')
                        best = 0.0  # log-space tables: weights relative to the largest
                        if not linear:
                            best = -np.inf
                            for j in range(size):
                                if mask & (1 << j):
                                    best = max(best, table[mask ^ (1 << j)])
                        norm = 0.0
                        for j in range(size):
                            if mask & (1 << j):
                                norm += _weight(table[mask ^ (1 << j)], linear, best)
                        target = rng.random() * norm
                        chosen = -1
                        acc = 0.0
                        for j in range(size):
                            if mask & (1 << j):
                                chosen = j
                                acc += _weight(table[mask ^ (1 << j)], linear, best)
                                if acc > target:
                                    break
                    # members not yet arrived (summed afresh: no cancellation)
                    remaining = 0.0
                    for j in range(size):
                        if mask & (1 << j):
                            remaining += w[entry_candidate[e0 + j]]
                    t += rng.standard_exponential() / (z + remaining)
                    exposure[entry_candidate[e0 + chosen]] += t
                    mask ^= 1 << chosen
                block_sum += t
            t_sum += block_sum
        for c in range(nc):
            if rank[r, c] == -1:
                exposure[c] += t_sum
        pool_exposure += t_sum
    return pool_exposure


@numba.njit(cache=True, nogil=True)
def augment_kernel(rng, reader_start, gamma, block_offsets, entry_offsets, entry_candidate,
                   rank, n_candidates, log_cand, log_pool, exposure, pool_exposure):
    """Steps 1–2 for every item: ``exposure (item, C)`` and ``pool_exposure (item,)``
    (overwritten); readers of item ``i`` are ``reader_start[i] .. reader_start[i + 1] - 1``,
    each counted ``gamma`` times."""
    n_items, width = log_cand.shape
    w = np.empty(width)
    zbar = np.empty(max(block_offsets.size, 1))
    table = np.empty(1 << _max_block(entry_offsets))
    for i in range(n_items):
        for c in range(width):
            w[c] = np.exp(log_cand[i, c])
            exposure[i, c] = 0.0
        pool_exposure[i] = _augment_item(rng,
            reader_start[i], reader_start[i + 1], gamma, block_offsets, entry_offsets,
            entry_candidate, rank, log_cand[i], n_candidates[i], w, np.exp(log_pool[i]),
            exposure[i], zbar, table)


@numba.njit(cache=True, nogil=True)
def _log_target(r0, r1, gamma, block_offsets, entry_offsets, entry_candidate, rank, x, y,
                n_candidates, pool_shape, shape, rate, w, zbar, table):
    """Log posterior density of one item in ``(x, y)`` (log-worths; Gamma priors with their
    log-transform Jacobians)."""
    value = gamma * item_log_likelihood(r0, r1, block_offsets, entry_offsets,
                                        entry_candidate, rank, x, y, n_candidates, w, zbar,
                                        table)
    # the likelihood left w = exp(x - top), top the largest log-worth: e^x = w e^top
    top = y
    for c in range(n_candidates):
        top = max(top, x[c])
    scale = np.exp(top) if np.isfinite(top) else 1.0
    for c in range(n_candidates):
        value += shape * x[c] - rate * w[c] * scale
    if pool_shape > 0.0:
        value += pool_shape * y - rate * np.exp(y)
    return value


@numba.njit(cache=True, nogil=True, inline='always')
def _log_ratios(x, y, n_candidates, ref, z):
    """Additive log-ratio coordinates of one item's plausibilities into ``z[: d]``; returns
    ``d``. The parts are the candidates (slots ``0 .. n_candidates - 1``) then the pool (when
    something is pooled, ``y > -inf``); part ``ref`` is the reference and ``z`` lists
    ``x_p - x_ref`` over the other parts in order."""
    ref_value = y if ref == n_candidates else x[ref]
    d = 0
    for p in range(n_candidates):
        if p != ref:
            z[d] = x[p] - ref_value
            d += 1
    if np.isfinite(y) and ref != n_candidates:
        z[d] = y - ref_value
        d += 1
    return d


@numba.njit(cache=True, nogil=True, inline='always')
def _t_log_density(z, d, mean, chol, df, scratch):
    """``log q(z)`` up to a constant (the same for every ``z``): multivariate t with ``df``
    degrees of freedom, location ``mean (d,)`` and scale ``chol chol^T`` (``chol`` lower
    triangular): ``-(df + d) / 2 log(1 + |chol^{-1} (z - mean)|^2 / df)``."""
    distance = 0.0
    for j in range(d):  # forward substitution
        value = z[j] - mean[j]
        for k in range(j):
            value -= chol[j, k] * scratch[k]
        scratch[j] = value / chol[j, j]
        distance += scratch[j] ** 2
    return -0.5 * (df + d) * np.log1p(distance / df)


@numba.njit(cache=True, nogil=True, inline='always')
def _log_sum_exp(values, n, extra):
    """``log(sum_{j < n} e^{values_j} + e^extra)``."""
    top = extra
    for j in range(n):
        top = max(top, values[j])
    if not np.isfinite(top):
        return top
    total = np.exp(extra - top)
    for j in range(n):
        total += np.exp(values[j] - top)
    return top + np.log(total)


@numba.njit(cache=True, nogil=True)
def _metropolis_item(rng, r0, r1, gamma, block_offsets, entry_offsets, entry_candidate, rank,
                     x, y, n_candidates, n_pooled, shape, rate, ref, mean, chol, df, rounds,
                     x_new, z, z_new, scratch, w, zbar, table):
    """``rounds`` independence Metropolis moves (module docstring, step 4) on one item;
    updates ``x (C,)`` in place and returns the new ``y`` and the number of accepted moves.
    ``mean (C,)``, ``chol (C, C)``: the item's t proposal on its log-ratio coordinates
    relative to part ``ref`` (:func:`_log_ratios`). Valid candidates are the first
    ``n_candidates`` slots; ``x_new``, ``z``, ``z_new``, ``scratch``: scratch."""
    d = _log_ratios(x, y, n_candidates, ref, z)
    if d == 0:  # a single part: its plausibility is 1
        return y, 0
    pool_shape = n_pooled * shape
    log_q = _t_log_density(z, d, mean, chol, df, scratch)
    log_total = _log_sum_exp(x, n_candidates, y)  # log Lambda, which the moves keep
    pooled = np.isfinite(y)
    current, accepted = -np.inf, 0
    for step in range(rounds + 1):  # step 0 evaluates the current state (one target call site)
        for c in range(x.size):
            x_new[c] = x[c]
        y_new, log_q_new = y, log_q
        if step > 0:
            # z' = mean + chol u, u = radius * N(0, I): then chol^-1 (z' - mean) = u
            radius = np.sqrt(df / rng.chisquare(df))
            distance = 0.0
            for j in range(d):
                scratch[j] = radius * rng.standard_normal()
                distance += scratch[j] ** 2
            log_q_new = -0.5 * (df + d) * np.log1p(distance / df)
            for j in range(d - 1, -1, -1):  # row j reads u[: j + 1]
                value = mean[j]
                for k in range(j + 1):
                    value += chol[j, k] * scratch[k]
                z_new[j] = value
            # x' = (z', 0) + c with the same total: c = log Lambda - log(1 + sum e^z')
            offset = log_total - _log_sum_exp(z_new, d, 0.0)
            j = 0
            for p in range(n_candidates + pooled):
                value = offset if p == ref else z_new[j] + offset
                j += p != ref
                if p == n_candidates:
                    y_new = value
                else:
                    x_new[p] = value
        proposed = _log_target(r0, r1, gamma, block_offsets, entry_offsets, entry_candidate,
                               rank, x_new, y_new, n_candidates, pool_shape, shape, rate, w,
                               zbar, table)
        if step == 0:
            current = proposed
        elif np.log(1.0 - rng.random()) < proposed - current + log_q - log_q_new:
            for c in range(n_candidates):
                x[c] = x_new[c]
            for j in range(d):
                z[j] = z_new[j]
            y, current, log_q = y_new, proposed, log_q_new
            accepted += 1
    return y, accepted


@numba.njit(cache=True, nogil=True)
def sweep_kernel(rng, reader_start, block_offsets, entry_offsets, entry_candidate, rank,
                 n_candidates, n_pooled, ranked_count, gamma, n_classes, shape, rate,
                 metropolis_rounds, ref, mean, chol, df, log_cand, log_pool, accepted,
                 moments, out_cand, out_pool, store, adapt):
    """One sweep (steps 1–4 of the module docstring) of every item, in place on
    ``log_cand (item, C)`` (``-inf`` on padding) and ``log_pool (item,)`` (``-inf`` when
    nothing is pooled). Layout arrays are those of an unrepeated
    :class:`~plausible.maths.plackett_luce.PLLayout` (candidates of an item are
    its first ``n_candidates`` slots). When ``store``, writes the plausibilities
    ``lambda / Lambda`` into ``out_cand (chain, n, C)`` (0 on padding) and
    ``out_pool (chain, n)``, item ``i`` going to chain ``i // n``, row ``i % n`` (items tiled
    chain by chain).

    Metropolis: ``metropolis_rounds`` independence moves per item (none when ``0``), proposing
    from the t with ``df`` degrees of freedom, location ``mean (item, C)`` and Cholesky scale
    ``chol (item, C, C)`` on the item's log-ratio coordinates ``z (d,)`` relative to its part
    ``ref (item,)`` (:func:`_log_ratios`). Acceptances are added to ``accepted (item,)`` and,
    when ``adapt``, ``sum z`` and ``sum z z^T`` to ``moments[:, :, 0]`` and
    ``moments[:, :, 1:]`` (``(item, C, C + 1)``), for the caller's warm-up fit of the
    proposals.
    """
    n_items, width = log_cand.shape
    w = np.empty(width)
    exposure = np.empty(width)
    x_new = np.empty(width)
    z = np.empty(width)
    z_new = np.empty(width)
    scratch = np.empty(width)
    zbar = np.empty(max(block_offsets.size, 1))
    table = np.empty(1 << _max_block(entry_offsets))
    total_shape = n_classes * shape
    log_rate = np.log(rate)
    for i in range(n_items):
        x = log_cand[i]
        nc = n_candidates[i]
        r0, r1 = reader_start[i], reader_start[i + 1]
        # 1. augmentation
        for c in range(nc):
            w[c] = np.exp(x[c])
            exposure[c] = 0.0
        pool_exposure = _augment_item(rng, r0, r1, gamma, block_offsets, entry_offsets,
                                      entry_candidate, rank, x, nc, w, np.exp(log_pool[i]),
                                      exposure, zbar, table)
        # 2. conjugate worths
        for c in range(nc):
            x[c] = (log_gamma_draw(rng, shape + gamma * ranked_count[i, c])
                    - np.log(rate + exposure[c]))
        y = -np.inf
        if n_pooled[i] > 0:
            y = log_gamma_draw(rng, n_pooled[i] * shape) - np.log(rate + pool_exposure)
        # 3. total worth
        shift = log_gamma_draw(rng, total_shape) - log_rate - _log_sum_exp(x, nc, y)
        for c in range(nc):
            x[c] += shift
        y += shift
        # 4. Metropolis with the exact likelihood
        if metropolis_rounds > 0:
            y, n_accepted = _metropolis_item(
                rng, r0, r1, gamma, block_offsets, entry_offsets, entry_candidate, rank, x, y,
                nc, n_pooled[i], shape, rate, ref[i], mean[i], chol[i], df, metropolis_rounds,
                x_new, z, z_new, scratch, w, zbar, table)
            accepted[i] += n_accepted
        log_pool[i] = y
        if adapt:
            d = _log_ratios(x, y, nc, ref[i], z)
            for j in range(d):
                moments[i, j, 0] += z[j]
                for k in range(d):
                    moments[i, j, 1 + k] += z[j] * z[k]
        if store:
            top = y
            for c in range(nc):
                top = max(top, x[c])
            pool = np.exp(y - top)
            norm = pool
            for c in range(nc):
                w[c] = np.exp(x[c] - top)
                norm += w[c]
            chain, row = i // out_cand.shape[1], i % out_cand.shape[1]
            for c in range(width):
                out_cand[chain, row, c] = w[c] / norm if c < nc else 0.0
            out_pool[chain, row] = pool / norm
