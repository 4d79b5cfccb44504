"""What every metric reads: plausibility draws in either storage, or their top classes.

:func:`as_draws` turns a metric's input into one of three readers with the same interface:

* :class:`DenseDraws` — a dense ``plausibility`` DataArray (numpy, dask or Zarr backed);
* :class:`CandidateDraws` — a candidate-form trace (:mod:`plausible.metrics.storage`),
  read block by block and never densified;
* :class:`TopDraws` — the output of :func:`plausible.metrics.top_classes`, enough for every
  metric that needs at most its depth.

Each knows its :class:`~plausible.metrics.storage.Layout`, its sample coords, item ids and
class labels, and yields, block by block (:mod:`plausible.metrics.chunks`), the ``k`` most
plausible classes of every (sample, item) of the block (:meth:`iter_top`), ties to the
lowest class index. Every rank-based metric is written once against :meth:`iter_top`, so it
gives the same numbers on every storage (to the last bit: only class indices are compared).
:meth:`mean` is the posterior mean plausibility, the one value-based summary.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import xarray as xr

from plausible.metrics.chunks import Block, iter_blocks, read
from plausible.metrics.meaning import meaning_of
from plausible.metrics.selection import check_k, select_top, select_top_candidates
from plausible.metrics.storage import (
    CANDIDATES,
    CLASS,
    ITEM,
    NAME,
    CandidateStorage,
    Layout,
    layout,
    pooled_value,
)

TOP_CLASS = "top_class"
RANK = "rank"


class Draws:
    """Common part of the readers: ``layout``, ``sample_coords`` (dict), ``items`` and
    ``classes`` (the coords, or None for an array without them)."""

    layout: Layout
    sample_coords: dict
    items: np.ndarray | None
    classes: np.ndarray | None
    meaning: str | None = None  # what the plausibility means (plausible.metrics.meaning)

    @property
    def item_labels(self) -> np.ndarray:
        """Item ids (positions when the draws carry none)."""
        return np.arange(self.layout.n_items) if self.items is None else self.items

    @property
    def class_labels(self) -> np.ndarray:
        """Class labels (indices when the draws carry none)."""
        return np.arange(self.layout.n_classes) if self.classes is None else self.classes

    def item_coords(self) -> dict:
        return {} if self.items is None else {ITEM: self.items}

    def class_coords(self) -> dict:
        return {} if self.classes is None else {CLASS: self.classes}

    def iter_top(self, k: int) -> Iterator[tuple[Block, np.ndarray]]:
        """``(block, top)`` covering every (sample, item) once; ``top`` ``(samples, items,
        k)`` class indices, descending, ties lowest index first."""
        raise NotImplementedError

    def iter_set_mass(self, member: np.ndarray) -> Iterator[tuple[Block, np.ndarray]]:
        """``(block, mass)`` covering every (sample, item) once; ``mass`` ``(samples, items)``
        float64, ``sum_{c in C_i} lambda_ic`` for the bool sets ``member (item, class)``."""
        raise ValueError("this metric needs the plausibility values, not only their top "
                         "classes: pass the trace or the plausibility DataArray")

    def per_sample_item(self, values: np.ndarray, name: str, **kwargs) -> xr.DataArray:
        """``(n_samples, n_items, ...)`` results as ``(sample dims..., item, ...)``."""
        lay = self.layout
        dims = (*lay.sample_dims, ITEM, *kwargs.pop("extra_dims", ()))
        data = values.reshape((*lay.sample_shape, lay.n_items, *values.shape[2:]))
        coords = {**self.sample_coords, **self.item_coords(), **kwargs.pop("extra_coords", {})}
        return xr.DataArray(data, dims=dims, coords=coords, name=name, attrs=kwargs.pop("attrs", {}))


class DenseDraws(Draws):
    """A dense plausibility DataArray ``source`` with dims ``(sample dims..., item, class)`` in
    any order (``data``: the same, transposed to that order)."""

    def __init__(self, plausibility: xr.DataArray):
        lay = layout(plausibility)
        self.source = plausibility
        self.data = plausibility.transpose(*lay.sample_dims, ITEM, CLASS)
        self.layout = lay
        self.sample_coords = {d: plausibility[d].values for d in lay.sample_dims
                              if d in plausibility.coords}
        self.items = plausibility[ITEM].values if ITEM in plausibility.coords else None
        self.classes = plausibility[CLASS].values if CLASS in plausibility.coords else None

    def iter_top(self, k):
        k = check_k(k, self.layout.n_classes)
        for block in iter_blocks(self.layout, self.layout.n_classes):
            yield block, select_top(read(self.data, block), k)

    def iter_set_mass(self, member):
        for block in iter_blocks(self.layout, self.layout.n_classes):
            values = read(self.data, block)
            yield block, np.einsum("sic,ic->si", values, member[block.items], dtype=np.float64)

    def mean(self) -> np.ndarray:
        """Posterior mean ``(item, class)`` over all samples, float64."""
        total = np.zeros((self.layout.n_items, self.layout.n_classes))
        for block in iter_blocks(self.layout, self.layout.n_classes):
            total[block.items] += read(self.data, block).sum(axis=0, dtype=np.float64)
        return total / self.layout.n_samples


class CandidateDraws(Draws):
    """A candidate-form trace (:class:`~plausible.metrics.storage.CandidateStorage`)."""

    def __init__(self, storage: CandidateStorage):
        self.storage = storage
        self.layout = storage.layout
        self.sample_coords = {d: storage.values[d].values for d in self.layout.sample_dims
                              if d in storage.values.coords}
        self.items, self.classes = storage.items, storage.classes
        self._pooled_ids = {}

    def _blocks(self):
        """``(block, values, share, candidate_class)`` of every block."""
        storage = self.storage
        for block in iter_blocks(self.layout, storage.width + 1):
            values = read(storage.values, block)
            share = pooled_value(read(storage.pooled, block), storage.n_pooled[block.items],
                                 values.dtype)
            yield block, values, share, storage.candidate_class[block.items]

    def iter_top(self, k):
        k = check_k(k, self.layout.n_classes)
        if k not in self._pooled_ids:
            self._pooled_ids[k] = self.storage.pooled_classes(k)
        pooled_ids = self._pooled_ids[k]
        for block, values, share, candidate_class in self._blocks():
            yield block, select_top_candidates(values, share, candidate_class,
                                               pooled_ids[block.items], k, self.layout.n_classes)

    def iter_set_mass(self, member):
        # a candidate slot counts when its class is in the set; each pooled class in the set
        # adds the pooled share
        rows = np.arange(member.shape[0])[:, None]
        valid = self.storage.candidate_class >= 0
        in_set = valid & member[rows, np.maximum(self.storage.candidate_class, 0)]
        pooled_in_set = member.sum(axis=1) - in_set.sum(axis=1)
        for block, values, share, _ in self._blocks():
            mass = np.einsum("siw,iw->si", values, in_set[block.items], dtype=np.float64)
            yield block, mass + share * pooled_in_set[block.items]

    def mean(self) -> np.ndarray:
        """Posterior mean ``(item, class)`` over all samples, float64: the candidates' means,
        and the pooled classes' equal share (each draw's rounded to the storage dtype, as the
        dense view holds it)."""
        storage = self.storage
        width = storage.width
        candidates = np.zeros((self.layout.n_items, width))
        pooled = np.zeros(self.layout.n_items)
        for block, values, share, _ in self._blocks():
            candidates[block.items] += values.sum(axis=0, dtype=np.float64)
            pooled[block.items] += share.sum(axis=0, dtype=np.float64)
        mean = np.repeat((pooled / self.layout.n_samples)[:, None], self.layout.n_classes, axis=1)
        rows, slots = np.nonzero(storage.candidate_class >= 0)
        mean[rows, storage.candidate_class[rows, slots]] = candidates[rows, slots] / self.layout.n_samples
        return mean


class TopDraws(Draws):
    """The top classes of :func:`plausible.metrics.top_classes`: dims ``(sample dims...,
    item, rank)``, class labels in ``attrs["classes"]``."""

    def __init__(self, top: xr.DataArray):
        sample_dims = tuple(d for d in top.dims if d not in (ITEM, RANK))
        self.top = top.transpose(*sample_dims, ITEM, RANK)
        classes = np.asarray(top.attrs["classes"])
        self.layout = Layout(sample_dims, tuple(top.sizes[d] for d in sample_dims),
                             top.sizes[ITEM], classes.size)
        self.depth = top.sizes[RANK]
        self.sample_coords = {d: top[d].values for d in sample_dims if d in top.coords}
        self.items = top[ITEM].values if ITEM in top.coords else None
        self.classes = classes

    def iter_top(self, k):
        k = check_k(k, self.layout.n_classes)
        if k > self.depth:
            raise ValueError(f"these top classes go {self.depth} deep; the metric needs the top "
                             f"{k}: compute top_classes(trace, k={k})")
        for block in iter_blocks(self.layout, self.depth):
            yield block, read(self.top, block)[..., :k]


def _dense(obj: xr.DataArray) -> xr.DataArray:
    missing = [d for d in (ITEM, CLASS) if d not in obj.dims]
    if missing:
        raise ValueError(f"plausibility needs dims 'item' and 'class'; missing {missing}, dims are {obj.dims}")
    if obj.dtype.kind not in "fiu":
        raise TypeError(f"plausibility must hold real numbers, got dtype {obj.dtype}")
    return obj


def as_draws(obj, var_name: str = NAME) -> Draws:
    """The reader of a metric's input.

    Parameters
    ----------
    obj : DataTree, Dataset, DataArray or Draws
        A trace (``xarray.DataTree``) in dense or candidate storage; a Dataset holding
        ``var_name``; a dense plausibility DataArray (dims include ``item`` and ``class``); the
        top classes of :func:`plausible.metrics.top_classes` (dims include ``item`` and
        ``rank``); or a reader already.
    var_name : str
        Name of the dense variable in a Dataset / DataTree (default ``"plausibility"``).

    Raises
    ------
    TypeError
        For other input types or non-numeric values.
    ValueError
        When the plausibilities, the ``posterior`` group or the ``item`` / ``class`` dims are
        missing.
    """
    if isinstance(obj, Draws):
        return obj
    reader = _reader(obj, var_name)
    reader.meaning = meaning_of(obj)
    return reader


def _reader(obj, var_name: str) -> Draws:
    if isinstance(obj, xr.DataTree):
        if var_name in obj.data_vars:
            return DenseDraws(_dense(obj[var_name]))
        if "posterior" not in obj.children:
            raise ValueError(f"the DataTree has no 'posterior' group holding {var_name!r}; "
                             f"groups: {sorted(obj.children)}")
        posterior = obj["posterior"]
        if var_name == NAME and CANDIDATES in posterior.data_vars and NAME not in posterior.data_vars:
            return CandidateDraws(CandidateStorage.from_trace(obj))
        if var_name not in posterior.data_vars:
            raise ValueError(f"the trace's posterior group has no variable {var_name!r}; "
                             f"it has {sorted(posterior.data_vars)}")
        return DenseDraws(_dense(posterior[var_name]))
    if isinstance(obj, xr.Dataset):
        if var_name not in obj.data_vars:
            raise ValueError(f"the Dataset has no variable {var_name!r}; it has {sorted(obj.data_vars)}")
        return DenseDraws(_dense(obj[var_name]))
    if isinstance(obj, xr.DataArray):
        if RANK in obj.dims and "classes" in obj.attrs:
            return TopDraws(obj)
        return DenseDraws(_dense(obj))
    raise TypeError(
        "plausibility must be an xarray DataArray, Dataset or DataTree, "
        f"got {type(obj).__name__}; wrap an (item, class) array with point_estimate()"
    )


__all__ = ["CandidateDraws", "DenseDraws", "Draws", "TopDraws", "as_draws"]
