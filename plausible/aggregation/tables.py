"""The per-item tables of a result: the top class with its probability and certainty
(:func:`label_table`), a multi-label model's predicted sets (:func:`label_set_table`) and label
patterns (the model's own columns come from its registry entry), and one column per class (:func:`plausibility_columns`)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import xarray as xr

from plausible import metrics


def label_table(trace: xr.DataTree, mean: xr.DataArray | None = None) -> pd.DataFrame:
    """Per item (index, the ids): ``top_class``, ``probability_top_class`` and
    ``certainty_top1`` (:meth:`Aggregation.labels`) of ``trace``; ``mean``: its posterior
    mean plausibility, when already computed."""
    shares = metrics.label_certainty(trace)
    mean = metrics.posterior_mean(trace) if mean is None else mean
    top = shares.values.argmax(axis=1)
    rows = np.arange(top.size)
    return pd.DataFrame({"top_class": shares["class"].values[top],
                         "probability_top_class": mean.values[rows, top],
                         "certainty_top1": shares.values[rows, top]},
                        index=pd.Index(shares["item"].values, name="item"))


def label_set_table(mean: xr.DataArray) -> pd.DataFrame:
    """Per item of a multi-label model (index, the ids): ``predicted_set`` (the labels whose
    plausibility is at least 1/2, joined by ``|``; empty for the empty set), ``set_size``,
    ``expected_hamming_accuracy`` of that set (exact: the mean over labels of ``max(p, 1 -
    p)``), and the item's ``least_certain_label`` with its ``plausibility_least_certain``."""
    p = mean.transpose("item", "class").values
    classes = np.asarray(mean["class"].values).astype(str)
    chosen = p >= 0.5
    closest = np.abs(p - 0.5).argmin(axis=1)
    rows = np.arange(p.shape[0])
    return pd.DataFrame({
        "predicted_set": ["|".join(classes[row]) for row in chosen],
        "set_size": chosen.sum(axis=1),
        "expected_hamming_accuracy": np.maximum(p, 1 - p).mean(axis=1),
        "least_certain_label": mean["class"].values[closest],
        "plausibility_least_certain": p[rows, closest]},
        index=pd.Index(mean["item"].values, name="item"))


def plausibility_columns(mean: xr.DataArray) -> pd.DataFrame:
    """``plausibility_<class>`` columns of a posterior mean ``(item, class)``, by item."""
    return pd.DataFrame(mean.values, index=pd.Index(mean["item"].values, name="item"),
                        columns=[f"plausibility_{c}" for c in mean["class"].values])
