"""What every dataset-level posterior predictive check shares: the mid p-value and the summary
table of observed statistics against their replicated intervals.

Mid p-value ``P(T_rep > T_obs) + P(T_rep = T_obs) / 2``: the statistics are often discrete, and
a plain ``>=`` would report 1 whenever observed and replicated values coincide; values near 0
or 1 flag misfit.
"""

from __future__ import annotations

import pandas as pd


def mid_p_value(replicated, observed, axis=0):
    """``P(T_rep > T_obs) + P(T_rep = T_obs) / 2`` over ``axis`` of the replicates."""
    return (replicated > observed).mean(axis=axis) + 0.5 * (replicated == observed).mean(axis=axis)


class StatisticsSummary:
    """Mixin of a check holding ``replicated_statistics`` (a DataFrame, one column per
    statistic, one row per replicate) and ``observed_statistics`` (a Series): mid p-values and
    a summary over the central interval ``INTERVAL`` of the replicates."""

    INTERVAL = (0.05, 0.95)

    @property
    def p_values(self) -> pd.Series:
        """Mid p-value per statistic."""
        return mid_p_value(self.replicated_statistics, self.observed_statistics)

    def summary(self) -> pd.DataFrame:
        """Observed value, the replicates' central interval and the mid p-value per
        statistic."""
        rep = self.replicated_statistics
        low, high = self.INTERVAL
        return pd.DataFrame({"observed": self.observed_statistics,
                             f"replicated_{100 * low:g}%": rep.quantile(low),
                             f"replicated_{100 * high:g}%": rep.quantile(high),
                             "p_value": self.p_values})


__all__ = ["StatisticsSummary", "mid_p_value"]
