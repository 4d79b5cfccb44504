"""Neal's (2003) univariate slice update, compiled (numba) for a given log density.

For a target ``f`` on the open interval ``(lower, upper)`` (infinite ends allowed), one update
from ``x`` with ``log f(x)`` known:

1. level ``y = log f(x) + log U``, ``U ~ U(0, 1)`` (the slice ``{x': log f(x') > y}``);
2. stepping out: an interval of width ``w`` placed uniformly around ``x``,
   ``[x - w V, x - w V + w]``, ``V ~ U(0, 1)``, each end moved out by ``w`` while it lies
   inside the support and inside the slice; at most ``m - 1`` steps in all, ``J =
   floor(m V')`` of them to the left (Neal's limit ``m``; ``m = 1`` keeps the first
   interval), or no limit (``m = 0`` here);
3. shrinkage: ``x'`` uniform on the interval, accepted when inside the support and the slice,
   otherwise the interval shrinks to ``x'`` on the side away from ``x``.

The update leaves ``f`` invariant for any fixed width ``w > 0`` (Neal 2003, section 4), so
a scan of such updates over the coordinates of a parameter vector, each conditional on the
others, is an exact Gibbs-type step. The width and ``m`` may depend on anything except the
coordinate being updated (the other coordinates, the data, values fixed after tuning).

:func:`slice_update` turns a numba-compiled ``log_density(x, *args)`` into a compiled
``update(rng, x, log_fx, lower, upper, width, max_steps, args) -> (x', log f(x'),
evaluations)`` (the number of density evaluations it made, a cost diagnostic) drawing from
the ``numpy.random.Generator`` ``rng``; a ``nan`` density counts as outside the slice.
Each density gets its own compiled update, the density a closure constant compiled into it
(no call through a function pointer). The update is not
cached to disk itself (numba keys a closure's cache on its cell contents, which for a
dispatcher differ in every process); the ``cache=True`` kernels calling it are, with its
code linked in. As everywhere in numba, a cached kernel is recompiled when its own source
file changes, not when this one does: clear the callers' ``__pycache__`` after editing it.
"""

import math

import numba


def slice_update(log_density):
    """Compiled slice update for ``log_density(x, *args)`` (see module).

    Returns ``update(rng, x, log_fx, lower, upper, width, max_steps, args)``: ``x`` inside
    ``(lower, upper)`` with ``log_fx = log_density(x, *args) > -inf``, ``width > 0``,
    ``max_steps`` Neal's ``m >= 1`` or 0 for no limit, ``args`` a tuple; returns the new
    point, its log density and the number of density evaluations.
    """

    @numba.njit
    def update(rng, x, log_fx, lower, upper, width, max_steps, args):
        level = log_fx + math.log(rng.random())
        left = x - width * rng.random()
        right = left + width
        if max_steps > 0:  # Neal's limit m: J = floor(m V) steps left, m - 1 - J right
            steps_left = int(max_steps * rng.random())
            steps_right = max_steps - 1 - steps_left
        else:  # unlimited: the counters start below 0 and never reach it
            steps_left = steps_right = -1
        evaluations = 0
        while steps_left != 0 and lower < left:
            evaluations += 1
            if not log_density(left, *args) > level:
                break
            left -= width
            steps_left -= 1
        while steps_right != 0 and right < upper:
            evaluations += 1
            if not log_density(right, *args) > level:
                break
            right += width
            steps_right -= 1
        while True:
            y = left + (right - left) * rng.random()
            if lower < y < upper:
                evaluations += 1
                log_fy = log_density(y, *args)
                if log_fy > level:
                    return y, log_fy, evaluations
            if y < x:
                left = y
            else:
                right = y

    return update


__all__ = ["slice_update"]
