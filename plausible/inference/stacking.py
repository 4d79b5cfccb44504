"""Draws of a stacked posterior: a mixture of several models' posterior draws.

Bayesian stacking (Yao, Vehtari, Simpson & Gelman 2018) combines the predictive distributions
``p_k(. | y)`` of models ``k`` with weights ``w_k`` (``sum_k w_k = 1``); a quantity every model
shares, such as an item's plausibility, then has the mixture ``sum_k w_k p_k(lambda | y)`` as
its distribution. A draw from the mixture is a model drawn with probability ``w_k`` and one
of that model's posterior draws. :func:`mixture_draws` fixes the counts instead of drawing
them: in each chain of ``D`` slots, model ``k`` fills ``n_k`` of them, ``w_k D`` rounded by
largest remainder, so the mixture's weights hold to ``1 / D`` in every chain rather than to
the Monte Carlo error of a multinomial draw. Each model's draws are a random subset of its
chain (without replacement), placed in random order, so a chain of the mixture holds no
block of one model: its draws are exchangeable, and the chains of the mixture answer to no
convergence diagnostic (the models' own chains do).
"""

from __future__ import annotations

import numpy as np
import xarray as xr


def slot_counts(weights: np.ndarray, slots: int) -> np.ndarray:
    """``weights (K,)`` (summing to 1) as whole counts summing to ``slots``: the floors of
    ``w_k slots``, plus one for the largest remainders (ties to the first model)."""
    exact = np.asarray(weights, dtype=np.float64) * slots
    counts = np.floor(exact).astype(np.int64)
    short = slots - int(counts.sum())
    counts[np.argsort(-(exact - counts), kind="stable")[:short]] += 1
    return counts


def mixture_draws(draws: dict[str, xr.DataArray], weights: dict[str, float],
                  rng: np.random.Generator) -> xr.DataArray:
    """The mixture of ``draws`` (name -> ``(chain, draw, ...)`` posterior draws of the same
    quantity: same chains and same other dimensions and coordinates) with ``weights`` (name ->
    weight, summing to 1): ``(chain, draw, ...)`` with ``D`` draws per chain, the fewest any
    model has, model ``k`` filling :func:`slot_counts` of them in every chain (module
    docstring). Stays lazy on lazy (dask) draws; ``ValueError`` when the models' chains or
    coordinates differ."""
    names = list(weights)
    first = draws[names[0]]
    try:
        xr.align(*(draws[name] for name in names), join="exact", exclude="draw")
    except ValueError:
        raise ValueError(f"{', '.join(names)} have different chains or coordinates: their draws "
                         "cannot be mixed") from None
    chains = first.sizes["chain"]
    slots = min(draws[name].sizes["draw"] for name in names)
    counts = slot_counts(np.array([weights[name] for name in names]), slots)
    parts = []
    for name, count in zip(names, counts):
        if count == 0:
            continue
        available = draws[name].sizes["draw"]
        picked = np.stack([np.sort(rng.choice(available, size=count, replace=False))
                           for _ in range(chains)])
        parts.append(_pointwise(draws[name], picked))
    mixed = xr.concat(parts, dim="draw")
    order = np.stack([rng.permutation(slots) for _ in range(chains)])
    mixed = _pointwise(mixed, order)
    return mixed.assign_coords(chain=first["chain"].values, draw=np.arange(slots))


def _pointwise(values: xr.DataArray, picked: np.ndarray) -> xr.DataArray:
    """``values (chain, draw, ...)`` at draws ``picked (chain, n)``, chain by chain:
    ``(chain, n, ...)``."""
    chains = np.broadcast_to(np.arange(picked.shape[0])[:, None], picked.shape)
    return values.isel(chain=xr.DataArray(chains, dims=("chain", "draw")),
                       draw=xr.DataArray(picked, dims=("chain", "draw"))).drop_vars(
        ["chain", "draw"], errors="ignore").transpose("chain", "draw", ...)


__all__ = ["mixture_draws", "slot_counts"]
