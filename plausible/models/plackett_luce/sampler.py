"""Tight-loop PL Gibbs sampler in candidate space, for data sets where dense traces do not fit.

Runs the compiled exact sweep :func:`~plausible.models.plackett_luce.kernel.sweep_kernel`
(the Gibbs step of :class:`~plausible.models.plackett_luce.gibbs.PlackettLuceGibbs` plus
Metropolis moves with the exact likelihood) without the PyMC sampling loop: one kernel call per
sweep and chain (:class:`PlackettLuceKernel`, run by :mod:`plausible.inference.driver`, which
gives each chain its own seed and thread; the sweep releases the GIL).

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

import numpy as np
import xarray as xr

from plausible.data.rankings import Rankings
from plausible.data.validation import positive_integer
from plausible.models.plackett_luce import kernel
from plausible.inference.driver import sample_kernel
from plausible.inference.kernel import Kernel, Variable
from plausible.maths.plackett_luce import layout
from plausible.metrics.storage import CANDIDATE, CANDIDATES, ITEM, POOLED, candidate_groups


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
    ``sum z z^T`` over ``n_sweeps`` sweeps, :func:`~plausible.models.plackett_luce.kernel.
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


class ChainState:
    """One chain's log-worths (candidates ``log_cand (item, C)``, pool ``log_pool (item,)``),
    its independence proposals (``mean``, ``chol``, fitted yet or not), the moments of the
    current fitting window, the accepted moves, the sweeps run, and scratch storage for the
    sweeps that are not kept."""

    def __init__(self, lay, rng, dispersion: float):
        valid = lay.candidate_class >= 0
        pooled = lay.n_pooled > 0
        self.log_cand = np.where(valid, rng.uniform(-dispersion, dispersion, valid.shape), -np.inf)
        self.log_pool = np.where(pooled, rng.uniform(-dispersion, dispersion, pooled.shape),
                                 -np.inf)
        width = lay.max_candidates
        self.mean = np.zeros((lay.n_items, width))
        self.chol = np.broadcast_to(np.eye(width), (lay.n_items, width, width)).copy()
        self.accepted = np.zeros(lay.n_items)
        self.moments = np.zeros((lay.n_items, width, width + 1))
        self.fitted, self.sweeps = False, 0
        self.scratch_cand = np.empty((1, lay.n_items, width))
        self.scratch_pool = np.empty((1, lay.n_items))


class PlackettLuceKernel(Kernel):
    """The sweep of :func:`sample_candidates` (its docstring has the options): the exact
    Gibbs sweep plus ``rounds`` rounds of independence Metropolis moves, whose proposals are
    fitted in the windows :data:`FIT_WINDOWS` of the ``tune`` warm-up sweeps and then frozen.
    Records the candidate form; ``sample_stats/independence_acceptance (chain, item)`` is the
    acceptance rate of the kept sweeps' moves."""

    name = "plausible.models.plackett_luce.sampler"
    default_thin = 1
    stats = {}

    def __init__(self, rankings: Rankings, *, reliability: int, tune: int, shape: float,
                 rate: float, dispersion: float, rounds: int, dtype=np.float32):
        self.lay = lay = layout(rankings)  # readers once; the sweep counts each `reliability` times
        self.ref = reference_parts(lay)
        self.default_tune = self.tune = int(tune)
        self.dispersion, self.rounds = float(dispersion), int(rounds)
        self.static = (np.r_[lay.reader_start, lay.n_readers_total], lay.block_offsets,
                       lay.entry_offsets, lay.entry_candidate, lay.rank, lay.n_candidates,
                       lay.n_pooled, lay.ranked_count, reliability, rankings.n_classes, shape,
                       float(rate))
        self.windows = ([(int(a * tune), int(b * tune)) for a, b in FIT_WINDOWS]
                        if rounds and tune >= 100 else [])
        n_items, width = rankings.n_items, lay.max_candidates
        self.variables = {
            CANDIDATES: Variable((ITEM, CANDIDATE), (n_items, width), dtype),
            POOLED: Variable((ITEM,), (n_items,), dtype)}
        self.chain_stats = {"independence_acceptance": Variable((ITEM,), (n_items,))}

    def start(self, rng):
        """Log-worths jittered ``U(-dispersion, dispersion)``."""
        return ChainState(self.lay, rng, self.dispersion)

    def sweep(self, rng, st, out):
        """One compiled sweep (nogil: other chains' threads run meanwhile), then the proposal
        fit at the end of a fitting window."""
        it = st.sweeps
        if it == self.tune:
            st.accepted[:] = 0.0  # rates of the kept sweeps only
        store = out is not None
        cand = out[CANDIDATES][None] if store else st.scratch_cand
        pool = out[POOLED][None] if store else st.scratch_pool
        adapt = any(a <= it < b for a, b in self.windows)
        kernel.sweep_kernel(rng, *self.static, self.rounds if st.fitted else 0, self.ref,
                            st.mean, st.chol, PROPOSAL_DF, st.log_cand, st.log_pool,
                            st.accepted, st.moments, cand, pool, store, adapt)
        for a, b in self.windows:
            if it + 1 == b:
                st.mean[:], st.chol[:] = fit_proposals(self.lay, st.moments, b - a)
                st.moments[:] = 0.0
                st.fitted = True
        st.sweeps += 1
        return st

    def finish(self, st, out):
        out["independence_acceptance"][...] = st.accepted / max(
            (st.sweeps - self.tune) * self.rounds, 1)


def sample_candidates(rankings: Rankings, *, reliability: int = 1, draws: int | str = 1000,
                      tune: int = 500, chains: int = 4, seed: int | None = None,
                      shape: float | None = None, rate: float = 1.0, dispersion: float = 2.0,
                      thin: int = 1, metropolis_rounds: int = 2,
                      cores: int | None = None, dtype=np.float32, until=None,
                      max_seconds: float | None = None, max_draws: int | None = None,
                      max_stored: int | None = None) -> xr.DataTree:
    """Sample the Bayesian PL posterior (``Gamma(shape, rate)`` worths, default
    ``shape = 1/K``) with readers repeated ``reliability`` times (a whole number, as in
    :func:`plausible.models.plackett_luce.build`); returns the candidate
    ``DataTree`` described in the module docstring.

    Chains start from log-worths jittered ``U(-dispersion, dispersion)``; ``tune`` sweeps are
    discarded, then every ``thin``-th sweep is kept (``draws`` kept in all). Each sweep is
    :func:`~plausible.models.plackett_luce.kernel.sweep_kernel`: the exact Gibbs sweep
    (augmentation with each reader's ``gamma`` copies, conjugate worths, total-worth redraw)
    then ``metropolis_rounds`` rounds of Metropolis moves with the exact likelihood
    (``0`` turns them off): independence proposals from the t fitted during warm-up
    (:data:`FIT_WINDOWS`, :func:`fit_proposals`). State is float64, storage ``dtype``. The
    acceptance rate of the kept sweeps' moves is ``sample_stats/independence_acceptance``
    ``(chain, item)``. ``draws="auto"`` with ``until``, ``max_seconds``, ``max_draws``: as
    :func:`plausible.inference.driver.sample_kernel`.

    Chains run in ``cores`` threads (default ``min(chains, CPUs)``), each from its own seed
    (:mod:`plausible.inference.driver`): the draws depend on ``seed`` only, bit-identical
    whatever ``cores`` (and chain ``c``'s draws do not depend on ``chains`` either).
    """
    shape = 1.0 / rankings.n_classes if shape is None else float(shape)
    reliability = positive_integer("reliability", reliability, "the sampler repeats every reader")
    if int(metropolis_rounds) != metropolis_rounds or metropolis_rounds < 0:
        raise ValueError(f"metropolis_rounds must be a non-negative integer, "
                         f"got {metropolis_rounds!r}")
    kernel = PlackettLuceKernel(rankings, reliability=reliability, tune=tune, shape=shape,
                                rate=rate, dispersion=dispersion, rounds=int(metropolis_rounds),
                                dtype=dtype)
    lay, n_items = kernel.lay, rankings.n_items
    _, constant = candidate_groups(
        np.empty((0, 0, n_items, lay.max_candidates)), np.empty((0, 0, n_items)),
        lay.candidate_class[:n_items], lay.n_pooled[:n_items], items=rankings.items,
        classes=rankings.classes)
    return sample_kernel(
        kernel, draws=draws, chains=chains, seed=seed, tune=tune, thin=thin, cores=cores,
        until=until, max_seconds=max_seconds, max_draws=max_draws, max_stored=max_stored,
        coords={ITEM: rankings.items, CANDIDATE: np.arange(lay.max_candidates)},
        constant_data=constant,
        attrs={"reliability": reliability, "shape": shape, "rate": rate,
               "metropolis_rounds": metropolis_rounds, "proposal_df": PROPOSAL_DF,
               "proposal_scale": PROPOSAL_SCALE})
