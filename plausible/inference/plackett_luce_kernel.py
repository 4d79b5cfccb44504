"""Compiled (numba) Plackett–Luce kernels: the whole exact sweep of the candidate sampler.

Per item ``i`` (candidate log-worths ``x_i (C,)``, log pooled mass ``y_i``) one sweep
(:func:`sweep_kernel`) does, with every reader ``r`` of the item counted ``gamma`` times:

1. **augmentation** (:func:`_augment_item`; the maths of
   :func:`plausible.inference.plackett_luce_gibbs.augment_reference`, which is vectorised numpy
   and checked by enumeration): per reader the after-masses ``Zbar`` of its blocks (computed
   once), per tied block the subset-lattice table ``log R`` (computed once per reader, shared
   by its ``gamma`` copies), then per copy the within-block order (``P(next = a | A) =
   R(A \\ a) / sum_a' R(A \\ a')``, inverse CDF) and the gaps
   ``Delta ~ Exp(1) / (Zbar + mass of the block not yet arrived)`` (size-1 blocks: the sum
   over copies, one ``Gamma(gamma, 1)`` draw); exposures
   ``E_k = sum_{r, copy} tau_{r,k}`` (``T_r`` when ``r`` left ``k`` unranked) and
   ``E_pool = sum_{r, copy} T_r``;
2. **conjugate worths**: ``log lambda_k = log G(a + gamma n_k) - log(b + E_k)``,
   ``log pool = log G(n_pooled a) - log(b + E_pool)``;
3. **total worth**: every log-worth shifted by ``log G(K a) - log b - log Lambda`` (``Lambda``
   the current total; exact because ``Lambda`` is independent of ``lambda / Lambda`` under the
   prior and the likelihood only sees ``lambda / Lambda``);
4. **Metropolis** (:func:`_metropolis_item`, ``metropolis_rounds`` rounds), target
   ``gamma log p(b | lambda) + sum_c (a x_c - b e^{x_c}) + n_pooled a y - b e^y`` with the exact
   tied likelihood :func:`item_log_likelihood` (checked against
   :func:`plausible.models.plackett_luce_likelihood.reader_log_likelihood`): a joint random walk
   ``x_c += sigma_c z_c``, ``y += sigma_pool z``, then, for every ``j = 1 .. n_candidates``
   in turn (a deterministic scan; ``j = n_candidates`` only when something is pooled), a
   common shift ``+ delta_j`` of every log-worth but the item's ``j`` largest candidates,
   the pool included (the directions in which the minor classes shrink together, where the
   augmentation crawls; each a Metropolis update of its own, with unit Jacobian and a
   proposal symmetric among states with the same top-``j`` set, shifts that change that set
   being rejected), then a swap of the log-worths of two random
   candidates (symmetric, the prior being exchangeable; it jumps between the mirror-image
   modes of classes the readers tie). The proposal scales are given per item (the caller
   adapts them during warm-up only, so the kept chain is a fixed Metropolis-within-Gibbs
   kernel).

Randomness: numba's own generator (``np.random`` inside the kernels; one state per thread),
seeded from the caller's ``numpy.random.Generator`` through :func:`seed` in the thread that then
runs the kernels, so a seed reproduces a run (one thread per seed, as in
:func:`plausible.inference.plackett_luce_sampler.sample_candidates`).
``log G(s)`` for ``G ~ Gamma(s, 1)`` uses ``log G(s + 1) + log(U) / s`` when ``s < 1`` (finite
for the tiny default ``a = 1 / K``).
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True)
def seed(value):
    """Seed the calling thread's numba generator (used by every kernel of this module run
    in that thread)."""
    np.random.seed(value)


@numba.njit(cache=True, nogil=True)
def _logaddexp(a, b):
    if a == -np.inf:
        return b
    if b == -np.inf:
        return a
    if a > b:
        return a + np.log1p(np.exp(b - a))
    return b + np.log1p(np.exp(a - b))


@numba.njit(cache=True, nogil=True)
def _log_gamma(shape):
    """``log G``, ``G ~ Gamma(shape, 1)``; finite for any ``shape > 0``."""
    if shape < 1.0:
        return np.log(np.random.standard_gamma(shape + 1.0)) + np.log(
            1.0 - np.random.random()) / shape
    return np.log(np.random.standard_gamma(shape))


@numba.njit(cache=True, nogil=True)
def _lattice(log_members, size, log_z, log_r):
    """``log R(A)`` for every subset mask ``A`` of a block into ``log_r[: 2**size]``:
    ``R(A) = sum_{a in A} R(A \\ a) / (Zbar + sum_A lambda)``, ``log_z = log Zbar``."""
    log_r[0] = 0.0
    for mask in range(1, 1 << size):
        num = -np.inf
        den = log_z
        for j in range(size):
            if mask & (1 << j):
                num = _logaddexp(num, log_r[mask ^ (1 << j)])
                den = _logaddexp(den, log_members[j])
        log_r[mask] = num - den


@numba.njit(cache=True, nogil=True)
def _max_block(entry_offsets):
    """Largest block size (``entry_offsets`` ``(B + 1,)``)."""
    size = 0
    for b in range(entry_offsets.size - 1):
        size = max(size, entry_offsets[b + 1] - entry_offsets[b])
    return size


@numba.njit(cache=True, nogil=True)
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


@numba.njit(cache=True, nogil=True)
def item_log_likelihood(r0, r1, block_offsets, entry_offsets, entry_candidate, rank, x, y, nc,
                        w, zbar, log_members, log_r):
    """``sum_{r0 <= r < r1} log p(b^r | lambda)`` of one item's readers (each once) for
    candidate log-worths ``x (C,)`` (the first ``nc`` slots valid) and log pooled mass ``y``
    (``-inf`` when nothing is pooled).

    Scale-free: worths are divided by the item's largest before the linear after-masses
    (exact unless an after-mass is below ``1e-308`` of that worth, where it becomes ``0``,
    as in the numpy reference). Size-1 blocks multiply ``lambda_k / (Zbar + lambda_k)`` in
    linear space (one ``log`` per ``1e-150`` of product; log space for ``lambda_k`` below
    ``1e-140``; no underflow), tied blocks use the log-space lattice. ``w``, ``zbar``,
    ``log_members``, ``log_r``: scratch.
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
                log_members[j] = x[entry_candidate[e0 + j]] - top
                total += log_members[j]
            _lattice(log_members, size, np.log(z) if z > 0.0 else -np.inf, log_r)
            total += log_r[(1 << size) - 1]
    return total + np.log(ratio)


@numba.njit(cache=True, nogil=True)
def _augment_item(r0, r1, gamma, block_offsets, entry_offsets, entry_candidate, rank, x, nc,
                  w, pool, exposure, zbar, log_members, log_r):
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
                gaps = (np.random.standard_exponential() if gamma == 1
                        else np.random.standard_gamma(gamma))
                t_sum += gaps / (z + w[slot])
                exposure[slot] += t_sum
                continue
            for j in range(size):
                log_members[j] = x[entry_candidate[e0 + j]]
            _lattice(log_members, size, np.log(z) if z > 0.0 else -np.inf, log_r)
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
                        best = -np.inf
                        for j in range(size):
                            if mask & (1 << j):
                                best = max(best, log_r[mask ^ (1 << j)])
                        norm = 0.0
                        for j in range(size):
                            if mask & (1 << j):
                                norm += np.exp(log_r[mask ^ (1 << j)] - best)
                        target = np.random.random() * norm
                        chosen = -1
                        acc = 0.0
                        for j in range(size):
                            if mask & (1 << j):
                                chosen = j
                                acc += np.exp(log_r[mask ^ (1 << j)] - best)
                                if acc > target:
                                    break
                    # members not yet arrived (summed afresh: no cancellation)
                    remaining = 0.0
                    for j in range(size):
                        if mask & (1 << j):
                            remaining += w[entry_candidate[e0 + j]]
                    t += np.random.standard_exponential() / (z + remaining)
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
def augment_kernel(reader_start, gamma, block_offsets, entry_offsets, entry_candidate, rank,
                   n_candidates, log_cand, log_pool, exposure, pool_exposure):
    """Steps 1–2 for every item: ``exposure (item, C)`` and ``pool_exposure (item,)``
    (overwritten); readers of item ``i`` are ``reader_start[i] .. reader_start[i + 1] - 1``,
    each counted ``gamma`` times."""
    n_items, width = log_cand.shape
    w = np.empty(width)
    zbar = np.empty(max(block_offsets.size, 1))
    log_members = np.empty(width)
    log_r = np.empty(1 << _max_block(entry_offsets))
    for i in range(n_items):
        for c in range(width):
            w[c] = np.exp(log_cand[i, c])
            exposure[i, c] = 0.0
        pool_exposure[i] = _augment_item(
            reader_start[i], reader_start[i + 1], gamma, block_offsets, entry_offsets,
            entry_candidate, rank, log_cand[i], n_candidates[i], w, np.exp(log_pool[i]),
            exposure[i], zbar, log_members, log_r)


@numba.njit(cache=True, nogil=True)
def _log_target(r0, r1, gamma, block_offsets, entry_offsets, entry_candidate, rank, x, y,
                n_candidates, pool_shape, shape, rate, w, zbar, log_members, log_r):
    """Log posterior density of one item in ``(x, y)`` (log-worths; Gamma priors with their
    log-transform Jacobians)."""
    value = gamma * item_log_likelihood(r0, r1, block_offsets, entry_offsets,
                                        entry_candidate, rank, x, y, n_candidates, w, zbar,
                                        log_members, log_r)
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


@numba.njit(cache=True, nogil=True)
def _top_order(x, n, order):
    """``order[: n]``: indices of ``x[: n]`` by decreasing value (insertion sort, ``n``
    small)."""
    for c in range(n):
        k = c
        while k > 0 and x[order[k - 1]] < x[c]:
            order[k] = order[k - 1]
            k -= 1
        order[k] = c


@numba.njit(cache=True, nogil=True)
def _metropolis_item(r0, r1, gamma, block_offsets, entry_offsets, entry_candidate, rank, x, y,
                     n_candidates, n_pooled, shape, rate, sigma, shift_sd, rounds, accepted,
                     x_new, order, w, zbar, log_members, log_r):
    """``rounds`` rounds of the three Metropolis moves of the module docstring on one item;
    updates ``x (C,)`` in place and returns the new ``y``. ``sigma (C + 1,)``: proposal sds
    of move 1 (the pool's last); ``shift_sd (C,)``: sd of move 2's shift when the ``j``
    largest candidates stay (index ``j - 1``; every ``j`` tried once per round). Counts into
    ``accepted (1 + 2 C,)``: move 1's acceptances, then move 2's acceptances and tries per
    ``j``. Valid candidates are the first ``n_candidates`` slots (layout order)."""
    width = x.size
    pooled = n_pooled > 0
    pool_shape = n_pooled * shape
    current = _log_target(r0, r1, gamma, block_offsets, entry_offsets, entry_candidate, rank,
                          x, y, n_candidates, pool_shape, shape, rate, w, zbar, log_members,
                          log_r)
    for _ in range(rounds):
        # 1. joint random walk
        for c in range(x.size):
            x_new[c] = x[c]
        for c in range(n_candidates):
            x_new[c] = x[c] + sigma[c] * np.random.standard_normal()
        y_new = y + sigma[-1] * np.random.standard_normal() if pooled else y
        proposed = _log_target(r0, r1, gamma, block_offsets, entry_offsets, entry_candidate,
                               rank, x_new, y_new, n_candidates, pool_shape, shape, rate, w,
                               zbar, log_members, log_r)
        if np.log(1.0 - np.random.random()) < proposed - current:
            for c in range(n_candidates):
                x[c] = x_new[c]
            y, current = y_new, proposed
            accepted[0] += 1.0
        # 2. for each j in turn, a common shift of every log-worth but the j largest
        # candidates (the pool always shifts; j = n_candidates shifts the pool alone):
        # symmetric among states with the same top-j set, shifts changing that set rejected.
        # An accepted shift keeps the whole order of the log-worths (the shifted ones move
        # together and stay below the j-th largest), so `order` stays valid for the scan.
        _top_order(x, n_candidates, order)
        j_last = n_candidates if pooled else n_candidates - 1
        for j in range(min(n_candidates, 1), j_last + 1):
            slot = max(j - 1, 0)
            accepted[1 + width + slot] += 1.0
            delta = shift_sd[slot] * np.random.standard_normal()
            for c in range(n_candidates):
                x_new[c] = x[c]
            highest = -np.inf
            for k in range(j, n_candidates):
                x_new[order[k]] = x[order[k]] + delta
                highest = max(highest, x_new[order[k]])
            y_new = y + delta if pooled else y
            u = np.log(1.0 - np.random.random())
            if j == 0 or highest < x[order[j - 1]]:
                proposed = _log_target(r0, r1, gamma, block_offsets, entry_offsets,
                                       entry_candidate, rank, x_new, y_new, n_candidates,
                                       pool_shape, shape, rate, w, zbar, log_members, log_r)
                if u < proposed - current:
                    for c in range(n_candidates):
                        x[c] = x_new[c]
                    y, current = y_new, proposed
                    accepted[1 + slot] += 1.0
        # 3. swap the log-worths of two random candidates (symmetric; the prior is
        # exchangeable): jumps between the mirror modes of classes tied by the readers
        if n_candidates > 1:
            c1 = np.random.randint(0, n_candidates)
            c2 = np.random.randint(0, n_candidates - 1)
            c2 += c2 >= c1
            for c in range(n_candidates):
                x_new[c] = x[c]
            x_new[c1], x_new[c2] = x[c2], x[c1]
            proposed = _log_target(r0, r1, gamma, block_offsets, entry_offsets,
                                   entry_candidate, rank, x_new, y, n_candidates, pool_shape,
                                   shape, rate, w, zbar, log_members, log_r)
            if np.log(1.0 - np.random.random()) < proposed - current:
                x[c1], x[c2] = x_new[c1], x_new[c2]
                current = proposed
    return y


@numba.njit(cache=True, nogil=True)
def sweep_kernel(reader_start, block_offsets, entry_offsets, entry_candidate, rank,
                 n_candidates, n_pooled, ranked_count, gamma, n_classes, shape, rate,
                 metropolis_rounds, sigma, shift_sd, log_cand, log_pool, accepted, moments,
                 out_cand, out_pool, store, adapt):
    """One sweep (steps 1–4 of the module docstring) of every item, in place on
    ``log_cand (item, C)`` (``-inf`` on padding) and ``log_pool (item,)`` (``-inf`` when
    nothing is pooled). Layout arrays are those of an unrepeated
    :class:`~plausible.models.plackett_luce_likelihood.PLLayout` (candidates of an item are
    its first ``n_candidates`` slots). When ``store``, writes the plausibilities
    ``lambda / Lambda`` into ``out_cand (chain, n, C)`` (0 on padding) and
    ``out_pool (chain, n)``, item ``i`` going to chain ``i // n``, row ``i % n`` (items tiled
    chain by chain).

    Metropolis proposals: ``sigma (item, C + 1)`` and ``shift_sd (item, C)`` (see
    :func:`_metropolis_item`); counts are added to ``accepted (item, 1 + 2 C)`` and, when
    ``adapt``, the sums of the log-plausibilities ``log(lambda / Lambda)`` and of their squares
    to ``moments (item, C + 1, 2)`` (pool last), for the caller's warm-up adaptation.
    """
    n_items, width = log_cand.shape
    w = np.empty(width)
    exposure = np.empty(width)
    x_new = np.empty(width)
    order = np.empty(width, dtype=np.int64)
    zbar = np.empty(max(block_offsets.size, 1))
    log_members = np.empty(width)
    log_r = np.empty(1 << _max_block(entry_offsets))
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
        pool_exposure = _augment_item(r0, r1, gamma, block_offsets, entry_offsets,
                                      entry_candidate, rank, x, nc, w, np.exp(log_pool[i]),
                                      exposure, zbar, log_members, log_r)
        # 2. conjugate worths
        for c in range(nc):
            x[c] = _log_gamma(shape + gamma * ranked_count[i, c]) - np.log(rate + exposure[c])
        y = -np.inf
        if n_pooled[i] > 0:
            y = _log_gamma(n_pooled[i] * shape) - np.log(rate + pool_exposure)
        # 3. total worth
        log_total = y
        for c in range(nc):
            log_total = _logaddexp(log_total, x[c])
        shift = _log_gamma(total_shape) - log_rate - log_total
        for c in range(nc):
            x[c] += shift
        y += shift
        # 4. Metropolis with the exact likelihood
        if metropolis_rounds > 0:
            y = _metropolis_item(r0, r1, gamma, block_offsets, entry_offsets,
                                 entry_candidate, rank, x, y, nc, n_pooled[i], shape, rate,
                                 sigma[i], shift_sd[i], metropolis_rounds, accepted[i], x_new,
                                 order, w, zbar, log_members, log_r)
        log_pool[i] = y
        if not (adapt or store):
            continue
        top = y
        for c in range(nc):
            top = max(top, x[c])
        norm = np.exp(y - top)
        for c in range(nc):
            norm += np.exp(x[c] - top)
        if adapt:
            log_total = top + np.log(norm)
            for c in range(nc):
                moments[i, c, 0] += x[c] - log_total
                moments[i, c, 1] += (x[c] - log_total) ** 2
            if n_pooled[i] > 0:
                moments[i, width, 0] += y - log_total
                moments[i, width, 1] += (y - log_total) ** 2
        if store:
            chain, row = i // out_cand.shape[1], i % out_cand.shape[1]
            for c in range(width):
                out_cand[chain, row, c] = np.exp(x[c] - top) / norm if c < nc else 0.0
            out_pool[chain, row] = np.exp(y - top) / norm
