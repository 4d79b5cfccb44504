"""What every annotation container shares: item ids, a content hash, validated frozen fields.

:class:`Votes`, :class:`Labels`, :class:`Ratings` and :class:`Rankings` are frozen dataclasses
with an ``items (item,)`` field that validate and normalise their fields in ``__post_init__``
and store them with :meth:`Annotations._freeze`.
"""

from __future__ import annotations

import numpy as np

from plausible.data.digest import content_hash
from plausible.data.validation import fmt, raise_first


class Annotations:
    """Base of the annotation containers."""

    items: np.ndarray
    classes: np.ndarray
    annotators: np.ndarray

    @property
    def n_items(self) -> int:
        return self.items.size

    @property
    def n_classes(self) -> int:
        """Number of classes (containers with ``classes``)."""
        return self.classes.size

    @property
    def n_annotators(self) -> int:
        """Number of annotators (containers with ``annotators``)."""
        return self.annotators.size

    @property
    def content_hash(self) -> str:
        """SHA-256 of the annotations and ids (:mod:`plausible.data.digest`)."""
        return content_hash(self)

    def _freeze(self, **fields) -> None:
        """Store validated ``fields`` on the frozen instance (from ``__post_init__``)."""
        for name, value in fields.items():
            object.__setattr__(self, name, value)


def every_item_annotated(item: np.ndarray, items: np.ndarray, what: str) -> None:
    """``ValueError`` naming the first item of ``items`` that no entry of ``item`` (indices)
    refers to: "item 'x' has no <what>"."""
    raise_first(np.bincount(item, minlength=items.size) == 0,
                lambda i: f"item {fmt(items[i])} has no {what}")
