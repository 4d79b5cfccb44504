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
class-swap move was accepted (:mod:`plausible.inference.step_methods.class_swap`; ``-`` for MACE, which has
none).

Beside them, the **ceiling**: the largest ratio to the joint scan that *any* sampler writing
the same trace could reach, ``N / ESS_joint x (joint s / floor s)`` for each quantity, with
``N`` the draws kept (an independent draw's ESS) and the floor the time of
:func:`record_only`, a numba loop that does nothing but what every such sampler must do each
sweep: draw the recorded parameters (one gamma variate each) and compute the plausibility from
them (a gather-add per label and class, an exp per item and class), chains spread over the
same threads as :func:`plausible.sample`'s. No class is drawn and no count is kept, so no
sampler is cheaper: where the ceiling is below a target ratio, no sampler reaches it.

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

import numba
import numpy as np

import plausible as pl
from plausible.data import crowd_simulation
from plausible.diagnostics.estimators import ess_bulk, rhat
from plausible.inference.chains import available_cores


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


@numba.njit(nogil=True)
def record_only(rng, item, annotator, label, n_items, n_annotators, n_classes, n_params,
                sweeps):
    """The floor (module docstring): ``sweeps`` sweeps of ``n_params`` gamma draws and the
    plausibility ``(item, class)`` computed from them, ``rng`` a numpy Generator as the
    samplers draw from; returns the plausibilities' sum so that nothing is optimised away."""
    C = n_classes
    table = np.log(np.arange(1.0, n_annotators * C * C + 1.0)).reshape(n_annotators, C, C)
    log_plaus = np.empty((n_items, C))
    total = 0.0
    for _ in range(sweeps):
        g = np.empty(n_params)
        for j in range(n_params):
            g[j] = rng.standard_gamma(2.0)
        shift = np.log(g)
        log_plaus[:] = 0.0
        for n in range(item.size):
            a = annotator[n]
            for c in range(C):
                log_plaus[item[n], c] += table[a, c, label[n]] + shift[a % n_params]
        for i in range(n_items):
            top = log_plaus[i, 0]
            for c in range(1, C):
                top = max(top, log_plaus[i, c])
            norm = 0.0
            for c in range(C):
                norm += np.exp(log_plaus[i, c] - top)
            total += np.exp(log_plaus[i, 0] - top) / norm
    return total


def floor_seconds(labels, post) -> float:
    """Seconds :func:`record_only` takes for the sweeps (warm-up included) of every chain of
    ``post``, over the threads :func:`plausible.sample` would run them on."""
    chains, draws = post.sizes["chain"], post.sizes["draw"]
    sweeps = post.attrs["tune"] + draws * post.attrs["thin"]
    n_params = sum(post[v].size // (chains * draws) for v in post.data_vars
                   if v != "plausibility")
    args = (labels.item, labels.annotator, labels.label, labels.items.size,
            labels.annotators.size, labels.n_classes, n_params)
    record_only(np.random.default_rng(0), *args, 1)  # compile
    start = time.perf_counter()
    for c in range(chains):
        record_only(np.random.default_rng(c), *args, sweeps)
    return (time.perf_counter() - start) / min(chains, available_cores())


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
            "rhat": worst_rhat, "posterior": post,
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
          f"{'x':>6s} | R-hat j / c | swaps j / c | floor s | ceiling prior plaus")
    warm = simulate_crowd(500, args.seed)
    for name in args.models:  # compile (or load) every kernel before timing
        for sampler in ("joint", "collapsed"):
            run(warm if fits(name, warm) else binary(warm), name, sampler, args.seed)
    for title, labels in data_sets(args.sizes, args.seed):
        for name in (name for name in args.models if fits(name, labels)):
            joint = run(labels, name, "joint", args.seed)
            folded = run(labels, name, "collapsed", args.seed)
            floor = floor_seconds(labels, joint["posterior"])
            kept = joint["posterior"].sizes["chain"] * joint["posterior"].sizes["draw"]
            print(f"{title:24s} {name:24s} {labels.item.size:7d} | {joint['seconds']:8.2f} "
                  f"{folded['seconds']:11.2f} | {joint['prior']:13.0f} {folded['prior']:8.0f} "
                  f"{folded['prior'] / joint['prior']:6.1f} | {joint['plaus']:13.0f} "
                  f"{folded['plaus']:8.0f} {folded['plaus'] / joint['plaus']:6.1f} | "
                  f"{joint['rhat']:.4f} / {folded['rhat']:.4f} | "
                  f"{joint['swaps']} / {folded['swaps']} | {floor:7.2f} | "
                  f"{kept / joint['prior'] / floor:8.1f} {kept / joint['plaus'] / floor:5.1f}",
                  flush=True)


if __name__ == "__main__":
    main()
