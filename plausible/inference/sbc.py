"""Simulation-based calibration (Talts et al. 2018) for any model of the suite.

Repeat: draw parameters ``theta*`` and data ``y`` from the prior and the likelihood
(``simulate``), build the model on ``y`` (``build``), sample it with
:func:`plausible.sample`, and record the rank of each element of ``theta*`` among ``L``
thinned posterior draws. If the sampler targets the right posterior the ranks are
uniform on ``{0, ..., L}``. Models whose items are conditionally independent can put
many items into one simulation: every item is then an independent replicate.

A truth equal to some draws (a stored precision, a value on a bound) takes a uniformly random
rank among them (:func:`_ranks`). Plausibilities in candidate form
(:mod:`plausible.metrics.storage`) are ranked as they are stored: each candidate class's plausibility and each non-empty pool's mass against the true
value and the true total of the pooled classes (a pooled class's equal share is an
expectation, not a posterior draw, and would not be uniform).
"""

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import xarray as xr
from scipy import stats

from plausible.inference.sampling import sample
from plausible.metrics.storage import NAME, CandidateStorage, storage_form


@dataclass(frozen=True)
class SBCResult:
    """Ranks per variable, each in ``0..n_draws``, pooled over simulations and elements
    (1-D)."""

    ranks: dict[str, np.ndarray]
    n_draws: int

    def p_values(self, bins: int = 20) -> dict[str, float]:
        """Chi-square test of rank uniformity per variable (all elements pooled), each bin
        expected to hold its :meth:`bin_shares` of the ranks."""
        result = {}
        shares = self.bin_shares(bins)
        for name, ranks in self.ranks.items():
            counts = np.bincount(self.binned(ranks, bins).ravel(), minlength=bins)
            result[name] = float(stats.chisquare(counts, counts.sum() * shares).pvalue)
        return result

    def binned(self, ranks: np.ndarray, bins: int) -> np.ndarray:
        """Ranks ``0..n_draws`` mapped to ``bins`` bins ``0..bins-1`` of consecutive ranks."""
        return np.minimum(ranks * bins // (self.n_draws + 1), bins - 1)

    def bin_shares(self, bins: int) -> np.ndarray:
        """``(bins,)`` the share of uniform ranks each bin of :meth:`binned` holds: the share
        of the ``n_draws + 1`` rank values it covers, equal only where ``bins`` divides
        ``n_draws + 1`` (with 100 draws and 10 bins the first holds 11 of the 101 values)."""
        values = self.binned(np.arange(self.n_draws + 1), bins)
        return np.bincount(values, minlength=bins) / (self.n_draws + 1)


def simulation_based_calibration(
    build: Callable,
    simulate: Callable[[np.random.Generator], tuple[dict[str, np.ndarray], object]],
    *,
    var_names: list[str],
    n_simulations: int = 10,
    draws: int = 1000,
    chains: int = 2,
    thin: int = 10,
    seed: int | None = None,
    sampler: Callable | None = None,
    **sample_kwargs,
) -> SBCResult:
    """Run SBC: ``simulate(rng) -> (truth, data)``, ``build(data) -> pm.Model``, sampled by
    :func:`plausible.sample`, or ``sampler(data, draws=, chains=, seed=) -> trace`` for a
    sampler that is not a model's route (``build`` is then unused: None).

    ``truth`` maps each name in ``var_names`` to the true value (same shape as the
    posterior variable without chain/draw; for ``plausibility``, dense ``(item, class)``
    whatever the storage). Posterior draws are thinned by ``thin`` (pooled over chains) to
    weaken autocorrelation, so ``L = chains * draws // thin``.
    """
    rng = np.random.default_rng(seed)
    ranks: dict[str, list[np.ndarray]] = {name: [] for name in var_names}
    n_draws = None
    for _ in range(n_simulations):
        truth, data = simulate(rng)
        run_seed = int(rng.integers(2**32))
        if sampler is not None:
            trace = sampler(data, draws=draws, chains=chains, seed=run_seed)
        else:
            trace = sample(
                build(data), draws=draws, chains=chains, seed=run_seed,
                progressbar=False, check_convergence=False, **sample_kwargs,
            )
        ties = np.random.default_rng(run_seed)  # its own stream: the simulations' is unchanged
        for name in var_names:
            thinned, true = _stored(trace, name, np.asarray(truth[name]), thin)
            n_draws = thinned.shape[0]
            ranks[name].append(_ranks(thinned, true, ties))
    return SBCResult(ranks={name: np.concatenate(r) for name, r in ranks.items()}, n_draws=n_draws)


def _ranks(draws: np.ndarray, truth: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Rank of each ``truth (element,)`` among ``draws (sample, element)``: the draws below it,
    plus a uniform share of those equal to it. The truth is compared at the draws' precision
    (plausibilities are stored as float32, so a true value within 6e-8 of 1 equals the draws
    that round to 1): without the ties' share such an element would rank 0 every time."""
    if np.issubdtype(draws.dtype, np.floating):
        truth = truth.astype(draws.dtype)
    below = (draws < truth[None]).sum(axis=0)
    equal = (draws == truth[None]).sum(axis=0)
    return below + rng.integers(0, equal + 1)


def _stored(trace, name: str, truth: np.ndarray, thin: int) -> tuple[np.ndarray, np.ndarray]:
    """Thinned draws ``(sample, element)`` of variable ``name`` as stored, and the truth of the
    same elements ``(element,)``."""

    def thinned(posterior: xr.DataArray) -> np.ndarray:
        values = posterior.isel(draw=slice(thin - 1, None, thin)).stack(
            sample=("chain", "draw")).transpose("sample", ...).values
        return values.reshape(values.shape[0], -1)

    if name != NAME or storage_form(trace) == "dense":
        return thinned(trace.posterior[name]), truth.ravel()
    storage = CandidateStorage.from_trace(trace)
    valid = storage.candidate_class >= 0
    true_candidates = np.take_along_axis(truth, np.maximum(storage.candidate_class, 0), axis=1)
    pooled = np.ones(truth.shape, dtype=bool)
    rows, slots = np.nonzero(valid)
    pooled[rows, storage.candidate_class[rows, slots]] = False
    true_pool = np.where(pooled, truth, 0.0).sum(axis=1)
    has_pool = storage.n_pooled > 0  # an empty pool's mass is 0 in every draw: no rank
    draws = np.concatenate([thinned(storage.values)[:, valid.ravel()],
                            thinned(storage.pooled)[:, has_pool]], axis=1)
    return draws, np.concatenate([true_candidates[valid], true_pool[has_pool]])
