"""Multi-label annotations: each annotator tags an item with any subset of ``K`` labels.

Response ``r`` is annotator ``annotator[r]``'s set of labels for item ``item[r]``, stored as a
0/1 row ``sets[r] (class,)`` over the ``K`` labels (``classes``). At most one response per
(item, annotator) pair; an annotator may skip items.

Two table forms are read:

* **long** (:meth:`LabelSets.from_frame`), crowd-kit's ``task, worker, label`` with one row
  per label a (task, worker) pair carries; a pair's rows together are its set. **The empty
  set** (the annotator saw the item and tagged none of the labels) is one row whose label is
  missing (NaN/None) or the empty string: without such a row an annotator who tagged nothing
  would be indistinguishable from one who never saw the item. A pair with both an empty row
  and labels is refused, as is a (task, worker, label) row given twice.
* **wide** (:meth:`LabelSets.from_wide`): one row per (task, worker), one 0/1 (or boolean)
  column per label; a row of zeros is the empty set.

With ``allow_empty=False`` both readers refuse an empty set (for tasks that require at least
one label), naming its row. Every error is a ``ValueError`` naming the row and its item and
annotator.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import xarray as xr

from plausible.data.container import Annotations, every_item_annotated
from plausible.data.validation import (column_values, encode, encode_long, fmt, id_array,
                                       index_array, missing_rows, positions, raise_first,
                                       role_columns)


def _repeats(keys: np.ndarray) -> np.ndarray:
    """bool ``(n,)``: True at every occurrence of a key after its first."""
    _, first = np.unique(keys, return_index=True)
    repeated = np.ones(keys.size, dtype=bool)
    repeated[first] = False
    return repeated


def _empty_label(values: np.ndarray) -> np.ndarray:
    """Which entries of a label column write the empty set: missing, or the empty string."""
    missing = pd.isna(values)
    blank = np.array([isinstance(v, str) and v.strip() == "" for v in values], dtype=bool)
    return np.asarray(missing, dtype=bool) | blank


@dataclass(frozen=True)
class LabelSets(Annotations):
    """Label sets, one per (item, annotator) response.

    ``item``, ``annotator``: int64 ``(response,)`` indices into ``items`` ``(item,)`` and
    ``annotators`` ``(annotator,)``; ``sets``: bool ``(response, class)``, ``sets[r, k]``
    whether response ``r`` carries label ``classes[k]`` (``classes (class,)``, unique ids).
    Every item has >= 1 response; no (item, annotator) pair has two.
    """

    item: np.ndarray
    annotator: np.ndarray
    sets: np.ndarray
    items: np.ndarray
    annotators: np.ndarray
    classes: np.ndarray

    def __post_init__(self):
        items = id_array(self.items, None, "item")
        annotators = id_array(self.annotators, None, "annotator")
        classes = id_array(self.classes, None, "class")
        item = index_array(self.item, "item")
        annotator = index_array(self.annotator, "annotator")
        sets = np.asarray(self.sets)
        if sets.ndim != 2 or sets.shape != (item.size, classes.size):
            raise ValueError(f"sets must have shape (responses, classes) = ({item.size}, "
                             f"{classes.size}), got {sets.shape}")
        if item.shape != annotator.shape:
            raise ValueError(f"item, annotator lengths differ: {item.size}, {annotator.size}")
        raise_first((item < 0) | (item >= items.size),
                    lambda r: f"response {r}: item index {item[r]} out of range for "
                    f"{items.size} items")
        raise_first((annotator < 0) | (annotator >= annotators.size),
                    lambda r: f"item {fmt(items[item[r]])}: annotator index {annotator[r]} out "
                    f"of range for {annotators.size} annotators")
        if sets.dtype != bool:
            if sets.dtype.kind not in "biuf":
                raise ValueError(f"sets must be 0/1, got dtype {sets.dtype}")
            bad = ~np.isin(sets, (0, 1))
            raise_first(bad.any(axis=1), lambda r: f"item {fmt(items[item[r]])}, annotator "
                        f"{fmt(annotators[annotator[r]])}: label "
                        f"{fmt(classes[np.flatnonzero(bad[r])[0]])} is "
                        f"{fmt(sets[r, np.flatnonzero(bad[r])[0]])}, not 0 or 1")
            sets = sets.astype(bool)
        pair = item * annotators.size + annotator
        order = np.argsort(pair, kind="stable")
        repeated = np.zeros(item.size, dtype=bool)
        repeated[order[1:]] = pair[order[1:]] == pair[order[:-1]]
        raise_first(repeated, lambda r: f"item {fmt(items[item[r]])}, annotator "
                    f"{fmt(annotators[annotator[r]])}: a second response (one set per item "
                    "and annotator)")
        every_item_annotated(item, items, "label sets")
        self._freeze(item=item, annotator=annotator, sets=sets, items=items,
                     annotators=annotators, classes=classes)

    @property
    def n_responses(self) -> int:
        """Number of label sets (one per item and annotator that answered)."""
        return self.item.size

    def subset(self, items) -> LabelSets:
        """The responses of the selected items (a slice, boolean mask or item positions), in
        their order; annotators and classes are all kept."""
        index = positions(items, self.n_items)
        new_position = np.full(self.n_items, -1)
        new_position[index] = np.arange(index.size)
        keep = np.flatnonzero(new_position[self.item] >= 0)
        keep = keep[np.argsort(new_position[self.item[keep]], kind="stable")]
        return LabelSets(new_position[self.item[keep]], self.annotator[keep], self.sets[keep],
                         self.items[index], self.annotators, self.classes)

    @classmethod
    def from_frame(cls, frame: pd.DataFrame, item=None, annotator=None, label=None, *,
                   classes=None, allow_empty: bool = True) -> LabelSets:
        """Label sets from a long table, one row per label a (task, worker) pair carries
        (module docstring; a missing or empty label is the empty set).

        ``item``, ``annotator``, ``label``: the columns, by default crowd-kit's ``task``,
        ``worker``, ``label`` or ``item``, ``annotator``, ``label``. ``classes``: the labels
        in the order that defines their indices (labels nobody chose included); undeclared,
        the sorted distinct labels. Items and annotators are numbered in order of first
        appearance. ``allow_empty=False``: an empty set is an error.
        """
        item, annotator, label = role_columns(frame, item=item, annotator=annotator,
                                              label=label)
        missing_rows(frame, [item, annotator])
        item_ids, annotator_ids = (column_values(frame[c]) for c in (item, annotator))
        values = np.asarray(frame[label].to_numpy(), dtype=object)
        empty = _empty_label(values)
        row = frame.index
        if not allow_empty:
            raise_first(empty, lambda r: f"row {fmt(row[r])}: item {fmt(item_ids[r])}, "
                        f"annotator {fmt(annotator_ids[r])}: an empty label set, but sets "
                        "must not be empty (allow_empty=False)")
        item_code, items, annotator_code, annotators = encode_long(item_ids, annotator_ids)
        if classes is None:
            _, classes = encode(pd.unique(values[~empty]), None, "class", sort=True)
        else:
            classes = id_array(classes, None, "class")
        code = pd.Index(classes).get_indexer(values[~empty])
        where = np.flatnonzero(~empty)
        raise_first(code < 0, lambda k: f"row {fmt(row[where[k]])}: item "
                    f"{fmt(item_ids[where[k]])}, annotator {fmt(annotator_ids[where[k]])}: "
                    f"label {fmt(values[where[k]])} is not one of the classes "
                    f"{list(classes)[:20]}")
        K = len(classes)
        pair = item_code * annotators.size + annotator_code
        key = np.full(pair.size, -1, dtype=np.int64)
        key[where] = pair[where] * K + code
        seen = np.zeros(pair.size, dtype=bool)
        seen[where] = _repeats(key[where])
        raise_first(seen, lambda r: f"row {fmt(row[r])}: item {fmt(item_ids[r])}, annotator "
                    f"{fmt(annotator_ids[r])}: label {fmt(values[r])} given twice")
        pairs, response = np.unique(pair, return_inverse=True)
        labelled_pair = np.zeros(pairs.size, dtype=bool)
        labelled_pair[response[where]] = True
        raise_first(empty & labelled_pair[response],
                    lambda r: f"row {fmt(row[r])}: item {fmt(item_ids[r])}, annotator "
                    f"{fmt(annotator_ids[r])}: an empty label set, but the same item and "
                    "annotator have labels in other rows")
        empty_rows = np.flatnonzero(empty)
        twice = np.zeros(pair.size, dtype=bool)
        twice[empty_rows] = _repeats(pair[empty_rows])
        raise_first(twice, lambda r: f"row {fmt(row[r])}: item {fmt(item_ids[r])}, annotator "
                    f"{fmt(annotator_ids[r])}: the empty label set given twice")
        sets = np.zeros((pairs.size, K), dtype=bool)
        sets[response[where], code] = True
        return cls(pairs // annotators.size, pairs % annotators.size, sets, items, annotators,
                   np.asarray(classes))

    @classmethod
    def from_wide(cls, frame: pd.DataFrame, item=None, annotator=None, *, classes=None,
                  allow_empty: bool = True) -> LabelSets:
        """Label sets from a wide table: one row per (task, worker), one 0/1 (or boolean)
        column per label; a row of zeros is the empty set (refused with
        ``allow_empty=False``).

        ``item``, ``annotator``: the id columns (defaults as :meth:`from_frame`);
        ``classes``: the label columns, in order (default every other column). Items and
        annotators are numbered in order of first appearance.
        """
        item, annotator = role_columns(frame, item=item, annotator=annotator)
        missing_rows(frame, [item, annotator])
        columns = ([c for c in frame.columns if c not in (item, annotator)] if classes is None
                   else list(classes))
        absent = [c for c in columns if c not in frame.columns]
        if absent:
            raise ValueError(f"label columns {absent} are not in the table; its columns are "
                             f"{list(frame.columns)}")
        if not columns:
            raise ValueError(f"no label columns besides {item!r} and {annotator!r}")
        item_ids, annotator_ids = (column_values(frame[c]) for c in (item, annotator))
        row = frame.index
        cells = frame[columns]
        numeric = np.empty(cells.shape, dtype=np.float64)
        for k, c in enumerate(columns):
            numeric[:, k] = pd.to_numeric(cells[c], errors="coerce").to_numpy(dtype=np.float64)
        bad = ~np.isin(numeric, (0.0, 1.0))

        def culprit(r):
            k = int(np.flatnonzero(bad[r])[0])
            return (f"row {fmt(row[r])}: item {fmt(item_ids[r])}, annotator "
                    f"{fmt(annotator_ids[r])}: label column {columns[k]!r} holds "
                    f"{fmt(cells.iloc[r, k])}, not 0 or 1")

        raise_first(bad.any(axis=1), culprit)
        sets = numeric == 1.0
        if not allow_empty:
            raise_first(~sets.any(axis=1), lambda r: f"row {fmt(row[r])}: item "
                        f"{fmt(item_ids[r])}, annotator {fmt(annotator_ids[r])}: an empty "
                        "label set, but sets must not be empty (allow_empty=False)")
        item_code, items, annotator_code, annotators = encode_long(item_ids, annotator_ids)
        pair = item_code * annotators.size + annotator_code
        _, first = np.unique(pair, return_index=True)
        again = np.ones(pair.size, dtype=bool)
        again[first] = False
        raise_first(again, lambda r: f"row {fmt(row[r])}: item {fmt(item_ids[r])}, annotator "
                    f"{fmt(annotator_ids[r])}: a second row for the same item and annotator")
        return cls(item_code, annotator_code, sets, items, annotators, np.asarray(columns))

    def to_frame(self) -> pd.DataFrame:
        """Long table with columns item, annotator, label, one row per label a response
        carries and one row with label None per empty set (:meth:`from_frame` reads it back),
        in response order."""
        response, label = np.nonzero(self.sets)
        empty = np.flatnonzero(~self.sets.any(axis=1))
        rows = np.concatenate([response, empty])
        labels = np.concatenate([np.asarray(self.classes, dtype=object)[label],
                                 np.full(empty.size, None, dtype=object)])
        order = np.argsort(rows, kind="stable")
        rows, labels = rows[order], labels[order]
        return pd.DataFrame({"item": self.items[self.item[rows]],
                             "annotator": self.annotators[self.annotator[rows]],
                             "label": labels})

    def to_wide(self) -> pd.DataFrame:
        """Wide table: columns item, annotator and one 0/1 column per class, a row per
        response (:meth:`from_wide` reads it back)."""
        frame = pd.DataFrame(self.sets.astype(np.uint8), columns=list(self.classes))
        frame.insert(0, "annotator", self.annotators[self.annotator])
        frame.insert(0, "item", self.items[self.item])
        return frame

    def to_dataarray(self) -> xr.DataArray:
        """The sets as uint8 ``(response, class)`` with each response's item and annotator as
        coordinates ``response_item`` / ``response_annotator`` (a trace's
        ``observed_data``)."""
        return xr.DataArray(self.sets.astype(np.uint8), dims=("response", "class"),
                            coords={"class": self.classes,
                                    "response_item": ("response", self.items[self.item]),
                                    "response_annotator": ("response",
                                                           self.annotators[self.annotator])})


__all__ = ["LabelSets"]
