"""Convergence report: per posterior variable, converged, not converged, or not assessed.

Thresholds follow Vehtari et al. (2021): rank-normalised split R-hat below 1.01 and at least
100 effective draws per chain (400 for 4 chains) in the bulk and the tails, for the worst
element of the variable. The estimators are :mod:`plausible.diagnostics.estimators`
(ArviZ's, vectorised).

A report never claims what it did not measure. A variable is **not assessed** when R-hat and
ESS cannot be computed: fewer than :data:`MIN_CHAINS` chains or :data:`MIN_DRAWS` draws per
chain, no elements (a trace of 0 items), or every element constant over the draws (e.g. a
plausibility fixed at 0). A variable computed from other variables each time it is read
(named, comma-separated, in the posterior's ``computed_when_read`` attribute: Dawid–Skene's
plausibilities past the memory budget) is assessed on its draws, recomputed from the stored
ones: all of them when they hold at most :data:`COMPUTED_VALUES` values, else every ``k``-th
draw of each chain (the fewest ``k`` that fits; R-hat and ESS of a thinned chain are those of
a chain in their own right, and the ESS of every draw is at least as large), which the
table's reason says. A plausibility element every draw of which lies within :data:`SETTLED`
of 0 or of 1 is left out of the worst case, and the reason says how many are. Where the draws
cannot be computed here (the labels were read by the workers), its moments kept for each half
of each chain (:mod:`plausible.metrics.accumulated`) give its split R-hat (of the raw values,
not ranks), which fails it when above the threshold; passing it, it stays not assessed, since
ESS needs the draws. A trace of exact independent posterior draws (the batched exact route,
``sample_stats.attrs["independent_draws"]``) has no Markov chain to converge: its variables
are reported as ``exact draws``, and its Monte Carlo error is that of independent draws (ESS
= number of draws). Where the posterior has a confusion matrix, the row ``class labels``
fails when a chain sits in a permuted mode
(:func:`plausible.diagnostics.chain_modes.permuted_chains`).
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass

import numpy as np
import pandas as pd

from plausible.diagnostics.chain_modes import chain_modes, permuted_chains
from plausible.diagnostics.estimators import convergence_diagnostics
from plausible.metrics.accumulated import accumulated, split_rhat
from plausible.metrics.storage import NAME

RHAT_MAX = 1.01
"""A variable converges when its worst element's rank-normalised split R-hat is at most this
(Vehtari et al. 2021); every check that chains have converged reads it."""
ESS_PER_CHAIN = 100.0
"""... and its bulk and tail ESS are at least this many per chain."""
MIN_CHAINS = 2
"""R-hat compares chains: fewer and it is not assessed."""
MIN_DRAWS = 4
"""Split R-hat halves each chain: fewer draws per chain and it is not assessed."""

COMPUTED_VALUES = 8 * 10**7
"""Most values (draws x elements) of a variable computed when read that the report recomputes
to assess it (320 MB of float32 plausibilities); past it, every ``k``-th draw."""

REPORT_ATTR = "convergence_report"
"""The posterior attribute where a ``draws="auto"`` run that stopped because its chains
converged keeps the report of its last check (:meth:`ConvergenceReport.to_json`): the report
of these very draws, which :func:`convergence_report` returns instead of computing it again
(for plausibilities computed when read, the costliest part of a run's check)."""

CONVERGED, NOT_CONVERGED, NOT_ASSESSED, EXACT = ("converged", "not converged", "not assessed",
                                                 "exact draws")


@dataclass(frozen=True)
class ConvergenceReport:
    """Per-variable worst-case diagnostics and their verdict.

    ``table`` is indexed by variable with columns ``status`` (``"converged"``, ``"not
    converged"``, ``"not assessed"`` or ``"exact draws"``), ``max_rhat``, ``min_ess_bulk``,
    ``min_ess_tail`` (NaN where not computed), ``worst`` (the element with the highest R-hat,
    e.g. ``"item='a', class='b'"``; empty for a scalar) and ``reason`` (why a variable is not
    assessed or fails); ``n_chains``, ``n_draws`` are the trace's, ``seconds`` the sampling
    time the trace records (``posterior.attrs["sampling_seconds"]``; None if it records none),
    which gives ESS per second.
    """

    table: pd.DataFrame
    rhat_max: float
    ess_min: float
    n_chains: int
    n_draws: int
    seconds: float | None = None
    modes: pd.DataFrame | None = None
    """Items on whose most plausible class the chains disagree
    (:func:`plausible.diagnostics.chain_modes`; None where not read: no dense stored
    plausibilities, or one chain)."""

    @property
    def status(self) -> str:
        """``"not converged"`` if any variable fails; else ``"converged"`` if every variable
        passes (or all are exact draws: ``"exact draws"``); else ``"not assessed"``."""
        statuses = set(self.table["status"])
        if NOT_CONVERGED in statuses:
            return NOT_CONVERGED
        if statuses == {EXACT}:
            return EXACT
        if statuses and statuses <= {CONVERGED, EXACT}:
            return CONVERGED
        return NOT_ASSESSED

    @property
    def converged(self) -> bool:
        """Every variable measured and passing (exact draws count as passing)."""
        return self.status in (CONVERGED, EXACT)

    @property
    def ok(self) -> bool:
        """No variable measured as failing (the report found nothing wrong; it may not have
        assessed everything: see :attr:`status`)."""
        return self.status != NOT_CONVERGED

    @property
    def text(self) -> str:
        """The report in words: the verdict with its thresholds, each failing variable's worst
        element (:meth:`describe`), what was not assessed and why, and the items whose chains
        disagree."""
        n = len(self.table)
        thresholds = f"R-hat <= {self.rhat_max}, bulk and tail ESS >= {self.ess_min:g}"
        status = self.status
        if status == EXACT:
            return (f"Exact independent posterior draws ({self.n_chains} x {self.n_draws}): no "
                    "Markov chain, nothing to converge.")
        if status == CONVERGED:
            return "\n".join([f"Converged: all {n} variables pass ({thresholds}).",
                              *self._modes_text()])
        lines = []
        failing = self.table[self.table["status"] == NOT_CONVERGED]
        if not failing.empty:
            lines.append(f"Not converged: {len(failing)} of {n} variables fail ({thresholds}); "
                         "draw more samples (draws='auto' extends the chains until they pass) or "
                         "check the model before trusting these results:")
            lines += [f"  {self.describe(name)}" for name in failing.index]
        unassessed = self.table[self.table["status"] == NOT_ASSESSED]
        if not unassessed.empty:
            head = ("Not assessed" if failing.empty and len(unassessed) == n else
                    f"{len(unassessed)} of {n} variables not assessed")
            lines.append(f"{head}: convergence was not measured, so it is not claimed:")
            for reason, group in unassessed.groupby("reason", sort=False):
                lines.append(f"  {', '.join(map(str, group.index))}: {reason}")
        return "\n".join([*lines, *self._modes_text()])

    @property
    def worst_failing(self) -> str | None:
        """The failing variable with the highest R-hat (None when none fails)."""
        failing = self.table[self.table["status"] == NOT_CONVERGED]
        if failing.empty:
            return None
        rhat = failing["max_rhat"]
        return rhat.idxmax() if rhat.notna().any() else failing.index[0]

    def describe(self, name: str) -> str:
        """One line on variable ``name``: its worst R-hat (and where), bulk ESS (per second
        where the trace records its sampling time) and tail ESS."""
        row = self.table.loc[name]
        if np.isnan(row.max_rhat):  # no R-hat: the class labels, or a variable not assessed
            return f"{name}: {row.reason}"
        at = f" at {row.worst}" if row.worst else ""
        rhat = f"{name}: max R-hat {rhat_text(row.max_rhat, self.rhat_max)}{at}"
        if np.isnan(row.min_ess_bulk):  # a split R-hat from accumulated moments: no ESS
            return f"{rhat} ({row.reason})"
        rate = "" if not self.seconds else f" ({row.min_ess_bulk / self.seconds:.3g} per second)"
        return (f"{rhat}, min bulk ESS {row.min_ess_bulk:.0f}{rate}, min tail ESS "
                f"{row.min_ess_tail:.0f}")

    def _modes_text(self) -> list[str]:
        if self.modes is None or self.modes.empty:
            return []
        shown = []
        for _, row in self.modes.head(5).iterrows():
            chains = "; ".join(f"chain {c}: {row[f'mode_{c}']!r} {row[f'plausibility_{c}']:.2f}"
                               for c in range(self.n_chains))
            shown.append(f"  item {row['item']!r}: {chains}")
        more = f" (the {len(shown)} widest shown)" if len(self.modes) > len(shown) else ""
        return [f"Chains disagree on the most plausible class of {len(self.modes)} items"
                f"{more}: a chain in another mode, which more draws or a dispersed restart "
                "should resolve:", *shown]

    def __str__(self) -> str:
        return self.text

    def to_json(self) -> str:
        """The report as JSON (:meth:`from_json` reads it back): what a trace keeps of the
        report its ``draws="auto"`` run ended on (:data:`REPORT_ATTR`)."""
        return json.dumps({
            "table": self.table.to_json(orient="split"), "rhat_max": self.rhat_max,
            "ess_min": self.ess_min, "n_chains": self.n_chains, "n_draws": self.n_draws,
            "modes": None if self.modes is None else self.modes.to_json(orient="split")})

    @classmethod
    def from_json(cls, text: str, seconds: float | None = None) -> ConvergenceReport:
        """The report :meth:`to_json` wrote; ``seconds``: the trace's sampling time."""
        saved = json.loads(text)
        table = pd.read_json(io.StringIO(saved["table"]), orient="split")
        modes = (None if saved["modes"] is None else
                 pd.read_json(io.StringIO(saved["modes"]), orient="split"))
        return cls(table=table.astype({"worst": str, "reason": str}),
                   rhat_max=saved["rhat_max"], ess_min=saved["ess_min"],
                   n_chains=saved["n_chains"], n_draws=saved["n_draws"], seconds=seconds,
                   modes=modes)


def rhat_text(value: float, threshold: float) -> str:
    """``value`` with at least 3 decimals and as many more as it takes to read on the same
    side of ``threshold`` as it is (1.0104 against 1.01 prints as ``1.0104``, not ``1.010``)."""
    for digits in range(3, 10):
        text = f"{value:.{digits}f}"
        if (float(text) > threshold) == (value > threshold):
            return text
    return repr(value)


def _worst(da, rhat: np.ndarray) -> str:
    """The element of ``da`` (dims ``chain, draw, ...``, or the dims of ``rhat``) with the
    highest R-hat, by its coordinates (or positions where a dim has none)."""
    if rhat.ndim == 0:
        return ""
    index = np.unravel_index(np.nanargmax(rhat), rhat.shape)
    parts = []
    for dim, i in zip(da.dims[-rhat.ndim:], index):
        if dim in da.coords:
            label = da[dim].values[i]
            parts.append(f"{dim}={getattr(label, 'item', lambda: label)()!r}")
        else:
            parts.append(f"{dim}={i}")
    return ", ".join(parts)


def _row(status, reason="", rhat=np.nan, bulk=np.nan, tail=np.nan, worst="") -> dict:
    return {"status": status, "max_rhat": rhat, "min_ess_bulk": bulk, "min_ess_tail": tail,
            "worst": worst, "reason": reason}


def _summarised_row(trace, name: str, rhat_max: float, too_few: list) -> dict:
    """The row of a variable whose draws cannot be computed here: its split R-hat from the
    moments accumulated while sampling where there are
    (:func:`plausible.metrics.accumulated.split_rhat`), a verdict only when it fails (ESS
    needs the draws); else not assessed."""
    again = ("the draws cannot be computed here (the labels were read by the workers, or the "
             "items' parameters were not stored per draw)")
    summary = accumulated(trace) if name == NAME else None
    rhat = None if summary is None or too_few else split_rhat(summary)
    if rhat is None or bool(rhat.isnull().all()):
        return _row(NOT_ASSESSED, f"computed from the stored parameters when read: {again}")
    where = _worst(rhat, rhat.values)
    value = float(rhat.max())
    if value > rhat_max:
        return _row(NOT_CONVERGED, "split R-hat of the raw values from the moments accumulated "
                                   "while sampling", value, worst=where)
    return _row(NOT_ASSESSED, f"split R-hat {value:.3f} from the moments accumulated while "
                              f"sampling; ESS needs the draws: {again}", value, worst=where)


LABELLING = "class labels"
"""The report's row on whether each chain reads the classes as they are named
(:func:`plausible.diagnostics.chain_modes.permuted_chains`)."""


def labelling_row(trace) -> dict:
    """``{LABELLING: row}``: not converged where a chain sits in a permuted mode (most of its
    draws read better with the classes relabelled), converged otherwise; nothing where the
    trace has no confusion matrix to read it from."""
    shares = permuted_chains(trace)
    if shares is None:
        return {}
    permuted = shares[shares > 0.5]
    if permuted.empty:
        return {LABELLING: _row(CONVERGED)}
    chains = ", ".join(f"chain {c} ({share:.0%} of its draws)" for c, share in permuted.items())
    return {LABELLING: _row(NOT_CONVERGED, f"{chains} read the classes relabelled: such a "
                                           "chain sits in a permuted mode, where each class "
                                           "carries another's name (a prior with more on the "
                                           "diagonal, or the default model, keeps chains out)",
                            worst=", ".join(f"chain={c}" for c in permuted.index))}


SETTLED = 0.01
"""A plausibility element whose every draw lies within this of 0 or of 1 is settled: the
chains agree on it to that precision however they mix, so R-hat and ESS (which are
scale-free, and read a class at 10^-5 in one chain and 2 x 10^-5 in another as far apart) are
not asked of it."""


def _settled(values: np.ndarray) -> np.ndarray:
    """bool ``element_shape``: every draw within :data:`SETTLED` of 0, or every draw within it
    of 1."""
    low, high = values.min(axis=(0, 1)), values.max(axis=(0, 1))
    return (high <= SETTLED) | (low >= 1 - SETTLED)


def _diagnostics(values: np.ndarray, settled: np.ndarray | None):
    """:func:`convergence_diagnostics` of ``values (chain, draw, ...)``, of the elements not
    ``settled`` only (NaN for those)."""
    if settled is None or not settled.any():
        return convergence_diagnostics(values)
    keep = np.flatnonzero(~settled.ravel())
    flat = values.reshape(*values.shape[:2], -1)[:, :, keep]
    diag = convergence_diagnostics(flat)
    out = []
    for field in diag:
        full = np.full(settled.size, np.nan)
        full[keep] = field
        out.append(full.reshape(settled.shape))
    return type(diag)(*out)


def _ordinal(k: int) -> str:
    return "nd" if k % 10 == 2 and k % 100 != 12 else "rd" if k % 10 == 3 and k % 100 != 13 \
        else "th"


def _computed(da) -> tuple:
    """The draws ``(chain, draw, ...)`` of a variable computed when read, every ``k``-th of
    each chain where all of them would hold more than :data:`COMPUTED_VALUES` values, and
    ``k``; computed a block of its draws at a time into one array (the memory of the draws
    kept and of one block)."""
    k = max(1, -(-da.size // COMPUTED_VALUES))
    kept = np.arange(0, da.sizes["draw"], k)
    out = np.empty((da.sizes["chain"], kept.size, *da.shape[2:]), dtype=da.dtype)
    per_draw = max(1, da.size // (da.sizes["chain"] * da.sizes["draw"]))
    step = max(1, (da.data.chunks[1][0] if hasattr(da.data, "chunks") else kept.size) // k,
               COMPUTED_VALUES // 8 // per_draw)  # one graph pass per part, not per draw
    for chain in range(da.sizes["chain"]):
        for start in range(0, kept.size, step):
            part = kept[start:start + step]
            out[chain, start:start + part.size] = np.asarray(
                da.isel(chain=chain, draw=part).values)
    return out, k


def convergence_report(
    trace, var_names=None, *, rhat_max: float = RHAT_MAX, ess_per_chain: float = ESS_PER_CHAIN
) -> ConvergenceReport:
    """R-hat and ESS of every posterior variable of ``trace`` (an ``xarray.DataTree``), each
    variable converged, not converged or not assessed (see the module docstring).

    A variable converges when its worst element has R-hat <= ``rhat_max`` and bulk and tail
    ESS >= ``ess_per_chain * n_chains``; elements that never move are left out of the worst
    case, and a variable all of whose elements never move is not assessed. Estimators:
    :func:`convergence_diagnostics` (``arviz.rhat``, ``arviz.ess``).
    """
    posterior = trace["posterior"].to_dataset()
    if isinstance(var_names, str):
        var_names = [var_names]
    names = list(var_names) if var_names is not None else list(posterior.data_vars)
    n_chains, n_draws = posterior.sizes["chain"], posterior.sizes["draw"]
    ess_min = ess_per_chain * n_chains
    kept = _kept_report(posterior, var_names, rhat_max, ess_min)
    if kept is not None:
        return kept
    exact = "sample_stats" in trace.children and bool(
        trace["sample_stats"].attrs.get("independent_draws", 0))
    too_few = []
    if n_chains < MIN_CHAINS:
        too_few.append(f"{n_chains} chain (R-hat needs >= {MIN_CHAINS})")
    if n_draws < MIN_DRAWS:
        too_few.append(f"{n_draws} draws per chain (needs >= {MIN_DRAWS})")
    rows = {}
    computed_when_read = set(posterior.attrs.get("computed_when_read", "").split(","))
    if (var_names is None and NAME in computed_when_read and NAME not in names
            and accumulated(trace) is not None):
        names.append(NAME)  # summarised only: no labels here to compute the draws from
    for name in names:
        if name in computed_when_read and name not in posterior.data_vars:
            rows[name] = _summarised_row(trace, name, rhat_max, too_few)
            continue
        da = posterior[name]
        if exact:
            rows[name] = _row(EXACT, "independent draws")
        elif too_few:
            rows[name] = _row(NOT_ASSESSED, "; ".join(too_few))
        elif da.size == 0:
            rows[name] = _row(NOT_ASSESSED, "no values (0 elements)")
        else:
            da = da.transpose("chain", "draw", ...)
            values, k = _computed(da) if name in computed_when_read else (da.values, 1)
            settled = _settled(values) if name == NAME else None
            diag = _diagnostics(values, settled)
            how = ("" if name not in computed_when_read else
                   "recomputed from the stored parameters"
                   + ("" if k == 1 else f", every {k}{_ordinal(k)} draw of each chain"))
            aside = ("" if settled is None or not settled.any() else
                     f"{int(settled.sum())} of {settled.size} elements settled within {SETTLED} "
                     "of 0 or 1 in every draw, left out")
            if np.isnan(diag.rhat).all():
                if settled is not None and settled.all():
                    rows[name] = _row(CONVERGED, "; ".join(r for r in (how, aside) if r))
                else:
                    rows[name] = _row(NOT_ASSESSED, "constant in every draw")
                continue
            rhat, bulk, tail = (float(np.nanmax(diag.rhat)), float(np.nanmin(diag.ess_bulk)),
                                float(np.nanmin(diag.ess_tail)))
            passed = rhat <= rhat_max and bulk >= ess_min and tail >= ess_min
            reason = "; ".join(r for r in (how, aside, "" if passed else "thresholds not met")
                               if r)
            rows[name] = _row(CONVERGED if passed else NOT_CONVERGED, reason, rhat, bulk, tail,
                              _worst(da, np.asarray(diag.rhat)))
    if var_names is None and not exact and not too_few:
        rows.update(labelling_row(trace))
    table = pd.DataFrame.from_dict(rows, orient="index",
                                   columns=["status", "max_rhat", "min_ess_bulk", "min_ess_tail",
                                            "worst", "reason"])
    seconds = posterior.attrs.get("sampling_seconds")
    readable = ("plausibility" in names and "plausibility" not in computed_when_read
                and "class" in posterior["plausibility"].dims and not exact and not too_few)
    return ConvergenceReport(table=table, rhat_max=rhat_max, ess_min=ess_min, n_chains=n_chains,
                             n_draws=n_draws, seconds=None if seconds is None else float(seconds),
                             modes=chain_modes(trace) if readable else None)


def _kept_report(posterior, var_names, rhat_max: float, ess_min: float
                 ) -> ConvergenceReport | None:
    """The report kept in the posterior's :data:`REPORT_ATTR`, when it is of these draws
    (the same chains, draws and variables) at these thresholds and no variable is asked for
    by name; else None."""
    if var_names is not None or REPORT_ATTR not in posterior.attrs:
        return None
    seconds = posterior.attrs.get("sampling_seconds")
    report = ConvergenceReport.from_json(posterior.attrs[REPORT_ATTR],
                                         None if seconds is None else float(seconds))
    same = (report.n_chains == posterior.sizes["chain"] and report.n_draws ==
            posterior.sizes["draw"] and report.rhat_max == rhat_max and report.ess_min == ess_min
            and set(report.table.index) >= set(posterior.data_vars))
    return report if same else None


def combined_report(reports: dict[str, ConvergenceReport]) -> ConvergenceReport:
    """One report of several models' chains (name -> its report), as for a stacked result,
    whose mixture of draws has converged when every model's chains have: each model's rows,
    named ``"model: variable"``, and its items on whose most plausible class the chains
    disagree, named ``"model: item"``; the fewest chains and draws; no sampling time (the
    models' ESS per second are in their own reports)."""
    first = next(iter(reports.values()))
    tables, modes = [], []
    for name, report in reports.items():
        tables.append(report.table.rename(index=lambda variable: f"{name}: {variable}"))
        if report.modes is not None and not report.modes.empty:
            modes.append(report.modes.assign(item=[f"{name}: {item}"
                                                   for item in report.modes["item"]]))
    return ConvergenceReport(
        table=pd.concat(tables), rhat_max=first.rhat_max, ess_min=first.ess_min,
        n_chains=min(report.n_chains for report in reports.values()),
        n_draws=min(report.n_draws for report in reports.values()),
        modes=pd.concat(modes, ignore_index=True) if modes else None)
