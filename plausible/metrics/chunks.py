"""Streaming over plausibility draws in bounded chunks.

The draws can be far larger than any temporary a metric may allocate (CIFAR-10H: 4 x 1000
draws x 10,000 items x 10 classes = 3.2 GB of float64). Metrics therefore never copy,
transpose, cast or sort the whole array: they walk it in chunks of at most
``get_options()["chunk_elements"]`` values, each a numpy *view* of ``plausibility.data``
(or, for dask-backed arrays, just that chunk computed), and write per-(sample, item)
results into ``(n_samples, n_items)`` outputs.

Samples are numbered by a flat index over the sample dims in C order, so a result
``(n_samples, n_items, ...)`` reshapes to ``(sample dims..., item, ...)`` without copying.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

import numpy as np
import xarray as xr

from plausible.metrics.options import OPTIONS
from plausible.metrics.storage import CLASS, ITEM, Layout, layout


class Chunk(NamedTuple):
    """``values[samples, items, :]`` of the flat ``(n_samples, n_items, n_classes)`` draws."""

    samples: slice
    items: slice
    values: np.ndarray


def chunk_steps(lay: Layout, chunk_elements: int | None = None) -> tuple[int, int]:
    """Samples and items per chunk so that one chunk holds at most ``chunk_elements``
    values (at least one sample x one item)."""
    budget = OPTIONS["chunk_elements"] if chunk_elements is None else chunk_elements
    k = max(lay.n_classes, 1)
    item_step = lay.n_items if lay.n_items * k <= budget else max(1, budget // k)
    sample_step = max(1, budget // (max(item_step, 1) * k))
    return sample_step, max(item_step, 1)


def iter_chunks(plausibility: xr.DataArray) -> Iterator[Chunk]:
    """Chunks ``(n_s, n_i, n_classes)`` covering all (sample, item) pairs once.

    Numpy-backed draws whose sample dims can be flattened without a copy (the normal
    ``(chain, draw, item, class)`` layout) are cut along the flat sample index; any other
    layout (transposed dims, dask) is cut along the last sample dim inside a loop over the
    leading ones. Either way a chunk is a view or a freshly computed piece bounded by
    ``chunk_elements``; the whole array is never copied. (A DataArray opened lazily from a
    file *without* dask is read into memory once by ``.data``; open it with ``chunks=`` to
    stream it from disk.)
    """
    lay = layout(plausibility)
    n_s, n_i, k = lay.n_samples, lay.n_items, lay.n_classes
    sample_step, item_step = chunk_steps(lay)
    data = plausibility.data
    order = [plausibility.get_axis_num(d) for d in (*lay.sample_dims, ITEM, CLASS)]
    if order != sorted(order):
        data = np.transpose(data, order)  # a view (numpy) or a lazy transpose (dask)

    flat = None
    if isinstance(data, np.ndarray):
        try:
            flat = data.reshape((n_s, n_i, k), copy=False)
        except ValueError:  # sample dims not flattenable without a copy
            flat = None
        except TypeError:  # numpy < 2.1 has no copy=: flatten only what is surely a view
            flat = data.reshape((n_s, n_i, k)) if data.flags.c_contiguous else None
    if flat is not None:
        for s0 in range(0, n_s, sample_step):
            s1 = min(s0 + sample_step, n_s)
            for i0 in range(0, n_i, item_step):
                i1 = min(i0 + item_step, n_i)
                yield Chunk(slice(s0, s1), slice(i0, i1), flat[s0:s1, i0:i1])
        return

    sample_shape = lay.sample_shape
    if not sample_shape:  # no sample dims: one sample
        data, sample_shape = data[np.newaxis], (1,)
    lead_shape, last = sample_shape[:-1], sample_shape[-1]
    for lead_flat, lead in enumerate(np.ndindex(*lead_shape)):
        base = lead_flat * last
        for a in range(0, last, sample_step):
            b = min(a + sample_step, last)
            for i0 in range(0, n_i, item_step):
                i1 = min(i0 + item_step, n_i)
                piece = np.asarray(data[(*lead, slice(a, b), slice(i0, i1))])
                yield Chunk(slice(base + a, base + b), slice(i0, i1), piece)


def coords_for(plausibility: xr.DataArray, dims) -> dict:
    """Dimension coordinates of ``plausibility`` along ``dims`` (those it has)."""
    return {d: plausibility[d].values for d in dims if d in plausibility.coords}


def sample_item_array(
    plausibility: xr.DataArray,
    values: np.ndarray,
    name: str,
    extra_dims: tuple[str, ...] = (),
    extra_coords: dict | None = None,
    attrs: dict | None = None,
) -> xr.DataArray:
    """Wrap ``(n_samples, n_items, *extra)`` results as ``(sample dims..., item, *extra_dims)``."""
    lay = layout(plausibility)
    dims = (*lay.sample_dims, ITEM, *extra_dims)
    data = values.reshape((*lay.sample_shape, lay.n_items, *values.shape[2:]))
    coords = coords_for(plausibility, (*lay.sample_dims, ITEM))
    coords.update(extra_coords or {})
    return xr.DataArray(data, dims=dims, coords=coords, name=name, attrs=attrs or {})
