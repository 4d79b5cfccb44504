"""Tight-loop PL Gibbs sampler in candidate space, for data sets where dense traces do not fit.

Runs the compiled exact sweep :func:`~plausible.inference.plackett_luce_kernel.sweep_kernel`
(the Gibbs step of :class:`~plausible.inference.plackett_luce_gibbs.PlackettLuceGibbs` plus
Metropolis moves with the exact likelihood) without the PyMC sampling loop: one kernel call per
sweep and chain, each chain run from its own seed in a thread of its own (the kernel releases
the GIL; chains never interact, so the draws do not depend on the number of threads), and the
``DataTree`` is built directly.

Storage (dims ``chain, draw, item, candidate``):

* ``posterior/plausibility_candidates`` ``(chain, draw, item, candidate)``: plausibility of
  each candidate class (ranked by some reader of the item); 0 on padding slots;
* ``posterior/pooled_mass`` ``(chain, draw, item)``: total plausibility of the
  ``n_pooled`` classes ranked by nobody (their worths are i.i.d. given the rest, so each
  carries ``pooled_mass / n_pooled`` in expectation; metrics spread it equally);
* ``constant_data/candidate_class`` ``(item, candidate)`` class index, ``-1`` on padding, and
  ``constant_data/n_pooled`` ``(item,)``.

Memory: ``chains * draws * items * (C + 1)`` values instead of ``... * K``. Every metric of
:mod:`plausible.metrics` accepts this trace directly (densified chunk by chunk through
:func:`plausible.metrics.candidates.lazy_dense`).

The Metropolis proposal scales are adapted per item during warm-up only
(:func:`adapt_proposals`, windows :data:`ADAPT_WINDOWS`) and frozen for the kept draws.
"""

from __future__ import annotations

import functools
import os
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import xarray as xr

from plausible.data.rankings import Rankings
from plausible.inference import plackett_luce_kernel as kernel
from plausible.models.plackett_luce_likelihood import layout


ADAPT_WINDOWS = (0.15, 0.3, 0.45, 0.6, 0.75, 0.9)
"""Fractions of the warm-up at which the Metropolis proposals are re-tuned (each from the
window since the previous one); frozen from ``0.9 * tune`` on (no adaptation when
``tune < 100``)."""


def initial_proposals(lay, gamma: int, shape: float, scale: float):
    """Initial Metropolis proposal scales: ``sigma (item, C + 1)`` with
    ``sigma_c = scale 2.38 / sqrt(d (a + gamma n_c))`` (the sd of ``log`` of the conjugate
    ``Gamma(a + gamma n_c)``; pool last with ``n_pooled a``; ``d`` the item's free
    coordinates) and ``shift_sd = scale (item, C)`` (one per number of kept top candidates)."""
    pooled = lay.n_pooled > 0
    step = scale * 2.38 / np.sqrt(np.maximum(lay.n_candidates + pooled, 1))
    sigma = np.concatenate([
        step[:, None] / np.sqrt(shape + gamma * lay.ranked_count),
        (step / np.sqrt(np.maximum(lay.n_pooled, 1) * shape))[:, None],
    ], axis=1)
    return sigma, np.full(lay.candidate_class.shape, float(scale))


def adapt_proposals(lay, sigma, shift_sd, factor, accepted, moments, n_sweeps: int,
                    rounds: int):
    """Warm-up adaptation, in place, from one window of ``n_sweeps`` sweeps; then resets
    ``accepted (item, 1 + 2 C)`` and ``moments (item, C + 1, 2)``.

    Move 1: ``sigma_c = f_i 2.38 / sqrt(d_i) sd_c``, ``sd_c`` the window's sd of the
    log-plausibility of coordinate ``c`` (clipped to ``[0.02, 10]``), the per-item factor
    ``f_i`` (``factor``) multiplied by ``exp(acc - 0.234)`` of the window's acceptance rate.
    Move 2: each ``shift_sd[:, j - 1]`` multiplied by ``exp(2 (acc_j - 0.44))`` of its own
    acceptance rate (where tried; clipped to ``[0.05, 20]``).
    """
    width = lay.max_candidates
    valid = np.concatenate([lay.candidate_class >= 0, (lay.n_pooled > 0)[:, None]], axis=1)
    mean = moments[..., 0] / n_sweeps
    sd = np.clip(np.sqrt(np.maximum(moments[..., 1] / n_sweeps - mean**2, 0.0)), 0.02, 10.0)
    factor *= np.exp(accepted[:, 0] / (n_sweeps * rounds) - 0.234)
    dim = np.maximum(valid.sum(axis=1), 1)
    sigma[:] = np.where(valid, (factor * 2.38 / np.sqrt(dim))[:, None] * sd, sigma)
    tries = accepted[:, 1 + width:]
    rate_j = accepted[:, 1:1 + width] / np.maximum(tries, 1.0)
    shift_sd *= np.where(tries > 0, np.exp(2.0 * (rate_j - 0.44)), 1.0)
    np.clip(shift_sd, 0.05, 20.0, out=shift_sd)
    accepted[:] = 0.0
    moments[:] = 0.0


def default_cores(chains: int) -> int:
    """``min(chains, CPUs this process may run on)`` (the affinity mask where the platform
    has one, else ``os.cpu_count()``): more threads than chains would idle, and the draws do
    not depend on the number of threads."""
    try:
        available = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        available = os.cpu_count() or 1
    return max(1, min(int(chains), available))


def _run_chain(rankings, lay, chain_seed, cand_out, pool_out, *, repetitions, draws, tune,
               shape, rate, dispersion, thin, metropolis_scale, rounds, stop=None):
    """Warm-up (with its own proposal adaptation) and sampling of one chain, in the calling
    thread: numba's generator of this thread is seeded first, so the draws depend on
    ``chain_seed`` only. Writes the kept draws into ``cand_out (1, draw, item, C)`` and
    ``pool_out (1, draw, item)``; returns early once ``stop`` (a ``threading.Event``) is
    set."""
    rng = np.random.default_rng(chain_seed)
    valid = lay.candidate_class >= 0
    pooled = lay.n_pooled > 0
    log_cand = np.where(valid, rng.uniform(-dispersion, dispersion, valid.shape), -np.inf)
    log_pool = np.where(pooled, rng.uniform(-dispersion, dispersion, pooled.shape), -np.inf)
    kernel.seed(int(rng.integers(2**32)))  # this thread's numba generator
    width = lay.max_candidates
    sigma, shift_sd = initial_proposals(lay, repetitions, shape, metropolis_scale)
    factor = np.ones(lay.n_items)
    accepted = np.zeros((lay.n_items, 1 + 2 * width))
    moments = np.zeros((lay.n_items, width + 1, 2))
    static = (np.r_[lay.reader_start, lay.n_readers_total], lay.block_offsets,
              lay.entry_offsets, lay.entry_candidate, lay.rank, lay.n_candidates,
              lay.n_pooled, lay.ranked_count, int(repetitions), rankings.n_classes, shape,
              float(rate), rounds, sigma, shift_sd, log_cand, log_pool, accepted, moments)
    window_ends = {int(f * tune) for f in ADAPT_WINDOWS} if rounds and tune >= 100 else set()
    window_start, window_end = 0, max(window_ends, default=0)
    for it in range(tune + draws * thin):
        if stop is not None and stop.is_set():
            return
        store = it >= tune and (it - tune + 1) % thin == 0
        kept = (it - tune) // thin if store else 0
        adapt = it < window_end
        # compiled with nogil: other chains' threads run meanwhile
        kernel.sweep_kernel(*static, cand_out[:, kept], pool_out[:, kept], store, adapt)
        if it + 1 in window_ends:
            adapt_proposals(lay, sigma, shift_sd, factor, accepted, moments,
                            it + 1 - window_start, rounds)
            window_start = it + 1


def sample_candidates(rankings: Rankings, *, repetitions: int = 1, draws: int = 1000,
                      tune: int = 500, chains: int = 4, seed: int | None = None,
                      shape: float | None = None, rate: float = 1.0, dispersion: float = 2.0,
                      thin: int = 1, metropolis_scale: float = 1.0, metropolis_rounds: int = 1,
                      cores: int | None = None, dtype=np.float32) -> xr.DataTree:
    """Sample the Bayesian PL posterior (``Gamma(shape, rate)`` worths, default
    ``shape = 1/K``) with readers repeated ``repetitions`` times; returns the candidate
    ``DataTree`` described in the module docstring.

    Chains start from log-worths jittered ``U(-dispersion, dispersion)``; ``tune`` sweeps are
    discarded, then every ``thin``-th sweep is kept (``draws`` kept in all). Each sweep is
    :func:`~plausible.inference.plackett_luce_kernel.sweep_kernel`: the exact Gibbs sweep
    (augmentation with each reader's ``gamma`` copies, conjugate worths, total-worth redraw)
    then ``metropolis_rounds`` rounds of Metropolis moves with the exact likelihood
    (``metropolis_scale = 0`` or ``metropolis_rounds = 0`` turns them off). State is float64,
    storage ``dtype``.

    Parallelism and seeding: every chain is run on its own (jitter, warm-up with its own
    proposal adaptation, draws) from its own seed, child ``c`` of
    ``numpy.random.SeedSequence(seed).spawn(chains)`` (numba's generator is per thread and is
    seeded in the thread that runs the chain). The chains are spread over ``cores`` threads
    (the compiled sweep releases the GIL); ``cores = None`` means :func:`default_cores`
    (``min(chains, available CPUs)``), ``cores = 1`` runs them one after another in the
    calling thread. The draws depend on ``seed`` only: same seed, bit-identical draws
    whatever ``cores`` (and chain ``c``'s draws do not depend on ``chains`` either).
    """
    shape = 1.0 / rankings.n_classes if shape is None else float(shape)
    if int(repetitions) != repetitions or repetitions < 1:
        raise ValueError(f"repetitions must be a positive integer, got {repetitions!r}")
    cores = default_cores(chains) if cores is None else int(cores)
    if cores < 1:
        raise ValueError(f"cores must be a positive integer, got {cores!r}")
    lay = layout(rankings)  # readers once; the kernel counts each `repetitions` times
    n_items, width = rankings.n_items, lay.max_candidates
    chain_seeds = np.random.SeedSequence(seed).spawn(chains)
    cand_out = np.empty((chains, draws, n_items, width), dtype=dtype)
    pool_out = np.empty((chains, draws, n_items), dtype=dtype)
    rounds = int(metropolis_rounds) if metropolis_scale > 0 else 0
    run = functools.partial(
        _run_chain, rankings, lay, repetitions=repetitions, draws=draws, tune=tune,
        shape=shape, rate=rate, dispersion=dispersion, thin=thin,
        metropolis_scale=metropolis_scale, rounds=rounds)
    jobs = [(chain_seeds[c], cand_out[c:c + 1], pool_out[c:c + 1]) for c in range(chains)]
    if cores == 1 or chains == 1:
        for job in jobs:
            run(*job)
    else:
        stop = threading.Event()
        with ThreadPoolExecutor(max_workers=min(cores, chains)) as pool:
            futures = [pool.submit(run, *job, stop=stop) for job in jobs]
            try:
                for future in futures:
                    future.result()  # re-raises a chain's exception
            except BaseException:  # e.g. KeyboardInterrupt: stop the other chains
                stop.set()
                for future in futures:
                    future.cancel()
                raise
    coords = {"chain": np.arange(chains), "draw": np.arange(draws), "item": rankings.items,
              "candidate": np.arange(width)}
    posterior = xr.Dataset(
        {"plausibility_candidates": (("chain", "draw", "item", "candidate"), cand_out),
         "pooled_mass": (("chain", "draw", "item"), pool_out)},
        coords=coords,
        attrs={"repetitions": repetitions, "shape": shape, "rate": rate, "tune": tune, "thin": thin,
               "metropolis_scale": metropolis_scale,
               "metropolis_rounds": metropolis_rounds,
               "sampler": "plausible.inference.plackett_luce_sampler"},
    )
    constant = xr.Dataset(
        {"candidate_class": (("item", "candidate"), lay.candidate_class[:n_items]),
         "n_pooled": (("item",), lay.n_pooled[:n_items])},
        coords={"item": rankings.items, "candidate": np.arange(width),
                "class": rankings.classes},
    )
    return xr.DataTree.from_dict({"posterior": posterior, "constant_data": constant})
