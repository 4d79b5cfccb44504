"""Long labels grouped by one side, annotator or item, in compressed sparse rows: the layout
the compiled sweeps of the label samplers read (GLAD and Su's slice scans, the Dawid–Skene
family's joint scan)."""

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class LabelGroups:
    """The labels grouped by one side (annotator or item), CSR style.

    Group ``g``'s labels are ``offsets[g]:offsets[g + 1]`` (int64 ``(groups + 1,)``); for
    each, ``partner`` is the other side's index (the item of an annotator's label, the
    annotator of an item's label) and ``label`` its class (int32 ``(annotation,)``).
    """

    offsets: np.ndarray
    partner: np.ndarray
    label: np.ndarray

    @classmethod
    def by(cls, group, partner, label, n_groups):
        """Group the long labels by ``group`` (int ``(annotation,)``, values < ``n_groups``)."""
        order = np.argsort(group, kind="stable")
        offsets = np.zeros(n_groups + 1, dtype=np.int64)
        np.cumsum(np.bincount(group, minlength=n_groups), out=offsets[1:])
        return cls(offsets, *(np.asarray(a)[order].astype(np.int32) for a in (partner, label)))
