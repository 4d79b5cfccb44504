"""Benchmark: Bayesian Plackett–Luce on the full dermatology data (1947 cases, K = 419 classes,
no truncation), reliability sweep ``gamma`` in {1, 2, 3, 5, 10} (readers repeated).

    PLAUSIBLE_DATA=../shared/data .venv/bin/python benchmarks/bench_plackett_luce_dermatology.py \
        [--draws 1000] [--tune 500] [--chains 4] [--repetitions 1 2 3 5 10]

Sampler: :func:`plausible.inference.plackett_luce_sampler.sample_candidates`, the exact
Gibbs sweep of :class:`~plausible.inference.plackett_luce_gibbs.PlackettLuceGibbs` (compiled
augmentation kernel, total-worth redraw) plus the exact-likelihood Metropolis moves, in a
tight loop, all chains in one vectorised sweep, with the
``DataTree`` built directly in candidate storage (PyMC's sampling loop and a dense
``(chain, draw, 1947, 419)`` trace are both avoided). Reported per ``gamma``: wall time
(layout + warm-up + draws + trace), peak resident memory of the process so far, the largest
split R-hat over every candidate plausibility and pooled mass, and the trace size.
Targets (issue 3): whole sweep < 120 s, < 4 GB, R-hat < 1.01.
"""

import argparse
import resource
import time

import numpy as np

from plausible.data.datasets import load_dermatology
from plausible.diagnostics.convergence import rhat
from plausible.inference.plackett_luce_sampler import sample_candidates


def peak_rss_gb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # kB on Linux


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--tune", type=int, default=500)
    parser.add_argument("--chains", type=int, default=4)
    parser.add_argument("--repetitions", type=int, nargs="+", default=[1, 2, 3, 5, 10])
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--data-home", default=None)
    args = parser.parse_args()

    rankings = load_dermatology(args.data_home).rankings
    print(f"dermatology: {rankings.n_items} cases, K = {rankings.n_classes}, "
          f"{int(rankings.n_readers.sum())} readers, {rankings.n_entries} ranked entries")
    # compile the kernel outside the timings
    sample_candidates(rankings, draws=1, tune=0, chains=1, seed=0)
    total = 0.0
    print(f"{'gamma':>5} {'wall s':>8} {'s/sweep':>8} {'peak GB':>8} {'max R-hat':>9} {'trace MB':>9}")
    for gamma in args.repetitions:
        start = time.perf_counter()
        trace = sample_candidates(rankings, repetitions=gamma, draws=args.draws,
                                  tune=args.tune, chains=args.chains, seed=args.seed + gamma)
        wall = time.perf_counter() - start
        total += wall
        post = trace["posterior"]
        valid = trace["constant_data"]["candidate_class"].values >= 0
        r_cand = rhat(post["plausibility_candidates"].values)[valid]
        r_pool = rhat(post["pooled_mass"].values)
        max_rhat = float(np.nanmax(np.r_[r_cand, r_pool]))
        size = (post["plausibility_candidates"].nbytes + post["pooled_mass"].nbytes) / 2**20
        print(f"{gamma:>5} {wall:>8.1f} {wall / (args.tune + args.draws):>8.4f} "
              f"{peak_rss_gb():>8.2f} {max_rhat:>9.4f} {size:>9.0f}", flush=True)
        del trace, post
    print(f"whole sweep: {total:.1f} s; peak resident memory {peak_rss_gb():.2f} GB")


if __name__ == "__main__":
    main()
