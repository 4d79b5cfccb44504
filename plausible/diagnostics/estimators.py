"""MCMC estimators, vectorised: rank-normalised split R-hat, bulk, tail and mean ESS, MCSE.

The estimators are the ones ArviZ 1.x computes (``arviz_stats``): rank-normalised split
R-hat, bulk ESS, tail ESS and the Monte Carlo standard error of the mean.  ArviZ evaluates
them with a Python loop over every scalar element of a variable, which takes minutes for a
``(chain, draw, item, class)`` plausibility array with 10^5 elements.  The functions
:func:`rhat`, :func:`ess_bulk`, :func:`ess_tail`, :func:`ess_mean`, :func:`mcse_mean` and
:func:`convergence_diagnostics` below compute the *same* estimators with array operations
over many elements at once, in chunks of elements so that the temporaries stay bounded
whatever the size of the trace.  They agree with ArviZ to 1e-12 relative (tested; in
practice to about 1e-15).  :mod:`plausible.diagnostics.convergence` turns them into the
per-variable report.

Notation used in the docstrings: ``draws`` has shape ``(C, N, *element_shape)``; for one
element, ``x[c, i]`` is draw ``i`` of chain ``c``.

*Split chains.*  With ``h = N // 2`` every chain is cut into its first ``h`` and its last
``h`` draws (the middle draw is dropped when ``N`` is odd), giving ``2C`` chains of
length ``h``: the first halves of all chains, then the second halves.

*Rank normalisation.*  All ``M = 2Ch`` split values are ranked jointly (ties get their
average rank ``r``) and mapped to normal scores with Blom's offset ``c = 3/8``:
``z = Phi^-1((r - c) / (M - 2c + 1))``.

*Folding.*  ``|x - median(x)|`` with the median of the ``M`` split values.

*Split R-hat* of ``m`` chains of length ``n`` with chain means ``mu_j`` and chain
variances ``s_j^2`` (``ddof=1``): ``B = n var(mu_j; ddof=1)``, ``W = mean_j s_j^2``,
``R = sqrt((B / W + n - 1) / n)``.

*MCSE of the mean*: ``sd / sqrt(ESS_mean)`` with ``sd`` the standard deviation of all
draws (``ddof=1``) and ``ESS_mean`` the ESS (below) of the split chains of the raw draws
(no rank normalisation); ``ESS_mean = 2Ch`` for an element whose split draws span less
than the float resolution (1e-15).

*ESS* of ``m`` chains of length ``n`` (Geyer 1992; Vehtari et al. 2021, eq. 10-11):
with ``gamma_t`` the mean over chains of the biased lag-``t`` autocovariances (sums
divided by ``n``), ``W = gamma_0 n / (n - 1)`` and
``var+ = W (n - 1) / n + var(mu_j; ddof=1)``, the autocorrelations are
``rho_t = 1 - (W - gamma_t) / var+`` (``rho_0 = 1``).  The pair sums
``P_k = rho_2k + rho_2k+1`` are scanned up to the first non-positive one, ``K`` (initial
positive sequence; at most ``(n - 3) // 2`` pairs are scanned), and the pairs before it
are made monotone by a running minimum (initial monotone sequence);
``tau = -1 + 2 sum_{k<K} P_k + rho_2K``, where the last term counts when it is positive
or when ``K >= 1`` and ``P_K >= 0``; ``tau`` is floored at ``1 / log10(mn)`` and
``ESS = mn / tau``.  An element whose values span less than the float resolution has
``ESS = mn``.  ArviZ takes all ``gamma_t`` from an FFT; here the first lags are direct
dot products and only elements whose initial positive sequence runs past them get the
FFT, which gives the same numbers up to rounding (about 1e-15 relative).

Agreement with ArviZ: rounding-level (about 1e-15 relative) for float64, float32 and
integer draws, including ties (ranks are tie-averaged), ``NaN`` and constant elements.
As in ArviZ, an element with any NaN draw gets NaN diagnostics, R-hat needs at least two
chains and every diagnostic at least four draws per chain.
"""

import os
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from typing import NamedTuple

import arviz as az
import numpy as np
from scipy.fft import next_fast_len
from scipy.special import ndtri

__all__ = [
    "ConvergenceDiagnostics",
    "convergence_diagnostics",
    "ess_bulk",
    "ess_mean",
    "ess_tail",
    "mcse_mean",
    "rhat",
]

#: Default bound on the number of draw values (``chain * draw * elements``) processed at
#: once by one thread; a chunk needs about ten temporaries of this size (160 MB in all).
CHUNK_VALUES = 2**21

#: Default upper bound on the number of threads (each holds one chunk's temporaries).
MAX_WORKERS = 4

_BLOM = 3 / 8
_MIN_DRAWS = 4



class ConvergenceDiagnostics(NamedTuple):
    """R-hat, bulk ESS and tail ESS of every element (arrays of ``element_shape``)."""

    rhat: np.ndarray
    ess_bulk: np.ndarray
    ess_tail: np.ndarray


# --------------------------------------------------------------------------------------
# Public array functions
# --------------------------------------------------------------------------------------


def rhat(draws, *, chunk_size: int | None = None, workers: int | None = None) -> np.ndarray:
    """Rank-normalised split R-hat of every element (Vehtari et al. 2021).

    ``max(R_bulk, R_tail)`` where ``R_bulk`` is the split R-hat of the rank-normalised
    split chains and ``R_tail`` the one of the rank-normalised folded split chains
    ``|x - median|`` (see the module docstring).  Same estimator as ``arviz.rhat``
    (``method="rank"``).

    Parameters
    ----------
    draws : array_like, shape ``(chain, draw, *element_shape)``
    chunk_size : int, optional
        Number of elements processed at once; by default as many as fit in
        :data:`CHUNK_VALUES` draw values.  Results do not depend on it.
    workers : int, optional
        Number of threads, each working on one chunk at a time; by default
        ``min(os.cpu_count(), MAX_WORKERS)``.  Results do not depend on it.

    Returns
    -------
    ndarray of float64, shape ``element_shape``
        NaN for elements with a NaN draw, with fewer than 2 chains or 4 draws, and for
        constant elements (zero within-chain variance).
    """
    return _diagnose(draws, ("rhat",), None, chunk_size, workers)["rhat"]


def ess_bulk(
    draws, *, chunk_size: int | None = None, workers: int | None = None
) -> np.ndarray:
    """Bulk effective sample size of every element (Vehtari et al. 2021).

    ESS (Geyer's initial monotone sequence, see the module docstring) of the
    rank-normalised split chains.  Same estimator as ``arviz.ess(method="bulk")``.

    Parameters
    ----------
    draws : array_like, shape ``(chain, draw, *element_shape)``
    chunk_size, workers : int, optional
        Chunking and threading (see :func:`rhat`).

    Returns
    -------
    ndarray of float64, shape ``element_shape``
        ``chain * 2 * (draw // 2)`` for constant elements; NaN for elements with a NaN
        draw or with fewer than 4 draws.
    """
    return _diagnose(draws, ("ess_bulk",), None, chunk_size, workers)["ess_bulk"]


def ess_tail(
    draws,
    prob: float | None = None,
    *,
    chunk_size: int | None = None,
    workers: int | None = None,
) -> np.ndarray:
    """Tail effective sample size of every element (Vehtari et al. 2021).

    ``min(ESS(I[x <= q_lo]), ESS(I[x <= q_hi]))``: the ESS of the indicators of the
    draws below the lower and the upper quantile, computed on split chains.  The
    quantiles are taken over all draws of the element with NumPy's default ("linear",
    Hyndman & Fan type 7) method, at ``sorted((prob, 1 - prob))``.  Same estimator as
    ``arviz.ess(method="tail", prob=prob)``.

    ``draws``, ``chunk_size``, ``workers`` and the result as in :func:`ess_bulk`.

    Parameters
    ----------
    draws : array_like, shape ``(chain, draw, *element_shape)``
    prob : float, optional
        Defaults to ArviZ's ``rcParams["stats.ci_prob"]`` (0.89 unless changed, i.e. the
        0.11 and 0.89 quantiles), which is what ``arviz.ess(method="tail")`` uses;
        ``prob=0.95`` gives the 5% / 95% quantiles of Vehtari et al. (2021).
    """
    return _diagnose(draws, ("ess_tail",), prob, chunk_size, workers)["ess_tail"]


def mcse_mean(
    draws, *, chunk_size: int | None = None, workers: int | None = None
) -> np.ndarray:
    """Monte Carlo standard error of the posterior mean of every element.

    ``sd / sqrt(ESS_mean)`` (see the module docstring).  Same estimator as
    ``arviz.mcse(method="mean")``. ``draws``, ``chunk_size``, ``workers`` as in
    :func:`ess_bulk`; float64 ``element_shape``, 0 for constant elements, NaN for elements
    with a NaN draw or with fewer than 4 draws.
    """
    return _diagnose(draws, ("mcse_mean",), None, chunk_size, workers)["mcse_mean"]


def ess_mean(
    draws, *, chunk_size: int | None = None, workers: int | None = None
) -> np.ndarray:
    """Effective sample size of the mean of every element: the ESS (module docstring) of the
    split chains of the raw draws, no rank normalisation.  Same estimator as
    ``arviz.ess(method="mean")``, whose mean over a posterior's elements is the relative
    efficiency PSIS-LOO uses. ``draws``, ``chunk_size``, ``workers`` as in
    :func:`ess_bulk`; float64 ``element_shape``, ``chain * 2 * (draw // 2)`` for constant
    elements, NaN for elements with a NaN draw or with fewer than 4 draws.
    """
    return _diagnose(draws, ("ess_mean",), None, chunk_size, workers)["ess_mean"]


def convergence_diagnostics(
    draws,
    *,
    prob: float | None = None,
    chunk_size: int | None = None,
    workers: int | None = None,
) -> ConvergenceDiagnostics:
    """:func:`rhat`, :func:`ess_bulk` and :func:`ess_tail` in one pass over ``draws``.

    Cheaper than the three calls because the sort of the split chains (the costly part)
    is shared by R-hat, bulk ESS and the tail quantiles.  ``draws`` has shape
    ``(chain, draw, *element_shape)``; each field of the result has ``element_shape``.
    Peak extra memory is about ``workers * 10 * CHUNK_VALUES * 8`` bytes on top of
    ``draws`` (which is never copied whole).
    """
    return ConvergenceDiagnostics(
        **_diagnose(draws, ConvergenceDiagnostics._fields, prob, chunk_size, workers))


# --------------------------------------------------------------------------------------
# Implementation
# --------------------------------------------------------------------------------------

#: Autocovariance lags computed directly (dot products), in stages, before falling back
#: to the FFT for the elements whose initial positive sequence is longer.
_LAG_STAGES = (6, 16)
#: Tile edge of the blocked transposition that copies a chunk out of ``draws``.
_TILE = 256


def _diagnose(draws, want, prob, chunk_size, workers=None) -> dict[str, np.ndarray]:
    """The estimators named in ``want``, computed chunk by chunk of elements: a dict from
    each name to an array of ``element_shape``."""
    draws = np.asarray(draws)
    if draws.ndim < 2:
        raise ValueError(
            f"draws must have shape (chain, draw, *element_shape), got shape {draws.shape}"
        )
    n_chain, n_draw = draws.shape[:2]
    element_shape = draws.shape[2:]
    n_elements = int(np.prod(element_shape, dtype=np.int64))
    if prob is None:
        prob = az.rcParams["stats.ci_prob"]
    probs = sorted((prob, 1 - prob))  # as arviz_stats' _ess_tail
    if chunk_size is None:
        chunk_size = max(1, CHUNK_VALUES // max(1, n_chain * n_draw))
    chunk_size = int(chunk_size)
    if chunk_size < 1:
        raise ValueError(f"chunk_size must be a positive integer, got {chunk_size}")

    out = {key: np.full(n_elements, np.nan) for key in want}
    if n_elements and n_chain and n_draw >= _MIN_DRAWS:
        try:  # a view when the element axes can be flattened without copying
            flat = np.reshape(draws, (n_chain, n_draw, n_elements), copy=False)
        except (ValueError, TypeError):
            flat = None
        # all draws in their own order: the tail quantiles of an odd number of draws (the
        # split chains miss the middle one) and the sd of the MCSE (summed in arviz's order)
        need_full = (n_draw % 2 == 1 and "ess_tail" in want) or "mcse_mean" in want

        def run(start):
            stop = min(start + chunk_size, n_elements)
            if flat is not None:
                part = flat[:, :, start:stop]
            else:  # gather only this chunk's elements
                index = np.unravel_index(np.arange(start, stop), element_shape)
                part = draws[(slice(None), slice(None), *index)]
            dtype = _working_dtype(draws.dtype)
            split = _transpose_chunk(part, dtype, split=True)
            full = _transpose_chunk(part, dtype, split=False) if need_full else None
            for key, values in _chunk_diagnostics(split, full, want, probs).items():
                out[key][start:stop] = values

        starts = range(0, n_elements, chunk_size)
        workers = _n_workers(workers, len(starts))
        if workers == 1:
            for start in starts:
                run(start)
        else:  # numpy releases the GIL in the heavy loops; chunks write disjoint slices
            with ThreadPoolExecutor(max_workers=workers) as pool:
                for _ in pool.map(run, starts):
                    pass
    return {key: values.reshape(element_shape) for key, values in out.items()}


def _n_workers(workers, n_chunks):
    if workers is None:
        workers = min(os.cpu_count() or 1, MAX_WORKERS)
    workers = int(workers)
    if workers < 1:
        raise ValueError(f"workers must be a positive integer, got {workers}")
    return max(1, min(workers, n_chunks))


def _working_dtype(dtype):
    # Floating data keeps its precision (ArviZ folds and takes quantiles in it); integer
    # and boolean draws are handled as float64, which gives the same ranks and quantiles.
    return dtype if np.issubdtype(dtype, np.floating) else np.dtype(np.float64)


def _transpose_chunk(part, dtype, *, split):
    """Copy ``part`` (``(chain, draw, k)``, elements last) to elements-first order.

    A blocked transposition: copying element-major out of an element-minor array one
    value at a time is several times slower than moving square tiles.
    """
    n_chain, n_draw, k = part.shape
    if split:
        length = n_draw // 2
        out = np.empty((k, 2 * n_chain, length), dtype)
        pieces = [(c, 0, c) for c in range(n_chain)]
        pieces += [(c, n_draw - length, n_chain + c) for c in range(n_chain)]
    else:
        length = n_draw
        out = np.empty((k, n_chain, n_draw), dtype)
        pieces = [(c, 0, c) for c in range(n_chain)]
    for chain, first, dest in pieces:
        source = part[chain, first : first + length]  # (length, k)
        target = out[:, dest]  # (k, length)
        for j in range(0, length, _TILE):
            for i in range(0, k, _TILE):
                target[i : i + _TILE, j : j + _TILE] = source[j : j + _TILE, i : i + _TILE].T
    return out


def _chunk_diagnostics(split, full, want, probs):
    """Diagnostics of the ``k`` elements of ``split`` (``(k, 2 * chain, draw // 2)``).

    ``full`` holds all draws (``(k, chain, draw)``) when the number of draws is odd and
    the tail ESS is wanted, or when the MCSE is wanted, else ``None``.  Returns a dict from the names in
    ``want`` to float64 arrays of shape ``(k,)``.
    """
    k, n_split, half = split.shape
    size = n_split * half
    data = split if full is None else full
    invalid = None
    if np.issubdtype(split.dtype, np.inexact):
        invalid = np.isnan(data).any(axis=(1, 2))
        if invalid.any():
            split[invalid] = 0  # keep the arithmetic quiet; these rows become NaN below
            if full is not None:
                full[invalid] = 0
        else:
            invalid = None
    flat = split.reshape(k, size)
    results = {}
    if {"rhat", "ess_bulk", "ess_tail"}.isdisjoint(want):
        ordered = order = None
    else:  # sort every element's split draws; `order` holds flat indices into `flat`
        order = np.argsort(flat, axis=1)
        order += (np.arange(k) * size)[:, None]
        ordered = np.take(flat, order)

    if "rhat" in want or "ess_bulk" in want:
        z_bulk = _scatter(_sorted_normal_scores(ordered), order).reshape(k, n_split, half)
        z_mean = _centre(z_bulk)  # z_bulk now holds z minus its chain means
        if "rhat" in want:
            rhat_bulk = _split_rhat(z_bulk, z_mean) if n_split >= 4 else None  # two chains
        if "ess_bulk" in want:
            # z is constant exactly when all the element's draws are tied
            all_tied = ordered[:, 0] == ordered[:, -1]
            results["ess_bulk"] = _ess(z_bulk, z_mean, all_tied)
        del z_bulk
        if "rhat" in want:
            if rhat_bulk is None:
                results["rhat"] = np.full(k, np.nan)
            else:
                # Folded draws |x - median| in the order of `ordered`: values decrease up
                # to the median and increase after it, two sorted runs that a stable
                # (merge) sort orders in about linear time.
                median = (ordered[:, size // 2 - 1] + ordered[:, size // 2]) / 2
                folded = np.subtract(ordered, median[:, None])
                np.abs(folded, out=folded)
                order_folded = np.argsort(folded, axis=1, kind="stable")
                order_folded += (np.arange(k) * size)[:, None]
                folded = np.take(folded, order_folded)
                positions = np.take(order, order_folded)
                del order_folded
                z_tail = _scatter(_sorted_normal_scores(folded), positions)
                del folded, positions
                z_tail = z_tail.reshape(k, n_split, half)
                rhat_tail = _split_rhat(z_tail, _centre(z_tail))
                # Python's max(bulk, tail) as in arviz: bulk unless tail is larger.
                results["rhat"] = np.where(rhat_tail > rhat_bulk, rhat_tail, rhat_bulk)
    del order

    if "mcse_mean" in want or "ess_mean" in want:
        raw = split.astype(np.float64)
        # arviz's _ess: split draws spanning less than the float resolution are constant
        span = flat.max(axis=1) - flat.min(axis=1)
        constant = span.astype(np.float64) < np.finfo(float).resolution
        ess_mean = _ess(raw, _centre(raw), constant)
        if "ess_mean" in want:
            results["ess_mean"] = ess_mean
        if "mcse_mean" in want:
            # the sd in the draws' own precision, as arviz (np.std of float32 draws is float32)
            sd = np.std(data.reshape(k, -1), axis=1, ddof=1).astype(np.float64)
            results["mcse_mean"] = sd / np.sqrt(ess_mean)

    if "ess_tail" in want:
        quantiles = _quantiles(ordered, full, probs)
        indicator = np.empty(split.shape)
        ess_q = []
        for q in quantiles:
            np.less_equal(split, q[:, None, None], out=indicator, casting="unsafe")
            # the indicator is constant when q is beyond the smallest or largest draw
            constant = (ordered[:, -1] <= q) | (ordered[:, 0] > q)
            ess_q.append(_ess(indicator, _centre(indicator), constant))
        # Python's min(low, high) as in arviz: low unless high is smaller.
        results["ess_tail"] = np.where(ess_q[1] < ess_q[0], ess_q[1], ess_q[0])

    if invalid is not None:
        for values in results.values():
            values[invalid] = np.nan
    return results


@lru_cache(maxsize=16)
def _normal_score_table(size: int, dtype: np.dtype) -> np.ndarray:
    """Normal scores of the average ranks ``1, 1.5, 2, ..., size`` (index ``2 (r - 1)``).

    Computed in ``dtype``, the precision ``scipy.stats.rankdata`` gives the ranks of
    draws of that dtype in arviz_stats (float32 for float32 draws), then widened.
    """
    ranks = (np.arange(2 * size - 1) / 2 + 1).astype(dtype)
    table = ndtri((ranks - _BLOM) / (size - 2 * _BLOM + 1)).astype(np.float64)
    table.flags.writeable = False
    return table


def _sorted_normal_scores(ordered):
    """Normal scores of the rows of ``ordered`` (each sorted ascending), tie-averaged.

    The value at sorted position ``p`` (0-based) has rank ``p + 1`` unless it is tied;
    a run of ties over positions ``a..b`` shares the average rank ``(a + b) / 2 + 1``,
    i.e. the table entry ``a + b``.
    """
    k, size = ordered.shape
    table = _normal_score_table(size, ordered.dtype)
    scores = np.empty((k, size))
    scores[:] = table[::2]
    tied = np.flatnonzero(ordered[:, 1:] == ordered[:, :-1])  # positions p with x_p == x_p+1
    if tied.size:
        row, p = np.divmod(tied, size - 1)
        pos = row * size + p  # flat position in `scores`; runs are consecutive in pos
        new_run = np.flatnonzero(np.diff(pos) != 1) + 1
        first = np.concatenate(([0], new_run))
        last = np.concatenate((new_run - 1, [pos.size - 1]))
        start = p[first]
        end = p[last] + 1  # the run of ties ends one past the last equal pair
        length = end - start + 1
        offsets = np.arange(length.sum()) - np.repeat(np.cumsum(length) - length, length)
        target = np.repeat(row[first] * size + start, length) + offsets
        scores.reshape(-1)[target] = np.repeat(table[start + end], length)
    return scores


def _scatter(values, flat_index):
    """``out`` with ``out.flat[flat_index] = values`` (inverse of ``np.take``)."""
    out = np.empty(values.shape)
    out.reshape(-1)[flat_index.reshape(-1)] = values.reshape(-1)
    return out


def _quantiles(ordered, full, probs):
    """The ``probs`` quantiles of every element as ``numpy.quantile`` (default "linear"
    method) gives them on all the element's draws: a list of ``(k,)`` arrays.

    ``ordered`` holds the element's split draws sorted; unless ``full`` is given (odd
    number of draws) those are all the draws.
    """
    if full is not None or ordered.dtype != np.float64:
        # Split chains miss the middle draws, or NumPy's weak-scalar dtype rules apply:
        # use np.quantile itself, as arviz does.
        values = ordered if full is None else full.reshape(full.shape[0], -1)
        return [np.quantile(values, q, axis=1) for q in probs]
    # Interpolate exactly as numpy.quantile's "linear" method: virtual index (n - 1) q
    # between the neighbouring order statistics, with numpy's two-sided lerp.
    n = ordered.shape[1]
    result = []
    for q in probs:
        virtual = (n - 1) * np.asarray(q, dtype=np.float64)
        if virtual >= n - 1:
            lo = hi = n - 1
            gamma = np.float64(0.0)
        elif virtual < 0:
            lo = hi = 0
            gamma = np.float64(0.0)
        else:
            lo = int(np.floor(virtual))
            hi = lo + 1
            gamma = virtual - lo
        a, b = ordered[:, lo], ordered[:, hi]
        diff = b - a
        value = a + diff * gamma
        if gamma >= 0.5:
            value = b - diff * (1 - gamma)
        result.append(value)
    return result


def _centre(y):
    """Subtract from ``y`` (``(k, chains, n)``, float64) its chain means, in place;
    return the chain means (``(k, chains)``)."""
    chain_mean = y.mean(axis=2)
    y -= chain_mean[:, :, None]
    return chain_mean


def _split_rhat(centred, chain_mean):
    """Split R-hat of each row from its centred chains (``(k, chains, n)``, chains
    already split) and their means, as arviz_stats' ``_rhat``."""
    n = centred.shape[2]
    chain_var = np.vecdot(centred, centred) / (n - 1)
    between = n * np.var(chain_mean, axis=1, ddof=1)
    within = np.mean(chain_var, axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.sqrt((between / within + n - 1) / n)


def _ess(centred, chain_mean, constant):
    """ESS of each row, as arviz_stats' ``_ess``, from its centred chains
    (``(k, chains, n)``, float64) and their means; ``constant`` flags the rows whose
    values span less than the float resolution (ESS = chains * n).

    The autocovariances of the first lags are computed directly, in stages
    (:data:`_LAG_STAGES`), each for the rows whose initial positive sequence has not
    ended yet; the rows still running after the last stage get the full FFT
    autocovariance (arviz_stats always uses the FFT; the sums agree to rounding).
    """
    k, n_chain, n = centred.shape
    total = n_chain * n
    between = np.var(chain_mean, axis=1, ddof=1) if n_chain > 1 else np.zeros(k)

    j_max = max((n - 3) // 2, 0)  # last pair arviz's initial positive loop may reach
    tau = np.empty(k)
    rows = np.arange(k)  # rows whose sequence is still running
    acov = np.empty((k, 0))
    for stage in _LAG_STAGES:
        n_lags = min(stage, 2 * j_max + 2)
        done = acov.shape[1]
        acov = np.concatenate((acov, np.empty((rows.size, n_lags - done))), axis=1)
        for lag in range(done, n_lags):
            acov[:, lag] = np.vecdot(centred[:, :, : n - lag], centred[:, :, lag:]).mean(axis=1)
            acov[:, lag] /= n
        j_stage = n_lags // 2 - 1
        stage_tau, found = _geyer_tau(_autocorrelation(acov, between, n), j_stage)
        final = found | (j_stage >= j_max)
        tau[rows[final]] = stage_tau[final]
        if final.all():
            rows = rows[:0]
            break
        running = ~final
        rows, acov, between = rows[running], acov[running], between[running]
        centred = centred[running]
    if rows.size:
        acov = _autocovariance_fft(centred)
        tau[rows], _ = _geyer_tau(_autocorrelation(acov, between, n), j_max)

    tau = np.maximum(tau, 1 / np.log10(total))
    ess = total / tau
    ess[constant] = total
    return ess


def _autocovariance_fft(centred):
    """Mean over chains of the biased autocovariances, all lags (``(k, n)``)."""
    n = centred.shape[2]
    m = next_fast_len(2 * n, real=True)
    spectrum = np.fft.rfft(centred, n=m, axis=2)
    power = spectrum.real**2
    power += spectrum.imag**2
    del spectrum
    # The inverse transform is linear: average the chains' power spectra first.
    acov = np.fft.irfft(power.mean(axis=1), n=m, axis=1)[:, :n]
    acov /= n
    return acov


def _autocorrelation(acov, between, n):
    """``rho_t = 1 - (W - gamma_t) / var+`` from the chain-averaged autocovariances."""
    with np.errstate(divide="ignore", invalid="ignore"):
        mean_var = acov[:, 0] * n / (n - 1.0)
        var_plus = mean_var * (n - 1.0) / n + between
        rho = 1.0 - (mean_var[:, None] - acov) / var_plus[:, None]
    rho[:, 0] = 1.0  # exactly 1 in arviz
    return rho


def _geyer_tau(rho, j_max):
    """Integrated autocorrelation time from ``rho`` (``(k, >= 2 j_max + 2)``).

    Vectorised form of arviz_stats' two while loops.  The pair sums
    ``P_j = rho_2j + rho_2j+1`` (``j = 0..j_max``) are scanned up to the first one that is
    not positive, ``J`` (or ``j_max``); the pairs before it are made monotone by a running
    minimum; ``tau = -1 + 2 sum_{j<J} P_j + rho_2J``, the last term counted when
    ``rho_2J > 0`` or when pair ``J >= 1`` was kept (``P_J >= 0``).

    Returns ``tau`` (NaN where ``rho_1`` is NaN) and whether the scan stopped at a
    non-positive pair (``False``: it ran to ``j_max`` without finding one).
    """
    k = rho.shape[0]
    pairs = rho[:, 0 : 2 * j_max + 1 : 2] + rho[:, 1 : 2 * j_max + 2 : 2]
    stop = ~(pairs > 0)
    found = stop.any(axis=1)
    stop[:, j_max] = True
    last = np.argmax(stop, axis=1)
    monotone = np.minimum.accumulate(pairs, axis=1)
    kept = np.arange(j_max + 1) < last[:, None]
    pair_sum = np.where(kept, monotone, 0.0).sum(axis=1)
    rows = np.arange(k)
    last_even = rho[rows, 2 * last]
    keep_even = ((last >= 1) & (pairs[rows, last] >= 0)) | (last_even > 0)
    tau = -1.0 + 2.0 * pair_sum + np.where(keep_even, last_even, 0.0)
    tau[np.isnan(rho[:, 1])] = np.nan
    return tau, found
