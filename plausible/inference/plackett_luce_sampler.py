"""Tight-loop PL Gibbs sampler in candidate space, for data sets where dense traces do not fit.

Runs :func:`~plausible.inference.plackett_luce_gibbs.gibbs_sweep` (the same exact step as
the PyMC :class:`~plausible.inference.plackett_luce_gibbs.PlackettLuceGibbs`) without the
PyMC sampling loop: all chains are advanced together by one vectorised sweep (the items are
tiled once per chain, chains never interact) and the ``DataTree`` is built directly.

Storage (dims ``chain, draw, item, candidate``):

* ``posterior/plausibility_candidates`` ``(chain, draw, item, candidate)``: plausibility of
  each candidate class (ranked by some reader of the item); 0 on padding slots;
* ``posterior/pooled_mass`` ``(chain, draw, item)``: total plausibility of the
  ``n_pooled`` classes ranked by nobody (their worths are i.i.d. given the rest, so each
  carries ``pooled_mass / n_pooled`` in expectation; metrics spread it equally);
* ``constant_data/candidate_class`` ``(item, candidate)`` class index, ``-1`` on padding, and
  ``constant_data/n_pooled`` ``(item,)``.

Memory: ``chains * draws * items * (C + 1)`` values instead of ``... * K``.
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from plausible.data.rankings import Rankings
from plausible.inference.plackett_luce_gibbs import gibbs_sweep, metropolis_move
from plausible.models.plackett_luce_likelihood import layout


def tile_items(rankings: Rankings, copies: int) -> Rankings:
    """``rankings`` with its items repeated ``copies`` times (copy ``c`` holds items
    ``c * n_items .. (c + 1) * n_items - 1``)."""
    n = rankings.n_items
    shift = (np.arange(copies)[:, None] * n).ravel()
    return Rankings(
        item=(rankings.item[None, :] + shift[:, None]).ravel(),
        reader=np.tile(rankings.reader, copies),
        label=np.tile(rankings.label, copies),
        block=np.tile(rankings.block, copies),
        n_readers=np.tile(rankings.n_readers, copies),
        items=np.arange(n * copies),
        classes=rankings.classes,
    )


def sample_candidates(rankings: Rankings, *, repetitions: int = 1, draws: int = 1000,
                      tune: int = 500, chains: int = 4, seed: int | None = None,
                      shape: float | None = None, rate: float = 1.0, dispersion: float = 2.0,
                      thin: int = 1, metropolis_scale: float = 1.0,
                      dtype=np.float32) -> xr.DataTree:
    """Sample the Bayesian PL posterior (``Gamma(shape, rate)`` worths, default
    ``shape = 1/K``) with readers repeated ``repetitions`` times; returns the candidate
    ``DataTree`` described in the module docstring. Chains start from log-worths jittered
    ``U(-dispersion, dispersion)``; ``tune`` sweeps are discarded, then every ``thin``-th
    sweep is kept (``draws`` kept in all). Each sweep is the exact Gibbs sweep followed by
    :func:`~plausible.inference.plackett_luce_gibbs.metropolis_move` (random-walk and
    minor-classes-shift Metropolis with the exact likelihood; ``metropolis_scale = 0`` turns
    it off — on dermatology at gamma = 10 it cut the largest R-hat from 1.7 to 1.2). Same
    seed, same draws."""
    shape = 1.0 / rankings.n_classes if shape is None else float(shape)
    tiled = tile_items(rankings, chains)
    lay = layout(tiled, repetitions)
    lay1 = lay if repetitions == 1 else layout(tiled, 1)
    n_items, width = rankings.n_items, lay.max_candidates
    rng = np.random.default_rng(seed)
    valid = lay.candidate_class >= 0
    pooled = lay.n_pooled > 0
    log_cand = np.where(valid, rng.uniform(-dispersion, dispersion, valid.shape), -np.inf)
    log_pool = np.where(pooled, rng.uniform(-dispersion, dispersion, pooled.shape), -np.inf)
    cand_out = np.empty((draws, chains * n_items, width), dtype=dtype)
    pool_out = np.empty((draws, chains * n_items), dtype=dtype)
    for it in range(tune + draws * thin):
        log_cand, log_pool = gibbs_sweep(lay, log_cand, log_pool, shape, rate, rng)
        if metropolis_scale > 0:
            log_cand, log_pool = metropolis_move(lay1, repetitions, log_cand, log_pool, shape,
                                                 rate, rng, metropolis_scale)
        if it >= tune and (it - tune + 1) % thin == 0:
            kept = (it - tune) // thin
            top = np.maximum(log_cand.max(axis=1), log_pool)
            cand = np.exp(log_cand - top[:, None])
            pool = np.exp(log_pool - top)
            total = cand.sum(axis=1) + pool
            cand_out[kept] = cand / total[:, None]
            pool_out[kept] = pool / total
    cand_out = cand_out.reshape(draws, chains, n_items, width).swapaxes(0, 1)
    pool_out = pool_out.reshape(draws, chains, n_items).swapaxes(0, 1)
    coords = {"chain": np.arange(chains), "draw": np.arange(draws), "item": rankings.items,
              "candidate": np.arange(width)}
    posterior = xr.Dataset(
        {"plausibility_candidates": (("chain", "draw", "item", "candidate"), cand_out),
         "pooled_mass": (("chain", "draw", "item"), pool_out)},
        coords=coords,
        attrs={"repetitions": repetitions, "shape": shape, "rate": rate, "tune": tune, "thin": thin,
               "metropolis_scale": metropolis_scale,
               "sampler": "plausible.inference.plackett_luce_sampler"},
    )
    constant = xr.Dataset(
        {"candidate_class": (("item", "candidate"), lay.candidate_class[:n_items]),
         "n_pooled": (("item",), lay.n_pooled[:n_items])},
        coords={"item": rankings.items, "candidate": np.arange(width),
                "class": rankings.classes},
    )
    return xr.DataTree.from_dict({"posterior": posterior, "constant_data": constant})
