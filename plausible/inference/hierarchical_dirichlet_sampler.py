"""Compiled sampler of the hierarchical Dirichlet model for votes
(:func:`plausible.models.dirichlet.build_hierarchical`).

Item ``i``'s plausibilities ``lambda_i ~ Dirichlet(alpha)`` with ``alpha = kappa mu`` learned
from all items: ``kappa ~ Gamma(s, r)`` and the base measure ``mu ~ Dirichlet(beta)`` (or
fixed uniform), the votes ``s_i`` entering with reliability ``gamma``. Each sweep is

1. ``(kappa, mu) | s`` with every item's ``lambda_i`` integrated out, the rows ``gamma s_i``
   of a Dirichlet-multinomial population
   (:mod:`plausible.inference.dirichlet_multinomial_population`: slice scan plus the exact
   scale of the base measure's Gamma weights);
2. ``lambda_i | kappa, mu, s ~ Dirichlet(kappa mu + gamma s_i)`` exactly, for every item
   (:func:`plausible.inference.dirichlet_draws.dense_draws`), at kept sweeps only — the
   population's chain does not read the plausibilities, so skipping their draw elsewhere
   changes nothing.

A partially collapsed Gibbs sampler: each kept ``(kappa, mu, lambda)`` is a draw of the
joint posterior once the population's chain has mixed. The chain is compiled (numba,
GIL released) and chains run in threads, each with the generator of child ``c`` of
``SeedSequence(seed)``, so the draws depend on the seed only.

The trace: ``posterior`` with ``concentration (chain, draw)``, ``base_measure (chain, draw,
class)`` and ``plausibility (chain, draw, item, class)`` (dense, ``dtype``); ``constant_data``
with the reliability.
"""

from __future__ import annotations

import numba
import numpy as np
import xarray as xr

from plausible.inference.chains import available_cores, run_chains
from plausible.inference.dirichlet_draws import dense_draws
from plausible.inference.dirichlet_multinomial_population import count_summary, draw_population

DEFAULT_TUNE = 200
"""Warm-up sweeps: the population's few coordinates settle within tens of sweeps."""
WIDTH = 1.0
"""Slice width on the log scale of ``kappa`` and of the base measure's weights."""
DISPERSION = 1.0
"""Half-width of the uniform jitter of each chain's start on those log scales."""


@numba.njit(nogil=True, cache=True)
def _chain(rng, v, counts, learn_base, beta, shape, rate, tune, thin, kappa_out, base_out,
           plaus_out):  # pragma: no cover - compiled
    """Run one chain from ``v = (log kappa, log g)`` (module), writing the kept draws."""
    summary = count_summary(counts)
    draws = kappa_out.shape[0]
    for t in range(tune + draws * thin):
        log_alpha = draw_population(rng, v, summary, learn_base, beta, shape, rate, WIDTH)
        kept = t - tune
        if kept < 0 or (kept + 1) % thin != 0:
            continue
        d = kept // thin
        alpha = np.exp(log_alpha)
        kappa_out[d] = alpha.sum()
        base_out[d] = alpha / alpha.sum()
        dense_draws(rng, alpha + counts, plaus_out[d:d + 1])


def _run_chain(seed, start, counts, learn_base, beta, shape, rate, tune, thin, kappa_out,
               base_out, plaus_out, *, stop):
    """One chain from ``start`` jittered by ``U(-1, 1)`` on each coordinate that moves."""
    if stop.is_set():
        return
    rng = np.random.default_rng(seed)
    v = start + rng.uniform(-DISPERSION, DISPERSION, start.size) * (
        np.arange(start.size) < (start.size if learn_base else 1))
    _chain(rng, v, counts, learn_base, beta, shape, rate, tune, thin, kappa_out, base_out,
           plaus_out)


def sample_hierarchical_dirichlet(counts: np.ndarray, *, items, classes, reliability: float,
                                  base_prior: np.ndarray, concentration_prior: tuple,
                                  learn_base: bool, start: np.ndarray, draws: int = 1000,
                                  tune: int = DEFAULT_TUNE, chains: int = 4,
                                  seed: int | None = None, cores: int | None = None,
                                  thin: int = 1, dtype=np.float32) -> xr.DataTree:
    """Sample the hierarchical Dirichlet model (module) for vote ``counts (item, class)``.

    ``base_prior beta (class,)``; ``concentration_prior`` Gamma ``(shape, rate)`` of
    ``kappa``; ``learn_base`` False keeps the base measure at ``start``'s; ``start (1 + class)`` the
    chains' ``(log kappa, log base measure)`` before each chain's jitter. ``cores``: threads (default
    ``min(chains, CPUs)``); the draws do not depend on it. Returns the trace of the module
    docstring.
    """
    if thin < 1 or int(thin) != thin:
        raise ValueError(f"thin must be a positive integer, got {thin!r}")
    gamma = float(reliability)
    tempered = np.ascontiguousarray(gamma * np.asarray(counts, dtype=np.float64))
    n_items, n_classes = tempered.shape
    beta = np.asarray(base_prior, dtype=np.float64)
    shape, rate = (float(x) for x in concentration_prior)
    kappa_out = np.empty((chains, draws))
    base_out = np.empty((chains, draws, n_classes))
    plaus_out = np.empty((chains, draws, n_items, n_classes), dtype=dtype)
    start = np.asarray(start, dtype=np.float64)
    jobs = [(seed_c, start, tempered, bool(learn_base), beta, shape, rate, int(tune),
             int(thin), kappa_out[c], base_out[c], plaus_out[c])
            for c, seed_c in enumerate(np.random.SeedSequence(seed).spawn(chains))]
    run_chains(_run_chain, jobs, min(chains, available_cores() if cores is None else int(cores)))
    coords = {"chain": np.arange(chains), "draw": np.arange(draws), "item": items,
              "class": classes}
    posterior = xr.Dataset(
        {"concentration": (("chain", "draw"), kappa_out),
         "base_measure": (("chain", "draw", "class"), base_out),
         "plausibility": (("chain", "draw", "item", "class"), plaus_out)},
        coords=coords,
        attrs={"sampler": "plausible.inference.hierarchical_dirichlet_sampler", "tune": tune,
               "thin": thin})
    constant = xr.Dataset({"reliability": gamma})
    return xr.DataTree.from_dict({"posterior": posterior, "constant_data": constant})


__all__ = ["sample_hierarchical_dirichlet"]
