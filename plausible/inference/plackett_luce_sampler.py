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
:mod:`plausible.metrics` reads this trace directly (the storage contract of
:mod:`plausible.metrics.storage`).

The independence proposals are fitted per item and chain during warm-up only
(:func:`fit_proposals`, windows :data:`FIT_WINDOWS`) and frozen for the kept draws, so the
kept chain is a fixed Metropolis-within-Gibbs kernel.
"""

from __future__ import annotations

import functools

import numpy as np
import xarray as xr

from plausible.data.rankings import Rankings
from plausible.data.validation import positive_integer
from plausible.inference import plackett_luce_kernel as kernel
from plausible.inference.chains import default_cores, run_chains
from plausible.maths.plackett_luce import layout
from plausible.metrics.storage import candidate_groups


FIT_WINDOWS = ((0.1, 0.2), (0.2, 0.4), (0.4, 0.9))
"""Warm-up windows (fractions of ``tune``) whose draws fit the independence proposals, each at
its end from its own draws; the proposal of the last is frozen for the kept draws. Before the
first fit, and when ``tune < 100``, sweeps run without the independence move."""

PROPOSAL_DF = 5.0
"""Degrees of freedom of the t independence proposals: tails heavier than the posterior's, so
the importance ratio ``target / proposal`` stays bounded in the tails (on the dermatology
data, 30 degrees of freedom raised the mean acceptance rate from 0.67 to 0.73 but cut the
smallest effective sample size to about a sixth)."""

PROPOSAL_SCALE = 1.0
"""Factor on the warm-up sd in the proposal scale (on the dermatology data, 1.2 and 1.5
lowered the mean acceptance rate from 0.67 to 0.57 and 0.41: the t's tails already
overdisperse)."""


def reference_parts(lay):
    """Reference part of each item's log-ratio coordinates, ``(item,)``: the candidate most
    readers put in their first block (then the one most readers rank; then the first slot),
    a class whose log-plausibility the data pin down, so the ratios to it are close to
    Gaussian; the pool (part ``n_candidates``) for an item without candidates."""
    first = np.add.reduceat((lay.rank == 0).astype(np.int64), lay.reader_start, axis=0)
    score = first * (int(lay.ranked_count.max(initial=0)) + 1) + lay.ranked_count
    score = np.where(lay.candidate_class >= 0, score, -1)
    return np.where(lay.n_candidates > 0, np.argmax(score, axis=1), lay.n_candidates)


def fit_proposals(lay, moments, n_sweeps: int, scale: float = PROPOSAL_SCALE):
    """t proposal per item from one window's ``moments (item, C, C + 1)`` (``sum z``,
    ``sum z z^T`` over ``n_sweeps`` sweeps, :func:`~plausible.inference.plackett_luce_kernel.
    sweep_kernel`): location the window mean, scale ``scale^2`` times its covariance
    (eigenvalues floored at ``1e-6`` of the largest and at ``1e-10``, so the scale is
    positive definite). Returns ``mean (item, C)`` and the lower Cholesky factor
    ``chol (item, C, C)``, the identity beyond each item's ``d`` coordinates."""
    width = lay.max_candidates
    d = lay.n_candidates + (lay.n_pooled > 0) - 1
    active = np.arange(width)[None, :] < d[:, None]
    both = active[:, :, None] & active[:, None, :]
    mean = np.where(active, moments[:, :, 0] / n_sweeps, 0.0)
    cov = moments[:, :, 1:] / n_sweeps - mean[:, :, None] * mean[:, None, :]
    cov = np.where(both, scale**2 * cov, np.eye(width))
    values, vectors = np.linalg.eigh(cov)
    values = np.maximum(values, np.maximum(1e-6 * values[:, -1:], 1e-10))
    cov = np.einsum("ijk,ik,ilk->ijl", vectors, values, vectors)
    return mean, np.linalg.cholesky(cov)


def _run_chain(rankings, lay, ref, chain_seed, cand_out, pool_out, accept_out, *, reliability,
               draws, tune, shape, rate, dispersion, thin, rounds, stop=None):
    """Warm-up (with its own proposal fits, on log-ratios relative to the parts ``ref``,
    :func:`reference_parts`) and sampling of one chain, in the calling thread,
    every draw from the chain's own generator, so the draws depend on ``chain_seed`` only.
    Writes the kept draws into ``cand_out (1, draw, item, C)`` and
    ``pool_out (1, draw, item)``, and the acceptance rates of the kept sweeps' Metropolis
    moves into ``accept_out (1, item)``; returns early once ``stop`` (a ``threading.Event``)
    is set."""
    rng = np.random.default_rng(chain_seed)
    valid = lay.candidate_class >= 0
    pooled = lay.n_pooled > 0
    log_cand = np.where(valid, rng.uniform(-dispersion, dispersion, valid.shape), -np.inf)
    log_pool = np.where(pooled, rng.uniform(-dispersion, dispersion, pooled.shape), -np.inf)
    width = lay.max_candidates
    mean = np.zeros((lay.n_items, width))
    chol = np.broadcast_to(np.eye(width), (lay.n_items, width, width)).copy()
    accepted = np.zeros(lay.n_items)
    moments = np.zeros((lay.n_items, width, width + 1))
    static = (np.r_[lay.reader_start, lay.n_readers_total], lay.block_offsets,
              lay.entry_offsets, lay.entry_candidate, lay.rank, lay.n_candidates,
              lay.n_pooled, lay.ranked_count, reliability, rankings.n_classes, shape,
              float(rate))
    proposal = (ref, mean, chol, PROPOSAL_DF)
    windows = ([(int(a * tune), int(b * tune)) for a, b in FIT_WINDOWS]
               if rounds and tune >= 100 else [])
    fitted = False
    for it in range(tune + draws * thin):
        if stop is not None and stop.is_set():
            return
        if it == tune:
            accepted[:] = 0.0  # rates of the kept sweeps only
        store = it >= tune and (it - tune + 1) % thin == 0
        kept = (it - tune) // thin if store else 0
        adapt = any(a <= it < b for a, b in windows)
        # compiled with nogil: other chains' threads run meanwhile
        kernel.sweep_kernel(rng, *static, rounds if fitted else 0, *proposal, log_cand,
                            log_pool, accepted, moments, cand_out[:, kept], pool_out[:, kept],
                            store, adapt)
        for a, b in windows:
            if it + 1 == b:
                mean[:], chol[:] = fit_proposals(lay, moments, b - a)
                moments[:] = 0.0
                fitted = True
    accept_out[0] = accepted / max(draws * thin * rounds, 1)


def sample_candidates(rankings: Rankings, *, reliability: int = 1, draws: int = 1000,
                      tune: int = 500, chains: int = 4, seed: int | None = None,
                      shape: float | None = None, rate: float = 1.0, dispersion: float = 2.0,
                      thin: int = 1, metropolis_rounds: int = 2,
                      cores: int | None = None, dtype=np.float32) -> xr.DataTree:
    """Sample the Bayesian PL posterior (``Gamma(shape, rate)`` worths, default
    ``shape = 1/K``) with readers repeated ``reliability`` times (a whole number, as in
    :func:`plausible.models.plackett_luce.build`); returns the candidate
    ``DataTree`` described in the module docstring.

    Chains start from log-worths jittered ``U(-dispersion, dispersion)``; ``tune`` sweeps are
    discarded, then every ``thin``-th sweep is kept (``draws`` kept in all). Each sweep is
    :func:`~plausible.inference.plackett_luce_kernel.sweep_kernel`: the exact Gibbs sweep
    (augmentation with each reader's ``gamma`` copies, conjugate worths, total-worth redraw)
    then ``metropolis_rounds`` rounds of Metropolis moves with the exact likelihood
    (``0`` turns them off): independence proposals from the t fitted during warm-up
    (:data:`FIT_WINDOWS`, :func:`fit_proposals`). State is float64, storage ``dtype``. The
    acceptance rate of the kept sweeps' moves is ``sample_stats/independence_acceptance``
    ``(chain, item)``.

    Parallelism and seeding: every chain is run on its own (jitter, warm-up with its own
    proposal adaptation, draws) from its own seed, child ``c`` of
    ``numpy.random.SeedSequence(seed).spawn(chains)``, whose ``numpy.random.Generator`` the
    compiled sweep draws from. The chains are spread over ``cores`` threads
    (the compiled sweep releases the GIL); ``cores = None`` means :func:`default_cores`
    (``min(chains, available CPUs)``), ``cores = 1`` runs them one after another in the
    calling thread. The draws depend on ``seed`` only: same seed, bit-identical draws
    whatever ``cores`` (and chain ``c``'s draws do not depend on ``chains`` either).
    """
    shape = 1.0 / rankings.n_classes if shape is None else float(shape)
    reliability = positive_integer("reliability", reliability, "the sampler repeats every reader")
    cores = default_cores(chains) if cores is None else int(cores)
    if cores < 1:
        raise ValueError(f"cores must be a positive integer, got {cores!r}")
    lay = layout(rankings)  # readers once; the kernel counts each `reliability` times
    n_items, width = rankings.n_items, lay.max_candidates
    chain_seeds = np.random.SeedSequence(seed).spawn(chains)
    cand_out = np.empty((chains, draws, n_items, width), dtype=dtype)
    pool_out = np.empty((chains, draws, n_items), dtype=dtype)
    accept_out = np.zeros((chains, n_items))
    if int(metropolis_rounds) != metropolis_rounds or metropolis_rounds < 0:
        raise ValueError(f"metropolis_rounds must be a non-negative integer, "
                         f"got {metropolis_rounds!r}")
    run = functools.partial(
        _run_chain, rankings, lay, reference_parts(lay), reliability=reliability, draws=draws,
        tune=tune, shape=shape, rate=rate, dispersion=dispersion, thin=thin,
        rounds=int(metropolis_rounds))
    jobs = [(chain_seeds[c], cand_out[c:c + 1], pool_out[c:c + 1], accept_out[c:c + 1])
            for c in range(chains)]
    run_chains(run, jobs, cores)
    posterior, constant = candidate_groups(
        cand_out, pool_out, lay.candidate_class[:n_items], lay.n_pooled[:n_items],
        items=rankings.items, classes=rankings.classes)
    posterior.attrs.update(
        {"reliability": reliability, "shape": shape, "rate": rate, "tune": tune, "thin": thin,
         "metropolis_rounds": metropolis_rounds, "proposal_df": PROPOSAL_DF,
         "proposal_scale": PROPOSAL_SCALE, "sampler": "plausible.inference.plackett_luce_sampler"})
    sample_stats = xr.Dataset(
        {"independence_acceptance": (("chain", "item"), accept_out)},
        coords={"chain": np.arange(chains), "item": rankings.items},
    )
    return xr.DataTree.from_dict({"posterior": posterior, "sample_stats": sample_stats,
                                  "constant_data": constant})
