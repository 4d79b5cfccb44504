"""Command line: ``plausible certainty`` aggregates annotations and reports certainty.

Examples::

    plausible certainty --dataset cifar10h                 # public data (PLAUSIBLE_DATA)
    plausible certainty votes.csv --reliability 3 -o certainty.csv
    plausible certainty rankings.json --reliability 20     # PrIRN on partial rankings
    plausible certainty --dataset toy                      # simulated, needs no data
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

EPILOG = """\
input formats:
  votes      .csv: one row per item, one column per class, integer vote counts;
             an 'item' column, if present, names the items.
             .npy: an integer array (item, class).
  rankings   .json: the "selectors" format, a list over items of lists over
             readers of ordered blocks of tied class ids, e.g. [[[0, 3], [2]]]
             is one item, one reader ranking {0, 3} (tied) above {2}.

model: votes get the Dirichlet model Dir(reliability * votes + alpha); rankings
get PrIRN, Dir(reliability * IRN + alpha). Higher reliability trusts the
annotators more and raises certainty; alpha is a prior count per class.

output: a summary table on the terminal and, with -o, one CSV row per item:
  top_class       most plausible class (posterior mean plausibility)
  certainty_top1  share of posterior draws whose top-1 class is the most common one
  certainty_top2  the same for the top-2 set, certainty_top3 for the top-3 set
"""

DEFAULTS = {"votes": (1.0, 1.0), "rankings": (10.0, 0.01)}


def _read_votes(path: Path):
    from plausible.data import Votes

    if path.suffix == ".npy":
        return Votes.from_counts(np.load(path))
    frame = pd.read_csv(path)
    items = frame.pop("item").to_numpy() if "item" in frame.columns else None
    non_numeric = [c for c in frame.columns if not pd.api.types.is_numeric_dtype(frame[c])]
    if non_numeric:
        raise ValueError(f"{path}: vote columns must be numeric counts, got {non_numeric}")
    return Votes.from_counts(frame.to_numpy(), items=items, classes=frame.columns.to_numpy())


def _read_rankings(path: Path):
    import json

    from plausible.data import Rankings

    return Rankings.from_selectors(json.loads(path.read_text()))


def load_annotations(args):
    """``(kind, data, description)`` from a file or a built-in data set."""
    from plausible import data

    if args.dataset == "toy":
        return "votes", data.simulate_toy(seed=args.seed).votes, "simulated toy data (3 classes)"
    if args.dataset == "cifar10h":
        return "votes", data.load_cifar10h(args.data_home), "CIFAR-10H human votes"
    if args.dataset == "dermatology":
        return "rankings", data.load_dermatology(args.data_home).rankings, "dermatology rankings"
    path = Path(args.annotations)
    if not path.exists():
        raise FileNotFoundError(f"annotation file {path} does not exist")
    if path.suffix == ".json":
        return "rankings", _read_rankings(path), str(path)
    if path.suffix in (".csv", ".npy"):
        return "votes", _read_votes(path), str(path)
    raise ValueError(f"{path}: unknown format {path.suffix!r} (use .csv or .npy votes, .json rankings)")


def certainty(args) -> int:
    from rich.console import Console
    from rich.table import Table

    import plausible as pl

    console = Console(stderr=False)
    kind, annotations, description = load_annotations(args)
    reliability = args.reliability if args.reliability is not None else DEFAULTS[kind][0]
    alpha = args.alpha if args.alpha is not None else DEFAULTS[kind][1]
    build = pl.models.dirichlet.build if kind == "votes" else pl.models.prirn.build
    model = build(annotations, reliability=reliability, alpha=alpha)
    console.print(
        f"[bold]{description}[/]: {annotations.n_items} items, {annotations.n_classes} classes; "
        f"{'Dirichlet' if kind == 'votes' else 'PrIRN'} model, reliability {reliability:g}, "
        f"alpha {alpha:g}; {args.chains} chains x {args.draws} draws"
    )
    start = time.perf_counter()
    tops = [j for j in (1, 2, 3) if j <= annotations.n_classes]
    if args.store or args.scheduler or args.workers:
        trace, per_item = _sharded(args, kind, annotations, reliability, alpha, tops, console)
        report = None
    else:
        trace = pl.sample(model, draws=args.draws, chains=args.chains, seed=args.seed,
                          progressbar=not args.no_progress, check_convergence=False)
        report = pl.diagnostics.convergence_report(trace)
        per_item = {f"certainty_top{j}": pl.metrics.annotation_certainty(trace, top=j).values
                    for j in tops}
    elapsed = time.perf_counter() - start

    mean_plausibility = trace.posterior["plausibility"].mean(("chain", "draw")).compute()
    frame = pd.DataFrame(
        {
            "item": mean_plausibility["item"].values,
            "top_class": mean_plausibility["class"].values[mean_plausibility.argmax("class").values],
            **per_item,
        }
    )
    table = Table(title="Annotation certainty per item")
    for column in ("", "mean over items", f"items < {args.threshold:g}", "min"):
        table.add_column(column, justify="right")
    for name in per_item:
        values = frame[name]
        table.add_row(name, f"{values.mean():.4f}", f"{int((values < args.threshold).sum())}",
                      f"{values.min():.4f}")
    console.print(table)
    lowest = frame.nsmallest(args.show, "certainty_top1")
    console.print(f"Least certain items:\n{lowest.to_string(index=False)}")
    if report is not None:
        console.print(report.text, style="green" if report.ok else "yellow")
    console.print(f"sampling + metrics: {elapsed:.1f} s")
    if args.output:
        Path(args.output).parent.mkdir(parents=True, exist_ok=True)
        frame.to_csv(args.output, index=False)
        console.print(f"per-item results written to {args.output}")
    return 0


def _sharded(args, kind, annotations, reliability, alpha, tops, console):
    """Sample shards on Dask (or in-process) into ``--store``; certainty reduced per shard."""
    import tempfile

    from plausible import distributed

    if kind != "votes":
        raise ValueError("--store/--scheduler/--workers support votes (Dirichlet model) only")
    store = args.store or tempfile.mkdtemp(prefix="plausible-shards-")
    client = None
    if args.scheduler or args.workers:
        client = distributed.connect(args.scheduler, workers=args.workers or 2)
    try:
        report = distributed.run_shards(
            annotations, store, shard_size=args.shard_size, draws=args.draws, chains=args.chains,
            seed=args.seed, model_kwargs={"reliability": reliability, "alpha": alpha},
            client=client)
        streamed = distributed.stream_metrics(store, tops=tops, client=client)
    finally:
        if client is not None:
            client.close()
    retried = f", retried {sorted(report.retried)}" if report.retried else ""
    console.print(f"shards: {report.n_shards} ({len(report.skipped)} already complete in "
                  f"{store}, {len(report.completed)} sampled{retried})")
    trace = distributed.open_trace(store)
    return trace, {f"certainty_top{j}": streamed[f"certainty_top{j}"] for j in tops}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="plausible",
        description="Bayesian aggregation of disagreeing annotations: posterior plausibilities "
        "and uncertainty-adjusted metrics.",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    cert = commands.add_parser(
        "certainty",
        help="aggregate votes or rankings and report per-item annotation certainty",
        description="Sample posterior plausibilities for every item and report how certain the "
        "top-1/2/3 classes are given annotator disagreement.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    source = cert.add_mutually_exclusive_group(required=True)
    source.add_argument("annotations", nargs="?", help="votes (.csv/.npy) or rankings (.json) file")
    source.add_argument("--dataset", choices=["toy", "cifar10h", "dermatology"],
                        help="a built-in data set instead of a file (toy needs no download)")
    cert.add_argument("--reliability", type=float, default=None,
                      help="trust in the annotators, gamma > 0 (default: 1 for votes, 10 for rankings)")
    cert.add_argument("--alpha", type=float, default=None,
                      help="prior count per class (default: 1 for votes, 0.01 for rankings)")
    cert.add_argument("--draws", type=int, default=1000, help="posterior draws per chain (1000)")
    cert.add_argument("--chains", type=int, default=4, help="number of chains (4)")
    cert.add_argument("--seed", type=int, default=0, help="random seed; same seed, same draws (0)")
    cert.add_argument("--threshold", type=float, default=0.99,
                      help="count items whose certainty is below this (0.99)")
    cert.add_argument("--show", type=int, default=10, help="how many least-certain items to list")
    cert.add_argument("-o", "--output", help="write per-item results to this CSV file")
    cert.add_argument("--data-home", default=None,
                      help="folder of the public data sets (default: $PLAUSIBLE_DATA)")
    cert.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    scale = cert.add_argument_group(
        "scale out (votes)", "shard items, sample shards on Dask workers, keep draws in a Zarr "
        "store; a re-run with the same --store resumes, skipping finished shards")
    scale.add_argument("--store", default=None,
                       help="directory of the sharded Zarr trace (default: a new temporary one)")
    scale.add_argument("--scheduler", default=None, metavar="ADDRESS",
                       help="Dask scheduler address, e.g. tcp://host:8786")
    scale.add_argument("--workers", type=int, default=None, metavar="N",
                       help="start a local Dask cluster of N workers (without --scheduler)")
    scale.add_argument("--shard-size", type=int, default=10_000,
                       help="items per shard (10000)")
    cert.set_defaults(run=certainty)
    return parser


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.run(args)
    except (ValueError, FileNotFoundError) as error:
        print(f"plausible: error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
