"""Do the chains agree on each item's most plausible class?

R-hat compares the spread within and between chains; a chain that sits in a different mode
for a few items (a class relabelled on them, or a minor mode the sampler rarely leaves) can
move R-hat little when the items are few among many. :func:`chain_modes` asks the question
directly, per item: each chain's posterior-mean plausibility, its most plausible class, and
whether the chains disagree on it by more than ``margin`` — one chain's most plausible class
is at least ``margin`` less plausible in another chain, a difference no Monte Carlo error of
converged chains of the usual length explains (an item on the fence between two classes, at
0.5 in every chain, is not flagged). It reads dense plausibilities (``posterior/plausibility
(chain, draw, item, class)``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

MARGIN = 0.2
"""Least difference between chains in the mean plausibility of a chain's most plausible
class for an item to be flagged."""


def chain_modes(trace, *, margin: float = MARGIN) -> pd.DataFrame:
    """One row per item on whose most plausible class the chains disagree (see the module
    docstring): ``item``, ``gap`` (the largest difference between chains in the mean
    plausibility of a chain's most plausible class) and, per chain ``c``, ``mode_c`` (its
    most plausible class) and ``plausibility_c`` (that class's mean plausibility in chain
    ``c``); sorted by ``gap``, largest first. Empty when the chains agree everywhere."""
    plausibility = trace["posterior"]["plausibility"]
    if "class" not in plausibility.dims:
        raise ValueError("chain_modes reads dense plausibilities (item, class): read a trace "
                         "sampled with storage='dense'")
    means = plausibility.mean("draw").transpose("chain", "item", "class")
    values = np.asarray(means.values, dtype=np.float64)  # (chain, item, class)
    modes = values.argmax(axis=2)  # (chain, item)
    items = np.arange(values.shape[1])
    # for each chain's mode, the spread of its mean plausibility across chains:
    # at_modes[c2, c1, i]: chain c2's mean plausibility of chain c1's mode of item i
    at_modes = np.stack([values[:, items, modes[c]] for c in range(values.shape[0])], axis=1)
    gap = (at_modes.max(axis=0) - at_modes.min(axis=0)).max(axis=0)  # (item,)
    flagged = np.flatnonzero((gap >= margin) & (modes != modes[:1]).any(axis=0))
    classes = means["class"].values
    frame = pd.DataFrame({"item": means["item"].values[flagged], "gap": gap[flagged]})
    for c in range(values.shape[0]):
        frame[f"mode_{c}"] = classes[modes[c, flagged]]
        frame[f"plausibility_{c}"] = values[c, flagged, modes[c, flagged]]
    return frame.sort_values("gap", ascending=False, ignore_index=True)


__all__ = ["MARGIN", "chain_modes"]
