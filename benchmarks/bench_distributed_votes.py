"""Sharded Dirichlet sampling + streamed certainty / UA top-k: 2-worker LocalCluster vs in-process.

Simulated votes (10 classes). Both paths sample the same shards with the same seeds into a
Zarr store (float32 draws) and reduce the metrics shard by shard, so neither ever holds
``(draws, items, classes)`` for all items. Prints wall time, peak RSS per worker process,
store size and the throughput ratio.

    .venv/bin/python benchmarks/bench_distributed_votes.py --items 1000000 --draws 1000

(the issue's target size: a 37 GiB float32 store per path, deleted before the next path runs;
use fewer --items to scale down).
"""

from __future__ import annotations

import argparse
import resource
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np

from plausible.data.votes import Votes
from plausible import distributed as dist


def store_size(path: Path) -> int:
    return int(subprocess.run(["du", "-sb", str(path)], capture_output=True, text=True,
                              check=True).stdout.split()[0])


def simulate(n_items: int, n_classes: int, seed: int) -> tuple[Votes, np.ndarray]:
    rng = np.random.default_rng(seed)
    truth = rng.dirichlet(np.full(n_classes, 0.3), size=n_items)
    u = rng.random((n_items, 1))
    counts = rng.multinomial(50, truth)  # 50 votes per item
    scores = truth + 0.2 * rng.random((n_items, n_classes)) * u
    return Votes.from_counts(counts), scores


def run(path_name, votes, scores, args, client, root):
    store = root / path_name
    t0 = time.perf_counter()
    report = dist.run_shards(votes, store, shard_size=args.shard_size, draws=args.draws,
                             chains=args.chains, seed=0, dtype="float32", client=client)
    t1 = time.perf_counter()
    metrics = dist.stream_metrics(store, scores=scores, ks=(1, 3), tops=(1,), client=client)
    t2 = time.perf_counter()
    peaks = {}
    for s in report.stats.values():
        peaks[s["pid"]] = max(peaks.get(s["pid"], 0), s["peak_rss"])
    if client is not None:  # the metric tasks' peaks too, per worker process
        for pid, rss in client.run(lambda: (__import__("os").getpid(),
                                            resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)).values():
            peaks[pid] = max(peaks.get(pid, 0), rss)
    else:
        peaks = {"main": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}
    size = store_size(store)
    shutil.rmtree(store)  # one full-size store at a time: 1e6 items x 1000 draws is 37 GiB
    print(f"[{path_name}] sample+write {t1 - t0:.1f} s, metrics {t2 - t1:.1f} s, "
          f"total {t2 - t0:.1f} s; store {size / 2**30:.2f} GiB; peak RSS per process (GiB): "
          f"{[round(v / 2**30, 2) for v in peaks.values()]}; "
          f"mean certainty_top1 {metrics['certainty_top1'].mean():.4f}, "
          f"UA top-1 {metrics['ua_top1'].mean():.4f}, UA top-3 {metrics['ua_top3'].mean():.4f}",
          flush=True)
    return t2 - t0, metrics


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=1_000_000)
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--chains", type=int, default=1)
    parser.add_argument("--classes", type=int, default=10)
    parser.add_argument("--shard-size", type=int, default=10_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--root", default=None, help="folder for the stores (default: a temp dir)")
    args = parser.parse_args()
    from distributed import Client, LocalCluster

    root = Path(args.root or tempfile.mkdtemp(prefix="bench-shards-"))
    votes, scores = simulate(args.items, args.classes, seed=0)
    n_values = args.items * args.draws * args.chains * args.classes
    print(f"{args.items} items x {args.chains} x {args.draws} draws x {args.classes} classes "
          f"({n_values * 4 / 2**30:.1f} GiB float32), shards of {args.shard_size}", flush=True)
    try:
        t_single, m_single = run("single", votes, scores, args, None, root)
        with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                          memory_limit="4GiB", dashboard_address=":0") as cluster, Client(cluster) as client:
            t_dist, m_dist = run("cluster", votes, scores, args, client, root)
        same = all(np.array_equal(m_single[k], m_dist[k]) for k in ("certainty_top1", "ua_top1", "ua_top3"))
        print(f"throughput: single {args.items / t_single:,.0f} items/s, cluster "
              f"{args.items / t_dist:,.0f} items/s; cluster/single wall ratio {t_dist / t_single:.2f}; "
              f"identical metrics: {same}", flush=True)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
