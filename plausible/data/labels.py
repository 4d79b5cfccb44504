"""Categorical labels in long format: annotation ``k`` is class ``label[k]`` given to item
``item[k]`` by annotator ``annotator[k]``; missing and replicated annotations allowed."""

from __future__ import annotations

from dataclasses import dataclass

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
    Every item has >= 1 annotation; an annotator may have none.
    """

    item: np.ndarray
    annotator: np.ndarray
    label: np.ndarray
    items: np.ndarray
    annotators: np.ndarray
    classes: np.ndarray

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
        self._freeze(item=item, annotator=annotator, label=label, items=items,
                     annotators=annotators, classes=classes)

    @property
    def n_annotations(self) -> int:
        """Number of labels (rows of the long table)."""
        return self.item.size

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
        return Labels(self.item, self.annotator, position[self.label], self.items,
                      self.annotators, declared)

    def subset(self, items) -> Labels:
        """The annotations of the selected items (a slice, boolean mask or item positions),
        in their order; annotators and classes are all kept (an annotator may have none)."""
        index = positions(items, self.n_items)
        new_position = np.full(self.n_items, -1)
        new_position[index] = np.arange(index.size)
        keep = np.flatnonzero(new_position[self.item] >= 0)
        keep = keep[np.argsort(new_position[self.item[keep]], kind="stable")]
        return Labels(new_position[self.item[keep]], self.annotator[keep], self.label[keep],
                      self.items[index], self.annotators, self.classes)

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


def _ids(ids: np.ndarray, codes: np.ndarray) -> xr.Variable:
    """``ids[codes]`` as an ``annotation`` Variable that references the ids: xarray would
    otherwise convert an object array through pandas, a new string object per annotation
    (600 MB for ten million labels)."""
    return xr.Variable("annotation", ids[codes], fastpath=True)
