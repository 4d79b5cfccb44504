"""The plausibility storage contract: the names and dims every metric reads.

A trace's plausibilities are stored in one of two layouts (see the README):

* dense: ``posterior/plausibility (chain, draw, item, class)``;
* candidate form, for many classes with few named per item:
  ``posterior/plausibility_candidates (chain, draw, item, candidate)`` (0 on padding),
  ``posterior/pooled_mass (chain, draw, item)`` (the total plausibility of the classes not
  among the item's candidates, spread equally over them), and in ``constant_data``
  ``candidate_class (item, candidate)`` (class index, -1 on padding) and
  ``n_pooled (item,)`` (how many classes the pool holds).

Besides ``item`` and ``class``, every other dim of a plausibility is a *sample dim*
(normally ``("chain", "draw")``); :class:`Layout` describes the shape.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

import xarray as xr

ITEM = "item"
CLASS = "class"
NAME = "plausibility"
CANDIDATES = "plausibility_candidates"
POOLED = "pooled_mass"
CANDIDATE_CLASS = "candidate_class"
N_POOLED = "n_pooled"


@dataclass(frozen=True)
class Layout:
    """Shape of a plausibility DataArray: ``sample_dims`` (in the array's order) with
    ``sample_shape`` (``n_samples`` = their product), ``n_items``, ``n_classes``."""

    sample_dims: tuple[str, ...]
    sample_shape: tuple[int, ...]
    n_items: int
    n_classes: int

    @property
    def n_samples(self) -> int:
        return prod(self.sample_shape)


def layout(plausibility: xr.DataArray) -> Layout:
    """The :class:`Layout` of a validated plausibility DataArray."""
    sample_dims = tuple(d for d in plausibility.dims if d not in (ITEM, CLASS))
    sizes = plausibility.sizes
    return Layout(
        sample_dims=sample_dims,
        sample_shape=tuple(sizes[d] for d in sample_dims),
        n_items=sizes[ITEM],
        n_classes=sizes[CLASS],
    )
