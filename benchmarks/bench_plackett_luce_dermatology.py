"""Benchmark: Bayesian Plackett–Luce on the full dermatology data (1947 cases, K = 419 classes,
no truncation), reliability sweep ``gamma`` in {1, 2, 3, 5, 10} (readers repeated).

    PLAUSIBLE_DATA=../shared/data .venv/bin/python benchmarks/bench_plackett_luce_dermatology.py \
        [--draws 1000] [--tune 500] [--chains 4] [--reliability 1 2 3 5 10] [--thin 1] \
        [--metropolis-rounds 2] [--cores N]

Sampler: ``plausible.sample`` on ``plausible.models.plackett_luce.build``, which runs the
compiled candidate sampler :func:`plausible.models.plackett_luce.sampler.sample_candidates`: one compiled
kernel call per sweep and chain (augmentation, conjugate worths, total-worth redraw and
the exact-likelihood independence Metropolis moves from per-item t proposals fitted during
warm-up, :mod:`plausible.models.plackett_luce.kernel`), the
chains run from their own seeds in ``--cores`` threads (default ``min(chains, CPUs)``; the
draws do not depend on it), the ``DataTree`` built directly in candidate storage (PyMC's
sampling loop and a dense ``(chain, draw, 1947, 419)`` trace are both avoided). Reported per
``gamma``: wall and CPU time of the process, all threads (layout + warm-up + draws + trace;
CPU time is the steadier figure on a shared machine, and ``cpu / wall`` shows the cores used),
peak resident memory of the process so far, the largest rank-normalised split R-hat over
every candidate plausibility and pooled mass, how many exceed 1.01, where the largest is
(item, class or ``pool``, posterior mean plausibility), the mean acceptance rate of the
independence moves, and the trace size. Then every metric of the case study reads the trace
(issue 17): top-1/2/3 annotation certainty, risk certainty, and UA top-3 accuracy, top-3 set
accuracy and top-3 average overlap of four simulated classifiers (the top-3 classes selected
once); their time is reported apart.
Targets (issue 3): whole sweep < 120 s, < 4 GB, R-hat < 1.01.
"""

import argparse
import gc
import resource
import time

import numpy as np

import plausible as pl
from plausible.data.datasets import load_dermatology
from plausible.diagnostics import rhat
from plausible.inference.chains import default_cores
from plausible.models.plackett_luce.sampler import sample_candidates
from plausible.models import plackett_luce
from plausible.models.prirn import irn

QUALITIES = {"A": 0.85, "B": 0.70, "C": 0.55, "D": 0.40}


def every_metric(trace, risk, scores) -> dict:
    """The case study's metrics from one trace (top-3 classes selected once)."""
    top = pl.metrics.top_classes(trace, 3)
    row = {f"AC{j}": float(pl.metrics.annotation_certainty(top, j).mean()) for j in (1, 2, 3)}
    row["risk"] = float(pl.metrics.group_certainty(top, risk).max("group").mean())
    for name, s in scores.items():
        row[f"{name} top3"] = float(pl.metrics.ua_topk_accuracy(top, s, k=3).mean())
        row[f"{name} set3"] = float(pl.metrics.ua_set_accuracy(top, pl.metrics.top_k_sets(s, 3)).mean())
        row[f"{name} ao3"] = float(pl.metrics.ua_average_overlap(top, s, depth=3).mean())
    return row


def peak_rss_gb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # kB on Linux


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--tune", type=int, default=500)
    parser.add_argument("--chains", type=int, default=4)
    parser.add_argument("--reliability", type=int, nargs="+", default=[1, 2, 3, 5, 10])
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--thin", type=int, default=1)
    parser.add_argument("--metropolis-rounds", type=int, default=2)
    parser.add_argument("--cores", type=int, default=None,
                        help="threads (default: min(chains, CPUs available))")
    parser.add_argument("--data-home", default=None)
    args = parser.parse_args()
    cores = default_cores(args.chains) if args.cores is None else args.cores

    derm = load_dermatology(args.data_home)
    rankings = derm.rankings
    scores = pl.data.simulate_classifiers(irn.irn(rankings).values, QUALITIES, seed=2023)
    print(f"dermatology: {rankings.n_items} cases, K = {rankings.n_classes}, "
          f"{int(rankings.n_readers.sum())} readers, {rankings.n_entries} ranked entries; "
          f"{args.chains} chains x {args.draws} draws (+ {args.tune} warm-up, thin {args.thin}), "
          f"{args.metropolis_rounds} Metropolis move(s) per sweep, {cores} core(s)")
    # compile the kernel outside the timings
    sample_candidates(rankings, draws=1, tune=0, chains=1, seed=0)
    total = cpu_total = metric_total = 0.0
    print(f"{'gamma':>5} {'wall s':>8} {'cpu s':>8} {'s/sweep':>8} {'peak GB':>8} "
          f"{'max R-hat':>9} {'#>1.01':>7} {'accept':>7} {'trace MB':>9}  "
          f"worst (item, class, mean plaus.)")
    for gamma in args.reliability:
        start, cpu = time.perf_counter(), time.process_time()
        trace = pl.sample(plackett_luce.build(rankings, reliability=gamma), draws=args.draws,
                          tune=args.tune, chains=args.chains, seed=args.seed + gamma,
                          thin=args.thin, metropolis_rounds=args.metropolis_rounds, cores=cores,
                          check_convergence=False)
        wall, cpu = time.perf_counter() - start, time.process_time() - cpu
        total += wall
        cpu_total += cpu
        post = trace["posterior"]
        cand_class = trace["constant_data"]["candidate_class"].values
        cand, pool = post["plausibility_candidates"].values, post["pooled_mass"].values
        r_hat = np.concatenate([np.where(cand_class >= 0, rhat(cand), np.nan),
                                rhat(pool)[:, None]], axis=1)  # (item, C + 1), pool last
        item, slot = np.unravel_index(np.nanargmax(r_hat), r_hat.shape)
        pooled = slot == cand_class.shape[1]
        label = "pool" if pooled else int(cand_class[item, slot])
        mean = float((pool[:, :, item] if pooled else cand[:, :, item, slot]).mean())
        size = (post["plausibility_candidates"].nbytes + post["pooled_mass"].nbytes) / 2**20
        sweeps = args.tune + args.draws * args.thin
        print(f"{gamma:>5} {wall:>8.1f} {cpu:>8.1f} {wall / sweeps:>8.4f} {peak_rss_gb():>8.2f} "
              f"{np.nanmax(r_hat):>9.4f} {int(np.sum(r_hat > 1.01)):>7} "
              f"{float(trace['sample_stats']['independence_acceptance'].mean()):>7.3f} "
              f"{size:>9.0f}  "
              f"({item}, {label}, {mean:.1e})", flush=True)
        start = time.perf_counter()
        row = every_metric(trace, derm.risk, scores)
        metric_total += time.perf_counter() - start
        print("      metrics: " + ", ".join(f"{k} {v:.3f}" for k, v in row.items()), flush=True)
        del trace, post, cand, pool
        gc.collect()  # a DataTree is a reference cycle: free this trace before the next
    print(f"whole sweep: {total:.1f} s wall ({cpu_total:.1f} s CPU); peak resident memory "
          f"{peak_rss_gb():.2f} GB; every metric on every trace: {metric_total:.1f} s")


if __name__ == "__main__":
    main()
