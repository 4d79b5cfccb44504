"""Known classes (gold items): what clamping 0 %, 5 % and 20 % of the items buys, against
crowd-kit's EM Dawid–Skene given the same gold (``true_labels``, crowd-kit PR #109).

Data: the simulated crowd of ``bench_label_mixing.simulate_crowd`` (long-tailed workloads,
most workers with a handful of labels, errors on neighbouring classes, 10 % spammers; 5
classes), at ``--labels`` labels, ``--seeds`` seeds. The gold items are a random share of the
items, their true classes given to both. Scored on the items *not* given as gold: accuracy of
the most plausible class, Brier score of the plausibilities (crowd-kit: its posterior
``probas_``) against the true class; and, over the workers with at least one gold label, the
mean error of each worker's estimated share of labels right (``worker_error``: |estimated -
true share|, the annotators' scores gold is meant to sharpen; estimated by each method the
same way, the mean over the worker's labels ``x`` on items ``i`` of ``P(z_i = x | data)``,
its posterior probability that the label is the item's class). plausible runs
``pl.aggregate(labels, model, known=gold)`` at its defaults (``draws="auto"``, 4 chains)
and reports whether its convergence report passed (``converged``, share of the seeds) and
the largest R-hat; crowd-kit ``DawidSkene(n_iter=100)`` (its default) ``.fit(df,
true_labels=gold)``.

    .venv/bin/python benchmarks/bench_gold.py [--labels 10000] [--seeds 3]
        [--models dawid-skene one-coin hierarchical-dawid-skene]
"""

import argparse
import time
import warnings

import numpy as np
import pandas as pd

import plausible as pl
from bench_label_mixing import simulate_crowd

SHARES = (0.0, 0.05, 0.2)


def scores(p: np.ndarray, truth: np.ndarray, free: np.ndarray, labels) -> dict:
    """Accuracy and Brier score of plausibilities ``p (item, class)`` on the ``free`` items,
    and the workers' share-correct error (module docstring) over those with a gold label."""
    right = p[labels.item, labels.label]  # P(z_i = x | data) of every label
    J = labels.n_annotators
    estimated = np.bincount(labels.annotator, right, minlength=J)
    true = np.bincount(labels.annotator, labels.label == truth[labels.item], minlength=J)
    gold = np.bincount(labels.annotator, ~free[labels.item], minlength=J) > 0
    n = np.maximum(np.bincount(labels.annotator, minlength=J), 1)
    error = np.abs(estimated - true)[gold] / n[gold]
    p, truth = p[free], truth[free]
    one_hot = np.eye(p.shape[1])[truth]
    return {"accuracy": float((p.argmax(1) == truth).mean()),
            "brier": float(((p - one_hot) ** 2).sum(1).mean()),
            "worker_error": float(error.mean()) if error.size else np.nan}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--labels", type=int, default=10000)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--models", nargs="+",
                        default=["dawid-skene", "one-coin", "hierarchical-dawid-skene"])
    args = parser.parse_args()
    from crowdkit.aggregation import DawidSkene

    rows = []
    for seed in range(args.seeds):
        labels, truth = simulate_crowd(args.labels, seed, with_truth=True)
        frame = labels.to_frame().rename(columns={"item": "task", "annotator": "worker"})
        rng = np.random.default_rng(100 + seed)
        for share in SHARES:
            gold_items = rng.permutation(labels.n_items)[:int(round(share * labels.n_items))]
            free = np.ones(labels.n_items, bool)
            free[gold_items] = False
            gold = pd.Series(truth[gold_items], index=labels.items[gold_items])
            start = time.perf_counter()
            em = DawidSkene(n_iter=100).fit(frame, true_labels=gold if share else None)
            seconds = time.perf_counter() - start
            p = em.probas_.reindex(index=labels.items, columns=labels.classes).to_numpy()
            rows.append({"seed": seed, "gold": share, "method": "crowd-kit DS + true_labels",
                         **scores(p, truth, free, labels), "seconds": seconds})
            for model in args.models:
                start = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    result = pl.aggregate(labels, model, seed=seed,
                                          known=gold if share else None)
                seconds = time.perf_counter() - start
                p = result.plausibility.transpose("item", "class").values
                report = result.convergence()
                rows.append({"seed": seed, "gold": share, "method": f"plausible {model}",
                             **scores(p, truth, free, labels), "seconds": seconds,
                             "converged": float(report.converged),
                             "max_rhat": float(report.table["max_rhat"].max())})
            print(pd.DataFrame(rows[-1 - len(args.models):]).to_string(index=False), flush=True)
    table = pd.DataFrame(rows).groupby(["gold", "method"])[
        ["accuracy", "brier", "worker_error", "seconds", "converged", "max_rhat"]].mean()
    print(f"\n{args.labels} labels, {args.seeds} seeds; scored on the items not given as gold")
    print(table.round(4).to_string())


if __name__ == "__main__":
    main()
