"""Convergence report: max R-hat and min bulk / tail ESS per posterior variable.

Thresholds follow Vehtari et al. (2021): rank-normalised split R-hat below 1.01 and
at least 100 effective draws per chain (400 for 4 chains) in the bulk and the tails.
The estimators are :mod:`plausible.diagnostics.estimators` (ArviZ's, vectorised).
"""

from dataclasses import dataclass

import numpy as np
import pandas as pd

from plausible.diagnostics.estimators import convergence_diagnostics


@dataclass(frozen=True)
class ConvergenceReport:
    """Per-variable worst-case diagnostics and whether they pass the thresholds.

    ``table`` is indexed by variable with columns ``max_rhat``, ``min_ess_bulk``,
    ``min_ess_tail`` and ``ok``.
    """

    table: pd.DataFrame
    rhat_max: float
    ess_min: float

    @property
    def ok(self) -> bool:
        return bool(self.table["ok"].all())

    @property
    def text(self) -> str:
        failing = self.table[~self.table["ok"]]
        if failing.empty:
            return (
                f"All {len(self.table)} variables converged: R-hat <= {self.rhat_max}, "
                f"bulk and tail ESS >= {self.ess_min:g}."
            )
        lines = [
            f"Convergence not reached for {len(failing)} of {len(self.table)} variables "
            f"(thresholds: R-hat <= {self.rhat_max}, bulk/tail ESS >= {self.ess_min:g}); "
            "draw more samples or check the model before trusting these results:"
        ]
        for name, row in failing.iterrows():
            lines.append(
                f"  {name}: max R-hat {row.max_rhat:.3f}, min bulk ESS {row.min_ess_bulk:.0f}, "
                f"min tail ESS {row.min_ess_tail:.0f}"
            )
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.text



def convergence_report(
    trace, var_names=None, *, rhat_max: float = 1.01, ess_per_chain: float = 100.0
) -> ConvergenceReport:
    """R-hat and ESS of every posterior variable of ``trace`` (an ``xarray.DataTree``).

    A variable passes when its worst element has R-hat <= ``rhat_max`` and bulk and tail
    ESS >= ``ess_per_chain * n_chains``. Elements that never move (e.g. a plausibility of
    exactly 0 in every draw) give NaN diagnostics and are ignored.

    The diagnostics are those of ``arviz.rhat`` and ``arviz.ess(method="bulk" / "tail")``,
    computed by :func:`convergence_diagnostics`.
    """
    posterior = trace["posterior"].to_dataset()
    if isinstance(var_names, str):
        var_names = [var_names]
    names = list(var_names) if var_names is not None else list(posterior.data_vars)
    n_chains = posterior.sizes["chain"]
    ess_min = ess_per_chain * n_chains
    rows = {}
    for name in names:
        da = posterior[name].transpose("chain", "draw", ...)
        diag = convergence_diagnostics(da.values)
        worst_rhat = float(np.nanmax(diag.rhat, initial=-np.inf))
        worst_bulk = float(np.nanmin(diag.ess_bulk, initial=np.inf))
        worst_tail = float(np.nanmin(diag.ess_tail, initial=np.inf))
        rows[name] = {
            "max_rhat": worst_rhat,
            "min_ess_bulk": worst_bulk,
            "min_ess_tail": worst_tail,
            "ok": worst_rhat <= rhat_max and worst_bulk >= ess_min and worst_tail >= ess_min,
        }
    table = pd.DataFrame.from_dict(rows, orient="index")
    return ConvergenceReport(table=table, rhat_max=rhat_max, ess_min=ess_min)

