"""Mixing of the label models' samplers: the collapsed class sweep against the joint scan,
same data, same run, ESS per second of the slowest-mixing quantities.

For full Dawid–Skene, one-coin, MACE and hierarchical Dawid–Skene (``--models``),
``plausible.sample(build(labels, sampler=...))`` at its defaults (4 chains x 1000 draws after
the kernel's warm-up), ``sampler="joint"`` (classes
given the annotator parameters, then the parameters given the classes) and
``sampler="collapsed"`` (each item's class given the others' with the parameters integrated
out). Timed without the convergence report and the per-item log-likelihood. Per run: the
sampling time, the bulk ESS per second of ``class_prior`` (its worst class) and of the worst
plausibility (the lowest bulk ESS over every item and class, constant entries left out), the
worst R-hat, and the ratio collapsed / joint of both ESS rates.

Data: RTE, TEMP and WSD (Snow et al. 2008) and the dentistry caries data (Handelman et al.,
as Espeland & Handelman 1989 tabulate them), from ``$PLAUSIBLE_DATA`` (skipped when absent),
and a simulated crowd as crowds are (``simulate_crowd``) at three sizes:

* workloads long-tailed: worker ``w`` labels a share of the items ``∝ (w + 1)^-1.1``, so a
  few workers label thousands and most a handful;
* 5 ordered classes, prevalence ``(0.35, 0.25, 0.2, 0.12, 0.08)``; a worker's errors go to
  the neighbouring classes (probability ``∝ 0.5^|x - c|``), accuracy ``Beta(6, 2)``;
* 10 % spammers, who answer uniformly at random;
* every item gets ``3 + Poisson(2)`` labels from distinct workers.

    .venv/bin/python benchmarks/bench_label_mixing.py [--sizes 2000 10000 40000] [--seed 0]
        [--models dawid-skene one-coin mace hierarchical-dawid-skene]
"""

import argparse
import os
import time
import warnings

import numpy as np

import plausible as pl
from plausible.diagnostics.estimators import ess_bulk, rhat


MODELS = ("dawid-skene", "one-coin", "mace", "hierarchical-dawid-skene")
"""The label models with both class sweeps."""


def simulate_crowd(n_labels: int, seed: int = 0, *, with_truth: bool = False):
    """About ``n_labels`` labels of a crowd as described in the module docstring (and, with
    ``with_truth``, the items' true classes ``(item,)`` beside them)."""
    rng = np.random.default_rng(seed)
    C = 5
    n_items = max(10, n_labels // 5)
    n_workers = max(20, n_labels // 25)
    prevalence = np.array([0.35, 0.25, 0.2, 0.12, 0.08])
    truth = rng.choice(C, n_items, p=prevalence)
    workload = (np.arange(n_workers) + 1.0) ** -1.1
    workload /= workload.sum()
    distance = np.abs(np.arange(C)[:, None] - np.arange(C)[None, :])
    confusion = np.empty((n_workers, C, C))
    for w in range(n_workers):
        accuracy = rng.beta(6, 2)
        errors = np.where(distance > 0, 0.5 ** distance, 0.0)
        errors /= errors.sum(axis=1, keepdims=True)
        confusion[w] = accuracy * np.eye(C) + (1 - accuracy) * errors
    spammers = rng.random(n_workers) < 0.1
    confusion[spammers] = 1.0 / C
    items, workers = [], []
    for i in range(n_items):
        k = min(n_workers, 3 + rng.poisson(2))
        chosen = rng.choice(n_workers, k, replace=False, p=workload)
        items.append(np.full(k, i))
        workers.append(chosen)
    item, worker = np.concatenate(items), np.concatenate(workers)
    cumulative = confusion[worker, truth[item]].cumsum(axis=1)
    label = np.minimum((rng.random((item.size, 1)) > cumulative).sum(axis=1), C - 1)
    labels = pl.data.Labels(item, worker, label, np.arange(n_items), np.arange(n_workers),
                            np.arange(C))
    return (labels, truth) if with_truth else labels


def worst(draws: np.ndarray) -> float:
    """The lowest bulk ESS over the trailing axes (entries constant in every draw left out)."""
    flat = draws.reshape(*draws.shape[:2], -1)
    varying = flat.std(axis=(0, 1)) > 0
    return float(np.nanmin(ess_bulk(flat[..., varying]))) if varying.any() else float("nan")


def run(labels, name: str, sampler: str, seed: int) -> dict:
    model = pl.models.get(name)(labels, sampler=sampler)
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        trace = pl.sample(model, seed=seed, progressbar=False, check_convergence=False,
                          log_likelihood=False)
    seconds = time.perf_counter() - start
    post = trace.posterior
    prior_ess = worst(post["class_prior"].values)
    plaus_ess = worst(post["plausibility"].values)
    worst_rhat = max(float(np.nanmax(rhat(post[v].values.reshape(*post[v].shape[:2], -1))))
                     for v in post.data_vars)
    return {"seconds": seconds, "prior": prior_ess / seconds, "plaus": plaus_ess / seconds,
            "rhat": worst_rhat}


def data_sets(sizes, seed):
    for n in sizes:
        yield f"simulated {n} labels", simulate_crowd(n, seed)
    home = os.environ.get("PLAUSIBLE_DATA")
    if not home:
        print("PLAUSIBLE_DATA not set: RTE, TEMP, WSD and dentistry skipped")
        return
    for task in ("rte", "temp", "wsd"):
        yield task.upper(), pl.data.load_snow2008(task, home).annotations
    yield "dentistry", pl.data.load_caries(home)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[2000, 10000, 40000])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--models", nargs="+", default=list(MODELS))
    args = parser.parse_args()
    print(f"{'data':24s} {'model':24s} {'labels':>7s} | {'joint s':>8s} {'collapsed s':>11s} | "
          f"{'prior ESS/s j':>13s} {'c':>8s} {'x':>6s} | {'plaus ESS/s j':>13s} {'c':>8s} "
          f"{'x':>6s} | R-hat j / c")
    warm = simulate_crowd(500, args.seed)
    for name in args.models:  # compile (or load) every kernel before timing
        for sampler in ("joint", "collapsed"):
            run(warm, name, sampler, args.seed)
    for title, labels in data_sets(args.sizes, args.seed):
        for name in args.models:
            joint = run(labels, name, "joint", args.seed)
            folded = run(labels, name, "collapsed", args.seed)
            print(f"{title:24s} {name:24s} {labels.item.size:7d} | {joint['seconds']:8.2f} "
                  f"{folded['seconds']:11.2f} | {joint['prior']:13.0f} {folded['prior']:8.0f} "
                  f"{folded['prior'] / joint['prior']:6.1f} | {joint['plaus']:13.0f} "
                  f"{folded['plaus']:8.0f} {folded['plaus'] / joint['plaus']:6.1f} | "
                  f"{joint['rhat']:.4f} / {folded['rhat']:.4f}", flush=True)


if __name__ == "__main__":
    main()
