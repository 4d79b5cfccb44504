"""How often each annotator's labels are right, read from any label model's posterior.

For annotator ``j`` with labels ``x_k`` on items ``i_k`` (``k`` in ``K_j``), the share of
their labels that are the item's class, given a posterior draw ``s`` of the model's
parameters, has the expectation

    a_j(s) = (1 / |K_j|) sum_{k in K_j} p_s[i_k, x_k]

with ``p_s[i, c]`` the draw's plausibility ``P(z_i = c | parameters_s, data)``. Its
distribution over the draws says how well the annotator did on *these* items, with the
uncertainty the model leaves about their classes; an annotator with three labels gets a wide
interval. It needs no model-specific parameter (confusion matrices, competences, abilities),
so every label model's annotators compare on one scale.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from plausible.data.labels import Labels
from plausible.diagnostics.annotation_predictive import thinned_draws

QUANTILES = (0.05, 0.95)
"""The interval of :func:`annotator_quality` (90 %, equal-tailed over the draws)."""


def annotator_quality(trace, labels: Labels, *, draws: int = 200) -> pd.DataFrame:
    """One row per annotator (index: their ids): ``labels`` (how many they gave),
    ``share_correct`` (posterior mean of ``a_j``, module docstring), ``q05`` and ``q95``
    (its 90 % interval), on up to ``draws`` evenly thinned draws of ``trace``'s
    ``plausibility (chain, draw, item, class)``, read one draw at a time. With known classes
    (:attr:`Labels.known`) also ``gold_labels`` (their labels on items of known class) and
    ``gold_share_correct`` (the share of those that are the known class; NaN without any),
    to set beside the model's estimate."""
    plausibility = trace["posterior"]["plausibility"].transpose("chain", "draw", "item", "class")
    chain, draw = thinned_draws(trace, draws)
    n_labels = np.bincount(labels.annotator, minlength=labels.n_annotators)
    shares = np.empty((chain.size, labels.n_annotators))
    for s, (c, d) in enumerate(zip(chain, draw)):
        p = np.asarray(plausibility.data[c, d], dtype=np.float64)
        shares[s] = np.bincount(labels.annotator, p[labels.item, labels.label],
                                minlength=labels.n_annotators) / np.maximum(n_labels, 1)
    low, high = np.quantile(shares, QUANTILES, axis=0)
    frame = pd.DataFrame({"labels": n_labels, "share_correct": shares.mean(axis=0),
                          "q05": low, "q95": high},
                         index=pd.Index(labels.annotators, name="annotator"))
    if labels.known is not None:
        known = labels.known[labels.item]
        on_gold = known >= 0
        n_gold = np.bincount(labels.annotator[on_gold], minlength=labels.n_annotators)
        right = np.bincount(labels.annotator[on_gold],
                            labels.label[on_gold] == known[on_gold], minlength=labels.n_annotators)
        frame["gold_labels"] = n_gold
        frame["gold_share_correct"] = np.where(n_gold > 0, right / np.maximum(n_gold, 1), np.nan)
    return frame


__all__ = ["QUANTILES", "annotator_quality"]


def annotator_scalars(posterior) -> dict[str, np.ndarray]:
    """The posterior's per-annotator scalars (its ``(chain, draw, annotator)`` variables, e.g.
    one-coin's accuracy, MACE's competence, GLAD's ability), each flattened to ``(sample,
    annotator)``."""
    out = {}
    for name, var in posterior.data_vars.items():
        if set(var.dims) == {"chain", "draw", "annotator"}:
            out[name] = var.transpose("chain", "draw", "annotator").values.reshape(
                -1, var.sizes["annotator"])
    return out
