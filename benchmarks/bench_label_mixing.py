"""Mixing of the label models' samplers: the collapsed class sweep against the joint scan,
same data, same run, ESS per second of the slowest-mixing quantities.

For full Dawid–Skene, one-coin, MACE, hierarchical Dawid–Skene and, on binary labels,
Carpenter's annotator-beta (``--models``),
``plausible.sample(build(labels, sampler=...))`` at its defaults (4 chains x 1000 draws after
the kernel's warm-up), ``sampler="joint"`` (classes
given the annotator parameters, then the parameters given the classes) and
``sampler="collapsed"`` (each item's class given the others' with the parameters integrated
out). Timed without the convergence report and the per-item log-likelihood. Per run: the
sampling time, the bulk ESS per second of ``class_prior`` (its worst class) and of the worst
plausibility (the lowest bulk ESS over every item and class, constant entries left out), the
worst R-hat, the ratio collapsed / joint of both ESS rates, and the share of sweeps whose
class-swap move was accepted (:mod:`plausible.inference.class_swap`; ``-`` for MACE, which has
none).

Data: RTE, TEMP and WSD (Snow et al. 2008) and the dentistry caries data (Handelman et al.,
as Espeland & Handelman 1989 tabulate them), from ``$PLAUSIBLE_DATA`` (skipped when absent),
and a simulated crowd as crowds are (:mod:`plausible.data.crowd_simulation`: long-tailed
workloads, most workers with a handful of labels, errors to the neighbouring classes, 10 %
spammers, 3 + Poisson(2) labels an item) at three sizes; for annotator-beta the same crowds
with the classes read as two (:func:`binary`: classes 0-1 against 2-4), besides RTE and
dentistry.

    .venv/bin/python benchmarks/bench_label_mixing.py [--sizes 2000 10000 40000] [--seed 0]
        [--models dawid-skene one-coin mace hierarchical-dawid-skene annotator-beta]
"""

import argparse
import os
import time
import warnings

import numpy as np

import plausible as pl
from plausible.data import crowd_simulation
from plausible.diagnostics.estimators import ess_bulk, rhat


MODELS = ("dawid-skene", "one-coin", "mace", "hierarchical-dawid-skene", "annotator-beta")
"""The label models with both class sweeps."""


def binary(labels):
    """The simulated crowd's labels with its five ordered classes read as two, 0-1 and 2-4."""
    return pl.data.Labels(labels.item, labels.annotator, (labels.label >= 2).astype(np.int64),
                          labels.items, labels.annotators, np.array(["low", "high"]))


def fits(name: str, labels) -> bool:
    """Whether model ``name`` reads ``labels`` (annotator-beta: binary labels only)."""
    return pl.models.entry(name).classes != "binary" or labels.n_classes == 2


def simulate_crowd(n_labels: int, seed: int = 0, *, with_truth: bool = False):
    """About ``n_labels`` labels of :func:`plausible.data.crowd_simulation.simulate_crowd`'s
    crowd (and, with ``with_truth``, the items' true classes ``(item,)`` beside them)."""
    simulation = crowd_simulation.simulate_crowd(n_labels, seed)
    return (simulation.labels, simulation.truth) if with_truth else simulation.labels


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
    prior_ess = worst(post["prevalence" if "prevalence" in post else "class_prior"].values)
    plaus_ess = worst(post["plausibility"].values)
    worst_rhat = max(float(np.nanmax(rhat(post[v].values.reshape(*post[v].shape[:2], -1))))
                     for v in post.data_vars)
    swapped = trace.sample_stats.get("classes_swapped")
    return {"seconds": seconds, "prior": prior_ess / seconds, "plaus": plaus_ess / seconds,
            "rhat": worst_rhat,
            "swaps": "-" if swapped is None else f"{float(swapped.mean()):.3f}"}


def data_sets(sizes, seed):
    for n in sizes:
        crowd = simulate_crowd(n, seed)
        yield f"simulated {n} labels", crowd
        yield f"simulated {n}, binary", binary(crowd)
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
          f"{'x':>6s} | R-hat j / c | swaps j / c")
    warm = simulate_crowd(500, args.seed)
    for name in args.models:  # compile (or load) every kernel before timing
        for sampler in ("joint", "collapsed"):
            run(warm if fits(name, warm) else binary(warm), name, sampler, args.seed)
    for title, labels in data_sets(args.sizes, args.seed):
        for name in (name for name in args.models if fits(name, labels)):
            joint = run(labels, name, "joint", args.seed)
            folded = run(labels, name, "collapsed", args.seed)
            print(f"{title:24s} {name:24s} {labels.item.size:7d} | {joint['seconds']:8.2f} "
                  f"{folded['seconds']:11.2f} | {joint['prior']:13.0f} {folded['prior']:8.0f} "
                  f"{folded['prior'] / joint['prior']:6.1f} | {joint['plaus']:13.0f} "
                  f"{folded['plaus']:8.0f} {folded['plaus'] / joint['plaus']:6.1f} | "
                  f"{joint['rhat']:.4f} / {folded['rhat']:.4f} | "
                  f"{joint['swaps']} / {folded['swaps']}", flush=True)


if __name__ == "__main__":
    main()
