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

:func:`permuted_chains` asks the same of the classes' names as a whole: a latent-class model's
likelihood does not change when its classes are relabelled, so a chain can sit in a mode where
every class carries another's name (each item's plausibility then names the wrong class, and
when every chain sits there R-hat cannot see it). A draw reads its classes as they are when
the annotators' mean confusion matrix (a posterior variable with dims ``class`` and
``label_class``, averaged over its others) has no relabelling of the classes with a larger
diagonal sum; a chain most of whose draws would read better relabelled sits in a permuted
mode.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.optimize import linear_sum_assignment

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


PERMUTED_DRAWS = 100
"""Most draws per chain :func:`permuted_chains` reads (evenly spaced)."""


def permuted_chains(trace) -> pd.Series | None:
    """Per chain, the share of its draws (at most :data:`PERMUTED_DRAWS`, evenly spaced) whose
    classes read better relabelled (module docstring), ``(chain,)`` named
    ``permuted_share``; None where the posterior has no variable with dims ``class`` and
    ``label_class`` (a confusion matrix per annotator or for the crowd) of two classes or
    more. A draw whose every diagonal entry is the largest of its row and of its column needs
    no assignment problem."""
    posterior = trace["posterior"]
    found = [name for name, v in posterior.data_vars.items()
             if {"class", "label_class"} <= set(v.dims) and v.sizes["class"] > 1
             and v.sizes["class"] == v.sizes["label_class"]]
    if not found:
        return None
    variable = posterior[max(found, key=lambda name: posterior[name].ndim)]
    step = max(1, -(-variable.sizes["draw"] // PERMUTED_DRAWS))
    others = [d for d in variable.dims if d not in ("chain", "draw", "class", "label_class")]
    mean = variable.isel(draw=slice(None, None, step)).mean(others).transpose(
        "chain", "draw", "class", "label_class")
    values = np.asarray(mean.values, dtype=np.float64)
    diagonal = np.diagonal(values, axis1=2, axis2=3)
    clear = ((diagonal >= values.max(axis=3)) & (diagonal >= values.max(axis=2))).all(axis=2)
    permuted = np.zeros(values.shape[:2], dtype=bool)
    for c, d in zip(*np.nonzero(~clear)):
        rows, cols = linear_sum_assignment(values[c, d], maximize=True)
        permuted[c, d] = values[c, d][rows, cols].sum() > np.trace(values[c, d]) + 1e-12
    return pd.Series(permuted.mean(axis=1), index=pd.Index(mean["chain"].values, name="chain"),
                     name="permuted_share")


__all__ = ["MARGIN", "PERMUTED_DRAWS", "chain_modes", "permuted_chains"]
