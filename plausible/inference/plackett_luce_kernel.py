"""Compiled (numba) PL data augmentation: steps 1–2 and the exposures of the Gibbs sweep.

Same maths as :func:`plausible.inference.plackett_luce_gibbs.augment_reference` (which is
vectorised numpy and checked by enumeration), one loop over readers: per reader the after-
masses ``Zbar`` of its blocks (backwards), then forwards through its blocks the within-block
order (subset-lattice walk on ``log R``, inverse-CDF choice) and the arrival gaps
``Delta = Exp(1) / (Zbar + mass not yet arrived in the block)``, accumulating the exposures.
All randomness comes in as arrays drawn from the step's ``numpy.random.Generator``
(one ``Exp(1)`` and one ``U(0, 1)`` per entry), so results are reproducible and the kernel
has no random state.
"""

from __future__ import annotations

import numba
import numpy as np


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
def augment_kernel(reader_item, block_first, entry_start, entry_candidate, rank, log_cand,
                   cand, pool, uniforms, exponentials, exposure, pool_exposure):
    """Add every reader's exposures to ``exposure`` ``(item, C)`` and ``pool_exposure``.

    ``block_first`` ``(R + 1,)`` block offsets per reader; ``entry_start`` ``(B + 1,)``
    entry offsets per block; ``rank`` ``(R, C)`` (``-1`` unranked by the reader, ``-2``
    padding); ``log_cand`` and ``cand = exp(log_cand)`` ``(item, C)``; ``pool`` ``(item,)``
    linear pooled mass.
    """
    n_readers = reader_item.size
    width = rank.shape[1]
    max_size = 0
    for b in range(entry_start.size - 1):
        max_size = max(max_size, entry_start[b + 1] - entry_start[b])
    log_r = np.empty(1 << max_size)
    block_zbar = np.empty(block_first[-1])
    for r in range(n_readers):
        i = reader_item[r]
        unranked = pool[i]
        for c in range(width):
            if rank[r, c] == -1:
                unranked += cand[i, c]
        after = unranked
        for b in range(block_first[r + 1] - 1, block_first[r] - 1, -1):
            block_zbar[b] = after
            for e in range(entry_start[b], entry_start[b + 1]):
                after += cand[i, entry_candidate[e]]
        t = 0.0
        for b in range(block_first[r], block_first[r + 1]):
            e0 = entry_start[b]
            size = entry_start[b + 1] - e0
            zbar = block_zbar[b]
            remaining_mass = 0.0
            for j in range(size):
                remaining_mass += cand[i, entry_candidate[e0 + j]]
            if size > 1:
                log_z = np.log(zbar) if zbar > 0 else -np.inf
                log_r[0] = 0.0
                for mask in range(1, 1 << size):
                    num = -np.inf
                    den = log_z
                    for j in range(size):
                        if mask & (1 << j):
                            num = _logaddexp(num, log_r[mask ^ (1 << j)])
                            den = _logaddexp(den, log_cand[i, entry_candidate[e0 + j]])
                    log_r[mask] = num - den
            mask = (1 << size) - 1
            for step in range(size):
                if size == 1 or step == size - 1:
                    chosen = 0
                    while not mask & (1 << chosen):
                        chosen += 1
                else:
                    # P(next = j | mask) = R(mask \ j) / sum_j' R(mask \ j')
                    top = -np.inf
                    for j in range(size):
                        if mask & (1 << j):
                            top = max(top, log_r[mask ^ (1 << j)])
                    total = 0.0
                    for j in range(size):
                        if mask & (1 << j):
                            total += np.exp(log_r[mask ^ (1 << j)] - top)
                    target = uniforms[e0 + step] * total
                    chosen = -1
                    acc = 0.0
                    for j in range(size):
                        if mask & (1 << j):
                            chosen = j
                            acc += np.exp(log_r[mask ^ (1 << j)] - top)
                            if acc > target:
                                break
                slot = entry_candidate[e0 + chosen]
                t += exponentials[e0 + step] / (zbar + remaining_mass)
                remaining_mass -= cand[i, slot]
                if remaining_mass < 0.0:
                    remaining_mass = 0.0
                exposure[i, slot] += t
                mask ^= 1 << chosen
        for c in range(width):
            if rank[r, c] == -1:
                exposure[i, c] += t
        pool_exposure[i] += t
