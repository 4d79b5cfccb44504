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
    plausibility_summary/square_mean (chain, item, class)  float64  sum_m (lambda^(m))^2 / M_c
    plausibility_summary/mean_first_half, square_mean_first_half
                                     (chain, item, class)  float64  the same over the chain's
                                                                    first H_c draws
    plausibility_summary.attrs["draws"]                    M_c, draws per chain
    plausibility_summary.attrs["first_half_draws"]         H_c = floor(M_c / 2) (an earlier
                                                           block's when the last block was
                                                           cut short; absent when the chains
                                                           were not halved)

Memory: ``6 x chains x items x classes`` numbers, whatever the number of draws.
:func:`accumulated` gives the group of a trace when it describes the trace's draws (same
chains and draws, plausibilities not stored), so the posterior mean and the label certainty
(:func:`plausible.metrics.posterior_mean`, :func:`plausible.metrics.label_certainty`,
:func:`plausible.metrics.annotation_certainty` with ``top=1``) are read from it without
recomputing a draw; every other metric reads the draws. The first and second moments of
each half of each chain give the split R-hat of every plausibility without a draw
(:func:`split_rhat`).
"""

from __future__ import annotations

import numba
import numpy as np
import xarray as xr

from plausible.metrics.storage import CLASS, ITEM, NAME

GROUP = "plausibility_summary"
"""The trace group of the accumulated summaries."""

MOMENTS = ("mean", "top1_share", "square_mean", "mean_first_half", "square_mean_first_half")
"""The per-chain summaries ``(item, class)`` of :meth:`Accumulator.moments`, in the group."""


@numba.njit(nogil=True, cache=True)
def _fold(plausibility, total, square, top):  # pragma: no cover - compiled
    """``total += plausibility``; ``square += plausibility^2``; ``top[i, argmax_c
    plausibility[i]] += 1`` (lowest index on ties), for ``plausibility (item, class)``."""
    for i in range(plausibility.shape[0]):
        best = 0
        value = plausibility[i, 0]
        for c in range(plausibility.shape[1]):
            p = np.float64(plausibility[i, c])
            total[i, c] += p
            square[i, c] += p * p
            if plausibility[i, c] > value:
                value = plausibility[i, c]
                best = c
        top[i, best] += 1


class Accumulator:
    """The summaries of ``chains`` chains' plausibility draws ``(item, class)``, one draw at
    a time (:meth:`add`, safe to call from one thread per chain); :meth:`split` marks where a
    chain's first half ends."""

    def __init__(self, chains: int, n_items: int, n_classes: int):
        shape = (chains, n_items, n_classes)
        self.total, self.square = np.zeros(shape), np.zeros(shape)
        self.first_total, self.first_square = np.zeros(shape), np.zeros(shape)
        self.top = np.zeros(shape, dtype=np.int64)
        self.draws = np.zeros(chains, dtype=np.int64)
        self.first_draws = np.full(chains, -1, dtype=np.int64)  # -1: not halved

    def add(self, chain: int, plausibility: np.ndarray) -> None:
        """Fold chain ``chain``'s next draw ``(item, class)`` in."""
        _fold(plausibility, self.total[chain], self.square[chain], self.top[chain])
        self.draws[chain] += 1

    def split(self, chain: int) -> None:
        """The draws of chain ``chain`` so far are its first half."""
        self.first_total[chain] = self.total[chain]
        self.first_square[chain] = self.square[chain]
        self.first_draws[chain] = self.draws[chain]

    def moments(self, chain: int) -> dict[str, np.ndarray]:
        """Chain ``chain``'s summaries (:data:`MOMENTS`, each ``(item, class)``) and
        ``first_half_draws`` (``()``, -1 when not halved)."""
        n, h = max(int(self.draws[chain]), 1), max(int(self.first_draws[chain]), 1)
        return {"mean": self.total[chain] / n, "top1_share": self.top[chain] / n,
                "square_mean": self.square[chain] / n,
                "mean_first_half": self.first_total[chain] / h,
                "square_mean_first_half": self.first_square[chain] / h,
                "first_half_draws": np.array(self.first_draws[chain])}

    def state(self, chain: int) -> dict[str, np.ndarray]:
        """Chain ``chain``'s sums and counts (to write a checkpoint; :meth:`restore`)."""
        return {name: getattr(self, name)[chain]
                for name in ("total", "square", "first_total", "first_square", "top", "draws",
                             "first_draws")}

    def restore(self, chain: int, state: dict) -> None:
        """Chain ``chain`` as :meth:`state` gave it."""
        for name, value in state.items():
            getattr(self, name)[chain] = value

    def dataset(self, coords=None) -> xr.Dataset:
        """The group's Dataset (module docstring); ``coords`` for ``item`` and ``class``."""
        return summary_dataset([self.moments(c) for c in range(len(self.draws))],
                               self.draws.tolist(), coords)


def summary_dataset(chains: list[dict], draws: list[int], coords=None) -> xr.Dataset:
    """The group's Dataset from each chain's :meth:`Accumulator.moments` and its number of
    draws; ``coords`` for ``item`` and ``class``."""
    if len(set(draws)) != 1 or draws[0] == 0:
        raise ValueError(f"the chains hold {draws} draws: a summary needs the same number >= 1 "
                         "in each")
    dims = ("chain", ITEM, CLASS)
    first = {int(c["first_half_draws"]) for c in chains}
    halved = len(first) == 1 and first != {-1} and 0 < min(first) < draws[0]
    names = MOMENTS if halved else MOMENTS[:3]
    return xr.Dataset({name: (dims, np.stack([c[name] for c in chains])) for name in names},
                      coords={"chain": np.arange(len(chains)),
                              **{d: c for d, c in (coords or {}).items() if d in (ITEM, CLASS)}},
                      attrs={"draws": int(draws[0]),
                             **({"first_half_draws": first.pop()} if halved else {})})


def split_rhat(summary: xr.Dataset, *, resolution: float = 1e-12) -> xr.DataArray | None:
    """Split R-hat ``(item, class)`` of the plausibilities from a summary's moments (None when
    its chains were not halved): each chain's halves are ``2 M`` sequences of ``n_1 = H`` and
    ``n_2 = M_c - H`` draws with means ``m_s`` and variances ``s_s^2`` (unbiased); ``W`` is
    the mean of the ``s_s^2``, ``B / n`` the variance of the ``m_s`` and ``n = M_c / 2``;
    ``R = sqrt(((n - 1) / n W + B / n) / W)`` (Gelman et al., BDA3 §11.4). These are the
    moments of the raw values, not of their ranks, as in the classic split R-hat. NaN where
    ``W <= resolution`` (a plausibility that does not move)."""
    if "first_half_draws" not in summary.attrs:
        return None
    total, first = summary.attrs["draws"], summary.attrs["first_half_draws"]
    second = total - first
    m1, e1 = summary["mean_first_half"], summary["square_mean_first_half"]
    m2 = (total * summary["mean"] - first * m1) / second
    e2 = (total * summary["square_mean"] - first * e1) / second
    v1 = np.maximum(e1 - m1**2, 0.0) * first / max(first - 1, 1)
    v2 = np.maximum(e2 - m2**2, 0.0) * second / max(second - 1, 1)
    means = xr.concat([m1, m2], dim="half")
    within = xr.concat([v1, v2], dim="half").mean(("chain", "half"))
    between = means.var(("chain", "half"), ddof=1)
    n = total / 2
    rhat = np.sqrt(((n - 1) / n * within + between) / within)
    return rhat.where(within > resolution)


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


__all__ = ["GROUP", "MOMENTS", "Accumulator", "accumulated", "pooled", "split_rhat",
           "summary_dataset"]
