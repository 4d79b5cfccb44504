"""Log-space numerics shared by the samplers: Gamma and Dirichlet draws on the log scale,
log-sigmoids, and compiled sums of ``log(1 + exp(-x))``.

**Draws on the log scale.** ``log G`` for ``G ~ Gamma(a, 1)`` is drawn as ``log G`` directly for
``a >= 1`` and as ``log G' + log(U) / a`` with ``G' ~ Gamma(a + 1)``, ``U ~ U(0, 1]`` for ``a < 1``
(Marsaglia–Tsang's boost), exact and finite even for tiny shapes (``alpha = 0.01`` in PrIRN,
``1 / K`` in Plackett–Luce), where ``Gamma(a)`` itself underflows to 0 often enough to break
a log-ratio transform. A Dirichlet draw is ``softmax(log G)``. :func:`log_gamma_draws` is the
vectorised numpy version, :func:`log_gamma_draw` the scalar one for numba kernels; both draw
from a ``numpy.random.Generator`` (numba compiles its methods: the same stream in Python and
in a kernel).

**Log-sigmoids.** ``log sigmoid(s) = min(s, 0) - log(1 + exp(-|s|))``: :func:`log_sigmoid` for
numba kernels (numpy callers use ``scipy.special.log_expit``). GLAD's log-likelihood is a
sum of ``log sigmoid(s_k)`` over labels, ``s_k`` the product of an annotator's ability and an
item's inverse difficulty (:mod:`plausible.models.glad`,
:mod:`plausible.inference.step_methods.difficulty_slice`); the linear part is
``min(w t, 0) = t min(w, 0)`` for ``t >= 0``, and the rest needs one ``exp`` per term and one
``log`` per run of terms: ``sum_k log(1 + e_k) = log prod_k (1 + e_k)``, each factor in
``(1, 2]``, so a product of up to 1000 factors stays below ``2**1000`` (longer runs are cut
into such chunks). :func:`sum_log1p_exp` is the sum over a run ``|w_k| t``.

numba compiles ``math.exp`` to a scalar libm call, which keeps the loop from being
vectorised; :func:`exp_nonpositive` is ``exp`` on ``x <= 0`` written with operations LLVM
vectorises: Cody-Waite reduction ``x = n log 2 + r``, ``n = floor(x / log 2 + 1/2)``,
``|r| <= log(2) / 2``, the degree-13 Taylor polynomial of ``exp(r)`` (truncation error
``< 4e-18``) and ``2**n`` assembled in the exponent bits. Its relative error is within
2.3e-16 of ``numpy.exp`` for ``x >= -708``; below that it returns ``exp(-708) ~ 3e-308``
instead of a subnormal or 0, an absolute error that vanishes in ``1 + e``.

**Same seed, same draws on every machine.** Nothing here is compiled with fast-math: LLVM
may then reorder a reduction to the machine's vector width (4 lanes with AVX2, 8 with
AVX-512) or fuse multiply-adds, and the rounding, hence a slice sampler's path, would depend
on the CPU. :func:`sum_log1p_exp` instead computes the factors in one map loop (which LLVM
vectorises without reassociating anything) and multiplies them into :data:`LANES` partial
products in a fixed order.
"""

import math

import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

_SHIFT = 6755399441055744.0  # 1.5 * 2**52: an integer n < 2**51 added to it sits in the low bits
_LOG2E = 1.4426950408889634
_LN2_HI = 0.6931471803691238  # log 2 split so that n * _LN2_HI is exact
_LN2_LO = 1.9082149292705877e-10
_CHUNK = 1000
LANES = 8
"""Partial products of :func:`sum_log1p_exp`: term ``begin + j`` of a chunk goes to lane
``j % LANES`` (the tail after the last full group of lanes to lane 0); the lanes are
multiplied together in a fixed tree before the one ``log``."""


@intrinsic
def _bits_of(typingctx, x):
    """The IEEE-754 bits of a float64 as int64 (a bitcast, no conversion)."""
    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.IntType(64))
    return types.int64(types.float64), codegen


@intrinsic
def _float_of(typingctx, bits):
    """The float64 with the given IEEE-754 bits (inverse of :func:`_bits_of`)."""
    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.DoubleType())
    return types.float64(types.int64), codegen


@numba.njit(cache=True, inline="always")
def exp_nonpositive(x):
    """``exp(x)`` for ``x <= 0`` (see module), vectorisable."""
    x = max(x, -708.0)
    n = math.floor(x * _LOG2E + 0.5)
    r = x - n * _LN2_HI - n * _LN2_LO
    p = 1.0 / 6227020800.0
    p = p * r + 1.0 / 479001600.0
    p = p * r + 1.0 / 39916800.0
    p = p * r + 1.0 / 3628800.0
    p = p * r + 1.0 / 362880.0
    p = p * r + 1.0 / 40320.0
    p = p * r + 1.0 / 5040.0
    p = p * r + 1.0 / 720.0
    p = p * r + 1.0 / 120.0
    p = p * r + 1.0 / 24.0
    p = p * r + 1.0 / 6.0
    p = p * r + 0.5
    p = p * r + 1.0
    p = p * r + 1.0
    # 2**n: n + 1.5 * 2**52 (exact) holds the integer n in its low bits; move n + 1023 into
    # the exponent. No step relies on rounding, so fast-math reassociation cannot change it.
    return p * _float_of((_bits_of(n + _SHIFT) - _bits_of(_SHIFT) + 1023) << 52)


@numba.njit(cache=True)
def sum_log1p_exp(magnitude, start, stop, t, factors):
    """``sum_{k = start}^{stop - 1} log(1 + exp(-magnitude_k t))`` for ``magnitude_k >= 0``,
    ``t >= 0`` (see the module docstring). ``factors`` is scratch, at least as long as
    ``magnitude``: the factors ``1 + exp(-magnitude_k t)`` are written to
    ``factors[start:stop]`` in one vectorised loop, then multiplied in :data:`LANES` fixed
    partial products, one ``log`` per chunk of up to 1000 factors."""
    for k in range(start, stop):
        factors[k] = 1.0 + exp_nonpositive(-magnitude[k] * t)
    total = 0.0
    for begin in range(start, stop, _CHUNK):
        end = min(begin + _CHUNK, stop)
        full = begin + (end - begin) // LANES * LANES
        p0 = p1 = p2 = p3 = p4 = p5 = p6 = p7 = 1.0
        for k in range(begin, full, LANES):
            p0 *= factors[k]
            p1 *= factors[k + 1]
            p2 *= factors[k + 2]
            p3 *= factors[k + 3]
            p4 *= factors[k + 4]
            p5 *= factors[k + 5]
            p6 *= factors[k + 6]
            p7 *= factors[k + 7]
        for k in range(full, end):
            p0 *= factors[k]
        total += math.log((p0 * p1) * (p2 * p3) * ((p4 * p5) * (p6 * p7)))
    return total


@numba.njit(cache=True, inline="always")
def log_sigmoid(z):
    """``log(1 / (1 + exp(-z)))`` for a scalar ``z``, without overflow."""
    return min(z, 0.0) - math.log1p(math.exp(-abs(z)))


@numba.njit(cache=True, inline="always")
def log_gamma_draw(rng, shape):
    """``log G``, ``G ~ Gamma(shape, 1)`` for a scalar ``shape > 0``, finite for tiny shapes
    (see the module docstring); draws from the ``numpy.random.Generator`` ``rng``."""
    if shape < 1.0:
        return math.log(rng.standard_gamma(shape + 1.0)) + math.log(1.0 - rng.random()) / shape
    return math.log(rng.standard_gamma(shape))


def log_gamma_draws(rng: np.random.Generator, shape) -> np.ndarray:
    """``log G`` for ``G ~ Gamma(shape, 1)``, elementwise over the array ``shape`` (> 0),
    finite for any shape (see the module docstring)."""
    shape = np.asarray(shape, dtype=np.float64)
    small = shape < 1.0
    if not small.any():
        return np.log(rng.standard_gamma(shape))
    log_draws = np.log(rng.standard_gamma(np.where(small, shape + 1.0, shape)))
    log_draws[small] += np.log1p(-rng.random(int(small.sum()))) / shape[small]
    return log_draws


def log_beta_draws(rng: np.random.Generator, a, b) -> tuple[np.ndarray, np.ndarray]:
    """``(log p, log(1 - p))`` for ``p ~ Beta(a, b)`` elementwise, from two Gamma draws in log
    space: finite for any ``a, b > 0``, where a Beta draw itself can round to 0 or 1."""
    g1, g2 = log_gamma_draws(rng, a), log_gamma_draws(rng, b)
    total = np.logaddexp(g1, g2)
    return g1 - total, g2 - total


def logsumexp_last(values: np.ndarray) -> np.ndarray:
    """``log sum_k exp(values[..., k])`` over the last axis, kept as a length-1 axis, for
    finite ``values``: the arithmetic of ``scipy.special.logsumexp`` (the maxima taken out of
    the sum, ``log1p(rest / count) + log(count) + max``), so results are bit-identical, without
    its array-API dispatch, which costs ~50 µs a call and dominated the small per-sweep draws
    of the Gibbs samplers."""
    top = values.max(axis=-1, keepdims=True)
    at_top = values == top
    count = at_top.sum(axis=-1, keepdims=True, dtype=values.dtype)
    rest = np.exp(np.where(at_top, -np.inf, values) - top).sum(axis=-1, keepdims=True) / count
    return np.log1p(rest) + np.log(count) + top


def log_dirichlet_draws(rng: np.random.Generator, concentration) -> np.ndarray:
    """``log pi`` for ``pi ~ Dirichlet(concentration)`` over the last axis, normalised in log
    space (``log G - logsumexp(log G)``), finite for tiny concentrations."""
    log_weights = log_gamma_draws(rng, concentration)
    return log_weights - logsumexp_last(log_weights)




@numba.njit(cache=True, inline="always")
def tempered_logsumexp(row, log_prior, gamma):
    """``log sum_c exp(log_prior[c] + gamma row[c])`` for class log-likelihoods ``row``
    ``(class,)``, overwriting ``row`` with the terms; ``-inf`` when every term is."""
    top = -np.inf
    for c in range(row.size):
        row[c] = log_prior[c] + gamma * row[c]
        top = max(top, row[c])
    if not np.isfinite(top):
        return top
    total = 0.0
    for c in range(row.size):
        total += np.exp(row[c] - top)
    return top + np.log(total)


__all__ = [
    "exp_nonpositive",
    "log_beta_draws",
    "log_dirichlet_draws",
    "log_gamma_draw",
    "log_gamma_draws",
    "log_sigmoid",
    "logsumexp_last",
    "sum_log1p_exp",
    "tempered_logsumexp",
]
