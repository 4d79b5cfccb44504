"""Bayesian Dawid–Skene (or ``--model``: any model with a chain over shards) over a
partitioned Parquet dataset on a local Dask cluster: one chain
whose items live on the workers (``plausible.distributed.cluster_chain.sample_partitions``), end to
end, against the same chain in one process on the same data.

Data (written once to ``--data``): ``--items`` items x 20 labels (default 5,000,000 items:
100,000,000 labels), ``--annotators`` workers (5,000), 5 ordered classes, as crowds are:
each annotator's share of the work drawn from a Zipf-like popularity (a few do thousands,
most a few hundred), 10 % spammers who answer uniformly, the others right with probability
``Beta(6, 2)`` and, when wrong, off by one class three times as often as by more; prevalence
``Dirichlet(5)``. String ids (``task0000042``, ``w00007``, ``c3``) in ``--files`` Parquet
files, every item's labels in one file.

Part 1, the cluster (``--workers 2`` local worker processes of one thread, 4 GiB each):
wall time end to end (workers reading their files, 100 + 1000 sweeps of 1 chain, the
per-item table written to Parquet), the sampling time, the slowest shard's share of it (the
rest is the driver's draws and Dask's round trips: the communication share), every
worker's peak resident memory, and the accuracy of the most plausible class against the
simulated truth. Targets (issue): under 600 s end to end, under 4 GB per worker,
communication under 10 % (spark-crowd's one-node EM, a point estimate: 703 s).

Part 2 (``--compare-items``, default 500,000: 10M labels, the first files' items): the same
chain on the cluster and in this process (``client=None``), same seed and shard layout, so
the draws are bit-identical (checked) and the ratio is the cluster's cost. Then faults: the
cluster run again with checkpoints every 200 sweeps in a Zarr store (their cost), and again
with one worker process killed once the second checkpoint is written (the nanny starts
another; the chain is restored from the checkpoint and the sweeps since replayed): its wall
time, and whether its draws are still bit-identical.

    .venv/bin/python benchmarks/bench_cluster_chain.py [--items 5000000] [--data DIR]
        [--model glad]
"""

import argparse
import os
import resource
import shutil
import signal
import tempfile
import threading
import time
import warnings
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

import plausible as pl
from plausible import distributed
from plausible.aggregation import label_table

PER_ITEM, CLASSES = 20, 5


def crowd(n_annotators: int, seed: int):
    """``(theta (annotator, class, label), popularity (annotator,), prevalence (class,))``."""
    rng = np.random.default_rng(seed)
    C = CLASSES
    accuracy = rng.beta(6, 2, n_annotators)
    distance = np.abs(np.subtract.outer(np.arange(C), np.arange(C)))
    off = np.where(distance == 1, 3.0, np.where(distance > 1, 1.0, 0.0))
    off /= off.sum(axis=1, keepdims=True)
    theta = (1 - accuracy)[:, None, None] * off[None] + accuracy[:, None, None] * np.eye(C)
    theta[rng.random(n_annotators) < 0.1] = 1.0 / C
    popularity = 1.0 / (np.arange(n_annotators) + 20.0) ** 1.1
    return theta, rng.permutation(popularity / popularity.sum()), rng.dirichlet(np.full(C, 5.0))


def write_dataset(folder: Path, n_items: int, n_annotators: int, n_files: int, seed: int):
    """The partitioned dataset (module docstring) and ``truth.npy`` beside the files."""
    if (folder / "truth.npy").exists():
        return
    folder.mkdir(parents=True, exist_ok=True)
    theta, popularity, prevalence = crowd(n_annotators, seed)
    truth = np.random.default_rng(seed + 1).choice(CLASSES, n_items, p=prevalence)
    worker_ids = pa.array([f"w{j:05d}" for j in range(n_annotators)])
    class_ids = pa.array([f"c{k}" for k in range(CLASSES)])
    for f, items in enumerate(np.array_split(np.arange(n_items), n_files)):
        rng = np.random.default_rng([seed, f])
        item = np.repeat(items, PER_ITEM)
        annotator = rng.choice(n_annotators, item.size, p=popularity)
        rows = theta[annotator, truth[item]]
        label = np.minimum((rng.random((item.size, 1)) > np.cumsum(rows, axis=1)).sum(axis=1),
                           CLASSES - 1)
        task_ids = pa.array([f"task{i:08d}" for i in items])
        table = pa.table({
            "task": pa.DictionaryArray.from_arrays(pa.array(np.repeat(np.arange(items.size),
                                                                      PER_ITEM), pa.int32()),
                                                   task_ids).cast(pa.string()),
            "worker": pa.DictionaryArray.from_arrays(pa.array(annotator, pa.int32()),
                                                     worker_ids).cast(pa.string()),
            "label": pa.DictionaryArray.from_arrays(pa.array(label, pa.int32()),
                                                    class_ids).cast(pa.string())})
        pq.write_table(table, folder / f"part-{f:03d}.parquet")
    np.save(folder / "truth.npy", truth)


def accuracy(table, truth) -> float:
    index = table.index.str[4:].astype(int).to_numpy()
    return float((table["top_class"].str[1:].astype(int).to_numpy() == truth[index]).mean())


def _peak_rss() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def cluster_run(folder: Path, client, seed: int, out: Path, model: str, store=None):
    start = time.perf_counter()
    trace = distributed.sample_partitions(folder, model, client=client, draws=1000,
                                                chains=1, seed=seed, store=store)
    table = label_table(trace)
    table.to_parquet(out)
    return trace, table, time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=5_000_000)
    parser.add_argument("--annotators", type=int, default=5_000)
    parser.add_argument("--files", type=int, default=20)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--compare-items", type=int, default=500_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--model", default="dawid-skene",
                        help="any model with a chain over shards (glad, su-difficulty, ...)")
    parser.add_argument("--data", default=os.path.join(tempfile.gettempdir(),
                                                       "plausible-bench-cluster"))
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    root = Path(args.data)
    big = root / f"items-{args.items}"
    began = time.perf_counter()
    write_dataset(big, args.items, args.annotators, args.files, args.seed)
    print(f"data: {args.items * PER_ITEM:,} labels in {args.files} files "
          f"({sum(p.stat().st_size for p in big.glob('*.parquet')) / 1e6:.0f} MB; "
          f"written in {time.perf_counter() - began:.0f} s or earlier)")
    client = distributed.connect(workers=args.workers, memory_limit="4GiB")
    try:
        client.run(lambda: None)
        trace, table, seconds = cluster_run(big, client, args.seed, root / "out.parquet",
                                            args.model)
        peaks = client.run(_peak_rss)
        posterior = trace["posterior"]
        sampling = posterior.attrs["sampling_seconds"]
        shards = float(trace["sample_stats"]["shard_seconds"].sum())
        print(f"part 1: {args.workers} workers, 1 chain x "
              f"({posterior.attrs.get('tune', 100)} + 1000) sweeps of {args.model}")
        print(f"  end to end {seconds:.0f} s (target < 600 s); sampling {sampling:.0f} s, of "
              f"which the slowest shard's sweeps {shards:.0f} s: driver + communication "
              f"{100 * (1 - shards / sampling):.1f} % (target < 10 %)")
        print(f"  peak memory per worker: "
              f"{', '.join(f'{v / 1e9:.2f} GB' for v in peaks.values())} (target < 4 GB)")
        print(f"  accuracy {accuracy(table, np.load(big / 'truth.npy')):.4f} on "
              f"{len(table):,} items")
        if args.compare_items:
            small = root / f"items-{args.compare_items}"
            files = max(2, args.files * args.compare_items // args.items)
            write_dataset(small, args.compare_items, args.annotators, files, args.seed)
            there, _, cluster_seconds = cluster_run(small, client, args.seed,
                                                    root / "out-small.parquet", args.model)
            store = root / "checkpoints"
            shutil.rmtree(store, ignore_errors=True)
            checkpointed, _, checkpoint_seconds = cluster_run(
                small, client, args.seed, root / "out-small.parquet", args.model, store=store)
            size = sum(p.stat().st_size for p in store.rglob("*") if p.is_file())
            shutil.rmtree(store)
            pids = list(client.run(os.getpid).values())

            def kill_after_second_checkpoint():
                while not any(p.name >= "sweep-000000400" for p in store.glob("chain-*/sweep-*")):
                    time.sleep(0.05)
                time.sleep(1.0)
                os.kill(pids[0], signal.SIGKILL)

            killer = threading.Thread(target=kill_after_second_checkpoint, daemon=True)
            killer.start()
            faulted, _, fault_seconds = cluster_run(small, client, args.seed,
                                                    root / "out-small.parquet", args.model,
                                                    store=store)
            killer.join()
            shutil.rmtree(store)
    finally:
        client.close()
    if args.compare_items:
        start = time.perf_counter()
        here = distributed.sample_partitions(small, args.model, client=None,
                                                   n_shards=args.workers, draws=1000,
                                                   chains=1, seed=args.seed)
        label_table(here).to_parquet(root / "out-here.parquet")
        here_seconds = time.perf_counter() - start
        names = [name for name in there.posterior.data_vars if name != "plausibility"]

        def identical(trace):
            return all(np.array_equal(trace.posterior[name].values, there.posterior[name].values)
                       for name in names)

        same = identical(here)
        print(f"part 2: {args.compare_items * PER_ITEM:,} labels: cluster {cluster_seconds:.0f} s, "
              f"one process (shards in turn) {here_seconds:.0f} s, ratio "
              f"{cluster_seconds / here_seconds:.2f}; draws bit-identical: {same}")
        print(f"  checkpoints every 200 sweeps: {checkpoint_seconds:.0f} s (+"
              f"{100 * (checkpoint_seconds / cluster_seconds - 1):.0f} %), last checkpoint and "
              f"draws {size / 1e6:.0f} MB; draws bit-identical: {identical(checkpointed)}")
        print(f"  a worker killed after the second checkpoint: {fault_seconds:.0f} s, "
              f"{faulted.posterior.attrs['shard_recoveries']} recovery; draws bit-identical: "
              f"{identical(faulted)}")
    print(f"this process's peak memory (the driver): {_peak_rss() / 1e9:.2f} GB; "
          f"plausible {pl.__version__}")


if __name__ == "__main__":
    main()
