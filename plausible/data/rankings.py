"""Partial rankings with ties (differential diagnoses), stored flat.

A reader ranks classes in ordered blocks ``b_1 > b_2 > ...``; classes inside a block are
tied and the classes a reader does not name form the implicit, unranked last block. The
container keeps one row ("entry") per ranked (item, reader, class).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import xarray as xr

from plausible.data.container import Annotations
from plausible.data.validation import (encode, fmt, id_array,
                                       index_array, missing_rows, positions, raise_first)

UNRANKED = -1
"""Value of :meth:`Rankings.blocks` for a class the reader did not name."""
NO_READER = -2
"""Value of :meth:`Rankings.blocks` for a reader slot the item does not have."""


def _is_int(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _sequence(value, what: str) -> list:
    if isinstance(value, (str, bytes)) or not hasattr(value, "__len__"):
        raise ValueError(f"{what} must be a list, got {value!r}")
    return list(value)


@dataclass(frozen=True)
class Rankings(Annotations):
    """Partial rankings of ``K`` classes by the readers of each item.

    Entries (one per ranked (item, reader, class)), int64 ``(entry,)``, sorted by
    (item, reader, block, label):

    * ``item``: item index ``0..n_items-1``
    * ``reader``: reader index within the item, ``0..n_readers[item]-1``
    * ``label``: class index ``0..K-1``
    * ``block``: 0-based block within that reader's ranking (0 = top; equal = tied)

    ``n_readers`` int64 ``(item,)`` (each >= 1), ``items`` ``(item,)`` ids, ``classes``
    ``(class,)`` names, ``readers`` object ``(entry,)`` annotator ids or ``None``.

    Every reader names >= 1 class, blocks are non-empty and a class appears at most
    once per reader.
    """

    item: np.ndarray
    reader: np.ndarray
    label: np.ndarray
    block: np.ndarray
    n_readers: np.ndarray
    items: np.ndarray
    classes: np.ndarray
    readers: np.ndarray | None = None

    def __post_init__(self):
        items = id_array(self.items, None, "item")
        classes = id_array(self.classes, None, "class")
        n_readers = index_array(self.n_readers, "n_readers")
        if n_readers.shape != items.shape:
            raise ValueError(f"n_readers has {n_readers.size} entries for {items.size} items")
        raise_first(n_readers <= 0, lambda i: f"item {fmt(items[i])} has no readers")

        item = index_array(self.item, "item")
        n = item.size
        others = ("reader", "label", "block") + (() if self.readers is None else ("readers",))
        for name in others:
            shape = np.shape(getattr(self, name))
            if shape != (n,):
                raise ValueError(f"{name} has shape {shape}, expected ({n},) like item")
        raise_first(
            (item < 0) | (item >= items.size),
            lambda i: f"entry {i}: item index {item[i]} out of range for {items.size} items",
        )
        reader = index_array(self.reader, "reader")
        readers = None if self.readers is None else np.asarray(self.readers, dtype=object)
        raise_first(
            (reader < 0) | (reader >= n_readers[item]),
            lambda i: f"item {fmt(items[item[i]])}: reader index {reader[i]} out of range "
            f"for its {n_readers[item[i]]} readers",
        )

        def who(i: int) -> str:
            name = "" if readers is None else f" ({fmt(readers[i])})"
            return f"item {fmt(items[item[i]])}, reader {reader[i]}{name}"

        label = index_array(self.label, "class id", who)
        block = index_array(self.block, "block", who)
        raise_first(
            (label < 0) | (label >= classes.size),
            lambda i: f"{who(i)}: class id {label[i]} out of range 0..{classes.size - 1}",
        )
        raise_first(block < 0, lambda i: f"{who(i)}: negative block index {block[i]}")

        order = np.lexsort((label, block, reader, item))
        item, reader, label, block = item[order], reader[order], label[order], block[order]
        if readers is not None:
            readers = readers[order]
        offsets = np.cumsum(n_readers) - n_readers
        flat = offsets[item] + reader

        def class_name(c: int) -> str:
            return f"class {fmt(classes[c])}" + ("" if classes[c] == c else f" (id {c})")

        by_class = np.lexsort((label, flat))
        twice = (np.diff(flat[by_class]) == 0) & (np.diff(label[by_class]) == 0)
        raise_first(
            twice,
            lambda i: f"{who(by_class[i + 1])}: {class_name(label[by_class[i + 1]])} "
            "appears twice in the ranking",
        )

        per_reader = np.bincount(flat, minlength=int(n_readers.sum()))
        owner = np.repeat(np.arange(items.size), n_readers)
        raise_first(
            per_reader == 0,
            lambda f: f"item {fmt(items[owner[f]])}, reader {f - offsets[owner[f]]} names no class",
        )

        first = np.r_[True, flat[1:] != flat[:-1]][:n]
        previous = np.where(first, -1, np.r_[-1, block[:-1]][:n])
        raise_first(
            block - previous > 1,
            lambda i: f"{who(i)}: block {previous[i] + 1} is empty",
        )
        if readers is not None:
            raise_first(
                ~first & (readers != np.r_[None, readers[:-1]][:n]),
                lambda i: f"{who(i)}: one reader carries two annotator ids "
                f"{fmt(readers[i - 1])} and {fmt(readers[i])}",
            )

        self._freeze(item=item, reader=reader, label=label, block=block, n_readers=n_readers,
                     items=items, classes=classes, readers=readers)

    @property
    def n_entries(self) -> int:
        """Number of entries, one per ranked (item, reader, class)."""
        return self.item.size

    @property
    def max_readers(self) -> int:
        """Most readers of any item (0 without items)."""
        return int(self.n_readers.max(initial=0))

    @property
    def flat_reader(self) -> np.ndarray:
        """int64 ``(entry,)``: index of the entry's reader among all ``n_readers.sum()`` readers."""
        return (np.cumsum(self.n_readers) - self.n_readers)[self.item] + self.reader

    def blocks(self) -> np.ndarray:
        """Dense int64 ``(item, max_readers, class)``: block index of each ranked class,
        ``UNRANKED`` (-1) for classes a reader did not name, ``NO_READER`` (-2) for reader
        slots beyond the item's ``n_readers``."""
        out = np.full((self.n_items, self.max_readers, self.n_classes), NO_READER, dtype=np.int64)
        out[np.arange(self.max_readers) < self.n_readers[:, None]] = UNRANKED
        out[self.item, self.reader, self.label] = self.block
        return out

    def n_named(self) -> np.ndarray:
        """int64 ``(item,)``: the number of distinct classes each item's readers name."""
        named = np.unique(self.item * self.n_classes + self.label) // max(self.n_classes, 1)
        return np.bincount(named, minlength=self.n_items)

    def subset(self, items) -> Rankings:
        """The rankings of the selected items (a slice, boolean mask or item positions), in
        their order; all classes kept."""
        index = positions(items, self.n_items)
        new_position = np.full(self.n_items, -1)
        new_position[index] = np.arange(index.size)
        keep = np.flatnonzero(new_position[self.item] >= 0)
        return Rankings(new_position[self.item[keep]], self.reader[keep], self.label[keep],
                        self.block[keep], self.n_readers[index], self.items[index], self.classes,
                        None if self.readers is None else self.readers[keep])

    def to_dataarray(self) -> xr.DataArray:
        """The ranked classes as class ids, ``(entry,)``, with coordinates ``entry_item``
        (item id), ``entry_reader`` (reader within the item) and ``entry_block`` (0 = top;
        equal = tied), and ``entry_annotator`` (the reader's annotator id) when the readers
        carry ids (a trace's ``observed_data``)."""
        coords = {"entry_item": ("entry", self.items[self.item]),
                  "entry_reader": ("entry", self.reader), "entry_block": ("entry", self.block)}
        if self.readers is not None:
            coords["entry_annotator"] = ("entry", self.readers)
        return xr.DataArray(self.classes[self.label], dims="entry", coords=coords)

    def to_selectors(self) -> list[list[list[list[int]]]]:
        """Nested lists cases -> readers -> blocks -> class ids (inverse of ``from_selectors``)."""
        if not self.n_entries:
            return []
        flat = self.flat_reader
        new_block = (flat[1:] != flat[:-1]) | (self.block[1:] != self.block[:-1])
        starts = np.flatnonzero(np.r_[True, new_block])
        blocks = iter(np.split(self.label, starts[1:]))
        n_blocks = iter(np.bincount(flat[starts], minlength=int(self.n_readers.sum())))
        return [
            [[next(blocks).tolist() for _ in range(next(n_blocks))] for _ in range(n)]
            for n in self.n_readers
        ]

    @classmethod
    def from_selectors(cls, selectors, classes=None, items=None) -> Rankings:
        """Rankings from nested lists cases -> readers -> blocks -> class ids.

        ``[[[[0, 3], [2]], [[1], [0]]]]``: case 0 has reader 0 ranking {0, 3} > {2} and
        reader 1 ranking {1} > {0}. ``classes``: an int ``K`` or a sequence of ``K`` names
        (class id ``k`` is ``classes[k]``); default ``K`` = largest id + 1. ``items``:
        ``(case,)`` ids, default ``0..n-1``.
        """
        selectors = _sequence(selectors, "selectors")
        n = len(selectors)
        items = np.arange(n) if items is None else id_array(items, n, "item")
        n_readers, rows = [], []
        for i, case in enumerate(selectors):
            where = f"item {fmt(items[i])}"
            case = _sequence(case, f"{where}: the list of readers")
            if not case:
                raise ValueError(f"{where} has no readers")
            n_readers.append(len(case))
            for r, ranking in enumerate(case):
                ranking = _sequence(ranking, f"{where}, reader {r}: the ranking")
                if not ranking:
                    raise ValueError(f"{where}, reader {r} names no class")
                for b, block in enumerate(ranking):
                    block = _sequence(block, f"{where}, reader {r}: block {b}")
                    if not block:
                        raise ValueError(f"{where}, reader {r}: block {b} is empty")
                    for c in block:
                        if not _is_int(c):
                            raise ValueError(
                                f"{where}, reader {r}: class id {c!r} is not an integer"
                            )
                        rows.append((i, r, int(c), b))
        item, reader, label, block = np.array(rows, dtype=np.int64).reshape(-1, 4).T
        if classes is None:
            classes = int(label.max(initial=-1)) + 1
        if _is_int(classes):
            classes = np.arange(classes)
        return cls(item, reader, label, block, np.array(n_readers, dtype=np.int64), items, classes)

    @classmethod
    def from_long(
        cls, frame: pd.DataFrame, item="item", reader="reader", label="label", rank="rank",
        classes=None,
    ) -> Rankings:
        """Rankings from a long table, one row per ranked class.

        Rows of one (item, reader) with equal ``rank`` are tied; lower rank is better and
        ranks need not be consecutive (1, 1, 3 -> blocks 0, 0, 1). Items, and the readers
        of each item, are indexed in order of first appearance in the table; ``readers``
        keeps the reader ids. Labels: with ``classes=None``, integer labels are class ids
        (``K`` = largest + 1) and other labels are names (classes = sorted unique); with an
        int ``K``, labels are ids ``0..K-1``; with a sequence of names, labels are names,
        except integer labels next to non-integer names, which are ids into ``classes``.
        """
        missing_rows(frame, [item, reader, label, rank])
        item_code, items = encode(frame[item].to_numpy(), None, "item")
        reader_code, reader_ids = encode(frame[reader].to_numpy(), None, "reader")
        n_ids = max(reader_ids.size, 1)
        pair, pair_of = np.unique(item_code * n_ids + reader_code, return_inverse=True)
        pair_of = pair_of.ravel()
        pair_item = pair // n_ids
        n_readers = np.bincount(pair_item, minlength=items.size)
        within = (np.arange(pair.size) - (np.cumsum(n_readers) - n_readers)[pair_item])[pair_of]

        def who(i: int) -> str:
            return f"item {fmt(items[item_code[i]])}, reader {fmt(reader_ids[reader_code[i]])}"

        ranks = pd.to_numeric(frame[rank], errors="coerce").to_numpy(dtype=float)
        raise_first(
            ~np.isfinite(ranks),
            lambda i: f"{who(i)}: rank {fmt(frame[rank].iloc[i])} is not a finite number",
        )
        block = pd.Series(ranks).groupby(pair_of).rank(method="dense").to_numpy(dtype=np.int64) - 1

        values = frame[label].to_numpy()
        int_labels = pd.api.types.is_integer_dtype(frame[label])
        if classes is None and int_labels:
            classes = int(values.max(initial=-1)) + 1
        if _is_int(classes):
            if not int_labels:
                raise ValueError(f"classes={classes} needs integer class ids in column {label!r}")
            code, classes = values.astype(np.int64), np.arange(classes)
        elif int_labels and not pd.api.types.is_numeric_dtype(np.asarray(classes)):
            code, classes = values.astype(np.int64), id_array(classes, None, "class")
        else:
            code, classes = encode(values, classes, "class", sort=True)
            raise_first(
                code < 0,
                lambda i: f"{who(i)}: unknown class {fmt(values[i])} (not among the classes)",
            )
        return cls(
            item_code, within, code, block, n_readers, items, classes,
            readers=reader_ids[reader_code].astype(object),
        )
