"""Neal's (2003) slice update of many conditionally independent coordinates at once, each
round of density evaluations shared by every coordinate still at that stage.

When the coordinates ``x_1..x_n`` are independent given everything else (the annotators'
parameters of a label model given the items' classes and parameters), one slice update of
each, in any interleaving, is a Gibbs scan of them. Evaluating the densities is what costs
(on a cluster, a round trip to every shard of items), so the updates run in lockstep: the
levels from the current values' densities; then stepping out (both ends of every
coordinate's interval in the same round, each end moved out by its width while it lies
inside the support and the slice, without limit); then shrinkage (a proposal for every
coordinate not yet accepted per round). Coordinate ``i`` takes Neal's decisions with
uniforms of its own, so its update is Neal's with width ``width[i]``, which leaves its full
conditional invariant for any width fixed before the update.

``log_density(points, active)``: ``points`` ``(m, n)``, ``active`` bool ``(m, n)``; returns
the log densities ``(m, n)`` at the active points (anything elsewhere; ``nan`` counts as
outside the slice).
"""

from collections.abc import Callable

import numpy as np


def slice_updates(rng: np.random.Generator, x: np.ndarray, log_fx: np.ndarray,
                  width: np.ndarray, log_density: Callable, lower: float = -np.inf,
                  upper: float = np.inf) -> tuple[np.ndarray, int]:
    """One slice update of every coordinate of ``x`` ``(n,)`` (inside ``(lower, upper)``,
    ``log_fx`` its log densities, ``width`` ``(n,)``), in lockstep (module). Returns the new
    values and the number of rounds of evaluations."""
    n = x.size
    level = log_fx + np.log(rng.random(n))
    left = x - width * rng.random(n)
    right = left + width
    out = np.stack([left > lower, right < upper])  # ends still stepping out
    rounds = 0
    while out.any():
        with np.errstate(invalid="ignore"):
            inside = log_density(np.stack([left, right]), out) > level
        rounds += 1
        out &= inside
        left = np.where(out[0], left - width, left)
        right = np.where(out[1], right + width, right)
        out &= np.stack([left > lower, right < upper])
    new = x.copy()
    active = np.ones(n, dtype=bool)
    proposal = x.copy()
    while active.any():
        proposal[active] = left[active] + (right - left)[active] * rng.random(int(active.sum()))
        in_support = (proposal > lower) & (proposal < upper)
        with np.errstate(invalid="ignore"):
            inside = in_support & (log_density(proposal[None], (active & in_support)[None])[0]
                                   > level)
        rounds += 1
        accepted = active & inside
        new[accepted] = proposal[accepted]
        shrink = active & ~inside
        left = np.where(shrink & (proposal < x), proposal, left)
        right = np.where(shrink & (proposal >= x), proposal, right)
        active &= ~inside
    return new, rounds


__all__ = ["slice_updates"]
