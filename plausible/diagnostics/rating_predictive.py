"""Posterior predictive checks for numeric ratings.

Replicated ratings ``(sample, rating)`` in the observed design (a ratings model's
``replicate``, one replicated data set per posterior draw) against the observed ones, on
dataset statistics:

* ``share_at_floor`` / ``share_at_ceiling``: ratings exactly at the scale's ends (a slider's
  pile of zeros), and ``share_outside_scale``: ratings the scale cannot hold (a Gaussian's
  tails). Only where the scale is known;
* ``share_items_all_equal``: items whose ratings are all the same (ten zeros);
* ``mean_within_item_sd``: the items' rating sd, averaged; ``sd_of_item_means``: the spread
  of the items' mean ratings.

Mid p-values ``P(T_rep > T_obs) + P(T_rep = T_obs) / 2`` as for votes
(:func:`plausible.diagnostics.predictive_statistics.mid_p_value`); values near 0 or 1 flag misfit.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import scipy.sparse as sp

from plausible.data.ratings import Ratings
from plausible.diagnostics.predictive_statistics import StatisticsSummary


def _statistics(ratings: Ratings, scores: np.ndarray, scale) -> dict[str, np.ndarray]:
    """Statistics of ``scores (sample, rating)``, each ``(sample,)``."""
    incidence = sp.csr_matrix((np.ones(ratings.n_ratings), (np.arange(ratings.n_ratings),
                                                            ratings.item)),
                              shape=(ratings.n_ratings, ratings.n_items))
    count = np.bincount(ratings.item, minlength=ratings.n_items)
    mean = np.asarray(scores @ incidence) / count
    deviation = scores - mean[:, ratings.item]
    ss = np.asarray((deviation * deviation) @ incidence)
    spread = np.asarray(np.abs(deviation) @ incidence)
    rated_twice = count > 1
    out = {}
    if scale is not None:
        low, high = scale
        out["share_at_floor"] = (scores == low).mean(axis=1)
        out["share_at_ceiling"] = (scores == high).mean(axis=1)
        out["share_outside_scale"] = ((scores < low) | (scores > high)).mean(axis=1)
    out["share_items_all_equal"] = (spread[:, rated_twice] == 0).mean(axis=1)
    out["mean_within_item_sd"] = np.sqrt(ss[:, rated_twice] / (count[rated_twice] - 1)).mean(axis=1)
    out["sd_of_item_means"] = mean.std(axis=1)
    return out


@dataclass(frozen=True)
class RatingPredictiveCheck(StatisticsSummary):
    """Observed vs replicated statistics (module); ``replicated`` ratings ``(sample,
    rating)``."""

    replicated: np.ndarray
    replicated_statistics: pd.DataFrame
    observed_statistics: pd.Series

    INTERVAL = (0.025, 0.975)


def rating_predictive_check(ratings: Ratings, replicated, *, scale=None
                            ) -> RatingPredictiveCheck:
    """Compare ``replicated (sample, rating)`` with the observed ``ratings`` (module), with the
    scale's statistics at ``scale = (low, high)`` (default the ratings' declared scale)."""
    scale = ratings.scale if scale is None else scale
    replicated = np.atleast_2d(np.asarray(replicated, dtype=np.float64))
    if replicated.shape[1] != ratings.n_ratings:
        raise ValueError(f"replicated ratings have {replicated.shape[1]} columns, the data "
                         f"{ratings.n_ratings} ratings")
    observed = _statistics(ratings, ratings.score[None, :], scale)
    return RatingPredictiveCheck(
        replicated=replicated,
        replicated_statistics=pd.DataFrame(_statistics(ratings, replicated, scale)),
        observed_statistics=pd.Series({name: float(value[0]) for name, value in observed.items()}))


__all__ = ["RatingPredictiveCheck", "rating_predictive_check"]
