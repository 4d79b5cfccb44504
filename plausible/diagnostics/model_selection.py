"""Choosing among models of the same annotations by leave-one-item-out cross-validation.

:func:`loo_table` is ``az.compare`` of the fits' per-item log-likelihoods (every model
declares one with the item's latent class or distribution integrated out, so models of the
same annotations compare item for item): PSIS-LOO's expected log predictive density
``elpd``, each model's difference to the best with its standard error ``dse``, and the
Bayesian stacking weights of their predictive distributions (Yao, Vehtari, Simpson & Gelman
2018), with the share of items whose Pareto ``k`` exceeds :data:`PARETO_K` (their LOO
terms are unreliable).

:func:`select` picks the model with the highest ``elpd`` among the candidates whose chains
converged (an unconverged chain's elpd describes the chain, not the model) and says why in a
:class:`Selection`: by how much it leads the next, in standard errors of the difference, and
its stacking weight. Given each candidate's meaning of the plausibility (an item's
distribution over classes, or the posterior of its one true class), it also weighs the
converged candidates that share the chosen model's meaning by Bayesian stacking among
themselves (:attr:`Selection.stack`): averaging within one meaning sharpens the estimate
where the data hardly tell the models apart, and averaging across the two meanings would
blur what the plausibility is, so the chosen model's meaning decides which models combine.
"""

from __future__ import annotations

import io
import json
import warnings
from dataclasses import dataclass, field

import arviz as az
import numpy as np
import pandas as pd
import xarray as xr

from plausible.diagnostics.leave_one_out import loo

PARETO_K = 0.7
"""Pareto ``k`` above which an item's PSIS-LOO term is unreliable."""
MIN_STACK_WEIGHT = 0.01
"""Least stacking weight for a model to join :attr:`Selection.stack` (the weights of those
that join are renormalised): below it a model moves a combined plausibility by less than
0.01, within the Monte Carlo error of a plausibility near 0.5 estimated from the 400
effective draws the convergence report asks for (``0.5 / sqrt(400) = 0.025``)."""
COLUMNS = ["rank", "elpd", "elpd_diff", "dse", "se", "weight", f"share_k_above_{PARETO_K}"]


def loo_table(traces: dict[str, xr.DataTree], left_out: dict[str, str] | None = None
              ) -> tuple[pd.DataFrame, list[str]]:
    """``az.compare`` of ``traces`` (name -> trace with a ``log_likelihood`` group) in
    :data:`COLUMNS`, one row per model best first, and the notes: models in ``left_out``
    (name -> why) or without a log-likelihood are left out and noted, ArviZ's warnings kept
    as notes instead of printed, and per model the items whose Pareto k exceeds
    :data:`PARETO_K`."""
    _, table, notes = _ranked(traces, left_out or {})
    return table, notes


def _ranked(traces: dict[str, xr.DataTree], left_out: dict[str, str]
            ) -> tuple[dict, pd.DataFrame, list[str]]:
    """PSIS-LOO of every trace not in ``left_out`` that has a log-likelihood (name -> ArviZ's
    result), their :func:`_compare` table, and the notes (:func:`loo_table`)."""
    results, notes = {}, []
    for name, trace in traces.items():
        if name in left_out:
            notes.append(f"{name}: left out of LOO, {left_out[name]}")
        elif "log_likelihood" not in trace.children:
            notes.append(f"{name}: left out of LOO (no per-item log-likelihood in its trace)")
        else:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                try:
                    results[name] = loo(trace)
                except ValueError as error:  # too few draws for PSIS
                    notes.append(f"{name}: left out of LOO, PSIS-LOO failed ({error})")
            notes += [f"{name}: {w.message}" for w in caught if "Pareto" not in str(w.message)]
    for name, result in results.items():
        k = np.asarray(result.pareto_k)
        high = int((k > PARETO_K).sum())
        if high:
            [pointwise] = traces[name]["log_likelihood"].data_vars.values()
            unit = ("ratings" if "rating" in pointwise.dims  # per rating, per comparison
                    else "comparisons" if "comparison" in pointwise.dims else "items")
            notes.append(f"{name}: {high} of {k.size} {unit} ({high / k.size:.2%}) have Pareto "
                         f"k > {PARETO_K}: their LOO terms are unreliable, and so is the elpd "
                         "if they are many")
    table, compare_notes = _compare(results)
    return results, table, notes + compare_notes


def _compare(results: dict) -> tuple[pd.DataFrame, list[str]]:
    """``az.compare`` of PSIS-LOO ``results`` in :data:`COLUMNS` (stacking weights), and
    ArviZ's warnings as notes."""
    if not results:
        return pd.DataFrame(columns=COLUMNS, index=pd.Index([], name="model")), []
    notes = []
    if len(results) == 1:
        [(name, result)] = results.items()
        table = pd.DataFrame({"rank": 0, "elpd": result.elpd, "elpd_diff": 0.0, "dse": 0.0,
                              "se": result.se, "weight": 1.0}, index=[name])
    else:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            table = az.compare(results, round_to="none")  # numbers, not display
        notes += [f"az.compare: {w.message}" for w in caught]
    share = {name: float((np.asarray(result.pareto_k) > PARETO_K).mean())
             for name, result in results.items()}
    table = table.assign(**{f"share_k_above_{PARETO_K}": pd.Series(share)})
    return table[COLUMNS].rename_axis("model"), notes


@dataclass(frozen=True)
class Selection:
    """What :func:`select` chose and why.

    ``chosen``: the model's name; ``candidates``: every candidate, in the order given;
    ``table``: :func:`loo_table`'s rows of the ranked candidates plus ``converged`` (bool),
    every candidate a row (those LOO could not rank last, without numbers); ``notes``: what
    was left out and why, and ArviZ's warnings; ``stack``: name -> weight of the models whose
    plausibilities combine (:func:`select`; the chosen model alone, weight 1, unless two or
    more of the same meaning share the weight), best weight first."""

    chosen: str
    candidates: tuple[str, ...]
    table: pd.DataFrame
    notes: tuple[str, ...] = ()
    stack: dict[str, float] = field(default_factory=dict)

    @property
    def stacked(self) -> bool:
        """Whether the plausibilities of two or more models combine (:attr:`stack`)."""
        return len(self.stack) > 1

    @property
    def reason(self) -> str:
        """One sentence: how the model was chosen, its elpd and its lead over the next model
        in standard errors of the difference, its stacking weight."""
        among = f"among {', '.join(self.candidates)}"
        ranked = self.table.dropna(subset=["elpd"])
        if self.chosen not in ranked.index:
            return (f"{self.chosen}: the first candidate {among}; LOO ranked none of them "
                    "(notes say why)")
        row = ranked.loc[self.chosen]
        text = (f"{self.chosen}: highest PSIS-LOO elpd {among}, {row['elpd']:.1f} "
                f"(se {row['se']:.1f})")
        if len(ranked) > 1:
            runner_up = ranked.index[1]
            lead, dse = -ranked["elpd_diff"].iloc[1], ranked["dse"].iloc[1]
            strength = ("decisively" if lead > 2 * dse else
                        "within two standard errors: the data hardly tell them apart")
            text += (f", ahead of {runner_up} by {lead:.1f} (se {dse:.1f}, {strength}); "
                     f"stacking weight {row['weight']:.2f}")
        unreliable = row[f"share_k_above_{PARETO_K}"]
        if unreliable > 0.05:  # PSIS cannot leave these items out: their elpd is optimistic
            text += (f"; but its LOO terms are unreliable for {unreliable:.0%} of the items "
                     f"(Pareto k > {PARETO_K}), so its elpd may be optimistic")
        if not bool(row["converged"]):
            text += "; no candidate converged, so the ranking describes the chains"
        if self.stacked:
            weights = ", ".join(f"{name} {weight:.2f}" for name, weight in self.stack.items())
            text += (f"; its plausibilities are combined with those of the models of the same "
                     f"meaning by Bayesian stacking, weights {weights}")
        return text

    def to_json(self) -> str:
        """The selection as JSON (a saved run's attribute; :meth:`from_json` reads it)."""
        return json.dumps({"chosen": self.chosen, "candidates": list(self.candidates),
                           "table": json.loads(self.table.to_json(orient="split")),
                           "notes": list(self.notes), "stack": self.stack})

    @classmethod
    def from_json(cls, text: str) -> Selection:
        """The :class:`Selection` :meth:`to_json` wrote."""
        fields = json.loads(text)
        table = pd.read_json(io.StringIO(json.dumps(fields["table"])), orient="split")
        return cls(fields["chosen"], tuple(fields["candidates"]), table.rename_axis("model"),
                   tuple(fields["notes"]), fields.get("stack", {fields["chosen"]: 1.0}))

    def __repr__(self) -> str:
        lines = [f"Selection: {self.reason}", self.table.to_string()]
        return "\n".join(lines + [f"note: {note}" for note in self.notes])


def select(traces: dict[str, xr.DataTree], not_converged: dict[str, str],
           meanings: dict[str, str] | None = None) -> Selection:
    """The candidate (``traces``: name -> trace, in order of preference) with the highest
    PSIS-LOO elpd among those not in ``not_converged`` (name -> its worst quantity); when
    none converged, among all of them, and said; when LOO can rank none, the first.

    ``meanings`` (name -> what its plausibility is) asks for the stack as well: the converged
    candidates of the chosen model's meaning are weighed by Bayesian stacking among
    themselves (Yao et al. 2018: the weights ``w`` that maximise ``sum_i log sum_k w_k
    p_k(y_i | y_-i)``, the PSIS-LOO predictive densities), those of weight at least
    :data:`MIN_STACK_WEIGHT` kept and renormalised (:attr:`Selection.stack`). Without it, or
    when the chosen model did not converge, the chosen model alone."""
    candidates = tuple(traces)
    converged = [name for name in candidates if name not in not_converged]
    pool = converged or list(candidates)
    left_out = {name: f"not converged: {why}" for name, why in not_converged.items()
                if name in traces and name not in pool}
    results, table, notes = _ranked(traces, left_out)
    if not converged:
        notes.insert(0, "no candidate converged: LOO ranks unconverged chains (more draws, or "
                        "draws='auto')")
    chosen = table.index[0] if len(table) else candidates[0]
    table = table.reindex(list(table.index) + [n for n in candidates if n not in table.index])
    table["converged"] = [name not in not_converged for name in table.index]
    stack = {chosen: 1.0}
    if meanings is not None and chosen in results and chosen in converged:
        alike = {name: result for name, result in results.items()
                 if name in converged and meanings[name] == meanings[chosen]}
        if len(alike) > 1:
            weights = _compare(alike)[0]["weight"]
            kept = weights[weights >= MIN_STACK_WEIGHT].sort_values(ascending=False)
            stack = {name: float(w) for name, w in (kept / kept.sum()).items()}
    return Selection(chosen, candidates, table, tuple(notes), stack)


__all__ = ["COLUMNS", "MIN_STACK_WEIGHT", "PARETO_K", "Selection", "loo_table", "select"]
