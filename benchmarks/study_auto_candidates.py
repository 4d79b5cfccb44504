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

**Result** (2026-11-27, 2,000 labels, seeds 0-2, two cores; the choice made on the six
simulated data sets only). Gap of the chosen model's Brier score to the best single model's,
mean and worst over the six, and the same for accuracy; the fits' total time:

=========================================  =========  =========  ========  ========  ======
candidate set                              Brier gap  worst      acc. gap  worst     time
=========================================  =========  =========  ========  ========  ======
glad, hierarchical DS, ambiguity (chosen)  0.0046     0.0126     0.0046    0.0125    53 s
Dawid-Skene, one-coin, ambiguity           0.0075     0.0204     0.0104    0.0325    27 s
glad, ambiguity                            0.0058     0.0190     0.0121    0.0350    31 s
all six                                    0.0046     0.0126     0.0046    0.0125    65 s
glad alone                                 0.0026     0.0059     0.0071    0.0225    10 s
=========================================  =========  =========  ========  ========  ======

GLAD alone is closest in Brier score on these crowds, but a set without the ambiguity model
cannot read disagreement as ambiguity where the data say so; among the sets that hold it,
the chosen one has the smallest gaps, and adding Dawid-Skene, one-coin or MACE to it changes
no choice. Every model is far ahead of the raw vote shares (Brier 0.216 and 0.312 on the
clear and the ambiguous crowds, against 0.088 to 0.096 and 0.247 to 0.256). The ambiguity
model never won LOO on these crowds (ambiguity between neighbouring classes, 5 labels an
item, most workers with a handful: the data do not identify it; Dawid-Skene and it were tied
in elpd), and it did on TEMP, where its Brier score, 0.097, is the lowest of every model
(GLAD 0.102, Dawid-Skene 0.106, vote shares 0.184). On RTE it did not converge in 16,000
draws (107 s); since its urn sampler (``docs/models/ambiguity.md``) it converges there at the
defaults, 2.9 elpd behind Carpenter's model, which ``auto`` still chooses. With the chosen set, Snow's tasks (gold): RTE hierarchical DS 0.119 (best
0.114), TEMP the ambiguity model 0.097 (best), WSD hierarchical DS 0.0114 (best 0.0113).
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
    "auto (glad, hierarchical DS, ambiguity)": pl.aggregation.AUTO_CANDIDATES["labels"],
    "ds, one-coin, ambiguity": ("dawid-skene", "one-coin", "ambiguity-dawid-skene"),
    "glad, ambiguity": ("glad", "ambiguity-dawid-skene"),
    "all six": MODELS,
}


def scores(probabilities: np.ndarray, labels, truth: np.ndarray) -> dict:
    """Accuracy of the most probable class and the mean Brier score against ``truth`` (class
    indices in ``labels``' item order): :func:`plausible.diagnostics.proper_scores`."""
    frame = pd.DataFrame(probabilities, index=labels.items, columns=labels.classes)
    gold = pd.Series(labels.classes[truth], index=labels.items)
    return pl.diagnostics.proper_scores(frame, gold)[["accuracy", "brier"]].to_dict()


def vote_shares(labels) -> np.ndarray:
    counts = np.asarray(pl.data.Votes.from_labels(labels).counts, dtype=np.float64)
    return counts / counts.sum(axis=1, keepdims=True)


def study(name: str, labels, truth: np.ndarray, seed: int) -> list[dict]:
    rows, traces, unconverged = [], {}, {}
    shares = vote_shares(labels)
    majority = np.eye(labels.n_classes)[shares.argmax(axis=1)]
    rows.append({"data": name, "model": "vote shares", **scores(shares, labels, truth)})
    rows.append({"data": name, "model": "majority vote", **scores(majority, labels, truth)})
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
                     **scores(fit.plausibility.sel(item=labels.items).values, labels, truth)})
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
