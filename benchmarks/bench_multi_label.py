"""Multi-label sets: the multi-label latent-class model against per-label binary Dawid–Skene
(plausible's, one model per label) and crowd-kit's ``BinaryRelevance(DawidSkene())`` (EM at
its defaults), and the per-label majority vote, on simulated crowds with known truth.

Two kinds of truth, the same crowd (long-tailed workloads: annotator ``j`` is drawn with
weight ``(j + 1)^-1``; per-label sensitivity U(0.55, 0.95), specificity U(0.85, 0.99); the
first two annotators tend to skip tags, sensitivity 0.3 on every label):

* ``patterns``: the true sets come from four co-occurrence patterns over six labels (the
  model's own kind of data: one label says much about the others);
* ``independent``: every label present independently at its own rate (one component's worth
  of structure: the mixture has nothing to find and must lose nothing).

Per method: per-label accuracy (the plausibility above 1/2 against the truth), exact-set
accuracy (every label of the item right), micro F1, Brier score (mean squared distance of the
per-label probabilities from the truth), expected calibration error (10 equal-width bins over
every item and label) and seconds.

    .venv/bin/python benchmarks/bench_multi_label.py [--items 600] [--seeds 3]
"""

import argparse
import time
import warnings

import numpy as np
import pandas as pd
from crowdkit.aggregation import BinaryRelevance, DawidSkene

import plausible as pl
from plausible.data.label_set_simulation import simulate_label_sets
from plausible.data.labels import Labels
from plausible.models import dawid_skene, multi_label

PATTERNS = np.array([[0.95, 0.9, 0.05, 0.05, 0.1, 0.05],
                     [0.05, 0.9, 0.85, 0.05, 0.05, 0.1],
                     [0.05, 0.05, 0.1, 0.9, 0.9, 0.05],
                     [0.05, 0.05, 0.05, 0.05, 0.1, 0.9]])
INDEPENDENT = np.array([[0.3, 0.2, 0.45, 0.1, 0.25, 0.35]])


def crowd(kind: str, n_items: int, seed: int):
    rates = PATTERNS if kind == "patterns" else INDEPENDENT
    return simulate_label_sets(n_items=n_items, n_annotators=40, per_item=3, label_rates=rates,
                               sensitivity=(0.55, 0.95), specificity=(0.85, 0.99),
                               workload=1.0, skippers=2, seed=seed)


def fit_multi_label(data, seed):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        trace = pl.sample(multi_label.build(data), draws=1000, chains=4, seed=seed,
                          log_likelihood=False)
    ok = pl.diagnostics.convergence_report(
        trace, var_names=["plausibility", "sensitivity", "specificity", "label_prevalence"]).ok
    return trace.posterior["plausibility"].mean(("chain", "draw")).values, ok


def fit_per_label(data, seed):
    """plausible's Dawid–Skene on each label's 0/1 responses."""
    out = np.empty((data.n_items, data.n_classes))
    ok = True
    for k in range(data.n_classes):
        labels = Labels(data.item, data.annotator, data.sets[:, k].astype(int), data.items,
                        data.annotators, np.array([0, 1]))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            trace = pl.sample(dawid_skene.build(labels), draws=1000, chains=4, seed=seed,
                              log_likelihood=False)
        ok &= pl.diagnostics.convergence_report(trace, var_names=["plausibility"]).ok
        out[:, k] = trace.posterior["plausibility"].mean(("chain", "draw")).values[:, 1]
    return out, ok


def fit_crowdkit(data, seed):
    frame = pd.DataFrame({"task": data.item, "worker": data.annotator,
                          "label": [list(np.flatnonzero(row)) for row in data.sets]})
    model = BinaryRelevance(DawidSkene()).fit(frame)
    out = np.zeros((data.n_items, data.n_classes))
    for k, aggregator in model.aggregators_.items():
        probas = aggregator.probas_
        out[probas.index.to_numpy(dtype=int), int(k)] = probas.get(1, 0.0)
    return out, True


def fit_majority(data, seed):
    counts = np.zeros((data.n_items, data.n_classes))
    np.add.at(counts, data.item, data.sets)
    n = np.bincount(data.item, minlength=data.n_items)[:, None]
    return counts / n, True


METHODS = {"multi-label": fit_multi_label, "per-label DS": fit_per_label,
           "crowd-kit BR(DS)": fit_crowdkit, "majority": fit_majority}


def scores(p, truth):
    hard = p > 0.5
    tp = (hard & truth).sum()
    f1 = 2 * tp / (hard.sum() + truth.sum())
    bins = np.minimum((p * 10).astype(int), 9).ravel()
    weight = np.bincount(bins, minlength=10)
    gap = np.abs(np.bincount(bins, p.ravel(), 10) - np.bincount(bins, truth.ravel(), 10))
    return {"label acc": (hard == truth).mean(), "set acc": (hard == truth).all(1).mean(),
            "micro F1": f1, "Brier": ((p - truth) ** 2).mean(),
            "ECE": gap.sum() / weight.sum()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=600)
    parser.add_argument("--seeds", type=int, default=3)
    args = parser.parse_args()
    rows = []
    for kind in ("patterns", "independent"):
        for seed in range(args.seeds):
            sim = crowd(kind, args.items, seed)
            for name, fit in METHODS.items():
                start = time.perf_counter()
                p, ok = fit(sim.data, seed)
                rows.append({"truth": kind, "seed": seed, "method": name,
                             **scores(p, sim.truth), "seconds": time.perf_counter() - start,
                             "converged": ok})
    table = pd.DataFrame(rows)
    summary = table.groupby(["truth", "method"], sort=False).agg(
        {"label acc": "mean", "set acc": "mean", "micro F1": "mean", "Brier": "mean",
         "ECE": "mean", "seconds": "mean", "converged": "all"})
    with pd.option_context("display.width", 120, "display.precision", 3):
        print(f"{args.items} items, 40 annotators, 3 per item, mean over {args.seeds} seeds")
        print(summary.to_string())


if __name__ == "__main__":
    main()
