"""Full Bayesian GLAD (4 chains x 1000 draws) against crowd-kit's GLAD EM, same data, same run.

Simulated binary GLAD data with 50,000 labels (5,000 items, 100 annotators, 10 distinct
annotators per item; alpha ~ N(1, 1), log beta ~ N(1, 1)). Prints the wall times, their
ratio (Bayesian / EM; target <= 1) and both accuracies against the simulated truth.

    .venv/bin/python benchmarks/bench_glad_crowdkit.py [--items 5000] [--gibbs/--marginal]

Timings include PyMC's model compilation. Run on a quiet machine: wall time on a shared
one measures the other jobs too.
"""

import argparse
import time

import numpy as np
import pandas as pd
from crowdkit.aggregation import GLAD
from scipy.special import expit

import plausible as pl
from plausible.data.labels import Labels
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


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=5000)
    parser.add_argument("--annotators", type=int, default=100)
    parser.add_argument("--per-item", type=int, default=10)
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--tune", type=int, default=1000)
    parser.add_argument("--chains", type=int, default=4)
    parser.add_argument("--marginal", action="store_true", help="classes summed out, NUTS only")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    labels, truth = simulate(args.items, args.annotators, args.per_item, args.seed)
    print(f"{labels.n_annotations} labels, {labels.n_items} items, {labels.n_annotators} annotators")

    frame = labels.to_frame().rename(columns={"item": "task", "annotator": "worker"})
    start = time.perf_counter()
    em = GLAD(n_iter=100).fit_predict(frame)
    em_seconds = time.perf_counter() - start
    em_accuracy = float((em.reindex(labels.items).to_numpy() == truth).mean())

    start = time.perf_counter()
    model = glad.build(labels, gibbs=not args.marginal)
    trace = pl.sample(model, draws=args.draws, tune=args.tune, chains=args.chains, seed=args.seed,
                      progressbar=False)
    bayes_seconds = time.perf_counter() - start
    plaus = trace.posterior["plausibility"].mean(("chain", "draw")).values
    bayes_accuracy = float((plaus.argmax(axis=1) == truth).mean())
    build = "marginalised NUTS" if args.marginal else "Gibbs (z, pi) + NUTS"
    steps = trace.sample_stats["n_steps"]

    print(f"crowd-kit GLAD EM     : {em_seconds:8.1f} s   accuracy {em_accuracy:.4f}")
    print(f"Bayesian GLAD ({build}, {args.chains} x {args.draws} draws, {args.tune} tune): "
          f"{bayes_seconds:8.1f} s   accuracy {bayes_accuracy:.4f}")
    print(f"  NUTS: mean tree depth {float(trace.sample_stats['tree_depth'].mean()):.2f}, "
          f"{float(steps.mean()):.1f} gradient evaluations per draw, "
          f"{int(trace.sample_stats['diverging'].sum())} divergences "
          f"(sampled draws only; tuning costs about as much again)")
    print(f"ratio Bayesian / EM   : {bayes_seconds / em_seconds:8.2f}")


if __name__ == "__main__":
    main()
