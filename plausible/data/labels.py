"""Categorical labels in long format: annotation ``k`` is class ``label[k]`` given to item
``item[k]`` by annotator ``annotator[k]``; missing and replicated annotations allowed."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
import xarray as xr

from plausible.data.container import Annotations, every_item_annotated
from plausible.data.validation import (column_values, encode, encode_long, fmt, id_array,
                                       index_array, missing_rows, positions, raise_first,
                                       role_columns)


@dataclass(frozen=True)
class Labels(Annotations):
    """Long categorical annotations.

    ``item``, ``annotator``, ``label``: int64 ``(annotation,)`` indices into ``items``
    ``(item,)``, ``annotators`` ``(annotator,)`` and ``classes`` ``(class,)`` (unique ids).
    Every item has >= 1 annotation; an annotator may have none. ``known``: int64 ``(item,)``,
    the class index of each item whose true class is known (gold, an expert's adjudication),
    -1 for the others; None when no class is known (:meth:`with_known`). The latent-class
    models clamp a known item's class instead of sampling it.
    """

    item: np.ndarray
    annotator: np.ndarray
    label: np.ndarray
    items: np.ndarray
    annotators: np.ndarray
    classes: np.ndarray
    known: np.ndarray | None = None

    def __post_init__(self):
        items = id_array(self.items, None, "item")
        annotators = id_array(self.annotators, None, "annotator")
        classes = id_array(self.classes, None, "class")
        item = index_array(self.item, "item")
        annotator = index_array(self.annotator, "annotator")
        label = index_array(self.label, "label")
        if not item.shape == annotator.shape == label.shape:
            raise ValueError(
                f"item, annotator, label lengths differ: {item.size}, {annotator.size}, {label.size}"
            )
        raise_first(
            (item < 0) | (item >= items.size),
            lambda k: f"annotation {k}: item index {item[k]} out of range for {items.size} items",
        )
        raise_first(
            (annotator < 0) | (annotator >= annotators.size),
            lambda k: f"item {fmt(items[item[k]])}: annotator index {annotator[k]} out of range "
            f"for {annotators.size} annotators",
        )
        raise_first(
            (label < 0) | (label >= classes.size),
            lambda k: f"item {fmt(items[item[k]])}, annotator {fmt(annotators[annotator[k]])}: "
            f"class index {label[k]} out of range for {classes.size} classes",
        )
        every_item_annotated(item, items, "labels")
        known = self.known
        if known is not None:
            known = index_array(known, "known")
            if known.shape != items.shape:
                raise ValueError(f"known has {known.size} entries for {items.size} items")
            raise_first((known < -1) | (known >= classes.size),
                        lambda i: f"item {fmt(items[i])}: known class index {known[i]} out of "
                        f"range for {classes.size} classes")
            if (known < 0).all():
                known = None
        self._freeze(item=item, annotator=annotator, label=label, items=items,
                     annotators=annotators, classes=classes, known=known)

    @property
    def n_annotations(self) -> int:
        """Number of labels (rows of the long table)."""
        return self.item.size

    @property
    def n_known(self) -> int:
        """Number of items whose class is known (:meth:`with_known`)."""
        return 0 if self.known is None else int((self.known >= 0).sum())

    def with_known(self, known) -> Labels:
        """The same labels with the true class of some items known: ``known`` maps item ids
        to class ids (a ``pd.Series`` indexed by item, a dict, or a two-column table of item
        and class; None or empty: none known). ``ValueError`` naming the item whose id is not
        among the labels' items, whose class is not one of the classes, which is missing, or
        which is given twice with different classes."""
        if known is None:
            return replace(self, known=None)
        pairs = known_pairs(known)
        position = pd.Index(self.items).get_indexer(pairs.index)
        raise_first(position < 0, lambda k: f"known: item {fmt(pairs.index[k])} has no labels "
                    "(it is not one of the labels' items)")
        code = pd.Index(self.classes).get_indexer(pairs.to_numpy())
        raise_first(code < 0, lambda k: f"known: item {fmt(pairs.index[k])}: class "
                    f"{fmt(pairs.iloc[k])} is not one of the classes "
                    f"({', '.join(map(str, self.classes[:20]))})")
        codes = np.full(self.n_items, -1, dtype=np.int64)
        duplicated = pd.Index(position).duplicated(keep=False)
        if duplicated.any():
            clash = pd.Series(code[duplicated]).groupby(position[duplicated]).nunique()
            if (clash > 1).any():
                i = int(clash.index[(clash > 1).to_numpy()][0])
                raise ValueError(f"known: item {fmt(self.items[i])} is given two different "
                                 "classes")
        codes[position] = code
        return replace(self, known=codes)

    def with_classes(self, classes) -> Labels:
        """The same labels with the classes declared: ``classes`` in the order that defines
        their indices (an ordinal scale's grades in order, say), classes nobody chose
        included. ``ValueError`` naming the first item and annotator whose label is not one
        of them."""
        declared = id_array(classes, None, "class")
        position = pd.Index(declared).get_indexer(self.classes)
        unknown = np.flatnonzero(position < 0)
        if unknown.size:
            k = int(np.flatnonzero(np.isin(self.label, unknown))[0])
            raise ValueError(f"item {fmt(self.items[self.item[k]])}, annotator "
                             f"{fmt(self.annotators[self.annotator[k]])}: label "
                             f"{fmt(self.classes[self.label[k]])} is not one of the declared "
                             f"classes ({', '.join(map(str, declared[:20]))})")
        known = None if self.known is None else np.where(self.known >= 0,
                                                         position[self.known], -1)
        return Labels(self.item, self.annotator, position[self.label], self.items,
                      self.annotators, declared, known)

    def subset(self, items) -> Labels:
        """The annotations of the selected items (a slice, boolean mask or item positions),
        in their order; annotators and classes are all kept (an annotator may have none)."""
        index = positions(items, self.n_items)
        new_position = np.full(self.n_items, -1)
        new_position[index] = np.arange(index.size)
        keep = np.flatnonzero(new_position[self.item] >= 0)
        keep = keep[np.argsort(new_position[self.item[keep]], kind="stable")]
        return Labels(new_position[self.item[keep]], self.annotator[keep], self.label[keep],
                      self.items[index], self.annotators, self.classes,
                      None if self.known is None else self.known[index])

    @classmethod
    def from_frame(
        cls, frame: pd.DataFrame, item=None, annotator=None, label=None,
        classes=None, annotators=None, items=None,
    ) -> Labels:
        """Labels from a long table with one row per annotation.

        ``item``, ``annotator``, ``label``: the columns, by default crowd-kit's ``task``,
        ``worker``, ``label`` or the project's ``item``, ``annotator``, ``label``.
        ``classes``, ``annotators``, ``items``: declared ids (their order defines the
        indices); undeclared, classes are the sorted unique labels and items/annotators
        the ids in order of first appearance. Declared items must each have a label.
        """
        item, annotator, label = role_columns(frame, item=item, annotator=annotator,
                                              label=label)
        missing_rows(frame, [item, annotator, label])
        item_ids, annotator_ids, values = (column_values(frame[c]) for c in (item, annotator,
                                                                              label))
        item_code, items, annotator_code, annotators = encode_long(item_ids, annotator_ids,
                                                                   items, annotators)
        code, classes = encode(values, classes, "class", sort=True)
        raise_first(
            code < 0,
            lambda k: f"item {fmt(item_ids[k])}, annotator {fmt(annotator_ids[k])}: "
            f"label {fmt(values[k])} is not one of the classes {list(classes)[:20]}",
        )
        return cls(item_code, annotator_code, code, items, annotators, classes)

    def to_dataarray(self) -> xr.DataArray:
        """The labels as class ids, ``(annotation,)``, with the item and annotator of each
        annotation as coordinates ``label_item`` / ``label_annotator`` (a trace's
        ``observed_data``)."""
        return xr.DataArray(_ids(self.classes, self.label)).assign_coords(
            label_item=_ids(self.items, self.item),
            label_annotator=_ids(self.annotators, self.annotator))

    def to_frame(self) -> pd.DataFrame:
        """Long table with columns item, annotator, label holding the ids."""
        return pd.DataFrame({
            "item": self.items[self.item],
            "annotator": self.annotators[self.annotator],
            "label": self.classes[self.label],
        })


def known_pairs(known) -> pd.Series:
    """``known`` (Series, dict or two-column table of item and class) as a Series of class
    ids indexed by item id; ``ValueError`` naming an item whose class is missing."""
    if isinstance(known, pd.DataFrame):
        if known.shape[1] != 2:
            raise ValueError(f"known: a table of known classes has two columns, item and "
                             f"class; got {list(known.columns)}")
        known = pd.Series(known.iloc[:, 1].to_numpy(), index=known.iloc[:, 0].to_numpy())
    elif isinstance(known, dict):
        known = pd.Series(known, dtype=object)
    elif not isinstance(known, pd.Series):
        raise TypeError(f"known must be a pandas Series (item -> class), a dict or a table, "
                        f"got {type(known).__name__}")
    missing = known.isna().to_numpy()
    raise_first(missing, lambda k: f"known: item {fmt(known.index[k])} has no class")
    return known


def _ids(ids: np.ndarray, codes: np.ndarray) -> xr.Variable:
    """``ids[codes]`` as an ``annotation`` Variable that references the ids: xarray would
    otherwise convert an object array through pandas, a new string object per annotation
    (600 MB for ten million labels)."""
    return xr.Variable("annotation", ids[codes], fastpath=True)
