"""What the command line writes: its output paths, checked before any work
(:func:`check_output`), tables written atomically (:func:`write_table`), the run's results
and report, and the summary it prints."""

from __future__ import annotations

import contextlib
import json
import os
import sys
import tempfile
from pathlib import Path

from plausible.cli.parser import UsageError

TABLE_SUFFIXES = (".csv", ".tsv", ".parquet", ".json")
"""What ``-o`` writes: CSV, TSV, Parquet or JSON (a list of records), by the file's suffix."""

TRACE_SUFFIXES = (".nc", ".zarr")
"""What ``--save`` writes: netCDF, or a Zarr store."""

REPORT_SUFFIXES = (".html",)
"""What ``--report`` and ``plausible report -o`` write: one HTML page."""


def check_output(path: str | None, option: str, force: bool,
                 suffixes: tuple[str, ...] = TABLE_SUFFIXES) -> Path | None:
    """The output ``path`` of ``option`` if it can be written, checked before any work: a
    known suffix (one of ``suffixes``), not a directory (unless a ``.zarr`` store), not an
    existing file without ``--force``, and a folder where a file can be created (tried: the
    permission bits do not tell, e.g. in ``/proc`` or on a read-only mount)."""
    if path is None:
        return None
    out = Path(path)
    if out.is_dir() and out.suffix != ".zarr":
        raise UsageError(f"{option} {out} is a directory; give a file name")
    if out.suffix.lower() not in suffixes:
        raise UsageError(f"{option} {out}: unknown extension {out.suffix or '(none)'!r}; "
                         f"use one of {', '.join(suffixes)}")
    if out.exists() and not force:
        raise UsageError(f"{option} {out} exists; pass --force to overwrite it")
    folder = out.parent if str(out.parent) else Path(".")
    ancestor = folder
    while not ancestor.exists():
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        raise UsageError(f"{option} {out}: {ancestor} is a file, not a folder")
    try:
        handle, probe = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".probe", dir=ancestor)
    except OSError as error:
        raise UsageError(f"{option} {out}: cannot write in {ancestor} "
                         f"({error.strerror or error})") from None
    os.close(handle)
    os.unlink(probe)
    return out


def write_table(frame, path: Path) -> None:
    """``frame`` to ``path`` (CSV, TSV, Parquet or JSON records by suffix), atomically."""
    from plausible.aggregation import write_atomic

    suffix = path.suffix.lower()
    if suffix == ".parquet":
        write_atomic(path, lambda tmp: frame.to_parquet(tmp, index=False))
    elif suffix == ".json":
        write_atomic(path, lambda tmp: frame.to_json(tmp, orient="records", indent=1))
    else:
        sep = "\t" if suffix == ".tsv" else ","
        write_atomic(path, lambda tmp: frame.to_csv(tmp, index=False, sep=sep))


def write_results(args, result, output, saved):
    """The per-item table and the report (with ``--check``, the predictive check too); the
    trace saved to ``saved`` and the table written to ``output`` where given."""
    frame = result.to_frame()
    checked = result.check() if args.check else result.convergence()
    if saved is not None:
        result.save(saved)
    if output is not None:
        write_table(frame, output)
    if args.report is not None:
        with report_progress(args.no_progress) as progress:
            result.report(args.report, seed=args.seed, progress=progress)
    return frame, checked


def pipe_console():
    """A rich console that, when stdout is a closed pipe (``| head``), stops printing quietly
    instead of exiting with status 1 (rich's default): the output files are written."""
    from rich.console import Console

    class PipeConsole(Console):
        def on_broken_pipe(self) -> None:
            self.quiet = True
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())

    return PipeConsole(stderr=False, soft_wrap=True)


def print_summary(console, args, result, frame, description, elapsed, checked, output, saved):
    """The run in words and tables: its shards or Dask workers, the data, the model and why,
    the draws, the items' certainty and the least certain items, the convergence report (and
    the predictive check) and what was written where."""
    from rich.table import Table

    from plausible import aggregation

    posterior = result.trace.posterior
    if "shards" in posterior.attrs:  # shards of independent items
        shards = json.loads(posterior.attrs["shards"])
        retried = f", retried {shards['retried']}" if shards["retried"] else ""
        kept = f" in {args.store}" if args.store else ""
        console.print(f"shards: {shards['n_shards']} ({len(shards['skipped'])} already "
                      f"complete{kept}, {len(shards['sampled'])} sampled{retried})")
    elif "dask_workers" in posterior.attrs:  # the chain over shards on a cluster
        console.print(f"{posterior.attrs['dask_workers']} Dask workers; the slowest shard's "
                      "sweeps "
                      f"{float(result.trace['sample_stats']['shard_seconds'].sum()):.1f} s of "
                      f"{posterior.attrs['sampling_seconds']:.1f} s sampling")
    if result.selection is not None:
        others = [name for name in result.selection.stack if name != result.model]
        stacked = f", stacked with {', '.join(others)}" if others else ""
        chosen = f" (chosen by PSIS-LOO{stacked})"
    elif args.model is not None:
        chosen = ""
    else:
        chosen = (" (--ordinal)" if getattr(args, "ordinal", False) else
                  " (default for the format with --predictions)"
                  if getattr(args, "predictions", None) is not None else
                  " (default for the format)")
    sizes = result.sizes
    console.print(f"[bold]{description}[/]: {sizes['item']} items, {sizes['class']} classes; "
                  f"{result.model} model{chosen}; {args.chains} chains x "
                  f"{posterior.sizes['draw']} draws"
                  + (f" (--draws auto: {posterior.attrs['draws_stopped_by']})"
                     if "draws_stopped_by" in posterior.attrs else ""))
    if result.selection is not None:
        console.print(f"chosen: {result.selection.reason}", highlight=False)
    elif (args.model is None and not getattr(args, "ordinal", False)
          and getattr(args, "init", None) is None and result.format == "labels"):
        console.print(f"chosen: {aggregation.DEFAULT_REASON}", highlight=False)
    console.print(f"plausibility: {result.meaning}", highlight=False)
    if getattr(result.data, "known", None) is not None:
        console.print(f"{result.data.n_known} items of known class (--gold {args.gold}) clamped; "
                      "their rows carry known_class", highlight=False)
    sets = "expected_hamming_accuracy" in frame  # multi-label sets: no top class
    shown = (["expected_hamming_accuracy"] if sets else
             ["probability_top_class", "certainty_top1"])
    table = Table(title="Expected Hamming accuracy of the predicted set per item" if sets else
                  "Certainty of the top class per item")
    for column in ("", "mean over items", f"items < {args.threshold_certainty:g}", "min"):
        table.add_column(column, justify="right")
    for column in shown:
        values = frame[column]
        table.add_row(column, f"{values.mean():.4f}",
                      f"{int((values < args.threshold_certainty).sum())}", f"{values.min():.4f}")
    console.print(table)
    lowest = frame.nsmallest(args.show, shown[-1])[
        ["item", "predicted_set", *shown] if sets else
        ["item", "top_class", "probability_top_class", "certainty_top1"]]
    if args.show:
        console.print(f"Least certain items:\n{lowest.to_string(index=False)}")
    text = checked.text
    console.print(text, style="green" if checked_ok(checked) else "yellow", markup=False)
    console.print(f"sampling + metrics: {elapsed:.1f} s")
    for path, what in ((output, "per-item results"), (saved, "trace"), (args.report, "report")):
        if path is not None:
            console.print(f"{what} written to {path}")


def checked_ok(checked) -> bool:
    report = getattr(checked, "convergence", checked)
    return report.converged


@contextlib.contextmanager
def report_progress(hidden: bool):
    """A callback that moves a progress bar through the report's stages, on a terminal
    (stderr) unless ``hidden``; None (nothing shown) in a pipe."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    from plausible.report import STAGES

    console = Console(stderr=True)
    if hidden or not console.is_terminal:
        yield None
        return
    with Progress(TextColumn("report: {task.description}"), BarColumn(), MofNCompleteColumn(),
                  console=console, transient=True) as bar:
        task = bar.add_task("", total=len(STAGES))
        started = []

        def stage(name: str) -> None:
            bar.update(task, description=name, completed=len(started))
            started.append(name)

        yield stage
