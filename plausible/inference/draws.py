"""How many draws a run keeps per chain: the one rule of ``draws="auto"`` and of the default
draws (:func:`resolve_draws`), which every route reads: :func:`plausible.sample`,
:func:`plausible.aggregate` and the command line, the chain over shards on a cluster
(:mod:`plausible.distributed.sharded_chain`) and shards of independent items
(:mod:`plausible.distributed`)."""

from __future__ import annotations

import numpy as np

from plausible.inference.driver import AUTO, AUTO_FIRST_DRAWS

AUTO_MAX_DRAWS = 16_000
"""Most draws per chain a ``draws="auto"`` run extends to by default (7 blocks: 250, then
doubling)."""
AUTO_WORK = 2 * 10**9
"""A default run's most label-class visits: ``draws="auto"`` extends a label model's chains
in one process to at most ``AUTO_WORK / (annotations x classes x chains)`` draws each (within
the driver's limits), so that 100,000 labels of four classes take about 20 s on two cores and
the same seed gives the same draws on any machine (a time limit would not)."""
FIXED_DRAWS = 1000
"""Draws per chain of a run that does not extend its chains: the default of shards of
independent items, and what ``"auto"`` becomes for independent exact draws (nothing to
converge) and, in :func:`plausible.aggregate`, for a model that ``pm.sample`` samples."""

EXTENDED = "extended"
"""The route of a run whose chains plausible's driver extends: one process, or the chain
over shards on a cluster."""
EXACT = "exact"
"""The route of independent exact draws (no Markov chain)."""
PYMC = "pymc"
"""The route of a model that ``pm.sample`` samples (NUTS for the variables without exact
steps), which cannot extend its chains."""
SHARDS = "shards"
"""The route of shards of independent items, each sampled once (:mod:`plausible.distributed`)."""
ROUTES = (EXTENDED, EXACT, PYMC, SHARDS)


class AutoDrawsUnavailable(ValueError):
    """``draws="auto"`` asked of a model that ``pm.sample`` samples (raised before sampling)."""


def resolve_draws(draws: int | str | None, *, route: str = EXTENDED,
                  max_draws: int | None = None, visits: int | None = None
                  ) -> tuple[int | str, int | None]:
    """``(draws, max_draws)`` of a run on ``route`` (one of :data:`ROUTES`): its kept draws
    per chain, or ``"auto"`` with the most draws per chain it extends to (None for a fixed
    number).

    The rule:

    * a whole number ``>= 1``: that many, on every route;
    * ``None`` (the default of :func:`plausible.aggregate` and of the command line):
      ``"auto"``, except on shards of independent items, :data:`FIXED_DRAWS`;
    * ``"auto"`` where plausible's driver extends the chains (:data:`EXTENDED`): extend them
      in blocks until they converge, to at most ``max_draws`` per chain: as given, else
      :data:`AUTO_MAX_DRAWS`, or for a label model in one process given its ``visits`` per
      draw (annotations x classes x chains), ``AUTO_WORK // visits`` held between
      :data:`~plausible.inference.driver.AUTO_FIRST_DRAWS` and :data:`AUTO_MAX_DRAWS`
      (:data:`AUTO_WORK`);
    * ``"auto"`` of independent exact draws (:data:`EXACT`): :data:`FIXED_DRAWS`, as there
      is nothing to converge;
    * ``"auto"`` of a model that ``pm.sample`` samples (:data:`PYMC`):
      :class:`AutoDrawsUnavailable` (:func:`plausible.aggregate` then takes
      :data:`FIXED_DRAWS` and says so in a warning);
    * ``"auto"`` on shards of independent items (:data:`SHARDS`): ``ValueError``, as shards
      are sampled once, not extended.

    Anything else is a ``ValueError``.
    """
    if route not in ROUTES:
        raise ValueError(f"route must be one of {ROUTES}, got {route!r}")
    if max_draws is not None:
        max_draws = _whole("max_draws", max_draws, "a whole number >= 1")
    if draws is None:
        draws = FIXED_DRAWS if route == SHARDS else AUTO
    if draws != AUTO:
        return _whole("draws", draws, "a whole number >= 1 or 'auto'"), None
    if route == EXACT:
        return FIXED_DRAWS, None
    if route == PYMC:
        raise AutoDrawsUnavailable(
            "draws='auto' extends chains in plausible's driver; this model samples with "
            "pm.sample (NUTS for the variables without exact steps): pass a number of draws")
    if route == SHARDS:
        raise ValueError("draws='auto' (--draws auto) extends chains until they converge, which "
                         "shards of independent items (store=, client=; --store, --scheduler, "
                         "--workers) do not do: pass a number of draws")
    if max_draws is None:
        max_draws = AUTO_MAX_DRAWS if visits is None else int(
            min(AUTO_MAX_DRAWS, max(AUTO_FIRST_DRAWS, AUTO_WORK // max(visits, 1))))
    return AUTO, max_draws


def _whole(name: str, value, expected: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be {expected}, got {value!r}")
    return int(value)

__all__ = ["AUTO_MAX_DRAWS", "AUTO_WORK", "AutoDrawsUnavailable", "EXACT", "EXTENDED",
           "FIXED_DRAWS", "PYMC", "ROUTES", "SHARDS", "resolve_draws"]
