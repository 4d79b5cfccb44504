"""Compare aggregation models on the same annotations: fit, check, compare, decide.

:func:`compare` fits every candidate through the registry (:func:`plausible.aggregate`,
the same seed and draws for each) and collects, per model:

* **LOO** — ``az.compare`` of the per-item log-likelihoods (each model declares one with the
  item's latent class or plausibility integrated out, so models of the same annotations
  compare), computed once per model (:func:`plausible.diagnostics.loo`: PSIS, or exact where
  the terms do not vary over draws), with the share of items whose Pareto ``k`` exceeds 0.7 (PSIS-LOO is unreliable for
  them) and ArviZ's warnings kept in :attr:`Comparison.notes` instead of printed;
* **predictive checks** — the model's posterior predictive check (:meth:`Aggregation.check`),
  every entry of every statistic with its mid p-value ``P(T_rep > T_obs) + P(T_rep =
  T_obs) / 2``; an entry is *missed* when its mid p-value is below 0.025 or above 0.975
  (outside a central 95 % predictive interval);
* **convergence** — status, largest R-hat and smallest bulk ESS
  (:func:`plausible.diagnostics.convergence_report`);
* **certainty** — the mean top-1 annotation certainty and the number of items below 0.99,
  what the model implies for the evaluation downstream.

A model whose chains did not converge is reported but left out of the LOO table (its elpd
would describe the chains, not the model).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from plausible import models as registry
from plausible.aggregation import Aggregation, aggregate, as_annotations, data_for_model
from plausible.diagnostics.convergence import NOT_CONVERGED
from plausible.diagnostics.model_selection import PARETO_K, loo_table
from plausible.inference.progress import reporting

MISSED = 0.025
"""Mid p-values below ``MISSED`` or above ``1 - MISSED`` count as missed."""
CERTAIN = 0.99


@dataclass
class Comparison:
    """What :func:`compare` found (module docstring).

    ``fits``: name -> :class:`~plausible.aggregation.Aggregation`; ``loo``: ``az.compare``'s
    table of the converged models with ``share_k_above_0.7``; ``checks``: one row per model
    and statistic (``entries``, ``missed``, ``extreme_p_value`` — the mid p-value furthest
    from 1/2, ``worst_entry``); ``convergence`` and ``certainty``: one row per model;
    ``notes``: what could not be computed, and ArviZ's warnings; ``predictive``: name -> the
    model's :class:`~plausible.aggregation.Check` as computed here (its replicated statistics,
    intervals and mid p-values, without checking again)."""

    fits: dict[str, Aggregation]
    loo: pd.DataFrame
    checks: pd.DataFrame
    convergence: pd.DataFrame
    certainty: pd.DataFrame
    notes: list[str] = field(default_factory=list)
    predictive: dict = field(default_factory=dict)

    @property
    def table(self) -> pd.DataFrame:
        """One row per model: LOO rank, ``elpd_diff`` and its ``dse``, the Pareto-k share,
        the predictive entries missed, convergence status and mean certainty, in LOO order
        (models left out of LOO last)."""
        missed = self.checks.groupby(level="model")["missed"].sum() if len(self.checks) else None
        table = pd.DataFrame(index=pd.Index(list(self.fits), name="model"))
        table = table.join(self.loo[["rank", "elpd", "elpd_diff", "dse",
                                     f"share_k_above_{PARETO_K}"]])
        table["predictive entries missed"] = missed
        table = table.join(self.convergence[["status", "max_rhat"]]).join(self.certainty)
        return table.sort_values("rank", na_position="last")

    def plot(self):
        """Three panels: ``elpd_diff`` with its standard error, predictive entries missed,
        and the distribution of each model's top-1 certainty. Returns the figure."""
        table = self.table
        fig, axes = plt.subplots(1, 3, figsize=(13, 0.5 * len(table) + 2))
        y = np.arange(len(table))[::-1]
        compared = table["elpd_diff"].notna().to_numpy()
        axes[0].errorbar(-table["elpd_diff"].to_numpy()[compared], y[compared],
                         xerr=table["dse"].to_numpy()[compared], fmt="o")
        axes[0].set(yticks=y, yticklabels=table.index, xlabel="elpd behind the best (± se)",
                    title="LOO")
        axes[1].barh(y, table["predictive entries missed"].fillna(0).to_numpy())
        axes[1].set(yticks=y, yticklabels=table.index, xlabel=f"entries with mid p < {MISSED} or "
                    f"> {1 - MISSED}", title="posterior predictive checks")
        column = self.certainty.columns[0].removeprefix("mean_")  # certainty_top1, or a set's
        for name in table.index:
            values = np.sort(self.fits[name].labels()[column].to_numpy())
            axes[2].step(values, np.arange(1, values.size + 1) / values.size, where="post",
                         label=name)
        axes[2].axvline(CERTAIN, color="0.6", lw=1)
        axes[2].set(xlabel=column.replace("_", " "), ylabel="share of items at or below",
                    title="certainty")
        axes[2].legend(fontsize="small")
        fig.tight_layout()
        return fig

    def __repr__(self) -> str:
        lines = [self.table.to_string()]
        lines += [f"note: {note}" for note in self.notes]
        return "\n".join(lines)


def _candidates(models) -> dict[str, tuple[str, dict]]:
    """``{name: (registry model, options)}`` from a list of registry names or a dict of
    ``name: model`` or ``name: (model, options)``."""
    if isinstance(models, str) or not models:
        raise ValueError("models must be a non-empty list of registry names or a dict "
                         "{name: model or (model, options)}")
    if not isinstance(models, dict):
        names = list(models)
        duplicated = sorted({m for m in names if names.count(m) > 1})
        if duplicated:
            raise ValueError(f"model {duplicated[0]!r} is listed twice; give options as a dict "
                             "{name: (model, options)} to compare variants")
        models = {name: name for name in names}
    out = {}
    for name, spec in models.items():
        model, options = (spec, {}) if isinstance(spec, str) else spec
        out[name] = (model, dict(options))
    return out


def _check_rows(name: str, check) -> list[dict]:
    """One row per statistic of a predictive check."""
    predictive = check.predictive
    if predictive is None:
        return []
    if isinstance(predictive, pd.DataFrame):  # a mid p-value per (statistic, entry)
        frames = {statistic: rows.droplevel("statistic")
                  for statistic, rows in predictive.groupby(level="statistic", sort=False)}
    elif hasattr(predictive, "names"):
        frames = {statistic: predictive.summary(statistic) for statistic in predictive.names}
    else:  # one value per statistic
        summary = predictive.summary()
        frames = {statistic: summary.loc[[statistic]] for statistic in summary.index}
    rows = []
    for statistic, frame in frames.items():
        p = frame["p_value"].dropna()
        if p.empty:
            continue
        worst = (p - 0.5).abs().idxmax()
        rows.append({"model": name, "statistic": statistic, "entries": int(p.size),
                     "missed": int(((p < MISSED) | (p > 1 - MISSED)).sum()),
                     "extreme_p_value": float(p[worst]), "worst_entry": worst})
    return rows


def compare(data, models, *, seed: int | None = 0, draws: int | str = "auto", chains: int = 4,
            check_draws: int = 200, max_seconds: float | None = None, progressbar: bool = True,
            **columns) -> Comparison:
    """Fit each of ``models`` to ``data`` and compare them (module docstring).

    ``data``: anything :func:`plausible.aggregate` takes; ``columns`` (``item=``,
    ``annotator=``, ``label=``, ...) name a long table's columns. ``models``: registry names
    (:func:`plausible.models.available`) or ``{name: model}`` / ``{name: (model,
    options)}`` to compare variants of one model. Every fit uses ``seed``, ``draws`` and ``chains``
    (``draws="auto"``, the default: each model's chains are extended until they converge or
    ``max_seconds`` pass, since LOO ranks only converged fits; a model sampled by
    ``pm.sample`` gets 1000); each model is fitted once. The predictive checks replicate
    ``check_draws`` data sets. ``progressbar``: on a terminal, one bar per model (named,
    with its place in the list) counts its sweeps while it is fitted and checked.
    """
    candidates = _candidates(models)
    annotations = as_annotations(data, **columns)
    for model, _ in candidates.values():  # refuse a bad request before fitting anything
        data_for_model(annotations, registry.entry(model))
    fits, checks, convergence, certainty, notes, predictive = {}, [], {}, {}, [], {}
    for place, (name, (model, options)) in enumerate(candidates.items(), start=1):
        with reporting(progressbar, description=f"{name} ({place}/{len(candidates)})"):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                fit = aggregate(annotations, model, seed=seed, draws=draws, chains=chains,
                                max_seconds=max_seconds, **options)
            check = predictive[name] = fit.check(draws=check_draws, seed=seed)
        notes += [f"{name}: {w.message}" for w in caught if "cannot extend" in str(w.message)]
        for w in caught:
            if "cannot extend" not in str(w.message):
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        fits[name] = fit
        if check.predictive is None:
            notes.append(f"{name}: no posterior predictive check ({check.predictive_note})")
        checks += _check_rows(name, check)
        report = check.convergence
        table = report.table
        convergence[name] = {"status": report.status,
                             "max_rhat": float(table["max_rhat"].max()),
                             "min_ess_bulk": float(table["min_ess_bulk"].min()),
                             "draws": int(fit.trace.posterior.sizes["draw"]),
                             "worst": _worst_quantity(report)}
        labels = fit.labels()  # multi-label sets: the predicted set's expected accuracy
        column = ("certainty_top1" if "certainty_top1" in labels.columns
                  else "expected_hamming_accuracy")
        certainty[name] = {f"mean_{column}": float(labels[column].mean()),
                           f"items_below_{CERTAIN}": int((labels[column] < CERTAIN).sum())}
    loo, loo_notes = loo_table(
        {name: fit.trace for name, fit in fits.items()},
        {name: f"not converged: {row['worst']} (its elpd would describe the chains, not the "
               "model; draws='auto' or more draws)"
         for name, row in convergence.items() if row["status"] == NOT_CONVERGED})
    notes += loo_notes
    check_table = (pd.DataFrame(checks).set_index(["model", "statistic"]) if checks else
                   pd.DataFrame(columns=["entries", "missed", "extreme_p_value", "worst_entry"],
                                index=pd.MultiIndex.from_tuples([], names=["model", "statistic"])))
    return Comparison(fits, loo, check_table,
                      pd.DataFrame(convergence).T.rename_axis("model"),
                      pd.DataFrame(certainty).T.rename_axis("model"), notes, predictive)


def _worst_quantity(report) -> str:
    """The failing variable with the highest R-hat, its worst element and its numbers ("" when
    none fails)."""
    name = report.worst_failing
    if name is None:
        return ""
    return f"{report.describe(name)} after {report.n_chains} x {report.n_draws} draws"


__all__ = ["Comparison", "compare"]
