"""What to annotate next for multi-label sets: which (item, annotator) answer tells most
about the items' labels, and when an item is settled.

A multi-label plausibility is one probability per label, ``p^s_ik = P(y_ik = 1 | theta^s,
x)`` in draw ``s`` (the multi-label model of the registry), and annotator ``j`` answers label
``k`` of a new item through their sensitivity and specificity in that draw::

    P^s(x_k = 1 | y_k = 1) = se^s_jk        P^s(x_k = 1 | y_k = 0) = 1 - sp^s_jk

Each label is then a binary latent class with its own two-by-two channel, and the
information about it from the annotator's answer on it is
:func:`~plausible.active.information.latent_class_information` with two classes (exact on
the draws, Rao–Blackwellised, tempered by the reliability). A candidate's
``information_gain`` is the **sum over the labels** of those informations: the value of an
answer under Hamming loss, where each label is a question of its own. It leaves out what the
answer on one label says about another through the co-occurrence patterns the mixture
learns, so it is the information about the labels one at a time, not about the set.

**Settled items.** A label's certainty is the share of draws on the side of 1/2 that the
majority of draws is on (:func:`plausible.metrics.multi_label.label_certainty` with
``how="agreement"``, the two-class top-1 certainty); an item is settled when **every** label's
certainty reaches the threshold, and its ``certainty`` is its least certain label's.
``expected_certainty`` is that label's expected certainty after the answer, so
``certainty_gain`` says how much the answer moves the label that keeps the item open.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import xarray as xr

from plausible import models
from plausible.active.allocation import (_draws_used, _item_positions, _reliability, _step,
                                         candidate_pairs, plan_batch)
from plausible.active.information import latent_class_information
from plausible.diagnostics.annotation_predictive import thinned_draws
from plausible.metrics.multi_label import label_certainty


def settled_label_sets(trace, threshold: float = 0.95) -> pd.DataFrame:
    """Per item (index, the ids): ``least_certain_label``, ``certainty`` (that label's
    certainty, the smallest of the item's) and ``settled`` (``certainty >= threshold``: every
    label is that certain); module docstring."""
    threshold = float(threshold)
    if not 0.0 < threshold <= 1.0:
        raise ValueError(f"threshold must lie in (0, 1], got {threshold}")
    plausibility = trace["posterior"]["plausibility"]
    certainty = label_certainty(trace, how="agreement")  # (item, class)
    least = certainty.argmin(axis=1)
    lowest = certainty[np.arange(least.size), least]
    return pd.DataFrame({"least_certain_label": plausibility["class"].values[least],
                         "certainty": lowest, "settled": lowest >= threshold},
                        index=pd.Index(plausibility["item"].values, name="item"))


def _at(var, chain, draw, dim, positions, first):
    """``var`` (a posterior variable) at the draws ``(chain, draw)`` and ``positions`` along ``dim``,
    float64 ``(sample, position, class)``; ``first``: the block's unique positions."""
    index = {"chain": xr.DataArray(chain, dims="sample"),
             "draw": xr.DataArray(draw, dims="sample"), dim: first}
    values = var.isel(index).transpose("sample", dim, "class").values
    return np.asarray(values, dtype=np.float64)[:, positions]


def _channel(se, sp) -> np.ndarray:
    """``P(x_k = x | y_k = y)`` float64 ``(..., class, y, x)`` from ``se``, ``sp``
    ``(..., class)``."""
    return np.stack([np.stack([sp, 1.0 - sp], axis=-1),
                     np.stack([1.0 - se, se], axis=-1)], axis=-2)


def label_set_gain(trace, sets, *, pairs=None, items=None, draws: int = 500,
                   model: str | None = None) -> pd.DataFrame:
    """Every candidate (item, annotator) pair's expected gain from one more label set, one row
    each: ``item``, ``annotator``, ``information_gain`` (bits, summed over the labels),
    ``certainty`` (the least certain label's, on the thinned draws), ``expected_certainty``
    and ``certainty_gain`` (module docstring).

    ``trace``, ``sets``: a fitted multi-label trace and the
    :class:`~plausible.data.label_sets.LabelSets` it was fitted to; ``pairs``: a DataFrame of
    candidate ``item, annotator`` ids (default every pair without a response); ``items``: item
    ids to score (default all); ``model``: the registry name of the fitted model, whose entry
    declares the annotators' rates (``label_rates``; by default the label sets' default
    model)."""
    draws = int(draws)
    if draws < 1:
        raise ValueError(f"draws must be >= 1, got {draws}")
    item, annotator = candidate_pairs(sets, pairs)
    if items is not None:
        keep = np.isin(item, _item_positions(sets, items))
        item, annotator = item[keep], annotator[keep]
    chain, draw = thinned_draws(trace, draws)
    gamma, posterior = _reliability(trace), trace["posterior"]
    se_draws, sp_draws = models.entry(
        model or models.DEFAULT_MODELS["label_sets"]).label_rates(posterior)
    S, K = chain.size, sets.n_classes
    out = np.empty((3, item.size))
    step = _step(8 * S * K)
    for start in range(0, item.size, step):
        block = slice(start, min(start + step, item.size))
        i, i_at = np.unique(item[block], return_inverse=True)
        j, j_at = np.unique(annotator[block], return_inverse=True)
        p = _at(posterior["plausibility"], chain, draw, "item", i_at, i)  # (S, P, K)
        se = _at(se_draws, chain, draw, "annotator", j_at, j)
        sp = _at(sp_draws, chain, draw, "annotator", j_at, j)
        P = p.shape[1]
        pi = np.stack([1.0 - p, p], axis=-1).reshape(S, P * K, 2)
        rows = _channel(se, sp).reshape(S, P * K, 2, 2)
        gain, now, expected = (v.reshape(P, K) for v in latent_class_information(pi, rows, gamma))
        least = now.argmin(axis=1)
        out[0, block] = gain.sum(axis=1)
        out[1, block] = now[np.arange(P), least]
        out[2, block] = expected[np.arange(P), least]
    frame = pd.DataFrame({"item": sets.items[item], "annotator": sets.annotators[annotator],
                          "information_gain": out[0], "certainty": out[1],
                          "expected_certainty": out[2]})
    frame["certainty_gain"] = frame["expected_certainty"] - frame["certainty"]
    frame.attrs.update(_draws_used(trace, S))
    return frame


def next_label_sets(trace, sets, budget: int, *, threshold: float | None = 0.95,
                    strategy: str = "information", min_gain: float = 1e-3, pairs=None,
                    items=None, draws: int = 500, seed: int | None = None,
                    model: str | None = None) -> pd.DataFrame:
    """The next batch of at most ``budget`` label sets to ask for, one per unsettled item,
    best first: the rows of :func:`label_set_gain` (strategies and arguments as
    :func:`plausible.active.next_items`; settled by :func:`settled_label_sets`). An empty frame
    means stop."""
    status = settled_label_sets(trace, 1.0 if threshold is None else threshold)

    def candidates() -> pd.DataFrame:
        item, annotator = candidate_pairs(sets, pairs)
        return pd.DataFrame({"item": sets.items[item], "annotator": sets.annotators[annotator]})

    return plan_batch(trace, sets, status, "certainty", budget, threshold=threshold,
                      strategy=strategy, min_gain=min_gain, items=items, seed=seed,
                      gains=lambda open_items: label_set_gain(trace, sets, model=model, pairs=pairs,
                                                              items=open_items, draws=draws),
                      candidates=candidates)


__all__ = ["label_set_gain", "next_label_sets", "settled_label_sets"]
