"""Which pairs to compare next: the comparisons that tell most about the worths.

A comparison of items ``i`` and ``j`` under a Bradley–Terry model has the outcome ``y`` (``i``
picked) with probability ``p_ij(w) = w_i / (w_i + w_j)``. Its expected information about the
worths is the mutual information between ``y`` and ``w`` (Houlsby et al. 2011, "Bayesian
active learning for classification and preference learning", the BALD criterion)::

    I(y; w) = H(E[p_ij]) - E[H(p_ij)]          (bits; expectations over the posterior)

large where the posterior is unsure of the order (``E[p]`` near 1/2) *because* the worths are
uncertain, not because the two items are equal (then every draw says 1/2 and ``I`` is 0).
Candidates are the pairs within ``window`` places of each other in the posterior mean order:
items far apart are already ordered, and their comparison tells almost nothing. A batch takes
the most informative pairs, each item in at most one pair (the answers arrive together, so a
second pair on the same item is planned without the first's answer).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from plausible import models
from plausible.data.comparisons import Comparisons
from plausible.diagnostics.annotation_predictive import thinned_draws


def _entropy_bits(p: np.ndarray) -> np.ndarray:
    """Entropy in bits of a Bernoulli(``p``), 0 at 0 and 1."""
    p = np.clip(p, 1e-300, 1.0)
    q = np.clip(1.0 - p, 1e-300, 1.0)
    return -(p * np.log2(p) + q * np.log2(q))


def pair_information(log_worths: np.ndarray, left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """``I(y; w)`` in bits (module) of comparing ``left[k]`` with ``right[k]``, from posterior
    draws ``log_worths (sample, item)``, float64 ``(pair,)``."""
    p = 1.0 / (1.0 + np.exp(log_worths[:, right] - log_worths[:, left]))  # (sample, pair)
    return _entropy_bits(p.mean(axis=0)) - _entropy_bits(p).mean(axis=0)


def next_pairs(trace, comparisons: Comparisons, budget: int, *, window: int = 5,
               draws: int = 500, model: str | None = None) -> pd.DataFrame:
    """The next batch of at most ``budget`` comparisons, most informative first (module):
    ``left``, ``right`` (item ids), ``information_gain`` (bits), ``p_left`` (the posterior
    probability that ``left`` is picked) and both items' posterior mean rank
    (``left_rank``, ``right_rank``), from ``draws`` thinned draws of the items' log worths
    in ``trace``, as the registry entry of ``model`` (by default the comparisons' default
    model) declares them (``worth_draws``)."""
    if int(budget) < 1:
        raise ValueError(f"budget must be a positive integer, got {budget!r}")
    if int(window) < 1:
        raise ValueError(f"window must be a positive integer, got {window!r}")
    posterior = trace["posterior"]
    chain, draw = thinned_draws(posterior, draws)
    entry = models.entry(model or models.DEFAULT_MODELS["comparisons"])
    values = entry.worth_draws(posterior).values
    log_worths = np.asarray(values[chain, draw], dtype=np.float64)  # (sample, item)
    n = log_worths.shape[1]
    mean_rank = np.empty(n)
    mean_rank[np.argsort(-log_worths.mean(axis=0), kind="stable")] = np.arange(1, n + 1)
    order = np.argsort(mean_rank)
    left = np.concatenate([order[:-d] for d in range(1, min(window, n - 1) + 1)])
    right = np.concatenate([order[d:] for d in range(1, min(window, n - 1) + 1)])
    gain = pair_information(log_worths, left, right)
    chosen, used = [], np.zeros(n, dtype=bool)
    for k in np.argsort(-gain, kind="stable"):
        if len(chosen) == int(budget):
            break
        if not (used[left[k]] or used[right[k]]):
            chosen.append(k)
            used[[left[k], right[k]]] = True
    chosen = np.asarray(chosen, dtype=np.int64)
    a, b = left[chosen], right[chosen]
    p_left = (1.0 / (1.0 + np.exp(log_worths[:, b] - log_worths[:, a]))).mean(axis=0)
    return pd.DataFrame({"left": comparisons.items[a], "right": comparisons.items[b],
                         "information_gain": gain[chosen], "p_left": p_left,
                         "left_rank": mean_rank[a], "right_rank": mean_rank[b]})


__all__ = ["next_pairs", "pair_information"]
