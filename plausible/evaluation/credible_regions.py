"""Point estimates and highest-density credible regions from a density tabulated on a grid.

A density ``p`` on a regular 1-D grid ``(n,)`` or 2-D grid ``(n_x, n_y)`` (cell volume
``dA``) is normalised to cell masses ``m = p dA / sum(p dA)``. MMSE = ``sum x m``; MAP = the
grid point of largest density (the joint MAP of a 2-D density can differ from the MAPs of its
marginals); the ``mass`` highest-density region (HDR) is the super-level set
``{p >= t}`` whose mass first reaches ``mass``, with ``t`` found by bisection on the
threshold. Checked in ``tests/evaluation/test_credible_regions.py`` (normal densities).
"""

from __future__ import annotations

import numpy as np


def _masses(density, axes):
    density = np.asarray(density, dtype=np.float64)
    shape = tuple(np.asarray(a).size for a in axes)
    if density.shape != shape:
        raise ValueError(f"density shape {density.shape} does not match the grid {shape}")
    if not np.all(np.isfinite(density)) or (density < 0).any():
        raise ValueError("density must be finite and non-negative")
    total = density.sum()
    if total <= 0:
        raise ValueError("density is zero everywhere on the grid")
    return density / total


def mmse(density, *axes) -> np.ndarray:
    """Posterior mean on the grid ``axes`` (one array per dimension), ``(ndim,)``."""
    m = _masses(density, axes)
    grids = np.meshgrid(*axes, indexing="ij")
    return np.array([(g * m).sum() for g in grids])


def map_estimate(density, *axes) -> np.ndarray:
    """Grid point of the largest density, ``(ndim,)``."""
    m = _masses(density, axes)
    index = np.unravel_index(np.argmax(m), m.shape)
    return np.array([np.asarray(a)[k] for a, k in zip(axes, index)])


def hdr_threshold(density, *axes, mass: float = 0.95, tol: float = 1e-10) -> float:
    """Density level ``t`` whose super-level set ``{p >= t}`` holds at least ``mass`` (bisection)."""
    if not 0 < mass < 1:
        raise ValueError(f"mass must lie in (0, 1), got {mass}")
    m = _masses(density, axes)
    lo, hi = 0.0, float(m.max())
    while hi - lo > tol * m.max():
        mid = 0.5 * (lo + hi)
        if m[m >= mid].sum() >= mass:
            lo = mid
        else:
            hi = mid
    scale = np.asarray(density, dtype=np.float64).sum()
    return lo * scale


def hdr_mask(density, *axes, mass: float = 0.95) -> np.ndarray:
    """Boolean grid of the ``mass`` highest-density region."""
    return np.asarray(density) >= hdr_threshold(density, *axes, mass=mass)


def hdr_interval(density, grid, mass: float = 0.95) -> tuple[float, float]:
    """Ends of the 1-D HDR (its hull, for a multimodal density)."""
    inside = np.asarray(grid)[hdr_mask(density, grid, mass=mass)]
    return float(inside.min()), float(inside.max())


def hdr_samples(samples, mass: float = 0.95) -> tuple[float, float]:
    """Shortest interval holding ``mass`` of 1-D ``samples`` (the sampled HDR)."""
    x = np.sort(np.asarray(samples, dtype=np.float64).ravel())
    k = int(np.ceil(mass * x.size))
    if not 0 < mass < 1 or k < 2:
        raise ValueError(f"need 0 < mass < 1 and enough samples, got mass={mass}, {x.size} samples")
    widths = x[k - 1:] - x[: x.size - k + 1]
    j = int(np.argmin(widths))
    return float(x[j]), float(x[j + k - 1])


def histogram_density(*samples, bins=50, range=None):
    """Sampled posterior on a grid: the normalised histogram of 1-D or 2-D ``samples`` (NaNs
    dropped), returned as ``(density, *centers)`` ready for :func:`mmse`, :func:`map_estimate`
    and :func:`hdr_mask`."""
    x = np.column_stack([np.asarray(s, dtype=np.float64).ravel() for s in samples])
    x = x[np.all(np.isfinite(x), axis=1)]
    if x.shape[0] == 0:
        raise ValueError("no finite samples")
    density, edges = np.histogramdd(x, bins=bins, range=range, density=True)
    return (density, *[0.5 * (e[1:] + e[:-1]) for e in edges])
