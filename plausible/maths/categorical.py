"""Categorical draws by inverting the cumulative probabilities, vectorised."""

import numba
import numpy as np


def categorical_draws(rng: np.random.Generator, probabilities, size=None) -> np.ndarray:
    """One category per row of ``probabilities (..., K)`` (rows summing to 1), int: the first
    ``k`` with ``U < sum_{l <= k} p_l``, ``U ~ U(0, 1)``, capped at ``K - 1`` against round-off.
    ``size``: the draws' shape when ``probabilities`` broadcasts to ``size + (K,)`` (default
    ``probabilities.shape[:-1]``); one uniform per draw, in C order."""
    probabilities = np.asarray(probabilities)
    size = probabilities.shape[:-1] if size is None else tuple(size)
    uniform = rng.random((*size, 1))
    return np.minimum((uniform > np.cumsum(probabilities, axis=-1)).sum(axis=-1),
                      probabilities.shape[-1] - 1)


@numba.njit(cache=True, nogil=True, inline="always")
def inverse_cdf(weights, target):  # pragma: no cover - compiled
    """The first ``k`` whose cumulative unnormalised ``weights (K,)`` exceed ``target`` (a
    uniform times their total), ``K - 1`` when none does (round-off): one categorical draw,
    in compiled sweeps."""
    cumulative = 0.0
    for k in range(weights.size - 1):
        cumulative += weights[k]
        if target < cumulative:
            return k
    return weights.size - 1


__all__ = ["categorical_draws", "inverse_cdf"]
