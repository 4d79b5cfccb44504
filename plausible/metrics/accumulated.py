"""Per-item summaries of plausibility draws, accumulated while sampling.

A run whose per-draw plausibilities are not stored (they are computed from the stored
parameters when read; the posterior's ``computed_when_read`` attribute names them) keeps what
a per-item table needs, folded in as each draw is made (:class:`Accumulator`), in the trace
group :data:`GROUP`::

    plausibility_summary/mean        (chain, item, class)  float64  sum_m lambda^(m) / M_c
    plausibility_summary/top1_share  (chain, item, class)  float64  share of the chain's
                                                                    draws whose top-1 class
                                                                    is ``class`` (ties: lowest
                                                                    class index)
    plausibility_summary.attrs["draws"]                    M_c, draws per chain

Memory: ``2 x chains x items x classes`` numbers, whatever the number of draws.
:func:`accumulated` gives the group of a trace when it describes the trace's draws (same
chains and draws, plausibilities not stored), so the posterior mean and the label certainty
(:func:`plausible.metrics.posterior_mean`, :func:`plausible.metrics.label_certainty`,
:func:`plausible.metrics.annotation_certainty` with ``top=1``) are read from it without
recomputing a draw; every other metric reads the draws.
"""

from __future__ import annotations

import numba
import numpy as np
import xarray as xr

from plausible.metrics.storage import CLASS, ITEM, NAME

GROUP = "plausibility_summary"
"""The trace group of the accumulated summaries."""


@numba.njit(nogil=True, cache=True)
def _fold(plausibility, total, top):  # pragma: no cover - compiled
    """``total += plausibility``; ``top[i, argmax_c plausibility[i]] += 1`` (lowest index on
    ties), for ``plausibility (item, class)``."""
    for i in range(plausibility.shape[0]):
        best = 0
        value = plausibility[i, 0]
        for c in range(plausibility.shape[1]):
            total[i, c] += plausibility[i, c]
            if plausibility[i, c] > value:
                value = plausibility[i, c]
                best = c
        top[i, best] += 1


class Accumulator:
    """The summaries of ``chains`` chains' plausibility draws ``(item, class)``, one draw at
    a time (:meth:`add`, safe to call from one thread per chain)."""

    def __init__(self, chains: int, n_items: int, n_classes: int):
        self.total = np.zeros((chains, n_items, n_classes))
        self.top = np.zeros((chains, n_items, n_classes), dtype=np.int64)
        self.draws = np.zeros(chains, dtype=np.int64)

    def add(self, chain: int, plausibility: np.ndarray) -> None:
        """Fold chain ``chain``'s next draw ``(item, class)`` in."""
        _fold(plausibility, self.total[chain], self.top[chain])
        self.draws[chain] += 1

    def dataset(self, coords=None) -> xr.Dataset:
        """The group's Dataset (module docstring); ``coords`` for ``item`` and ``class``."""
        if not (self.draws == self.draws[0]).all() or self.draws[0] == 0:
            raise ValueError(f"the chains hold {self.draws.tolist()} draws: a summary needs the "
                             "same number >= 1 in each")
        n = float(self.draws[0])
        dims = ("chain", ITEM, CLASS)
        return xr.Dataset({"mean": (dims, self.total / n), "top1_share": (dims, self.top / n)},
                          coords={"chain": np.arange(self.total.shape[0]),
                                  **{d: c for d, c in (coords or {}).items() if d in (ITEM, CLASS)}},
                          attrs={"draws": int(self.draws[0])})


def accumulated(obj) -> xr.Dataset | None:
    """The :data:`GROUP` of trace ``obj`` when it summarises the trace's plausibility draws
    (they are computed when read, and the group has the posterior's chains and draws), else
    None (other inputs too)."""
    if not isinstance(obj, xr.DataTree) or GROUP not in obj.children or \
            "posterior" not in obj.children:
        return None
    posterior = obj["posterior"]
    if NAME not in posterior.attrs.get("computed_when_read", "").split(","):
        return None
    summary = obj[GROUP].to_dataset()
    if summary.attrs.get("draws") != posterior.sizes.get("draw") or \
            summary.sizes.get("chain") != posterior.sizes.get("chain"):
        return None
    return summary


def pooled(summary: xr.Dataset, name: str) -> xr.DataArray:
    """``summary[name]`` averaged over the chains (each has the same number of draws)."""
    return summary[name].mean("chain")


__all__ = ["GROUP", "Accumulator", "accumulated", "pooled"]
