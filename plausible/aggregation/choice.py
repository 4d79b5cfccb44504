"""``model="auto"``: every candidate fitted alike, the one PSIS-LOO ranks first kept
(:func:`plausible.diagnostics.model_selection.select`), stacked with the converged candidates
of the same meaning of the plausibility (:func:`stacked_trace`)."""

from __future__ import annotations

import json
import time
import warnings
from dataclasses import replace

import numpy as np
import xarray as xr

from plausible import models
from plausible.aggregation.defaults import auto_candidates
from plausible.aggregation.result import Aggregation
from plausible.diagnostics.convergence import NOT_CONVERGED
from plausible.diagnostics.model_selection import select
from plausible.inference.driver import assemble
from plausible.inference.stacking import mixture_draws


def choose(annotations, fit, *, default: bool, reliability, max_seconds, known, **settings
           ) -> Aggregation:
    """``model="auto"``: fit every candidate (:func:`auto_candidates`) with the same
    settings, by ``fit(annotations, name, **settings)`` (:func:`~plausible.aggregation.aggregate`),
    and return the one :func:`plausible.diagnostics.model_selection.select` picks,
    its :class:`~plausible.diagnostics.model_selection.Selection` attached, or the stack of
    the candidates of its meaning (:func:`stacked_trace`, the members kept). ``max_seconds``
    bounds the whole choice: each fit gets an even share of what is left. Candidates that
    cannot take the request (a fractional reliability for a sampler that repeats labels,
    known classes for the ambiguity model) are left out and noted."""
    options = {key: value for key, value in settings.items()
               if key not in ("draws", "chains", "seed", "keep", "progressbar")}
    if options:
        raise ValueError(f"model='auto' takes no model options ({', '.join(options)}): its "
                         "candidates differ in them; name the model")
    candidates, skipped = [], []
    for name in auto_candidates(annotations):
        entry = models.entry(name)
        if (reliability is not None and entry.reliability == "repetitions"
                and not float(reliability).is_integer()):
            skipped.append(f"{name}: left out, its sampler repeats labels and reliability "
                           f"{reliability} is not a whole number")
        elif known is not None and entry.plausibility == models.ITEM_DISTRIBUTION:
            skipped.append(f"{name}: left out, known classes fix an item's one true class, "
                           "not its distribution over classes")
        else:
            candidates.append(name)
    deadline = None if max_seconds is None else time.monotonic() + max_seconds
    fits = {}
    for place, name in enumerate(candidates):
        budget = (None if deadline is None else
                  max(deadline - time.monotonic(), 0.0) / (len(candidates) - place))
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*LOO cannot rank")  # noted below
            fits[name] = fit(annotations, name, reliability=reliability,
                                   max_seconds=budget, known=known, **settings)
    not_converged = {name: _unconverged(fit.convergence()) for name, fit in fits.items()
                     if not fit.convergence().converged}
    selection = select({name: fit.trace for name, fit in fits.items()}, not_converged,
                       {name: models.entry(name).plausibility for name in fits})
    if skipped:
        selection = replace(selection, notes=(*selection.notes, *skipped))
    chosen = fits[selection.chosen]
    if not selection.stacked:
        return replace(chosen, default=default, selection=selection)
    members = {name: fits[name] for name in selection.stack}
    return Aggregation(trace=stacked_trace(members, selection.stack, settings.get("seed"),
                                           chosen.trace),
                       model=selection.chosen, data=chosen.data, default=default,
                       selection=selection, members=members)


def stacked_trace(members: dict[str, Aggregation], weights: dict[str, float],
                  seed: int | None, base: xr.DataTree) -> xr.DataTree:
    """The trace of a stacked result: ``posterior/plausibility (chain, draw, item, class)``,
    the mixture of the members' plausibility draws with ``weights``
    (:func:`plausible.inference.stacking.mixture_draws`, its draws chosen by ``seed``), the
    weights in the posterior's ``stack`` attribute (JSON), the members' summed
    ``sampling_seconds`` and what stopped each one's draws (``draws_stopped_by``);
    ``observed_data`` and ``constant_data`` of ``base`` (a member's trace: the members share
    the data)."""
    draws = {name: member.trace["posterior"]["plausibility"]
             for name, member in members.items()}
    mixed = mixture_draws(draws, weights, np.random.default_rng(seed))
    seconds = sum(float(member.trace["posterior"].attrs.get("sampling_seconds", 0.0))
                  for member in members.values())
    stopped = "; ".join(f"{name}: {member.trace['posterior'].attrs['draws_stopped_by']}"
                        for name, member in members.items()
                        if "draws_stopped_by" in member.trace["posterior"].attrs)
    posterior = xr.Dataset({"plausibility": mixed}, attrs={
        "sampler": "stacking", "stack": json.dumps(weights), "sampling_seconds": seconds,
        **({"draws_stopped_by": stopped} if stopped else {})})
    data = {group: base[group].to_dataset() for group in ("observed_data", "constant_data")
            if group in base.children}
    return assemble(posterior, **data)


def _unconverged(report) -> str:
    """What keeps a convergence report from passing: its worst failing variable, or that
    it could not be assessed."""
    if report.status == NOT_CONVERGED:
        return report.describe(report.worst_failing)
    return f"convergence not assessed ({report.n_chains} x {report.n_draws} draws)"
