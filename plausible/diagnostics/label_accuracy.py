"""Is one aggregator's label accuracy really different from another's? Paired comparisons
against known truth.

Two aggregators label the same ``N`` items; ``correct_a``, ``correct_b`` say which labels
match the truth. Their accuracies differ only through the *discordant* items, where one is
right and the other wrong, so on one data set the comparison is **McNemar's exact test**:
given ``n`` discordant items, the number ``b`` of them that only aggregator ``b`` gets right
is ``Binomial(n, 1/2)`` under the hypothesis that neither is more accurate
(:func:`paired_label_test`; the binomial test is :func:`scipy.stats.binomtest`).

One data set says little when the two differ on a handful of items. A **paired simulation
study** replicates the data (e.g. a parametric bootstrap of a real design at a point
estimate, :func:`plausible.data.simulate_glad_labels`), runs every aggregator on each
replicate and counts its correct labels (:func:`accuracy_study`); per replicate the
difference ``d_s = correct_other_s - correct_baseline_s`` removes the replicate's shared
difficulty, and :func:`paired_differences` reports ``mean_s d_s``, its standard error
``sd(d) / sqrt(S)`` and the one-sample t-test of ``E d = 0``
(:func:`scipy.stats.ttest_1samp`) over the ``S`` replicates.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

import numpy as np
import pandas as pd
from scipy import stats

from plausible.data.labels import Labels

Aggregator = Callable[[Labels], np.ndarray]


def paired_label_test(correct_a, correct_b) -> dict:
    """McNemar's exact test of two aggregators' labels of the same items (see module).

    ``correct_a``, ``correct_b``: bool ``(item,)``, whether each aggregator's label is the
    true one. Returns ``n_discordant``, ``only_a`` and ``only_b`` (items only that aggregator
    gets right), ``difference = only_b - only_a`` (the difference in correct items) and the
    two-sided exact ``p_value`` (1 when no item is discordant).
    """
    a, b = (np.asarray(x) for x in (correct_a, correct_b))
    if a.dtype != bool or b.dtype != bool or a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"correct_a and correct_b must be bool arrays of one shape (item,), "
                         f"got {a.dtype} {a.shape} and {b.dtype} {b.shape}")
    only_a, only_b = int(np.sum(a & ~b)), int(np.sum(b & ~a))
    n = only_a + only_b
    p_value = float(stats.binomtest(only_b, n, 0.5).pvalue) if n else 1.0
    return {"n_discordant": n, "only_a": only_a, "only_b": only_b,
            "difference": only_b - only_a, "p_value": p_value}


def accuracy_study(simulate: Callable[[int], tuple[Labels, np.ndarray]],
                   aggregators: Mapping[str, Aggregator], seeds: Iterable[int]) -> pd.DataFrame:
    """Correct labels of each aggregator on each simulated data set.

    ``simulate(seed)`` returns ``(labels, truth)`` with ``truth`` the class indices
    ``(item,)``; each aggregator maps :class:`Labels` to class indices ``(item,)``. Returns
    int counts with index ``seed`` and one column per aggregator (in the mapping's order).
    """
    rows = {}
    for seed in seeds:
        labels, truth = simulate(seed)
        row = {}
        for name, aggregate in aggregators.items():
            predicted = np.asarray(aggregate(labels))
            if predicted.shape != truth.shape:
                raise ValueError(f"seed {seed}: aggregator {name!r} returned shape "
                                 f"{predicted.shape}, expected {truth.shape}")
            row[name] = int(np.sum(predicted == truth))
        rows[seed] = row
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("seed")


def paired_differences(study: pd.DataFrame, baseline: str) -> pd.DataFrame:
    """Per aggregator of ``study`` (:func:`accuracy_study`) other than ``baseline``: the
    paired differences ``d_s`` in correct items against ``baseline`` summarised over the
    replicates (see module): ``mean``, ``se``, two-sided ``p_value`` of ``E d = 0`` (NaN
    with fewer than 2 replicates or no variation), and ``wins``, ``ties``, ``losses``
    (replicates with ``d_s > 0``, ``= 0``, ``< 0``)."""
    if baseline not in study.columns:
        raise ValueError(f"baseline {baseline!r} is not a column of the study: {list(study.columns)}")
    rows = {}
    for name in study.columns.drop(baseline):
        d = (study[name] - study[baseline]).to_numpy(dtype=float)
        varies = d.size > 1 and np.ptp(d) > 0
        rows[name] = {
            "mean": d.mean(),
            "se": d.std(ddof=1) / np.sqrt(d.size) if d.size > 1 else np.nan,
            "p_value": float(stats.ttest_1samp(d, 0.0).pvalue) if varies else np.nan,
            "wins": int(np.sum(d > 0)), "ties": int(np.sum(d == 0)), "losses": int(np.sum(d < 0)),
        }
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis(f"against {baseline}")


__all__ = ["accuracy_study", "paired_differences", "paired_label_test"]
