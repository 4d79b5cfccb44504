"""Top-1 votes: per item, how many annotators chose each class (CIFAR-10H)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from plausible.data.container import Annotations
from plausible.data.labels import Labels
from plausible.data.validation import id_array, integer_counts, positions


@dataclass(frozen=True)
class Votes(Annotations):
    """Vote counts.

    ``counts`` int64 ``(item, class)``, every entry >= 0 and every item with >= 1 vote;
    ``items`` ``(item,)`` unique ids; ``classes`` ``(class,)`` unique names.
    """

    counts: np.ndarray
    items: np.ndarray
    classes: np.ndarray

    def __post_init__(self):
        counts = np.asarray(self.counts)
        if counts.ndim != 2:
            raise ValueError(f"counts must be 2-D (item, class), got shape {counts.shape}")
        items = id_array(self.items, counts.shape[0], "item")
        classes = id_array(self.classes, counts.shape[1], "class")
        counts = integer_counts(
            counts, items, classes, prefix="", dtype_error="counts must hold integers",
            empty="has no votes",
        )
        self._freeze(counts=counts, items=items, classes=classes)

    def n_named(self) -> np.ndarray:
        """int64 ``(item,)``: the number of classes each item has a vote for."""
        return (self.counts > 0).sum(axis=1)

    def subset(self, items) -> Votes:
        """The votes of the selected items (a slice, boolean mask or item positions), all
        classes kept."""
        index = positions(items, self.n_items)
        return Votes(self.counts[index], self.items[index], self.classes)

    @classmethod
    def from_counts(cls, counts, items=None, classes=None) -> Votes:
        """Votes from an ``(item, class)`` count array; ids default to ``0..n-1``, ``0..K-1``,
        or, for a pandas DataFrame (e.g. a ``pd.crosstab``), to its index and columns."""
        if hasattr(counts, "columns") and hasattr(counts, "index"):
            items = counts.index.to_numpy() if items is None else items
            classes = counts.columns.to_numpy() if classes is None else classes
        counts = np.asarray(counts)
        if counts.ndim != 2:
            raise ValueError(f"counts must be 2-D (item, class), got shape {counts.shape}")
        return cls(
            counts,
            np.arange(counts.shape[0]) if items is None else items,
            np.arange(counts.shape[1]) if classes is None else classes,
        )

    @classmethod
    def from_labels(cls, labels: Labels) -> Votes:
        """Count each item's labels per class: ``(item, class)`` from long labels."""
        flat = labels.item * labels.n_classes + labels.label
        counts = np.bincount(flat, minlength=labels.n_items * labels.n_classes)
        return cls(counts.reshape(labels.n_items, labels.n_classes), labels.items, labels.classes)
