"""Mutual information between noisy labels and the truth (Su 2024).

``I(Z; Y) = sum_{z, y} p(z, y) log2 [p(z, y) / (p(z) pi(y))]`` for ``T`` conditionally
independent labelers with confusion matrices ``A_t[y, z] = P(z_t = z | y)``, each labelling
every item: :func:`mutual_information` enumerates all ``C^T`` label vectors. For ``T`` binary
labelers with equal error ``eps`` (binary symmetric broadcast channel) [R]::

    I = H(Z) - T h(eps),  H(Z) = -sum_k C(T, k) p_k log2 p_k,
    p_k = pi(1) (1 - eps)^k eps^(T - k) + pi(0) eps^k (1 - eps)^(T - k)

(``p_k`` the probability of one particular vector with ``k`` ones). Checked against the
enumeration in ``tests/evaluation/test_mutual_information.py``.
"""

from __future__ import annotations

import itertools

import numpy as np
from scipy import optimize, special


def binary_entropy(p):
    """``h(p) = -p log2 p - (1 - p) log2 (1 - p)`` (``h(0) = h(1) = 0``)."""
    p = np.asarray(p, dtype=np.float64)
    return (special.entr(p) + special.entr(1 - p)) / np.log(2)


def _check(pi1, eps, T):
    if not 0 <= pi1 <= 1:
        raise ValueError(f"pi(1) must lie in [0, 1], got {pi1}")
    if not 0 <= eps <= 1:
        raise ValueError(f"eps must lie in [0, 1], got {eps}")
    if int(T) != T or T < 1:
        raise ValueError(f"T must be a positive integer, got {T}")


def mutual_information(prior, confusions) -> float:
    """``I(Z; Y)`` in bits by enumeration. ``prior`` ``(C,)``; ``confusions`` ``(T, C, C)``
    rows ``P(z_t | y)`` (or a list of ``(C, C)``). Enumerates ``C^T`` vectors (keep it small)."""
    pi = np.asarray(prior, dtype=np.float64)
    A = np.asarray(confusions, dtype=np.float64)
    if A.ndim == 2:
        A = A[None]
    C = pi.size
    if A.ndim != 3 or A.shape[1:] != (C, C):
        raise ValueError(f"confusions must be (T, {C}, {C}), got {A.shape}")
    if (pi < 0).any() or not np.isclose(pi.sum(), 1):
        raise ValueError("prior must be non-negative and sum to 1")
    if (A < 0).any() or not np.allclose(A.sum(axis=2), 1):
        raise ValueError("each confusion row P(z | y) must be non-negative and sum to 1")
    T = A.shape[0]
    if C**T > 2**22:
        raise ValueError(f"{C}^{T} label vectors are too many to enumerate")
    z = np.array(list(itertools.product(range(C), repeat=T)))  # (C^T, T)
    # p(z | y) = prod_t A_t[y, z_t]: (C^T, C)
    p_z_given_y = np.prod(A[np.arange(T)[None, :], :, z], axis=1)
    joint = p_z_given_y * pi
    pz = joint.sum(axis=1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = joint * np.log2(joint / (pz * pi))
    return float(np.nansum(np.where(joint > 0, terms, 0.0)))


def symmetric_mutual_information(pi1: float, n_labelers: int, eps: float) -> float:
    """Closed form ``I = H(Z) - T h(eps)`` of ``T`` equal binary symmetric labelers [R] (bits)."""
    _check(pi1, eps, n_labelers)
    T = int(n_labelers)
    k = np.arange(T + 1)
    with np.errstate(divide="ignore"):
        log_p = np.logaddexp(np.log(pi1) + special.xlogy(k, 1 - eps) + special.xlogy(T - k, eps),
                             np.log1p(-pi1) + special.xlogy(k, eps) + special.xlogy(T - k, 1 - eps))
    log_comb = special.gammaln(T + 1) - special.gammaln(k + 1) - special.gammaln(T - k + 1)
    finite = np.isfinite(log_p)
    H = float(-(np.exp(log_comb + log_p)[finite] * log_p[finite]).sum() / np.log(2))
    return H - T * float(binary_entropy(eps))


def equivalent_error(pi1: float, n_labelers: int, eps: float, *, tol: float = 1e-12) -> float:
    """The single-labeler error ``eps'`` in ``[0, 1/2]`` with the same ``I`` as ``T`` labelers of
    error ``eps`` (I decreases in ``eps'`` on ``[0, 1/2]``; root by bisection)."""
    target = symmetric_mutual_information(pi1, n_labelers, min(eps, 1 - eps))
    if target <= 0:
        return 0.5
    f = lambda e: symmetric_mutual_information(pi1, 1, e) - target  # noqa: E731
    if f(0.0) <= 0:
        return 0.0
    return float(optimize.bisect(f, 0.0, 0.5, xtol=tol))


def labelers_to_match(pi1: float, eps: float, expert_eps: float, *, max_labelers: int = 1001) -> int:
    """Smallest ``T`` with ``I(T labelers of error eps) >= I(one expert of error expert_eps)``
    (I increases with ``T``; binary search over ``1..max_labelers``). Raises when
    ``max_labelers`` do not suffice (e.g. ``eps = 1/2``)."""
    _check(pi1, expert_eps, 1)
    target = symmetric_mutual_information(pi1, 1, expert_eps)
    if symmetric_mutual_information(pi1, max_labelers, eps) < target:
        raise ValueError(f"{max_labelers} labelers of error {eps} do not match an expert of "
                         f"error {expert_eps}")
    lo, hi = 1, max_labelers
    while lo < hi:
        mid = (lo + hi) // 2
        if symmetric_mutual_information(pi1, mid, eps) >= target:
            hi = mid
        else:
            lo = mid + 1
    return lo
