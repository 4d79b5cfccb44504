"""Dataset-level summaries over plausibility samples.

A UA metric gives one value per (sample, item). Its dataset value for sample ``m`` is the
mean over items, ``v_m = (1/N) sum_i value[m, i]``; the paper reports the mean of ``v_m``
over samples *and* its spread (up to 4 points between the best and the worst sample).
:func:`summarize` returns mean, std, min and max of ``v_m``; :func:`histogram` its
histogram. A point estimate (one sample) has std 0 and min = max = mean.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import xarray as xr

from plausible.metrics.storage import ITEM


def _per_sample(values: xr.DataArray, item_dim: str | None) -> xr.DataArray:
    if not isinstance(values, xr.DataArray):
        raise TypeError(f"values must be an xarray DataArray, got {type(values).__name__}")
    if item_dim is not None and item_dim in values.dims:
        values = values.mean(item_dim)
    return values


def summarize(
    values: xr.DataArray,
    sample_dims: Sequence[str] = ("chain", "draw"),
    *,
    item_dim: str | None = ITEM,
    ddof: int = 0,
) -> xr.Dataset:
    """Mean, std and range over plausibility samples of a metric's dataset value.

    ``v = values.mean(item_dim)`` (if ``item_dim`` is a dim), then over the sample dims:
    ``mean = (1/M) sum_m v_m``, ``std = sqrt(sum_m (v_m - mean)^2 / (M - ddof))``,
    ``min``, ``max``.

    Parameters
    ----------
    values : xarray.DataArray
        Per-sample (and per-item) values, e.g. from :func:`ua_topk_accuracy`; other dims
        (e.g. ``group``) are kept.
    sample_dims : sequence of str
        Dims to summarise over (those present; default ``("chain", "draw")``).
    item_dim : str or None
        Dim averaged first (default ``"item"``); None to skip.
    ddof : int
        Delta degrees of freedom of ``std`` (default 0: the spread of the samples at hand,
        0 for a single sample).

    Returns
    -------
    xarray.Dataset
        ``per_sample`` (``v``, with the sample dims), ``mean``, ``std``, ``min``, ``max``
        (without them), attrs ``n_samples``.
    """
    per_sample = _per_sample(values, item_dim)
    dims = [d for d in sample_dims if d in per_sample.dims]
    n_samples = int(np.prod([per_sample.sizes[d] for d in dims], dtype=np.int64))
    return xr.Dataset(
        {
            "per_sample": per_sample,
            "mean": per_sample.mean(dims),
            "std": per_sample.std(dims, ddof=ddof),
            "min": per_sample.min(dims),
            "max": per_sample.max(dims),
        },
        attrs={"n_samples": n_samples},
    )


def histogram(
    values: xr.DataArray,
    bins: int | Sequence[float] = 20,
    *,
    item_dim: str | None = ITEM,
    range: tuple[float, float] | None = None,  # noqa: A002 - numpy's name
) -> xr.Dataset:
    """Histogram of a metric's dataset value over plausibility samples.

    ``v = values.mean(item_dim)`` (if present), then ``np.histogram`` of all values of
    ``v``. With ``item_dim=None`` and per-item values (e.g. :func:`expected_group`) it is
    a histogram over items instead.

    Parameters
    ----------
    values : xarray.DataArray
    bins : int or sequence of float
        Number of equal-width bins or the bin edges (as ``np.histogram``).
    item_dim : str or None
        Dim averaged first (default ``"item"``).
    range : (float, float), optional
        Lower and upper edge (as ``np.histogram``); default the values' min and max.

    Returns
    -------
    xarray.Dataset
        ``count`` (int, dim ``bin``, coords ``left_edge`` / ``right_edge``) and ``edges``
        (dim ``edge``, ``len(bin) + 1`` values).
    """
    per_sample = _per_sample(values, item_dim)
    counts, edges = np.histogram(np.asarray(per_sample.values).ravel(), bins=bins, range=range)
    return xr.Dataset(
        {"count": ("bin", counts), "edges": ("edge", edges)},
        coords={"left_edge": ("bin", edges[:-1]), "right_edge": ("bin", edges[1:])},
    )
