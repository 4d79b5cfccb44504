"""Posterior predictive checks for the vote model.

For posterior draws ``lambda^(m)`` the replicated votes of item ``i`` are
``s_rep ~ Multinomial(n_i, lambda_i^(m))`` with ``n_i`` the item's observed number of
votes. Test quantities, each computed on observed and replicated votes:

* top-vote share per item ``max_c s_ic / n_i`` (and its mean over items),
* fraction of unanimous items (top-vote share 1),
* mean number of distinct classes voted per item.

Posterior predictive mid p-value ``P(T(s_rep) > T(s)) + P(T(s_rep) = T(s)) / 2`` (the
statistics are discrete: a plain ``>=`` would report 1 whenever observed and replicated
values coincide); values near 0 or 1 flag misfit. Per-item p-values of the top-vote share find the items the model misfits.
"""

from dataclasses import dataclass

import numpy as np
import pandas as pd
import xarray as xr

from plausible.diagnostics.predictive_statistics import StatisticsSummary, mid_p_value
from plausible.metrics.plausibility import as_plausibility

STATISTICS = ("mean_top_share", "unanimous_fraction", "mean_distinct_classes")




def _statistics(votes: np.ndarray) -> dict[str, np.ndarray]:
    """Dataset statistics over the item axis (-2) of ``(..., item, class)`` counts."""
    totals = votes.sum(axis=-1)
    top_share = votes.max(axis=-1) / totals
    return {
        "top_share": top_share,
        "mean_top_share": top_share.mean(axis=-1),
        "unanimous_fraction": (top_share == 1).mean(axis=-1),
        "mean_distinct_classes": (votes > 0).sum(axis=-1).mean(axis=-1),
    }


@dataclass(frozen=True)
class VotePredictiveCheck(StatisticsSummary):
    """Observed vs replicated statistics; ``replicated`` votes are ``(sample, item, class)``."""

    replicated: xr.DataArray
    observed: xr.DataArray
    replicated_statistics: pd.DataFrame
    observed_statistics: pd.Series
    item_p_values: xr.DataArray


def vote_predictive_check(trace, *, draws: int = 500, seed: int | None = None) -> VotePredictiveCheck:
    """Replicate the votes from ``draws`` posterior draws (evenly thinned) of a vote-model trace.

    ``trace`` is the ``xarray.DataTree`` of :func:`plausible.sample` on
    :func:`plausible.models.dirichlet.build`, in either storage; it must hold
    ``observed_data.votes``. Only the thinned draws are densified.
    """
    observed = trace.observed_data["votes"]
    plausibility = as_plausibility(trace).stack(sample=("chain", "draw"))
    plausibility = plausibility.transpose("sample", "item", "class")
    step = max(1, plausibility.sizes["sample"] // draws)
    plausibility = plausibility.isel(sample=slice(None, None, step)).isel(sample=slice(draws))
    probs = plausibility.values.astype(np.float64)  # float32 storage: normalise in float64
    probs /= probs.sum(axis=-1, keepdims=True)  # guard against float round-off
    totals = observed.values.sum(axis=-1)
    rng = np.random.default_rng(seed)
    return replicated_vote_check(observed, rng.multinomial(totals[None, :], probs))


def replicated_vote_check(observed: xr.DataArray, replicated: np.ndarray) -> VotePredictiveCheck:
    """The check's statistics and p-values of vote counts ``replicated (sample, item,
    class)`` (from whatever model made them) against the ``observed (item, class)`` counts."""
    rep_stats = _statistics(replicated)
    obs_stats = _statistics(observed.values)
    item_p = mid_p_value(rep_stats["top_share"], obs_stats["top_share"][None])
    coords = {"item": observed["item"].values, "class": observed["class"].values}
    return VotePredictiveCheck(
        replicated=xr.DataArray(replicated, dims=("sample", "item", "class"), coords=coords),
        observed=observed,
        replicated_statistics=pd.DataFrame({name: rep_stats[name] for name in STATISTICS}),
        observed_statistics=pd.Series({name: float(obs_stats[name]) for name in STATISTICS}),
        item_p_values=xr.DataArray(item_p, dims="item", coords={"item": coords["item"]}),
    )
