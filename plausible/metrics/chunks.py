"""Streaming over plausibility draws in bounded blocks.

The draws can be far larger than any temporary a metric may allocate (CIFAR-10H: 4 x 1000
draws x 10,000 items x 10 classes = 3.2 GB of float64). Metrics therefore never copy,
transpose, cast or sort the whole array: they walk it in blocks of at most
``get_options()["chunk_elements"]`` values, each a numpy view of the array (or, for dask- and
Zarr-backed arrays, just that block computed), and write per-(sample, item) results into
``(n_samples, n_items)`` outputs.

A block is one index along every sample dim but the last, a range of the last sample dim and
a range of items: arrays with dims ``(sample dims..., item, ...)`` are indexed with
:attr:`Block.index`. Samples are numbered by a flat index over the sample dims in C order, so a
result ``(n_samples, n_items, ...)`` reshapes to ``(sample dims..., item, ...)`` without
copying.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

import numpy as np
import xarray as xr

from plausible.metrics.options import OPTIONS
from plausible.metrics.storage import Layout


class Block(NamedTuple):
    """Flat ``samples`` and ``items`` ranges of a block and its ``index`` into an array with
    dims ``(sample dims..., item, ...)``."""

    samples: slice
    items: slice
    index: tuple


def chunk_steps(lay: Layout, width: int, chunk_elements: int | None = None) -> tuple[int, int]:
    """Samples (along the last sample dim) and items per block so that a block of ``width``
    values per (sample, item) holds at most ``chunk_elements`` values (at least one sample x
    one item)."""
    budget = OPTIONS["chunk_elements"] if chunk_elements is None else chunk_elements
    width = max(width, 1)
    item_step = lay.n_items if lay.n_items * width <= budget else max(1, budget // width)
    last = lay.sample_shape[-1] if lay.sample_shape else 1
    sample_step = max(1, min(last, budget // (max(item_step, 1) * width)))
    return sample_step, max(item_step, 1)


def iter_blocks(lay: Layout, width: int) -> Iterator[Block]:
    """Blocks covering every (sample, item) pair once, each at most ``chunk_elements`` values
    of ``width`` per pair (see the module docstring)."""
    sample_step, item_step = chunk_steps(lay, width)
    lead_shape, last = (lay.sample_shape[:-1], lay.sample_shape[-1]) if lay.sample_shape else ((), 1)
    for lead_flat, lead in enumerate(np.ndindex(*lead_shape)):
        base = lead_flat * last
        for a in range(0, last, sample_step):
            b = min(a + sample_step, last)
            for i0 in range(0, lay.n_items, item_step):
                i1 = min(i0 + item_step, lay.n_items)
                draws = slice(a, b) if lay.sample_shape else np.newaxis  # no sample dims: one
                yield Block(slice(base + a, base + b), slice(i0, i1), (*lead, draws, slice(i0, i1)))


def iter_sample_blocks(sample_shape: tuple[int, ...], width: int) -> Iterator[tuple[slice, tuple]]:
    """Blocks of samples covering every sample once, each at most ``chunk_elements`` values of
    ``width`` per sample (at least one sample; ``sample_shape`` has at least one dim):
    ``(samples, index)``, the flat sample range and the index into an array with dims
    ``(sample dims..., ...)`` (one index along every sample dim but the last, a range of the
    last). For per-sample computations whose temporaries span all items at once (a per-item
    log-likelihood over every label)."""
    budget = OPTIONS["chunk_elements"]
    last = sample_shape[-1]
    step = max(1, min(last, budget // max(width, 1)))
    for lead_flat, lead in enumerate(np.ndindex(*sample_shape[:-1])):
        base = lead_flat * last
        for a in range(0, last, step):
            b = min(a + step, last)
            yield slice(base + a, base + b), (*lead, slice(a, b))


def read(array, block: Block) -> np.ndarray:
    """The block of ``array`` (numpy, dask, or a DataArray of either; dims ``(sample
    dims..., item, ...)``) as a numpy array ``(samples, items, ...)``: a view of a numpy
    array, or just this block computed (without sample dims, a sample axis of one)."""
    data = array.data if isinstance(array, xr.DataArray) else array
    return np.asarray(data[block.index])
