"""Full Bayesian GLAD (4 chains x 1000 draws) against crowd-kit's GLAD EM, same data, same run.

Simulated binary GLAD data with 50,000 labels (5,000 items, 100 annotators, 10 distinct
annotators per item; alpha ~ N(1, 1), log beta ~ N(1, 1)). Prints the wall (and CPU) times,
their ratio (Bayesian / EM; target <= 1), both accuracies against the simulated truth, and
the Bayesian run's convergence (max R-hat, min bulk / tail ESS per variable).

    .venv/bin/python benchmarks/bench_glad_crowdkit.py [--items 5000] [--marginal]

The default Bayesian build is the Gibbs one: exact Gibbs for the true classes and the class
prior, exact slice scan of the abilities and item difficulties (no NUTS; its default 100
tuning iterations per chain adapt the slice widths); ``--marginal`` sums the classes out
and runs NUTS on everything (``--tune`` defaults to 1000 there). The Bayesian time includes
building and compiling the model; the convergence diagnostics are timed separately. Run on
a quiet machine: wall time on a shared one measures the other jobs too (the CPU times of
this process are printed beside it).
"""

import argparse
import time

import numpy as np
import pandas as pd
from crowdkit.aggregation import GLAD
from scipy.special import expit

import plausible as pl
from plausible.data.labels import Labels
from plausible.diagnostics.convergence import convergence_report
from plausible.models import glad


def simulate(n_items: int, n_annotators: int, per_item: int, seed: int):
    rng = np.random.default_rng(seed)
    alpha = rng.normal(1, 1, n_annotators)
    beta = np.exp(rng.normal(1, 1, n_items))
    z = rng.integers(0, 2, n_items)
    annotator = np.argsort(rng.random((n_items, n_annotators)), axis=1)[:, :per_item].ravel()
    item = np.repeat(np.arange(n_items), per_item)
    correct = rng.random(item.size) < expit(alpha[annotator] * beta[item])
    label = np.where(correct, z[item], 1 - z[item])
    frame = pd.DataFrame({"item": item, "annotator": annotator, "label": label})
    labels = Labels.from_frame(frame, classes=[0, 1], items=np.arange(n_items),
                               annotators=np.arange(n_annotators))
    return labels, z


class Timer:
    """Wall and process CPU seconds of a ``with`` block."""

    def __enter__(self):
        self.wall, self.cpu = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc):
        self.wall, self.cpu = time.perf_counter() - self.wall, time.process_time() - self.cpu


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=5000)
    parser.add_argument("--annotators", type=int, default=100)
    parser.add_argument("--per-item", type=int, default=10)
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--tune", type=int, default=None, help="default: the sampler's own")
    parser.add_argument("--chains", type=int, default=4)
    parser.add_argument("--marginal", action="store_true", help="classes summed out, NUTS only")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    labels, truth = simulate(args.items, args.annotators, args.per_item, args.seed)
    print(f"{labels.n_annotations} labels, {labels.n_items} items, {labels.n_annotators} annotators")

    frame = labels.to_frame().rename(columns={"item": "task", "annotator": "worker"})
    with Timer() as em_time:
        em = GLAD(n_iter=100).fit_predict(frame)
    em_accuracy = float((em.reindex(labels.items).to_numpy() == truth).mean())

    with Timer() as bayes_time:
        model = glad.build(labels, gibbs=not args.marginal)
        trace = pl.sample(model, draws=args.draws, tune=args.tune, chains=args.chains,
                          seed=args.seed, progressbar=False, check_convergence=False)
    with Timer() as diagnostics_time:
        report = convergence_report(trace)
    plaus = trace.posterior["plausibility"].mean(("chain", "draw")).values
    bayes_accuracy = float((plaus.argmax(axis=1) == truth).mean())
    stats = trace.sample_stats
    tune = stats.attrs.get("tuning_steps", args.tune)

    print(f"crowd-kit GLAD EM     : {em_time.wall:8.1f} s wall ({em_time.cpu:.1f} s CPU)   "
          f"accuracy {em_accuracy:.4f}")
    if args.marginal:
        build = "marginalised NUTS"
    else:
        build = "Gibbs (z, pi) + slice (alpha, log beta)"
    print(f"Bayesian GLAD ({build}, {args.chains} x {args.draws} draws, {tune} tune): "
          f"{bayes_time.wall:8.1f} s wall ({bayes_time.cpu:.1f} s CPU)   accuracy {bayes_accuracy:.4f}")
    if args.marginal:
        print(f"  NUTS: mean tree depth {float(stats['tree_depth'].mean()):.2f}, "
              f"{float(stats['n_steps'].mean()):.1f} gradient evaluations per draw, "
              f"{int(stats['diverging'].sum())} divergences")
    else:
        print(f"  slice: {float(stats['difficulty_slice_evaluations'].mean()):.2f} density "
              f"evaluations per coordinate update; classes changed per draw "
              f"{float(stats['class_gibbs_changed'].mean()):.1f}")
    print(f"  draws in the mirror mode (mean ability <= 0), per chain: "
          f"{glad.label_switching_check(trace).values}")
    print(f"  convergence ({diagnostics_time.wall:.1f} s, not in the Bayesian time):")
    print("    " + report.table.to_string(float_format=lambda v: f"{v:.3f}" if v < 2 else f"{v:.0f}")
          .replace("\n", "\n    "))
    print(f"ratio Bayesian / EM   : {bayes_time.wall / em_time.wall:8.2f} wall "
          f"({bayes_time.cpu / em_time.cpu:.2f} CPU)")


if __name__ == "__main__":
    main()
