"""Ordinal grades: the ordered-probit model against unordered Dawid–Skene (plausible's, and crowd-kit's EM at
its defaults) and the majority vote, on simulated crowds with known truth.

Two crowds, the same workload (long-tailed: a few annotators label hundreds of items, most
label a handful; a tenth are spammers answering uniformly at random):

* ``ordinal``: grades perceived with each annotator's bias and noise and rounded (the
  ordered-probit model's own kind of data: errors fall on neighbouring grades);
* ``unordered``: each annotator's errors spread over every other grade alike (Dawid–Skene's
  kind: no ordinal structure), accuracy 0.55–0.9.

Per method: accuracy of the most plausible grade, mean absolute grade error, Brier score
(mean over items of the squared distance between the plausibilities and the one-hot
truth), seconds; for the Bayesian models also PSIS-LOO's elpd (higher is better,
:func:`plausible.diagnostics.loo`), which chooses between them without the truth.

    .venv/bin/python benchmarks/bench_ordinal.py [--items 1000] [--grades 5] [--seeds 3]
"""

import argparse
import time
import warnings

import numpy as np
import pandas as pd
from crowdkit.aggregation import DawidSkene

import plausible as pl
from plausible.data.labels import Labels


def workload(rng, n_items, n_annotators, per_item):
    """Each item's annotators, drawn with Zipf-like weights (long-tailed workloads)."""
    weight = 1.0 / np.arange(1, n_annotators + 1) ** 0.8
    weight /= weight.sum()
    annotator = np.concatenate([rng.choice(n_annotators, per_item, replace=False, p=weight)
                                for _ in range(n_items)])
    return np.repeat(np.arange(n_items), per_item), annotator


def simulate(kind: str, n_items: int, n_grades: int, seed: int, n_annotators: int = 60,
             per_item: int = 4):
    rng = np.random.default_rng(seed)
    truth = rng.integers(n_grades, size=n_items)
    item, annotator = workload(rng, n_items, n_annotators, per_item)
    spammer = rng.random(n_annotators) < 0.1
    if kind == "ordinal":
        bias = rng.normal(0, 0.3, n_annotators)
        noise = rng.uniform(0.3, 1.0, n_annotators)
        y = truth[item] + bias[annotator] + noise[annotator] * rng.standard_normal(item.size)
        label = np.clip(np.floor(y + 0.5), 0, n_grades - 1).astype(int)
    else:
        accuracy = rng.uniform(0.55, 0.9, n_annotators)
        right = rng.random(item.size) < accuracy[annotator]
        wrong = (truth[item] + rng.integers(1, n_grades, item.size)) % n_grades
        label = np.where(right, truth[item], wrong)
    label = np.where(spammer[annotator], rng.integers(n_grades, size=item.size), label)
    labels = Labels(item, annotator, label, np.arange(n_items), np.arange(n_annotators),
                    np.arange(n_grades))
    return labels, truth


def scores(plausibility: np.ndarray, truth: np.ndarray) -> dict:
    top = plausibility.argmax(axis=1)
    onehot = np.eye(plausibility.shape[1])[truth]
    return {"accuracy": float((top == truth).mean()),
            "mean_abs_grade_error": float(np.abs(top - truth).mean()),
            "brier": float(((plausibility - onehot) ** 2).sum(axis=1).mean())}


def run(kind, args, seed):
    labels, truth = simulate(kind, args.items, args.grades, seed)
    rows = []
    counts = np.zeros((labels.n_items, labels.n_classes))
    np.add.at(counts, (labels.item, labels.label), 1)
    rows.append({"method": "majority vote", **scores(counts / counts.sum(1, keepdims=True),
                                                     truth), "seconds": 0.0})
    frame = labels.to_frame().rename(columns={"item": "task", "annotator": "worker"})
    start = time.perf_counter()
    proba = DawidSkene(n_iter=100).fit_predict_proba(frame).reindex(labels.items)
    proba = proba[list(labels.classes)].to_numpy()
    rows.append({"method": "crowd-kit DawidSkene (EM)", **scores(proba, truth),
                 "seconds": time.perf_counter() - start})
    for model in ("dawid-skene", "ordered-probit"):
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit = pl.aggregate(labels, model, seed=seed)
            elpd = pl.diagnostics.loo(fit.trace).elpd
        seconds = time.perf_counter() - start
        rows.append({"method": f"plausible {model}", **scores(fit.plausibility.values, truth),
                     "seconds": seconds, "elpd_loo": elpd,
                     "converged": pl.diagnostics.convergence_report(fit.trace).converged})
    return pd.DataFrame(rows).assign(crowd=kind, seed=seed)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=1000)
    parser.add_argument("--grades", type=int, default=5)
    parser.add_argument("--seeds", type=int, default=3)
    args = parser.parse_args()
    table = pd.concat([run(kind, args, seed) for kind in ("ordinal", "unordered")
                       for seed in range(args.seeds)])
    pd.set_option("display.width", 160)
    print(f"{args.items} items, {args.grades} grades, 4 labels per item, 60 annotators "
          f"(long-tailed, a tenth spammers); means over {args.seeds} seeds:")
    print(table.groupby(["crowd", "method"], sort=False).mean(numeric_only=True)
          .drop(columns="seed").round(3).to_string())


if __name__ == "__main__":
    main()
