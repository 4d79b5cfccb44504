"""Simulation-based calibration (Talts et al. 2018) for any model of the suite.

Repeat: draw parameters ``theta*`` and data ``y`` from the prior and the likelihood
(``simulate``), build the model on ``y`` (``build``), sample it with
:func:`plausible.sample`, and record the rank of each element of ``theta*`` among ``L``
thinned posterior draws. If the sampler targets the right posterior the ranks are
uniform on ``{0, ..., L}``. Models whose items are conditionally independent can put
many items into one simulation: every item is then an independent replicate.
"""

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import xarray as xr
from scipy import stats

from plausible.inference.sampling import sample


@dataclass(frozen=True)
class SBCResult:
    """Ranks ``(simulation, element)`` per variable, each in ``0..n_draws``."""

    ranks: dict[str, np.ndarray]
    n_draws: int

    def p_values(self, bins: int = 20) -> dict[str, float]:
        """Chi-square test of rank uniformity per variable (all elements pooled)."""
        result = {}
        for name, ranks in self.ranks.items():
            counts = np.bincount(self.binned(ranks, bins).ravel(), minlength=bins)
            result[name] = float(stats.chisquare(counts).pvalue)
        return result

    def binned(self, ranks: np.ndarray, bins: int) -> np.ndarray:
        """Ranks ``0..n_draws`` mapped to ``bins`` equal bins ``0..bins-1``."""
        return np.minimum(ranks * bins // (self.n_draws + 1), bins - 1)


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
    **sample_kwargs,
) -> SBCResult:
    """Run SBC: ``simulate(rng) -> (truth, data)``, ``build(data) -> pm.Model``.

    ``truth`` maps each name in ``var_names`` to the true value (same shape as the
    posterior variable without chain/draw). Posterior draws are thinned by ``thin``
    (pooled over chains) to weaken autocorrelation, so ``L = chains * draws // thin``.
    """
    rng = np.random.default_rng(seed)
    ranks: dict[str, list[np.ndarray]] = {name: [] for name in var_names}
    n_draws = None
    for _ in range(n_simulations):
        truth, data = simulate(rng)
        trace = sample(
            build(data), draws=draws, chains=chains, seed=int(rng.integers(2**32)),
            progressbar=False, check_convergence=False, **sample_kwargs,
        )
        for name in var_names:
            posterior: xr.DataArray = trace.posterior[name]
            thinned = posterior.isel(draw=slice(thin - 1, None, thin)).stack(
                sample=("chain", "draw")
            ).transpose("sample", ...).values
            n_draws = thinned.shape[0]
            ranks[name].append((thinned < np.asarray(truth[name])[None]).sum(axis=0).ravel())
    return SBCResult(ranks={name: np.stack(r) for name, r in ranks.items()}, n_draws=n_draws)
