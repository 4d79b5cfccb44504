"""Which label models ``model="auto"`` should choose among: a simulation study of real-crowd
structure, then the same numbers on Snow et al.'s tasks with gold.

Every label model is fitted at its defaults (``pl.aggregate(labels, name, seed=s)``:
``draws="auto"``) to each data set; per fit: the time, the convergence status, the PSIS-LOO
elpd, and against the truth (simulation) or gold (Snow) the accuracy of the most plausible
class and the Brier score ``sum_c (p_ic - 1[c = y_i])^2`` averaged over items. Beside them the
raw vote shares and majority vote (ties to the lowest class). For each candidate set,
``auto`` is :func:`plausible.diagnostics.model_selection.select` on those same fits (what
``pl.aggregate(labels)`` runs: the same seed and settings give the same fits), so a set's row
says what ``auto`` with that set would have returned.

Data: :func:`plausible.data.crowd_simulation.simulate_crowd` (long-tailed workloads, most
workers with a handful of labels, errors to the neighbouring classes, 10 % spammers, 3 +
Poisson(2) labels an item) with no ambiguous items and with 30 % of the items split between
two neighbouring classes (the truth is then the item's most plausible class), ``--labels``
labels, ``--seeds`` seeds each; with ``$PLAUSIBLE_DATA``, RTE, TEMP and WSD (Snow et al.
2008), reported but not used to choose (the choice is made on simulations only).

    .venv/bin/python benchmarks/study_auto_candidates.py [--labels 2000] [--seeds 3]
        [--snow]
"""

import argparse
import os
import time
import warnings

import numpy as np
import pandas as pd

import plausible as pl
from plausible.data.crowd_simulation import simulate_crowd
from plausible.diagnostics.model_selection import select

MODELS = ("dawid-skene", "one-coin", "mace", "hierarchical-dawid-skene", "glad",
          "ambiguity-dawid-skene")
SETS = {
    "auto (ds, one-coin, ambiguity)": ("dawid-skene", "one-coin", "ambiguity-dawid-skene"),
    "ds, one-coin": ("dawid-skene", "one-coin"),
    "ds, one-coin, ambiguity, mace": ("dawid-skene", "one-coin", "ambiguity-dawid-skene",
                                      "mace"),
    "all six": MODELS,
}


def scores(probabilities: np.ndarray, truth: np.ndarray) -> dict:
    """Accuracy of the most probable class and the mean Brier score against ``truth``."""
    onehot = np.eye(probabilities.shape[1])[truth]
    return {"accuracy": float((probabilities.argmax(axis=1) == truth).mean()),
            "brier": float(((probabilities - onehot) ** 2).sum(axis=1).mean())}


def vote_shares(labels) -> np.ndarray:
    counts = np.zeros((labels.n_items, labels.n_classes))
    np.add.at(counts, (labels.item, labels.label), 1.0)
    return counts / counts.sum(axis=1, keepdims=True)


def study(name: str, labels, truth: np.ndarray, seed: int) -> list[dict]:
    rows, traces, unconverged = [], {}, {}
    shares = vote_shares(labels)
    majority = np.eye(labels.n_classes)[shares.argmax(axis=1)]
    rows.append({"data": name, "model": "vote shares", **scores(shares, truth)})
    rows.append({"data": name, "model": "majority vote", **scores(majority, truth)})
    for model in MODELS:
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit = pl.aggregate(labels, model, seed=seed)
        seconds = time.perf_counter() - start
        report = fit.convergence()
        if not report.converged:
            unconverged[model] = report.status
        traces[model] = fit.trace
        elpd = (pl.diagnostics.loo(fit.trace).elpd if "log_likelihood" in fit.trace.children
                else np.nan)
        rows.append({"data": name, "model": model, "seconds": seconds, "status": report.status,
                     "draws": fit.trace.posterior.sizes["draw"], "elpd": elpd,
                     **scores(fit.plausibility.values, truth)})
    by_model = {row["model"]: row for row in rows}
    for set_name, members in SETS.items():
        chosen = select({m: traces[m] for m in members}, unconverged).chosen
        rows.append({"data": name, "model": f"[{set_name}] -> {chosen}",
                     "seconds": sum(by_model[m]["seconds"] for m in members),
                     "accuracy": by_model[chosen]["accuracy"], "brier": by_model[chosen]["brier"]})
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--labels", type=int, default=2000)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--snow", action="store_true", help="also RTE, TEMP, WSD with gold")
    args = parser.parse_args()
    rows = []
    for ambiguous in (0.0, 0.3):
        for seed in range(args.seeds):
            simulation = simulate_crowd(args.labels, seed, ambiguous=ambiguous)
            name = f"simulated {ambiguous:.0%} ambiguous, seed {seed}"
            rows += study(name, simulation.labels, simulation.truth, seed)
            print(pd.DataFrame(rows[-(len(MODELS) + 2 + len(SETS)):]).to_string(index=False),
                  flush=True)
    home = os.environ.get("PLAUSIBLE_DATA")
    if args.snow and home:
        for task in ("rte", "temp", "wsd"):
            data = pl.data.load_snow2008(task, home)
            gold = pd.Index(data.annotations.classes).get_indexer(data.gold.to_numpy())
            rows += study(task.upper(), data.annotations, gold, 0)
            print(pd.DataFrame(rows[-(len(MODELS) + 2 + len(SETS)):]).to_string(index=False),
                  flush=True)
    table = pd.DataFrame(rows)
    pd.set_option("display.width", 200)
    print("\nMean over the data sets of each kind:")
    table["kind"] = table["data"].str.replace(r", seed \d+", "", regex=True)
    table["model"] = table["model"].str.replace(r" -> .*", "", regex=True)
    print(table.groupby(["kind", "model"], sort=False)[["accuracy", "brier", "seconds"]]
          .mean().round(4).to_string())


if __name__ == "__main__":
    main()
