"""PrIRN on the whole dermatology data set: the reliability sweep of the paper through the
library's own path, with every metric of the case study.

All 1947 cases, K = 419 conditions, reliabilities {10, 20, 30, 50, 100}, 4 chains x 1000 exact
draws each (``plausible.sample``: candidate form, never ``(draws, cases, 419)``), then per
reliability the top-1/2/3 annotation certainty, the risk certainty, and UA top-3 accuracy,
top-3 set accuracy and top-3 average overlap of four simulated classifiers A-D. The top-3
conditions of every draw are selected once (``top_classes``) and serve every metric.

Targets (issue 17): the whole sweep under 20 s and under 2 GB on a 2-core machine. For scale:
the reference JAX implementation needs 218 s and 13 GB for 100 samples of one reliability.

The peer, measured in the same run: the same posterior drawn densely with numpy
(``standard_gamma`` of the ``(draws, cases, 419)`` concentrations, normalised), timed on
``--peer-draws`` draws of one chain and scaled to 4 x 1000 (its cost is linear in the draws;
the full run would need 26 GB), and the floor: the same candidate-form draws by a plain numba
loop with no metric (the draw kernel alone). Prints both ratios.

    PLAUSIBLE_DATA=../shared/data .venv/bin/python benchmarks/bench_prirn_dermatology.py
"""

from __future__ import annotations

import argparse
import resource
import time

import numba
import numpy as np

import plausible as pl
from plausible.models import prirn
from plausible.models.prirn import irn

GAMMAS = (10, 20, 30, 50, 100)
QUALITIES = {"A": 0.85, "B": 0.70, "C": 0.55, "D": 0.40}


def sweep(derm, scores, draws: int, chains: int) -> dict:
    rankings = derm.rankings
    rows = {}
    for gamma in GAMMAS:
        trace = pl.sample(prirn.build(rankings, reliability=gamma), draws=draws, chains=chains,
                          seed=gamma)
        top = pl.metrics.top_classes(trace, 3)
        row = {f"AC{j}": float(pl.metrics.annotation_certainty(top, j).mean()) for j in (1, 2, 3)}
        row["risk"] = float(pl.metrics.group_certainty(top, derm.risk).max("group").mean())
        for name, s in scores.items():
            sets = pl.metrics.top_k_sets(s, 3)
            row[f"{name} top3"] = float(pl.metrics.ua_topk_accuracy(top, s, k=3).mean())
            row[f"{name} set3"] = float(pl.metrics.ua_set_accuracy(top, sets).mean())
            row[f"{name} ao3"] = float(pl.metrics.ua_average_overlap(top, s, depth=3).mean())
        rows[gamma] = row
        del trace, top
    return rows


def numpy_dense_seconds(rankings, gamma: float, alpha: float, draws: int) -> float:
    """Seconds for ``draws`` dense numpy draws of one chain (Dirichlet via standard_gamma)."""
    conc = gamma * irn.irn(rankings).values + alpha
    rng = np.random.default_rng(0)
    start = time.perf_counter()
    for _ in range(draws):
        g = rng.standard_gamma(conc)
        g /= g.sum(axis=1, keepdims=True)
    return time.perf_counter() - start


@numba.njit(cache=True)
def _floor_kernel(seed, shape, n_cand, pool, draws, out_values, out_pool):  # pragma: no cover
    np.random.seed(seed)
    for d in range(draws):
        for i in range(shape.shape[0]):
            total = 0.0
            for c in range(n_cand[i]):
                g = np.random.gamma(shape[i, c] + 1.0) * np.random.random() ** (1.0 / shape[i, c])
                out_values[i, c] = g
                total += g
            p = np.random.gamma(pool[i] + 1.0) * np.random.random() ** (1.0 / pool[i])
            total += p
            for c in range(n_cand[i]):
                out_values[i, c] /= total
            out_pool[i] = p / total


def floor_seconds(rankings, gamma: float, alpha: float, draws: int) -> float:
    """Seconds for ``draws`` candidate-form draws by a plain numba loop (one chain)."""
    point = irn.irn(rankings).values
    named = point > 0
    n_cand = named.sum(axis=1)
    width = int(n_cand.max())
    order = np.argsort(~named, axis=1, kind="stable")[:, :width]
    shape = np.where(np.arange(width) < n_cand[:, None],
                     gamma * np.take_along_axis(point, order, 1) + alpha, 1.0)
    pool = (rankings.n_classes - n_cand) * alpha
    values, pooled = np.empty((rankings.n_items, width)), np.empty(rankings.n_items)
    _floor_kernel(0, shape, n_cand, pool, 1, values, pooled)
    start = time.perf_counter()
    _floor_kernel(0, shape, n_cand, pool, draws, values, pooled)
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--chains", type=int, default=4)
    parser.add_argument("--peer-draws", type=int, default=20)
    args = parser.parse_args()
    derm = pl.data.load_dermatology()
    scores = pl.data.simulate_classifiers(irn.irn(derm.rankings).values, QUALITIES, seed=2023)
    pl.sample(prirn.build(derm.rankings, reliability=10), draws=5, chains=1, seed=0)  # compile
    pl.metrics.annotation_certainty(pl.sample(prirn.build(derm.rankings), draws=5, chains=1),
                                    top=3)
    start = time.perf_counter()
    rows = sweep(derm, scores, args.draws, args.chains)
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    for gamma, row in rows.items():
        print(f"gamma {gamma:>3}: " + ", ".join(f"{k} {v:.3f}" for k, v in row.items()))
    total = args.draws * args.chains * len(GAMMAS)
    peer = numpy_dense_seconds(derm.rankings, 20, 0.01, args.peer_draws) / args.peer_draws * total
    floor = floor_seconds(derm.rankings, 20, 0.01, args.draws) / args.draws * total
    print(f"\nplausible sweep ({len(GAMMAS)} reliabilities x {args.chains} x {args.draws} draws, "
          f"all metrics): {seconds:.1f} s, peak RSS {peak / 1e9:.2f} GB "
          f"(targets: < 20 s, < 2 GB)")
    print(f"peer, numpy dense draws only (scaled from {args.peer_draws} draws): {peer:.0f} s; "
          f"ratio plausible / peer = {seconds / peer:.3f}")
    print(f"floor, plain numba candidate draws only, one thread: {floor:.1f} s; "
          f"ratio plausible / floor = {seconds / floor:.2f}")


if __name__ == "__main__":
    main()
