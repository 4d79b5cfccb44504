"""Metrics inputs from candidate-space plausibility traces, without dense ``(draw, item, K)``.

A candidate trace (:func:`plausible.inference.plackett_luce_sampler.sample_candidates`) keeps
per item the plausibilities of its candidate classes (ranked by some reader) and the pooled
mass of the ``n_pooled`` other classes:

    posterior/plausibility_candidates (chain, draw, item, candidate)   0 on padding
    posterior/pooled_mass             (chain, draw, item)
    constant_data/candidate_class     (item, candidate)                -1 on padding
    constant_data/n_pooled            (item,)

The pooled mass is spread equally, ``pooled_mass / n_pooled`` per pooled class (the pooled
worths are exchangeable, so this is their posterior expectation given the total; for
metrics that only rank classes it matters only where a pooled class enters a top-k).
Ties go to the lowest class index, as in :func:`plausible.metrics.top_classes`.

* :func:`top_classes` — same output as :func:`plausible.metrics.top_classes` (class
  indices ``(chain, draw, item, rank)``) from ``O(draws * items * (C + k))`` memory.
* :func:`label_certainty` — same output as :func:`plausible.metrics.label_certainty`.
* :func:`to_dense` — dense ``plausibility`` for a subset of items;
* :func:`lazy_dense` — the whole dense ``plausibility`` as a lazy dask-backed DataArray
  densified chunk by chunk; :func:`plausible.metrics.as_plausibility` returns it for a
  candidate trace, so every metric accepts candidate storage directly.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

import dask.array as da
import numpy as np
import xarray as xr

from plausible.metrics.chunks import chunk_steps
from plausible.metrics.storage import Layout

CHUNK_DRAWS = 100


@dataclass(frozen=True)
class CandidateTrace:
    """Arrays of a candidate trace: ``values`` ``(chain, draw, item, C)``, ``pooled``
    ``(chain, draw, item)``, ``candidate_class`` ``(item, C)``, ``n_pooled`` ``(item,)``,
    ``classes`` ``(K,)``, ``items`` ``(item,)``."""

    values: xr.DataArray
    pooled: xr.DataArray
    candidate_class: np.ndarray
    n_pooled: np.ndarray
    classes: np.ndarray
    items: np.ndarray

    @property
    def n_classes(self) -> int:
        return self.classes.size

    @classmethod
    def from_trace(cls, trace) -> CandidateTrace:
        constant = trace["constant_data"]
        return cls(
            values=trace["posterior"]["plausibility_candidates"],
            pooled=trace["posterior"]["pooled_mass"],
            candidate_class=np.asarray(constant["candidate_class"].values),
            n_pooled=np.asarray(constant["n_pooled"].values),
            classes=np.asarray(constant["class"].values),
            items=np.asarray(constant["item"].values),
        )

    def pooled_classes(self, k: int) -> np.ndarray:
        """int64 ``(item, k)``: the ``k`` lowest class indices ranked by nobody, ``-1``
        where fewer exist."""
        taken = np.zeros((self.items.size, self.n_classes + 1), dtype=bool)
        rows, slots = np.nonzero(self.candidate_class >= 0)
        taken[rows, self.candidate_class[rows, slots]] = True
        taken[:, -1] = False  # sentinel column for "none left"
        free = np.argsort(taken[:, :-1], axis=1, kind="stable")[:, :k]
        enough = np.arange(k) < np.minimum(self.n_pooled, k)[:, None]
        return np.where(enough, free, -1)


def _as_candidates(trace) -> CandidateTrace:
    return trace if isinstance(trace, CandidateTrace) else CandidateTrace.from_trace(trace)


def top_classes(trace, k: int = 1) -> xr.DataArray:
    """The ``k`` most plausible classes per draw and item (class indices), ties to the lowest
    class index; dims ``(chain, draw, item, rank)``, named ``top_class``. Equals
    :func:`plausible.metrics.top_classes` on the dense plausibilities with pooled mass spread
    equally."""
    ct = _as_candidates(trace)
    if not 1 <= k <= ct.n_classes:
        raise ValueError(f"k must be in 1..{ct.n_classes}, got {k}")
    pooled_ids = ct.pooled_classes(k)
    ids = np.concatenate([ct.candidate_class, pooled_ids], axis=1)  # (item, C + k)
    order = np.argsort(np.where(ids >= 0, ids, ct.n_classes), axis=1, kind="stable")
    ids = np.take_along_axis(ids, order, axis=1)
    per_class = np.where(ct.n_pooled > 0, 1.0 / np.maximum(ct.n_pooled, 1), 0.0)
    n_chain, n_draw = ct.values.shape[:2]
    out = np.empty((n_chain, n_draw, ct.items.size, k), dtype=np.int32)
    cand_all, pooled_all = ct.values.values, ct.pooled.values
    for c in range(n_chain):
        for start in range(0, n_draw, CHUNK_DRAWS):
            part = slice(start, start + CHUNK_DRAWS)
            cand = cand_all[c, part]
            pool = (pooled_all[c, part] * per_class)[..., None]
            values = np.concatenate(
                [cand, np.broadcast_to(pool, pool.shape[:-1] + (k,))], axis=-1
            ).astype(np.float64)
            values = np.take_along_axis(values, np.broadcast_to(order, values.shape), axis=-1)
            values = np.where(ids >= 0, values, -np.inf)
            best = np.argsort(-values, axis=-1, kind="stable")[..., :k]
            out[c, part] = np.take_along_axis(np.broadcast_to(ids, values.shape), best, axis=-1)
    return xr.DataArray(
        out, dims=("chain", "draw", "item", "rank"),
        coords={"chain": ct.values["chain"].values, "draw": ct.values["draw"].values,
                "item": ct.items, "rank": np.arange(1, k + 1)},
        name="top_class",
    )


def label_certainty(trace) -> xr.DataArray:
    """Fraction of draws in which each class is the top-1 class, ``(item, class)``, named
    ``certainty`` (as :func:`plausible.metrics.label_certainty`)."""
    ct = _as_candidates(trace)
    top = top_classes(ct, 1).values[..., 0]
    n_samples = top.shape[0] * top.shape[1]
    n_items = ct.items.size
    codes = top.reshape(n_samples, n_items).astype(np.int64) + np.arange(n_items) * ct.n_classes
    counts = np.bincount(codes.ravel(), minlength=n_items * ct.n_classes)
    return xr.DataArray(
        counts.reshape(n_items, ct.n_classes) / n_samples, dims=("item", "class"),
        coords={"item": ct.items, "class": ct.classes}, name="certainty",
    )


def _dense(ct: CandidateTrace, chains, draws, items) -> np.ndarray:
    """numpy ``(chain, draw, item, class)`` for the selected chains / draws / items (slices or
    index arrays), the pooled mass spread equally over the pooled classes."""
    index = np.arange(ct.items.size)[items]
    values = ct.values.values[chains][:, draws][:, :, index]
    pooled = ct.pooled.values[chains][:, draws][:, :, index]
    cand_class = ct.candidate_class[index]
    spread = pooled / np.maximum(ct.n_pooled[index], 1)
    dense = np.repeat(spread[..., None], ct.n_classes, axis=-1).astype(values.dtype)
    rows, slots = np.nonzero(cand_class >= 0)
    dense[:, :, rows, cand_class[rows, slots]] = values[:, :, rows, slots]
    return dense


def to_dense(trace, items=slice(None)) -> xr.DataArray:
    """Dense ``plausibility (chain, draw, item, class)`` for the selected items (a slice or
    index array), the pooled mass spread equally over the pooled classes. Feed item chunks
    of it to any metric of :mod:`plausible.metrics` (or give the trace itself: see
    :func:`lazy_dense`)."""
    ct = _as_candidates(trace)
    index = np.arange(ct.items.size)[items]
    return xr.DataArray(
        _dense(ct, slice(None), slice(None), index), dims=("chain", "draw", "item", "class"),
        coords={"chain": ct.values["chain"].values, "draw": ct.values["draw"].values,
                "item": ct.items[index], "class": ct.classes},
        name="plausibility",
    )


class _DenseSource:
    """Read-only array-like ``(chain, draw, item, class)`` view of a candidate trace: indexing
    with slices densifies just the selected block (what :func:`dask.array.from_array` does
    for each of its chunks)."""

    ndim = 4

    def __init__(self, ct: CandidateTrace):
        self.ct = ct
        self.shape = (*ct.values.shape[:3], ct.n_classes)
        self.dtype = ct.values.dtype

    def __getitem__(self, key):
        key = key if isinstance(key, tuple) else (key,)
        key = key + (slice(None),) * (4 - len(key))
        chains, draws, items, classes = key
        return _dense(self.ct, chains, draws, items)[:, :, :, classes]


def lazy_dense(trace) -> xr.DataArray:
    """Dense ``plausibility (chain, draw, item, class)`` of a candidate trace as a lazy,
    dask-backed DataArray: nothing is densified until a chunk is read, and each dask chunk
    ``(1, draw_step, item_step, K)`` is sized by the metrics' ``chunk_elements`` option
    (:func:`plausible.metrics.chunks.chunk_steps`), so metrics streaming item chunks
    (:func:`plausible.metrics.chunks.iter_chunks`) never hold more than one dense chunk.
    :func:`plausible.metrics.as_plausibility` returns this for a candidate trace, which is how
    every metric accepts candidate storage."""
    ct = _as_candidates(trace)
    n_chain, n_draw, n_items = ct.values.shape[:3]
    sample_step, item_step = chunk_steps(
        Layout(("chain", "draw"), (n_chain, n_draw), n_items, ct.n_classes))
    data = da.from_array(
        _DenseSource(ct), chunks=(1, min(sample_step, n_draw), item_step, ct.n_classes),
        asarray=True, lock=False, fancy=False, name=f"plausibility-candidates-{uuid.uuid4()}",
        meta=np.empty((0, 0, 0, 0), dtype=ct.values.dtype),
    )
    return xr.DataArray(
        data, dims=("chain", "draw", "item", "class"),
        coords={"chain": ct.values["chain"].values, "draw": ct.values["draw"].values,
                "item": ct.items, "class": ct.classes},
        name="plausibility",
    )
