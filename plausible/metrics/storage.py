"""The plausibility storage contract: how a trace stores its plausibilities, in one place.

Every aggregation model ends in the same posterior quantity, per item and draw a distribution
over the ``K`` classes. A trace stores it in one of two layouts, and every metric reads both:

* **dense**: ``posterior/plausibility (chain, draw, item, class)``.
* **candidate form**, for many classes of which each item names few (differential diagnoses,
  sparse votes)::

      posterior/plausibility_candidates (chain, draw, item, candidate)   0 on padding slots
      posterior/pooled_mass             (chain, draw, item)
      constant_data/candidate_class     (item, candidate)   class index, -1 on padding
                                                            (padding after the candidates)
      constant_data/n_pooled            (item,)             classes in the pool (>= 0)

  An item's *candidates* are the classes its annotations name; the *pool* holds the other
  ``n_pooled`` classes, whose plausibilities are exchangeable given the data (they share one
  prior concentration and no annotation). Their total is ``pooled_mass``; a metric that needs
  one pooled class's value takes the equal share ``pooled_value = pooled_mass / n_pooled``,
  rounded to the storage dtype (their posterior expectation given the total). With ties
  broken by the lowest class index, as everywhere, the pooled classes that can enter a top-k
  are the ``k`` lowest class indices in the pool (:meth:`CandidateStorage.pooled_classes`).
  :func:`to_dense` gives the dense view of selected items; metrics never need it.

Besides ``item`` and ``class``, every other dim of a plausibility is a *sample dim*
(normally ``("chain", "draw")``); :class:`Layout` describes the shape. :func:`dense_nbytes`
and :func:`candidate_nbytes` are the sizes :func:`plausible.sample` compares with its memory
budget, and :func:`candidate_groups` builds the candidate form from arrays (the samplers
write it with it).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from math import prod

import dask.array as da
import numpy as np
import xarray as xr

ITEM = "item"
CLASS = "class"
CANDIDATE = "candidate"
NAME = "plausibility"
CANDIDATES = "plausibility_candidates"
POOLED = "pooled_mass"
CANDIDATE_CLASS = "candidate_class"
N_POOLED = "n_pooled"
PADDING = -1
"""``candidate_class`` of a padding slot."""


@dataclass(frozen=True)
class Layout:
    """Shape of plausibility draws: ``sample_dims`` (in the array's order) with
    ``sample_shape`` (``n_samples`` = their product), ``n_items``, ``n_classes``."""

    sample_dims: tuple[str, ...]
    sample_shape: tuple[int, ...]
    n_items: int
    n_classes: int

    @property
    def n_samples(self) -> int:
        return prod(self.sample_shape)


def layout(plausibility: xr.DataArray) -> Layout:
    """The :class:`Layout` of a validated dense plausibility DataArray."""
    sample_dims = tuple(d for d in plausibility.dims if d not in (ITEM, CLASS))
    sizes = plausibility.sizes
    return Layout(
        sample_dims=sample_dims,
        sample_shape=tuple(sizes[d] for d in sample_dims),
        n_items=sizes[ITEM],
        n_classes=sizes[CLASS],
    )


def storage_form(trace) -> str:
    """``"dense"`` or ``"candidate"``: the layout of a DataTree's ``posterior`` plausibilities;
    ``ValueError`` when it holds neither."""
    posterior = trace["posterior"] if "posterior" in trace.children else None
    if posterior is not None and NAME in posterior.data_vars:
        return "dense"
    if posterior is not None and CANDIDATES in posterior.data_vars:
        return "candidate"
    have = sorted(posterior.data_vars) if posterior is not None else sorted(trace.children)
    raise ValueError(f"the trace holds no plausibilities ('{NAME}' or '{CANDIDATES}' in its "
                     f"posterior group); it has {have}")


def pooled_value(pooled_mass: np.ndarray, n_pooled: np.ndarray, dtype) -> np.ndarray:
    """The value of each pooled class, ``pooled_mass / n_pooled`` rounded to ``dtype`` (0 where
    the pool is empty); ``n_pooled`` broadcasts against ``pooled_mass``'s last axis."""
    share = np.asarray(pooled_mass, dtype=np.float64) / np.maximum(n_pooled, 1)
    return share.astype(dtype, copy=False)


@dataclass(frozen=True)
class CandidateStorage:
    """The arrays of a candidate-form trace (see the module docstring).

    ``values`` ``(sample dims..., item, candidate)`` and ``pooled`` ``(sample dims..., item)``
    are DataArrays backed by numpy or dask (a Zarr store), read chunk by chunk;
    ``candidate_class`` int ``(item, candidate)``, ``n_pooled`` int ``(item,)``, ``classes``
    ``(K,)`` and ``items`` ``(item,)`` are numpy.
    """

    values: xr.DataArray
    pooled: xr.DataArray
    candidate_class: np.ndarray
    n_pooled: np.ndarray
    classes: np.ndarray
    items: np.ndarray

    @classmethod
    def from_trace(cls, trace) -> CandidateStorage:
        posterior, constant = trace["posterior"], trace["constant_data"]
        values = posterior[CANDIDATES]
        sample_dims = [d for d in values.dims if d not in (ITEM, CANDIDATE)]
        candidate_class = np.asarray(constant[CANDIDATE_CLASS].values, dtype=np.int64)
        classes = np.asarray(constant[CLASS].values)
        n_pooled = np.asarray(constant[N_POOLED].values, dtype=np.int64)
        check_candidate_classes(candidate_class, n_pooled, classes.size)
        return cls(
            values=values.transpose(*sample_dims, ITEM, CANDIDATE),
            pooled=posterior[POOLED].transpose(*sample_dims, ITEM),
            candidate_class=candidate_class,
            n_pooled=n_pooled,
            classes=classes,
            items=np.asarray(values[ITEM].values),
        )

    @property
    def layout(self) -> Layout:
        sample_dims = self.values.dims[:-2]
        return Layout(sample_dims, tuple(self.values.sizes[d] for d in sample_dims),
                      self.items.size, self.classes.size)

    @property
    def width(self) -> int:
        """Candidate slots per item (the padded width)."""
        return self.candidate_class.shape[1]

    def pooled_classes(self, k: int) -> np.ndarray:
        """int64 ``(item, k)``: the ``k`` lowest class indices in each item's pool, -1 where
        the pool has fewer."""
        taken = np.zeros((self.items.size, self.classes.size), dtype=bool)
        rows, slots = np.nonzero(self.candidate_class >= 0)
        taken[rows, self.candidate_class[rows, slots]] = True
        free = np.argsort(taken, axis=1, kind="stable")[:, :k]
        enough = np.arange(free.shape[1]) < np.minimum(self.n_pooled, k)[:, None]
        out = np.full((self.items.size, k), PADDING, dtype=np.int64)
        out[:, :free.shape[1]] = np.where(enough, free, PADDING)
        return out

    def densify(self, values: np.ndarray, pooled: np.ndarray, items) -> np.ndarray:
        """Dense ``(..., item, class)`` from candidate ``values (..., item, candidate)`` and
        ``pooled (..., item)`` blocks of the items ``items`` (positions), in the storage
        dtype; the pooled classes take :func:`pooled_value`."""
        cand_class = self.candidate_class[items]
        share = pooled_value(pooled, self.n_pooled[items], values.dtype)
        dense = np.repeat(share[..., None], self.classes.size, axis=-1)
        rows, slots = np.nonzero(cand_class >= 0)
        dense[..., rows, cand_class[rows, slots]] = values[..., rows, slots]
        return dense


def to_dense(trace, items=None) -> xr.DataArray:
    """Dense ``plausibility (sample dims..., item, class)`` of a candidate-form trace for the
    selected items (positions: a slice or an index array; all when None). Meant for small
    selections: every metric reads candidate form directly."""
    storage = CandidateStorage.from_trace(trace)
    index = np.arange(storage.items.size)[slice(None) if items is None else items]
    values = np.asarray(storage.values.isel({ITEM: index}).values)
    pooled = np.asarray(storage.pooled.isel({ITEM: index}).values)
    sample_dims = storage.values.dims[:-2]
    return xr.DataArray(
        storage.densify(values, pooled, index), dims=(*sample_dims, ITEM, CLASS),
        coords={**{d: storage.values[d].values for d in sample_dims if d in storage.values.coords},
                ITEM: storage.items[index], CLASS: storage.classes},
        name=NAME,
    )


class _DenseView:
    """Read-only array-like ``(sample dims..., item, class)`` view of a candidate storage:
    indexing with slices densifies just the selected block (what :func:`dask.array.from_array`
    does for each of its chunks)."""

    def __init__(self, storage: CandidateStorage):
        self.storage = storage
        self.shape = (*storage.values.shape[:-1], storage.classes.size)
        self.ndim = len(self.shape)
        self.dtype = storage.values.dtype

    def __getitem__(self, key):
        key = key if isinstance(key, tuple) else (key,)
        key = key + (slice(None),) * (self.ndim - len(key))
        *lead, classes = key
        items = np.arange(self.storage.items.size)[lead[-1]]
        values = np.asarray(self.storage.values.values[tuple(lead)])
        pooled = np.asarray(self.storage.pooled.values[tuple(lead)])
        return self.storage.densify(values, pooled, items)[..., classes]


def lazy_dense(trace, chunks) -> xr.DataArray:
    """The whole dense ``plausibility`` of a candidate-form trace as a lazy dask-backed
    DataArray with the given dask ``chunks``: nothing is densified until a chunk is read."""
    storage = CandidateStorage.from_trace(trace)
    sample_dims = storage.values.dims[:-2]
    data = da.from_array(_DenseView(storage), chunks=chunks, asarray=True, lock=False,
                         fancy=False, name=f"plausibility-candidates-{uuid.uuid4()}",
                         meta=np.empty((0,) * (len(sample_dims) + 2), dtype=storage.values.dtype))
    return xr.DataArray(
        data, dims=(*sample_dims, ITEM, CLASS),
        coords={**{d: storage.values[d].values for d in sample_dims if d in storage.values.coords},
                ITEM: storage.items, CLASS: storage.classes},
        name=NAME,
    )


def check_candidate_classes(candidate_class: np.ndarray, n_pooled: np.ndarray,
                            n_classes: int) -> None:
    """``ValueError`` unless each row of ``candidate_class`` holds distinct class indices in
    ``0..n_classes-1`` followed by padding (-1), and ``n_pooled`` counts the rest."""
    valid = candidate_class >= 0
    if (candidate_class < PADDING).any() or (candidate_class >= n_classes).any():
        raise ValueError(f"candidate_class must hold class indices 0..{n_classes - 1} or -1")
    if (valid[:, 1:] & ~valid[:, :-1]).any():
        raise ValueError("candidate_class rows must list the candidates before the padding")
    ordered = np.sort(np.where(valid, candidate_class, -1 - np.arange(valid.shape[1])), axis=1)
    if (np.diff(ordered, axis=1) == 0).any():
        raise ValueError("a class appears twice among an item's candidates")
    if not np.array_equal(valid.sum(axis=1) + n_pooled, np.full(valid.shape[0], n_classes)):
        raise ValueError("n_pooled must count the classes that are not candidates")


def candidate_groups(values, pooled, candidate_class, n_pooled, *, items, classes,
                     chains=None, draws=None) -> tuple[xr.Dataset, xr.Dataset]:
    """``(posterior, constant_data)`` Datasets of the candidate form from numpy arrays
    ``values (chain, draw, item, candidate)``, ``pooled (chain, draw, item)``,
    ``candidate_class (item, candidate)`` and ``n_pooled (item,)`` (see the module
    docstring); ``chains`` / ``draws`` are the coordinates (default ``0..n-1``)."""
    n_chain, n_draw, n_items, width = np.shape(values)
    check_candidate_classes(np.asarray(candidate_class), np.asarray(n_pooled), len(classes))
    sample_coords = {"chain": np.arange(n_chain) if chains is None else chains,
                     "draw": np.arange(n_draw) if draws is None else draws}
    posterior = xr.Dataset(
        {CANDIDATES: (("chain", "draw", ITEM, CANDIDATE), values),
         POOLED: (("chain", "draw", ITEM), pooled)},
        coords={**sample_coords, ITEM: items, CANDIDATE: np.arange(width)},
    )
    constant = xr.Dataset(
        {CANDIDATE_CLASS: ((ITEM, CANDIDATE), np.asarray(candidate_class, dtype=np.int64)),
         N_POOLED: ((ITEM,), np.asarray(n_pooled, dtype=np.int64))},
        coords={ITEM: items, CANDIDATE: np.arange(width), CLASS: classes},
    )
    return posterior, constant


def dense_nbytes(n_samples: int, n_items: int, n_classes: int, itemsize: int = 8) -> int:
    """Bytes of a dense ``plausibility`` of ``n_samples`` draws."""
    return n_samples * n_items * n_classes * itemsize


def candidate_nbytes(n_samples: int, n_items: int, width: int, itemsize: int = 8) -> int:
    """Bytes of a candidate-form plausibility of ``n_samples`` draws: ``width`` candidate
    slots and one pooled mass per item and draw."""
    return n_samples * n_items * (width + 1) * itemsize
