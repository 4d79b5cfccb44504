"""Numeric ratings in long format: rating ``k`` is ``score[k]`` given to item ``item[k]``
by annotator ``annotator[k]`` (toxicity, aesthetics, affect scores)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import pandas as pd
import xarray as xr

from plausible.data.container import Annotations, every_item_annotated
from plausible.data.validation import (encode_long, fmt, id_array, index_array,
                                       missing_rows, positions, raise_first, role_columns)


class RatingSummary(NamedTuple):
    """Sufficient statistics per item, each ``(item,)``."""

    count: np.ndarray
    """int64 number of ratings."""
    mean: np.ndarray
    """float64 mean score."""
    sum_sq_dev: np.ndarray
    """float64 sum of squared deviations from the item's mean."""


@dataclass(frozen=True)
class Ratings(Annotations):
    """Long numeric ratings.

    ``item``, ``annotator``: int64 ``(rating,)`` indices into ``items`` ``(item,)`` and
    ``annotators`` ``(annotator,)``; ``score`` float64 ``(rating,)``, finite and inside
    ``scale = (low, high)`` when one is declared. Every item has >= 1 rating.
    """

    item: np.ndarray
    annotator: np.ndarray
    score: np.ndarray
    items: np.ndarray
    annotators: np.ndarray
    scale: tuple[float, float] | None = None

    def __post_init__(self):
        items = id_array(self.items, None, "item")
        annotators = id_array(self.annotators, None, "annotator")
        item = index_array(self.item, "item")
        annotator = index_array(self.annotator, "annotator")
        score = np.asarray(self.score)
        if not item.shape == annotator.shape == score.shape:
            raise ValueError(
                f"item, annotator, score shapes differ: {item.shape}, {annotator.shape}, {score.shape}"
            )
        if score.dtype.kind not in "iuf":
            raise ValueError(f"score must be numeric, got dtype {score.dtype}")
        score = score.astype(np.float64)
        raise_first(
            (item < 0) | (item >= items.size),
            lambda k: f"rating {k}: item index {item[k]} out of range for {items.size} items",
        )
        raise_first(
            (annotator < 0) | (annotator >= annotators.size),
            lambda k: f"item {fmt(items[item[k]])}: annotator index {annotator[k]} out of range "
            f"for {annotators.size} annotators",
        )

        def who(k: int) -> str:
            return f"item {fmt(items[item[k]])}, annotator {fmt(annotators[annotator[k]])}"

        raise_first(~np.isfinite(score), lambda k: f"{who(k)}: score {score[k]} is not finite")
        scale = self.scale
        if scale is not None:
            low, high = scale = (float(scale[0]), float(scale[1]))
            if not low < high:
                raise ValueError(f"scale must be (low, high) with low < high, got {scale}")
            raise_first(
                (score < low) | (score > high),
                lambda k: f"{who(k)}: score {fmt(score[k])} outside the scale [{low:g}, {high:g}]",
            )
        every_item_annotated(item, items, "ratings")
        self._freeze(item=item, annotator=annotator, score=score, items=items,
                     annotators=annotators, scale=scale)

    @property
    def n_ratings(self) -> int:
        """Number of ratings."""
        return self.item.size

    def per_item(self) -> RatingSummary:
        """Count, mean and sum of squared deviations of the scores of each item, ``(item,)``."""
        count = np.bincount(self.item, minlength=self.n_items)
        mean = np.bincount(self.item, weights=self.score, minlength=self.n_items) / count
        deviation = self.score - mean[self.item]
        sum_sq_dev = np.bincount(self.item, weights=deviation**2, minlength=self.n_items)
        return RatingSummary(count, mean, sum_sq_dev)

    def subset(self, items) -> Ratings:
        """The ratings of the selected items (a slice, boolean mask or item positions), in
        their order; annotators and the scale are kept."""
        index = positions(items, self.n_items)
        new_position = np.full(self.n_items, -1)
        new_position[index] = np.arange(index.size)
        keep = np.flatnonzero(new_position[self.item] >= 0)
        keep = keep[np.argsort(new_position[self.item[keep]], kind="stable")]
        return Ratings(new_position[self.item[keep]], self.annotator[keep], self.score[keep],
                       self.items[index], self.annotators, self.scale)

    def to_dataarray(self) -> xr.DataArray:
        """The scores, ``(rating,)``, with the item and annotator of each rating as coordinates
        ``rating_item`` / ``rating_annotator`` (a trace's ``observed_data``)."""
        return xr.DataArray(
            self.score, dims="rating",
            coords={"rating_item": ("rating", self.items[self.item]),
                    "rating_annotator": ("rating", self.annotators[self.annotator])})

    @classmethod
    def from_frame(
        cls, frame: pd.DataFrame, item=None, annotator=None, score=None,
        scale=None, items=None, annotators=None, min_ratings=1,
    ) -> Ratings:
        """Ratings from a long table with one row per rating.

        ``item``, ``annotator``, ``score``: the columns, by default ``task`` or ``item``,
        ``worker`` or ``annotator``, and ``score``. ``scale=(low, high)`` bounds the scores
        (inclusive). ``items``, ``annotators``: declared ids (their order defines the
        indices); undeclared, the ids in order of first appearance. Each item needs at least
        ``min_ratings`` ratings.
        """
        item, annotator, score = role_columns(frame, item=item, annotator=annotator,
                                              score=score)
        missing_rows(frame, [item, annotator])
        item_ids = frame[item].to_numpy()
        annotator_ids = frame[annotator].to_numpy()
        item_code, items, annotator_code, annotators = encode_long(item_ids, annotator_ids,
                                                                   items, annotators)

        def who(k: int) -> str:
            return f"item {fmt(item_ids[k])}, annotator {fmt(annotator_ids[k])}"

        raw = frame[score]
        value = pd.to_numeric(raw, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
        raise_first(
            raw.notna().to_numpy() & np.isnan(value),
            lambda k: f"{who(k)}: score {fmt(raw.iloc[k])} is not a number",
        )
        count = np.bincount(item_code, minlength=items.size)
        raise_first(
            count < min_ratings,
            lambda i: f"item {fmt(items[i])} has {count[i] or 'no'} ratings (min_ratings={min_ratings})",
        )
        return cls(item_code, annotator_code, value, items, annotators, scale)
