"""The path a user takes at scale: ``plausible aggregate`` on a Parquet file of ten million
labels with string ids, and ``pl.aggregate`` on a million, against the kernel alone, a plain
numba Gibbs loop (the floor) and crowd-kit's EM Dawid–Skene, each in its own process.

Data: the simulated crowd of ``bench_dawid_skene.simulate`` (5 classes, 500 annotators with
accuracies ``Beta(4, 2)`` and errors spread over the other classes, 10 % spammers, 20
distinct annotators per item), written once per size to ``--data`` as Parquet with string
ids (``task0000042``, ``w0007``, ``c3``; plain string columns, as a labelling tool exports
them) beside the simulated truth.

Part 1 (``--items 500000``: 10,000,000 labels), 1 chain x 1000 draws of Bayesian
Dawid–Skene (+ 100 warm-up sweeps), 2 cores:

* **CLI**: ``plausible aggregate labels.parquet --model dawid-skene --chains 1 --draws 1000
  -o out.csv`` — wall time and peak resident memory of the whole command (reading, model,
  sampling, per-item table, CSV), accuracy of its ``top_class`` against the truth;
* **kernel alone**: ``pl.sample`` of the same model on labels already in memory, plausibilities
  summarised while sampling, no log-likelihood — its sampling time and peak memory;
* **floor**: the plainest exact Gibbs sampler, one numba loop per sweep (counts rebuilt, rows
  and prevalence by gamma draws, class posteriors label by label), summing the kept class
  posteriors into a mean.

Part 2 (``--small-items 50000``: 1,000,000 labels): ``pl.aggregate(frame, "dawid-skene",
draws=1000)`` with its 4 chains, from the Parquet file, then ``labels()``; and crowd-kit's
``DawidSkene()`` at its defaults on the same file read by pandas. Wall time, peak memory,
accuracy.

Prints each row and the ratios CLI / kernel and CLI / floor (time), CLI / kernel (memory),
``pl.aggregate`` / EM (time and memory). Targets (issue): CLI under 60 s and 2 GB; 1M labels
through ``pl.aggregate`` under 2 GB.

    .venv/bin/python benchmarks/bench_front_door_scale.py [--items 500000] [--data DIR]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).parent))
from bench_dawid_skene import peak_resident_bytes, plain_gibbs, simulate  # noqa: E402

ANNOTATORS, CLASSES, PER_ITEM = 500, 5, 20


def dataset(folder: Path, n_items: int, seed: int) -> Path:
    """The Parquet file of ``n_items`` simulated items (written once) and its truth beside it."""
    path = folder / f"labels-{n_items}-{seed}.parquet"
    if path.exists():
        return path
    labels, truth = simulate(n_items, PER_ITEM, ANNOTATORS, CLASSES, seed)

    def strings(codes, names):
        return pa.DictionaryArray.from_arrays(pa.array(codes.astype(np.int32)),
                                              pa.array(names)).cast(pa.string())

    table = pa.table({"task": strings(labels.item, [f"task{i:07d}" for i in range(n_items)]),
                      "worker": strings(labels.annotator, [f"w{j:04d}" for j in range(ANNOTATORS)]),
                      "label": strings(labels.label, [f"c{k}" for k in range(CLASSES)])})
    pq.write_table(table, path.with_suffix(".tmp"))
    np.save(path.with_suffix(".truth.npy"), truth)
    os.replace(path.with_suffix(".tmp"), path)
    return path


def truth_of(path: Path) -> np.ndarray:
    return np.load(path.with_suffix(".truth.npy"))


def accuracy(items, top_class, truth) -> float:
    index = np.array([int(s[4:]) for s in items])
    return float((np.array([int(c[1:]) for c in top_class]) == truth[index]).mean())


def child(part: str, args) -> dict:
    """Runs in a child process: one measurement, as a dict."""
    if part == "kernel":
        import plausible as pl
        from plausible.models import dawid_skene

        labels, truth = simulate(args.items, PER_ITEM, ANNOTATORS, CLASSES, args.seed)
        model = dawid_skene.build(labels)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            trace = pl.sample(model, draws=1000, chains=1, seed=args.seed, keep="summary",
                              log_likelihood=False, progressbar=False)
        mean = pl.metrics.posterior_mean(trace).values
        return {"seconds": trace.posterior.attrs["sampling_seconds"],
                "accuracy": float((mean.argmax(1) == truth).mean())}
    if part == "floor":
        labels, truth = simulate(args.items, PER_ITEM, ANNOTATORS, CLASSES, args.seed)
        order = np.argsort(labels.item, kind="stable")
        item = labels.item[order]
        code = (labels.annotator[order] * CLASSES + labels.label[order]).astype(np.int64)
        beta = np.full((CLASSES, CLASSES), 1.0) + 3.0 * np.eye(CLASSES)
        mean = np.zeros((labels.n_items, CLASSES))
        plain_gibbs(item[:100], code[:100], 5, ANNOTATORS, CLASSES, beta, 2, 1, 0,
                         np.zeros((5, CLASSES)))  # compile
        start = time.perf_counter()
        plain_gibbs(item, code, labels.n_items, ANNOTATORS, CLASSES, beta, 1100, 100,
                         args.seed, mean)
        return {"seconds": time.perf_counter() - start,
                "accuracy": float((mean.argmax(1) == truth).mean())}
    path = dataset(Path(args.data), args.small_items, args.seed)
    truth = truth_of(path)
    if part == "aggregate":
        import plausible as pl
        from plausible.data.tables import read_annotations

        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = pl.aggregate(read_annotations(path), "dawid-skene", draws=1000,
                                  seed=args.seed)
        labels = result.labels()
        return {"seconds": time.perf_counter() - start,
                "accuracy": accuracy(labels.index, labels["top_class"], truth),
                "converged": bool(pl.diagnostics.convergence_report(result.trace).converged)}
    if part == "em":
        from crowdkit.aggregation import DawidSkene

        start = time.perf_counter()
        frame = pd.read_parquet(path)
        labels = DawidSkene().fit_predict(frame)
        return {"seconds": time.perf_counter() - start,
                "accuracy": accuracy(labels.index, labels.to_numpy(), truth)}
    raise ValueError(part)


def measured_child(part: str, args) -> dict:
    """Run :func:`child` ``part`` in a fresh process: its result, wall time and peak memory."""
    options = [f"--{k.replace('_', '-')}={v}" for k, v in vars(args).items() if k != "part"]
    start = time.perf_counter()
    done = subprocess.run([sys.executable, __file__, "--part", part, *options],
                          capture_output=True, text=True, check=True)
    return {**json.loads(done.stdout.strip().splitlines()[-1]),
            "wall": time.perf_counter() - start}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=500_000)
    parser.add_argument("--small-items", type=int, default=50_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--data", default=os.path.join(tempfile.gettempdir(),
                                                       "plausible-bench-scale"))
    parser.add_argument("--part", default="all",
                        choices=["all", "one", "two", "kernel", "floor", "aggregate", "em"])
    args = parser.parse_args()
    if args.part in ("kernel", "floor", "aggregate", "em"):
        result = child(args.part, args)
        print(json.dumps({**result, "peak_gb": peak_resident_bytes() / 1e9}))
        return
    Path(args.data).mkdir(parents=True, exist_ok=True)
    if args.part in ("all", "one"):
        path = dataset(Path(args.data), args.items, args.seed)
        out = Path(args.data) / "out.csv"
        cli = Path(sys.executable).with_name("plausible")
        seconds, peak = cli_run([str(cli), "aggregate", str(path), "--model", "dawid-skene",
                                 "--chains", "1", "--draws", "1000", "-o", str(out), "--force",
                                 "--no-progress", "--seed", str(args.seed)])
        frame = pd.read_csv(out, usecols=["item", "top_class"])
        cli_accuracy = accuracy(frame["item"], frame["top_class"], truth_of(path))
        kernel = measured_child("kernel", args)
        floor = measured_child("floor", args)
        print(f"part 1: {args.items * PER_ITEM:,} labels, {args.items:,} items, {ANNOTATORS} "
              f"annotators, {CLASSES} classes; 1 chain x 1000 draws")
        print(f"  CLI on Parquet (string ids): {seconds:6.1f} s  peak {peak:5.2f} GB  "
              f"accuracy {cli_accuracy:.4f}   (targets: < 60 s, < 2 GB)")
        print(f"  kernel alone (sampling):     {kernel['seconds']:6.1f} s  peak "
              f"{kernel['peak_gb']:5.2f} GB  accuracy {kernel['accuracy']:.4f}")
        print(f"  floor (plain numba Gibbs):   {floor['seconds']:6.1f} s  peak "
              f"{floor['peak_gb']:5.2f} GB  accuracy {floor['accuracy']:.4f}")
        print(f"  ratios: CLI / kernel {seconds / kernel['seconds']:.2f} (time), "
              f"{peak / kernel['peak_gb']:.2f} (memory); CLI / floor "
              f"{seconds / floor['seconds']:.2f} (time); kernel / floor "
              f"{kernel['seconds'] / floor['seconds']:.2f}")
    if args.part in ("all", "two"):
        dataset(Path(args.data), args.small_items, args.seed)
        ours = measured_child("aggregate", args)
        em = measured_child("em", args)
        print(f"part 2: {args.small_items * PER_ITEM:,} labels from Parquet")
        print(f"  pl.aggregate dawid-skene 4 x 1000, labels(): {ours['wall']:6.1f} s  peak "
              f"{ours['peak_gb']:5.2f} GB  accuracy {ours['accuracy']:.4f}  converged "
              f"{ours['converged']}   (target: < 2 GB)")
        print(f"  crowd-kit DawidSkene() EM:                   {em['wall']:6.1f} s  peak "
              f"{em['peak_gb']:5.2f} GB  accuracy {em['accuracy']:.4f}")
        print(f"  ratios pl.aggregate / EM: {ours['wall'] / em['wall']:.2f} (time), "
              f"{ours['peak_gb'] / em['peak_gb']:.2f} (memory)")


def cli_run(command: list[str]) -> tuple[float, float]:
    """Wall seconds and peak resident GB of a command (its own, from ``os.wait4``)."""
    start = time.perf_counter()
    child_process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(child_process.pid, 0)
    seconds = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status):
        raise RuntimeError(f"{' '.join(command)} failed: {child_process.stderr.read()[-2000:]}")
    return seconds, usage.ru_maxrss * 1024 / 1e9


if __name__ == "__main__":
    main()
