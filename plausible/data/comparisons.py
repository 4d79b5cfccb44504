"""Pairwise comparisons in long format (crowd-kit's ``worker, left, right, label``):
comparison ``k`` shows items ``left[k]`` and ``right[k]`` to annotator ``annotator[k]``, who
picks one of them (``winner_is_left[k]``); repeated and missing pairs allowed.

The aggregation of comparisons is a ranking, and its plausibility is each item's posterior
distribution over the rank positions (:mod:`plausible.models.bradley_terry`): the
container's ``classes`` are those positions, ``1..n`` for ``n`` items, rank 1 the best.
They are integers so that they sort as ranks sort (as strings ``"10"`` would come before
``"2"``) and the top ``k`` positions are ``classes <= k``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import xarray as xr

from plausible.data.container import Annotations, every_item_annotated
from plausible.data.validation import (column_values, encode, fmt, id_array, index_array,
                                       positions, raise_first)


@dataclass(frozen=True)
class Comparisons(Annotations):
    """Long pairwise comparisons.

    ``left``, ``right``: int64 ``(comparison,)`` indices into ``items (item,)``, never equal in
    one comparison; ``annotator``: int64 ``(comparison,)`` indices into ``annotators
    (annotator,)``; ``winner_is_left``: bool ``(comparison,)``, the left item was picked.
    Every item is compared at least once; an annotator may have no comparison. ``classes``
    (a property): the rank positions ``1..n_items`` (module docstring).
    """

    left: np.ndarray
    right: np.ndarray
    annotator: np.ndarray
    winner_is_left: np.ndarray
    items: np.ndarray
    annotators: np.ndarray

    def __post_init__(self):
        items = id_array(self.items, None, "item")
        annotators = id_array(self.annotators, None, "annotator")
        left, right = index_array(self.left, "left"), index_array(self.right, "right")
        annotator = index_array(self.annotator, "annotator")
        winner = np.asarray(self.winner_is_left)
        if winner.dtype != bool:
            raise ValueError(f"winner_is_left must be boolean, got dtype {winner.dtype}")
        if not left.shape == right.shape == annotator.shape == winner.shape:
            raise ValueError(f"left, right, annotator, winner_is_left lengths differ: "
                             f"{left.size}, {right.size}, {annotator.size}, {winner.size}")
        for name, index in (("left", left), ("right", right)):
            raise_first((index < 0) | (index >= items.size),
                        lambda k: f"comparison {k}: {name} item index {index[k]} out of range "
                        f"for {items.size} items")
        raise_first((annotator < 0) | (annotator >= annotators.size),
                    lambda k: f"comparison {k}: annotator index {annotator[k]} out of range for "
                    f"{annotators.size} annotators")
        raise_first(left == right, lambda k: f"comparison {k}: item {fmt(items[left[k]])} "
                    "compared with itself")
        every_item_annotated(np.concatenate([left, right]), items, "comparison")
        self._freeze(left=left, right=right, annotator=annotator, winner_is_left=winner,
                     items=items, annotators=annotators)

    @property
    def classes(self) -> np.ndarray:
        """The rank positions ``1..n_items``, int64 ``(class,)`` (rank 1 the best)."""
        return np.arange(1, self.n_items + 1)

    @property
    def n_comparisons(self) -> int:
        """Number of comparisons (rows of the long table)."""
        return self.left.size

    @property
    def winner(self) -> np.ndarray:
        """The picked item of each comparison, int64 ``(comparison,)``."""
        return np.where(self.winner_is_left, self.left, self.right)

    @property
    def loser(self) -> np.ndarray:
        """The item not picked in each comparison, int64 ``(comparison,)``."""
        return np.where(self.winner_is_left, self.right, self.left)

    def subset(self, items) -> Comparisons:
        """The comparisons between selected items (a slice, boolean mask or item positions,
        in their order); annotators are all kept. ``ValueError`` naming a selected item with
        no comparison among the selected ones."""
        index = positions(items, self.n_items)
        new_position = np.full(self.n_items, -1)
        new_position[index] = np.arange(index.size)
        keep = (new_position[self.left] >= 0) & (new_position[self.right] >= 0)
        return Comparisons(new_position[self.left[keep]], new_position[self.right[keep]],
                           self.annotator[keep], self.winner_is_left[keep], self.items[index],
                           self.annotators)

    @classmethod
    def from_frame(cls, frame: pd.DataFrame, *, worker: str = "worker", left: str = "left",
                   right: str = "right", label: str = "label", items=None, annotators=None,
                   source: str | None = None) -> Comparisons:
        """Comparisons from a long table with one row per comparison: the annotator's id in
        column ``worker``, the two items' ids in ``left`` and ``right``, and the picked one's
        id in ``label`` (crowd-kit's pairwise format).

        ``items``, ``annotators``: declared ids (their order defines the indices; every
        declared item must be compared); undeclared, both are the ids in order of first
        appearance (items read row by row, left before right). ``ValueError`` naming the row
        (its index label) for a missing value, an item compared with itself, a label that is
        neither of the row's items, or an id not among the declared ones; prefixed by
        ``source`` (a file path, say) when given.
        """
        try:
            return cls._from_frame(frame, worker, left, right, label, items, annotators)
        except ValueError as error:
            if source is None:
                raise
            raise ValueError(f"{source}: {error}") from None

    @classmethod
    def _from_frame(cls, frame, worker, left, right, label, items, annotators):
        if not isinstance(frame, pd.DataFrame):
            raise TypeError(f"expected a pandas DataFrame, got {type(frame).__name__}")
        columns = {"worker": worker, "left": left, "right": right, "label": label}
        for role, column in columns.items():
            if column not in frame.columns:
                raise ValueError(f"column {column!r} (the {role}) is not in the table; its "
                                 f"columns are {list(frame.columns)} (name it with {role}=)")
        if frame.shape[0] == 0:
            raise ValueError(f"no rows (columns: {list(frame.columns)})")
        row = frame.index
        for role, column in columns.items():
            raise_first(frame[column].isna().to_numpy(),
                        lambda k: f"row {fmt(row[k])}: missing {role} ({column!r})")
        left_ids, right_ids, label_ids = (frame[c].to_numpy() for c in (left, right, label))
        worker_ids = column_values(frame[worker])
        pair_ids = np.column_stack([left_ids, right_ids]).ravel()  # left0, right0, left1, ...
        item_code, items = encode(pair_ids, items, "item")
        raise_first(item_code < 0, lambda f: f"row {fmt(row[f // 2])}: item "
                    f"{fmt(pair_ids[f])} is not among the declared items")
        left_code, right_code = item_code[0::2], item_code[1::2]
        raise_first(left_code == right_code, lambda k: f"row {fmt(row[k])}: item "
                    f"{fmt(left_ids[k])} compared with itself")
        label_code = pd.Index(items).get_indexer(label_ids)
        is_left, is_right = label_code == left_code, label_code == right_code
        raise_first(~(is_left | is_right), lambda k: f"row {fmt(row[k])}: label "
                    f"{fmt(label_ids[k])} is neither the left item {fmt(left_ids[k])} nor the "
                    f"right item {fmt(right_ids[k])}")
        annotator_code, annotators = encode(worker_ids, annotators, "annotator")
        raise_first(annotator_code < 0, lambda k: f"row {fmt(row[k])}: unknown annotator "
                    f"{fmt(worker_ids[k])} (not among the declared annotators)")
        return cls(left_code, right_code, annotator_code, is_left, items, annotators)

    def to_frame(self) -> pd.DataFrame:
        """Long table with columns worker, left, right, label holding the ids (crowd-kit's
        pairwise format; :meth:`from_frame` reads it back)."""
        return pd.DataFrame({"worker": self.annotators[self.annotator],
                             "left": self.items[self.left], "right": self.items[self.right],
                             "label": self.items[self.winner]})

    def to_dataarray(self) -> xr.DataArray:
        """Whether the left item won, bool ``(comparison,)``, with each comparison's left and
        right item and annotator ids as coordinates ``comparison_left``,
        ``comparison_right``, ``comparison_annotator`` (a trace's ``observed_data``)."""
        return xr.DataArray(self.winner_is_left, dims="comparison").assign_coords(
            comparison_left=("comparison", self.items[self.left]),
            comparison_right=("comparison", self.items[self.right]),
            comparison_annotator=("comparison", self.annotators[self.annotator]))


__all__ = ["Comparisons"]
