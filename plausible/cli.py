"""Command line: ``plausible aggregate`` fits an aggregation model to an annotation file and
writes per-item plausibilities; ``plausible evaluate`` scores a classifier against a saved
aggregation; ``plausible next`` says which items (and annotators) to annotate next;
``plausible report`` writes a saved run's report, one HTML page; ``plausible models`` lists
the models.

Examples::

    plausible aggregate labels.csv -o plausibilities.csv          # task, worker, label
    plausible aggregate votes.csv --model dirichlet --reliability 3 -o out.csv
    plausible aggregate rankings.json --reliability 20 --save run.nc
    plausible aggregate ratings.csv --threshold 50 -o out.csv      # item, worker, score
    plausible aggregate ratings.csv --threshold 50 --model censored-normal-inverse-gamma \
        --scale 0 100 --resolution 1 -o out.csv                     # a 0..100 integer slider
    plausible aggregate --dataset cifar10h -o cifar10h.csv         # public data (PLAUSIBLE_DATA)
    plausible evaluate run.nc predictions.csv -o metrics.csv
    plausible next labels.csv --model dawid-skene --budget 50 -o batch.csv
    plausible aggregate labels.csv --save run.nc --report report.html
    plausible report run.nc -o report.html

Every error exits with status 2 and one line naming the file, column, item or option; no
output file is written unless the run succeeds (written to a temporary file, then renamed),
and an existing one is replaced only with ``--force``.
"""

from __future__ import annotations

import argparse
import contextlib
import inspect
import logging
import os
import shutil
import sys
import tempfile
import time
import warnings
from pathlib import Path

TOOL_FORMATS = ("label-studio", "mturk", "toloka", "prodigy", "sagemaker")
"""The annotation tools whose exports ``--format`` reads (:mod:`plausible.data.tool_exports`;
named here so that ``--help`` imports nothing heavy)."""

INPUT_HELP = """\
input formats (recognised from the file's columns, or named with --format):
  long       one row per annotation: item, annotator, label columns; crowd-kit's
             task, worker, label by default, others named with --item, --annotator, --label
  ratings    long, with a numeric score column (--score) instead of a label
  rankings   long, with a rank column (lower is better, equal ranks tied), or a .json file
             of "selectors": items -> readers -> ordered blocks of tied class ids
  votes      wide: one row per item, an 'item' column and one integer count column per class
files: .csv, .tsv, .parquet, .json, .npy (an integer item x class vote array).
annotation tools' exports (--format NAME; --label names the tag or answer field to read):
  label-studio  Label Studio's JSON or JSON-MIN export of a Choices, Rating or Ranker tag
  mturk         a Mechanical Turk batch results CSV (HITId, WorkerId, Answer.* columns)
  toloka        a Toloka results TSV (ASSIGNMENT:worker_id, ASSIGNMENT:task_id, OUTPUT:*)
  prodigy       a Prodigy db-out JSONL file (choice or classification tasks)
  sagemaker     a SageMaker Ground Truth job's output folder (its worker responses)

models (plausible models lists them): by default dirichlet for votes, prirn for rankings,
learned-prior-dawid-skene for labels (ordered-probit with --ordinal), normal-inverse-gamma
for ratings (needs --threshold; censored-normal-inverse-gamma for a slider's floor and
ceiling, with --scale and --resolution), multi-label for label sets, noisy-bradley-terry for
comparisons; --model auto fits candidates and keeps PSIS-LOO's choice. Reliability: trust in
the annotators (higher = more certain).

"""

AGGREGATE_OUTPUT = """
output (-o, a .csv, .tsv, .parquet or .json file, checked before any work): one row per item
with
  item                   the item's id as in the input
  top_class              the class most often the most plausible over the posterior draws
  probability_top_class  its posterior mean plausibility
  certainty_top1         the share of draws in which top_class is the most plausible class
  plausibility_<class>   the posterior mean plausibility of every class
  consensus_score        (ratings) the expected rating of a new rater, on the rating scale
  consensus_q025/_q975   (ratings) its 95% interval
"""

NEXT_OUTPUT = """
output (-o, a .csv, .tsv, .parquet or .json file, checked before any work): the batch, best
first, one row per item
  item                   the item to annotate next
  annotator              (annotator models) who should annotate it
  information_gain       expected bits gained on the item's class by that annotation
  certainty              the item's top-1 certainty now
  expected_certainty     its expected top-1 certainty after the annotation
  certainty_gain         their difference
The gains (and the certainty beside them) are estimated on at most 500 of the run's draws,
thinned, so certainty can differ from aggregate's in its last digits.
"""

REPORT_OUTPUT = """
output (-o, an .html file, checked before any work): one self-contained page (no server, no
network; open it in any browser) with
  Run and convergence    the model, the data's sizes, the draws, and every variable's worst
                         R-hat and ESS, the worst quantities named
  Certainty              the items' top-1 certainty (log scale) and the least certain items
  Annotators             (label models) each annotator's share of labels right with its 90%
                         interval; confusion matrices, sensitivity and specificity, MACE's
                         spammer flags where the model has them
  Next labels            the next --budget annotations by expected information gain
  Predictive checks      the posterior predictive checks as figures, what they miss in words
  Every item             one row per item, sortable and searchable
"""

ERRORS = (ValueError, TypeError, OSError, KeyError, ImportError)  # ImportError: a missing extra


class UsageError(ValueError):
    """A bad option or path, found before any work is done."""


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


def _draws(text: str) -> int | str:
    """``auto`` or a whole number >= 1."""
    if text == "auto":
        return text
    try:
        return _positive_int(text)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(f"expected 'auto' or a whole number >= 1, got {text!r}") from None


def _number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None


def _positive_float(text: str) -> float:
    value = _number(text)
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a finite number > 0, got {text}")
    return value


def _probability(text: str) -> float:
    value = _number(text)
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"must lie in (0, 1], got {text}")
    return value


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

    path.parent.mkdir(parents=True, exist_ok=True)
    suffix = path.suffix.lower()
    if suffix == ".parquet":
        write_atomic(path, lambda tmp: frame.to_parquet(tmp, index=False))
    elif suffix == ".json":
        write_atomic(path, lambda tmp: frame.to_json(tmp, orient="records", indent=1))
    else:
        sep = "\t" if suffix == ".tsv" else ","
        write_atomic(path, lambda tmp: frame.to_csv(tmp, index=False, sep=sep))


def load_annotations(args):
    """``(annotations, description)`` from the file or the built-in data set."""
    from plausible import data
    from plausible.data import tables, tool_exports

    if args.dataset == "toy":
        return data.simulate_toy(seed=args.seed).votes, "simulated toy data (3 classes)"
    if args.dataset == "cifar10h":
        return data.load_cifar10h(args.data_home), "CIFAR-10H human votes"
    if args.dataset == "dermatology":
        return data.load_dermatology(args.data_home).rankings, "dermatology rankings"
    if args.format in tool_exports.READERS:  # an annotation tool's export
        return tool_exports.read_export(args.format, args.annotations, args.label), \
            f"{args.annotations} ({args.format} export)"
    columns = {role: getattr(args, role) for role in ("item", "annotator", "label", "score",
                                                      "rank")}
    return tables.read_annotations(args.annotations, format=args.format, **columns), \
        str(args.annotations)


def declared_classes(args, annotations):
    """The annotations with ``--classes`` declared (labels only; the names converted to the
    labels' numbers where the labels are numbers); with ``--ordinal``, text grades need
    ``--classes`` for their order."""
    import numpy as np

    from plausible.data import Labels

    if args.classes is None and not args.ordinal:
        return annotations
    if not isinstance(annotations, Labels):
        raise UsageError(f"--classes and --ordinal apply to labels; the annotations are "
                         f"{type(annotations).__name__.lower()}")
    if args.classes is None:
        if not np.issubdtype(annotations.classes.dtype, np.number):
            shown = ", ".join(map(str, annotations.classes[:5]))
            raise UsageError(f"--ordinal: the grades are text ({shown}); give their order with "
                             "--classes")
        return annotations
    names = [name.strip() for name in args.classes.split(",")]
    if np.issubdtype(annotations.classes.dtype, np.number):
        try:
            numbers = [float(name) for name in names]
        except ValueError:
            raise UsageError(f"--classes {args.classes}: the labels are numbers, and "
                             f"{next(n for n in names if not _is_number(n))!r} is not") from None
        names = [int(n) if n.is_integer() else n for n in numbers]
    return annotations.with_classes(names)


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def aggregate(args) -> int:
    """``plausible aggregate``: see the module docstring."""
    output = check_output(args.output, "-o", args.force)
    saved = check_output(args.save, "--save", args.force, TRACE_SUFFIXES)
    args.report = check_output(args.report, "--report", args.force, REPORT_SUFFIXES)
    if args.store is not None and Path(args.store).exists() and not Path(args.store).is_dir():
        raise UsageError(f"--store {args.store} is a file; give a folder (new, or of an earlier "
                         "run to resume)")
    logging.getLogger("pymc").setLevel(logging.WARNING)

    from plausible import aggregation, models

    console = _console()
    from plausible import distributed

    cluster_chain = (bool(args.scheduler or args.workers)
                     and args.model not in (None, aggregation.AUTO)
                     and distributed.runs_on_cluster(args.model))
    if cluster_chain:
        if args.classes is not None or args.ordinal:
            raise UsageError("--classes and --ordinal are not read by a chain on the cluster "
                             "(its workers read the labels); leave them out")
        return _cluster_chain(args, console, output, saved)
    annotations, description = load_annotations(args)
    annotations = declared_classes(args, annotations)
    init = load_init(args)
    name = args.model or (init.model if init is not None
                          else aggregation.default_model(annotations, ordinal=args.ordinal))
    entry = None if name == aggregation.AUTO else models.entry(name)
    options = model_options(args, name, entry)
    sharded = args.store or args.scheduler or args.workers
    if sharded and entry is None:
        raise UsageError("--store/--scheduler/--workers run one model: name it with --model "
                         "(without it, labels are fitted by every candidate to choose one)")
    if sharded and init is not None:
        raise UsageError("--init continues an in-process run; sharded runs "
                         "(--store/--scheduler/--workers) start afresh")
    if sharded and not entry.item_independent:
        raise UsageError(f"--store/--scheduler/--workers shard items, which needs a model whose "
                         f"items are independent; {name!r} is not (use "
                         f"{', '.join(models.available().query('item_independent').index)}; "
                         "--scheduler/--workers also run the chain of the Dawid-Skene family, "
                         "annotator-beta, glad or su-difficulty over shards, named with --model)")
    known = None if args.gold is None else read_gold(args.gold, annotations, args.item)
    if args.draws is None:  # the default: until converged, or 1000 for shards (exact draws)
        args.draws = 1000 if sharded else "auto"
    if sharded and args.draws == "auto":
        raise UsageError("--draws auto extends chains until they converge, which sharded runs "
                         "(--store/--scheduler/--workers) do not do: pass a number of draws")
    start = time.perf_counter()
    temporary_store = None
    try:
        if sharded:
            result, temporary_store = _sharded(args, aggregation, annotations, name, options,
                                               console)
        else:
            result = aggregation.aggregate(annotations, name, draws=args.draws,
                                           chains=args.chains, seed=args.seed,
                                           max_seconds=args.max_seconds, init=init,
                                           known=known, progressbar=not args.no_progress,
                                           **options)
        frame, checked = _write_results(args, result, output, saved)
    finally:
        if temporary_store is not None:
            shutil.rmtree(temporary_store, ignore_errors=True)
    elapsed = time.perf_counter() - start
    _print_summary(console, args, result, frame, description, elapsed, checked, output, saved)
    return 0


def _write_results(args, result, output, saved):
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


def _cluster_chain(args, console, output, saved) -> int:
    """``plausible aggregate --model <Dawid-Skene family, annotator-beta, GLAD, Su> --workers N`` (or
    ``--scheduler``): one chain per ``--chains`` with the items in shards on the workers
    (:mod:`plausible.distributed.cluster_chain`), checkpointed to ``--store`` when given; a directory
    of Parquet files is read by the workers themselves."""
    from plausible import aggregation, distributed, models

    init = load_init(args)
    if init is not None and init.model != args.model:
        raise UsageError(f"--init {args.init} is a {init.model} run; this is {args.model}: a "
                         "warm start continues the same model")
    if args.draws is None:
        args.draws = "auto"
    name = args.model
    options = model_options(args, name, models.entry(name))
    source = Path(args.annotations) if args.annotations else None
    partitioned = source is not None and source.is_dir()
    if partitioned and (args.check or saved is not None):
        raise UsageError(f"{source} is read by the workers, so this process holds no labels "
                         "to check or save with the trace: drop --check/--save, or give one "
                         "file")
    start = time.perf_counter()
    client = distributed.connect(args.scheduler, workers=args.workers or 2)
    client_workers = client.scheduler_info()["workers"]
    try:
        if partitioned:
            description = f"{source} (partitioned, read by the workers)"
            known = None if args.gold is None else read_gold(args.gold, None, args.item)
            try:
                trace = distributed.sample_partitions(
                    source, name, client=client, draws=args.draws, chains=args.chains,
                    seed=args.seed, item=args.item, annotator=args.annotator, label=args.label,
                    model_kwargs=options, store=args.store, max_seconds=args.max_seconds,
                    init=None if init is None else init.trace, known=known)
            except ValueError as error:
                if str(error).startswith("known:"):  # the gold file's item or class
                    raise UsageError(f"--gold {args.gold}: {str(error)[7:]}") from None
                raise
            result = aggregation.Aggregation(trace=trace, model=name, data=None, options=options)
        else:
            annotations, description = load_annotations(args)
            known = None if args.gold is None else read_gold(args.gold, annotations, args.item)
            result = aggregation.aggregate(annotations, name, draws=args.draws,
                                           chains=args.chains, seed=args.seed, client=client,
                                           store=args.store, max_seconds=args.max_seconds,
                                           init=init, known=known, **options)
    finally:
        client.close()
    frame, checked = _write_results(args, result, output, saved)
    trace = result.trace
    console.print(f"{len(client_workers)} Dask workers; the slowest shard's sweeps "
                  f"{float(trace['sample_stats']['shard_seconds'].sum()):.1f} s of "
                  f"{trace['posterior'].attrs['sampling_seconds']:.1f} s sampling")
    _print_summary(console, args, result, frame, description, time.perf_counter() - start,
                   checked, output, saved)
    return 0


GOLD_CLASS_COLUMNS = ("true_label", "gold", "known", "known_class", "label", "class")
"""The column of a ``--gold`` file that holds the known class (the first present), beside its
item column (``task`` or ``item``, or ``--item``)."""


def read_gold(path, labels, item_column=None):
    """The known classes of ``--gold FILE`` for ``labels``: a table with an item column and
    a class column (:data:`GOLD_CLASS_COLUMNS`), one row per item of known class, as
    :meth:`Labels.with_known` takes them; ``UsageError`` naming the file and row of an item
    the labels do not have, a class outside their classes or an empty cell. ``labels`` None
    (labels the workers read): only the empty cells are checked here."""
    import numpy as np
    import pandas as pd

    from plausible.data import Labels
    from plausible.data.tables import read_table
    from plausible.data.validation import fmt, pick_column

    if labels is not None and not isinstance(labels, Labels):
        raise UsageError(f"--gold gives the true class of some items, for labels; the "
                         f"annotations are {type(labels).__name__.lower()}")
    try:
        frame = read_table(path)
    except (OSError, ValueError) as error:
        raise UsageError(f"--gold {error}") from None
    if not isinstance(frame, pd.DataFrame):
        raise UsageError(f"--gold {path}: expected a table with an item and a class column")
    item = pick_column(frame, "item", item_column)
    column = next((c for c in frame.columns if str(c).lower() in GOLD_CLASS_COLUMNS
                   and c != item), None)
    if item is None or column is None:
        raise UsageError(f"--gold {path}: needs an item column (task or item) and a class "
                         f"column ({', '.join(GOLD_CLASS_COLUMNS)}); the columns are "
                         f"{list(frame.columns)}")
    items, classes = frame[item].to_numpy(), frame[column].to_numpy()
    checks = ((pd.isna(items) | pd.isna(classes), lambda r: "an empty cell"),)
    if labels is not None:
        checks += ((pd.Index(labels.items).get_indexer(items) < 0,
                    lambda r: f"item {fmt(items[r])} has no labels in the annotations"),
                   (pd.Index(labels.classes).get_indexer(classes) < 0,
                    lambda r: f"item {fmt(items[r])}: class {fmt(classes[r])} is not one of the "
                              f"classes ({', '.join(map(str, labels.classes[:20]))})"))
    for bad, message in checks:
        rows = np.flatnonzero(bad)
        if rows.size:
            raise UsageError(f"--gold {path}, line {rows[0] + 2}: {message(rows[0])}")
    return pd.Series(classes, index=items)


def load_init(args):
    """The saved aggregation of ``--init`` (a warm start), or None."""
    if getattr(args, "init", None) is None:
        return None
    path = Path(args.init)
    if path.suffix not in TRACE_SUFFIXES:
        raise UsageError(f"--init {path}: expected a saved aggregation (.nc or .zarr, from "
                         "--save)")
    if not path.exists():
        raise UsageError(f"--init {path}: no such file")
    from plausible import aggregation

    return aggregation.load(path)


def model_options(args, name: str, entry) -> dict:
    """The builder options of the command line's model options (``--threshold``,
    ``--alpha``, ``--reliability``, ``--scale``, ``--resolution``), refused where the model
    takes none, and the model's required options checked. ``entry`` None: ``auto``, which
    takes only ``--reliability`` (its candidates share it)."""
    options = {} if args.threshold is None else {"threshold": args.threshold}
    if args.alpha is not None:
        options["alpha"] = args.alpha
    if args.reliability is not None:
        options["reliability"] = args.reliability
    if args.scale is not None:
        options["scale"] = tuple(args.scale)
    if args.resolution is not None:
        options["resolution"] = args.resolution
    if entry is None:
        extra = [option for option in options if option != "reliability"]
        if extra:
            raise UsageError(f"--{extra[0]} is an option of a named model; without --model (or "
                             "with --model auto) labels are fitted by every candidate model "
                             "to choose one: name the model")
        return options
    accepted = inspect.signature(entry.build).parameters
    for option in ("scale", "resolution"):
        if option in options and option not in accepted:
            raise UsageError(f"--{option} applies to censored-normal-inverse-gamma; model "
                             f"{name!r} takes no {option}")
    missing = [option for option in entry.required if option not in options]
    if missing:
        raise UsageError(f"model {name!r} needs --{missing[0]} ({entry.summary})")
    return options


def next_annotations(args) -> int:
    """``plausible next FILE --budget N``: the next batch of annotations, best first."""
    output = check_output(args.output, "-o", args.force)
    logging.getLogger("pymc").setLevel(logging.WARNING)
    from plausible import active, aggregation, models
    from plausible.data import tables

    source = Path(args.annotations)
    if source.suffix in (".nc", ".zarr"):
        if args.model is not None and source.exists():
            raise UsageError(f"{source} is a saved aggregation; it has its model (drop --model)")
        result = aggregation.load(source)
        description = f"{source} ({result.model} model)"
    else:
        annotations = declared_classes(args, tables.read_annotations(
            source, format=args.format,
            **{role: getattr(args, role) for role in ("item", "annotator", "label", "score",
                                                      "rank")}))
        init = load_init(args)
        name = args.model or (init.model if init is not None else aggregation.default_model(
            annotations, ordinal=args.ordinal))
        options = model_options(args, name, None if name == aggregation.AUTO
                                else models.entry(name))
        result = aggregation.aggregate(annotations, name, draws=args.draws, chains=args.chains,
                                       seed=args.seed, init=init, **options)
        description = f"{source} ({result.model} model)"
    pairs = None
    if args.pairs is not None:
        pairs = tables.read_table(args.pairs)
        if isinstance(pairs, list) or not {"item", "annotator"} <= set(pairs.columns):
            raise UsageError(f"--pairs {args.pairs}: expected a table with columns item, "
                             "annotator (who can label what)")
    by_label, by_pair = result.format == "label_sets", result.format == "comparisons"
    batch = result.next_items(args.budget, threshold=args.certainty, strategy=args.strategy,
                              min_gain=args.min_gain, pairs=pairs, seed=args.seed)
    from plausible.diagnostics import convergence_report

    report = convergence_report(result.trace)
    if output is not None:
        write_table(batch, output)
    if by_pair:  # pairs are planned on the worths' order; no item is ever settled
        print(f"{description}: {result.data.n_items} items compared")
    else:
        status = (active.settled_label_sets if by_label else active.settled)(result.trace,
                                                                             args.certainty)
        rule = "every label's certainty" if by_label else "top-1 certainty"
        print(f"{description}: {len(status)} items, {int(status['settled'].sum())} settled "
              f"({rule} >= {args.certainty:g})")
    print(report.text)
    if batch.empty:
        print("stop: every item is settled or no annotation is expected to gain "
              f"{args.min_gain:g} bits")
    else:
        used, total = batch.attrs.get("draws"), batch.attrs.get("of_draws")
        thinned = (f"; gains and certainty on {used} of the {total} draws, thinned"
                   if used is not None and used < total else "")
        what = ("comparison(s), each item in at most one pair" if by_pair
                else "annotation(s), one per item")
        print(f"next {len(batch)} {what} ({args.strategy}{thinned}):")
        print(batch.to_string(index=False, float_format=lambda v: f"{v:.4f}"))
    if output is not None:
        print(f"batch written to {output}")
    return 0


def _console():
    """A rich console that, when stdout is a closed pipe (``| head``), stops printing quietly
    instead of exiting with status 1 (rich's default): the output files are written."""
    from rich.console import Console

    class PipeConsole(Console):
        def on_broken_pipe(self) -> None:
            self.quiet = True
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())

    return PipeConsole(stderr=False, soft_wrap=True)


def _print_summary(console, args, result, frame, description, elapsed, checked, output, saved):
    from rich.table import Table

    from plausible import aggregation

    if result.selection is not None:
        others = [name for name in result.selection.stack if name != result.model]
        stacked = f", stacked with {', '.join(others)}" if others else ""
        chosen = f" (chosen by PSIS-LOO{stacked})"
    elif args.model is not None:
        chosen = ""
    else:
        chosen = " (--ordinal)" if getattr(args, "ordinal", False) else " (default for the format)"
    sizes = result.sizes
    console.print(f"[bold]{description}[/]: {sizes['item']} items, {sizes['class']} classes; "
                  f"{result.model} model{chosen}; {args.chains} chains x "
                  f"{result.trace.posterior.sizes['draw']} draws"
                  + (f" (--draws auto: {result.trace.posterior.attrs.get('draws_stopped_by', '')})"
                     if args.draws == "auto" else ""))
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


def _sharded(args, aggregation, annotations, name, options, console):
    """Sample shards of items (Dask workers with --workers/--scheduler, else in-process) into
    --store, or a temporary folder (removed here on failure); returns the result and the
    temporary folder to remove once the result is written (None with --store)."""
    import tempfile

    from rich.progress import Progress

    from plausible import distributed, models

    # as aggregate does: labels counted into votes for a votes model
    annotations = aggregation.data_for_model(annotations, models.entry(name))
    store = args.store or tempfile.mkdtemp(prefix="plausible-shards-")
    client = None
    try:
        if args.scheduler or args.workers:
            client = distributed.connect(args.scheduler, workers=args.workers or 2)
        with Progress(console=console, disable=args.no_progress, transient=True) as progress:
            task = progress.add_task("shards", total=None)
            report = distributed.run_shards(
                annotations, store, model=name, model_kwargs=options, shard_size=args.shard_size,
                draws=args.draws, chains=args.chains, seed=args.seed, client=client,
                progress=lambda done, total: progress.update(task, completed=done, total=total))
        trace = distributed.open_trace(store)
        result = aggregation.Aggregation(trace=trace, model=name, data=annotations,
                                         default=args.model is None, options=options)
        result.labels()  # computed while the store exists
        result.plausibility.load()
    except BaseException:
        if args.store is None:
            shutil.rmtree(store, ignore_errors=True)
        raise
    finally:
        if client is not None:
            client.close()
    retried = f", retried {sorted(report.retried)}" if report.retried else ""
    kept = f" in {store}" if args.store else ""
    console.print(f"shards: {report.n_shards} ({len(report.skipped)} already complete{kept}, "
                  f"{len(report.completed)} sampled{retried})")
    return result, (None if args.store else store)


def evaluate(args) -> int:
    """``plausible evaluate RUN PREDICTIONS``: UA metrics of a classifier against a saved
    aggregation."""
    output = check_output(args.output, "-o", args.force)
    from plausible import aggregation
    from plausible.data import tables

    run = Path(args.run)
    if not run.exists():
        raise FileNotFoundError(f"{run}: no such file (save an aggregation with "
                                "plausible aggregate --save RUN.nc)")
    result = aggregation.load(run)
    content = tables.read_table(args.predictions)
    if isinstance(content, list):
        raise UsageError(f"{args.predictions}: expected a table of predictions or scores")
    predictions = _predictions(content, args, result)
    metrics = result.evaluate(predictions, k=args.k)
    frame = metrics.reset_index()
    if output is not None:
        write_table(frame, output)
    print(frame.to_string(index=False))
    if output is not None:
        print(f"metrics written to {output}")
    return 0


def report(args) -> int:
    """``plausible report RUN -o report.html``: the report of a saved aggregation."""
    output = check_output(args.output, "-o", args.force, REPORT_SUFFIXES)
    from plausible import aggregation

    run = Path(args.run)
    if not run.exists():
        raise FileNotFoundError(f"{run}: no such file (save an aggregation with "
                                "plausible aggregate --save RUN.nc)")
    result = aggregation.load(run)
    with report_progress(args.no_progress) as progress:
        result.report(output, budget=args.budget, threshold=args.certainty, draws=args.draws,
                      seed=args.seed, progress=progress)
    print(f"report of {run} ({result.model} model) written to {output}")
    return 0


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


def _predictions(frame, args, result):
    """A Series of predicted classes or a DataFrame of scores, indexed by item."""
    from plausible.data.tables import ROLES

    item = args.item or next((c for c in ROLES["item"] if c in frame.columns), None)
    if item is None:
        raise UsageError(f"{args.predictions}: no item column (item or task; or --item); "
                         f"columns are {list(frame.columns)}")
    if frame[item].duplicated().any():
        raise UsageError(f"{args.predictions}: item {frame[item][frame[item].duplicated()].iloc[0]!r} "
                         "appears twice")
    frame = frame.set_index(item)
    column = args.prediction or next((c for c in ("prediction", "label") if c in frame.columns),
                                     None)
    if column is not None:
        if column not in frame.columns:
            raise UsageError(f"{args.predictions}: no column {column!r}; columns are "
                             f"{list(frame.columns)}")
        return frame[column]
    classes = result.plausibility["class"].values
    by_name = {str(c): c for c in frame.columns}
    missing = [c for c in classes if str(c) not in by_name]
    if missing:
        raise UsageError(f"{args.predictions}: no 'prediction' column and no score column for "
                         f"class {missing[0]!r}; columns are {list(frame.columns)}")
    scores = frame[[by_name[str(c)] for c in classes]]
    scores.columns = classes
    return scores


def list_models(args) -> int:
    from plausible import models

    print(models.available().to_string())
    return 0


class Parser(argparse.ArgumentParser):
    """Usage errors in one line (``plausible: error: ...``), exit status 2."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _add_input_options(command) -> None:
    """The options that read an annotation file and set the model's common options:
    ``--format``, the column names, ``--reliability`` and ``--alpha``."""
    command.add_argument("--format", choices=["long", "votes", "rankings", "labels", "ratings",
                                              "label_sets", "comparisons", *TOOL_FORMATS],
                         default=None, help="input format (default: recognised from the "
                         "columns); an annotation tool's export by the tool's name")
    for role in ("item", "annotator", "label", "score", "rank"):
        command.add_argument(f"--{role}", default=None, metavar="COLUMN",
                             help=f"the {role} column, when not named as by default")
    command.add_argument("--classes", default=None, metavar="A,B,...",
                         help="labels: the classes, comma-separated, in their order (an ordinal "
                         "scale's grades from lowest to highest); a label outside them is an "
                         "error")
    command.add_argument("--ordinal", action="store_true",
                         help="labels are ordered grades (numbers, or in the order of "
                         "--classes): the default model becomes ordered-probit")
    command.add_argument("--reliability", type=_positive_float, default=None,
                         help="trust in the annotators, gamma > 0 (default: the model's)")
    command.add_argument("--alpha", type=_positive_float, default=None,
                         help="prior count per class of the Dirichlet and PrIRN models")


def build_parser() -> argparse.ArgumentParser:
    from plausible import __version__

    parser = Parser(
        prog="plausible",
        description="Bayesian aggregation of disagreeing annotations: posterior plausibilities "
        "and uncertainty-adjusted metrics.")
    parser.add_argument("--version", action="version", version=f"plausible {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    agg = commands.add_parser(
        "aggregate", aliases=["certainty"],
        help="fit an aggregation model to annotations; per-item plausibilities and certainty",
        description="Sample the posterior plausibilities of every item and report how certain "
        "the most plausible class is given the annotators' disagreement.",
        epilog=INPUT_HELP + AGGREGATE_OUTPUT, formatter_class=argparse.RawDescriptionHelpFormatter)
    source = agg.add_mutually_exclusive_group(required=True)
    source.add_argument("annotations", nargs="?", help="annotation file (see input formats)")
    source.add_argument("--dataset", choices=["toy", "cifar10h", "dermatology"],
                        help="a built-in data set instead of a file (toy needs no download)")
    agg.add_argument("--model", default=None, help="registry name, or auto: the candidate "
                     "models' choice by PSIS-LOO, stacked with those of the same meaning "
                     "(default: by format, as listed below)")
    _add_input_options(agg)
    agg.add_argument("--threshold", type=float, default=None,
                     help="ratings: the score above which an item is positive (required)")
    agg.add_argument("--scale", type=float, nargs=2, metavar=("LOW", "HIGH"), default=None,
                     help="ratings: the scale's ends, where censored-normal-inverse-gamma "
                     "censors")
    agg.add_argument("--resolution", type=_positive_float, default=None,
                     help="ratings: recorded to this step (1 for an integer slider), for "
                     "censored-normal-inverse-gamma")
    agg.add_argument("--draws", type=_draws, default=None,
                     help="draws per chain, or 'auto' (the default; 1000 for shards of "
                     "item-independent models): "
                     "extend the chains until they converge (R-hat <= 1.01, ESS >= 100 per "
                     "chain) or --max-seconds pass")
    agg.add_argument("--max-seconds", type=_positive_float, default=None,
                     help="with --draws auto: stop extending after this many seconds")
    agg.add_argument("--chains", type=_positive_int, default=4, help="number of chains (4)")
    agg.add_argument("--seed", type=int, default=0, help="random seed; same seed, same draws (0)")
    agg.add_argument("--certainty-threshold", dest="threshold_certainty", type=float,
                     default=0.99, help="count items whose certainty is below this (0.99)")
    agg.add_argument("--show", type=int, default=10, help="how many least-certain items to list")
    agg.add_argument("--check", action="store_true",
                     help="also run the model's posterior predictive check")
    agg.add_argument("-o", "--output",
                     help="write one row per item to this .csv/.tsv/.parquet/.json")
    agg.add_argument("--save", help="save the trace (.nc or .zarr) for plausible evaluate "
                     "or --init")
    agg.add_argument("--report", metavar="HTML", default=None,
                     help="also write the run's report, one self-contained .html page (as "
                     "plausible report does)")
    agg.add_argument("--gold", metavar="FILE", default=None,
                     help="the true class of some items (gold questions, an expert's "
                     "adjudication): a table with an item column (task or item) and a class "
                     "column (true_label, gold, known, label or class); label models clamp "
                     "those items' classes")
    agg.add_argument("--init", metavar="RUN", default=None,
                     help="warm start (Dawid-Skene family; with --workers/--scheduler also "
                     "annotator-beta, glad, su-difficulty): continue the chains of a saved run "
                     "(--save) on a subset of these annotations after a short warm-up")
    agg.add_argument("--force", action="store_true", help="overwrite existing output files")
    agg.add_argument("--data-home", default=None,
                     help="folder of the public data sets (default: $PLAUSIBLE_DATA)")
    agg.add_argument("--no-progress", action="store_true", help="hide progress bars")
    scale = agg.add_argument_group(
        "scale out", "models with independent items: shard items, sample shards in-process or "
        "on Dask workers, keep the draws in a Zarr store; a re-run with the same --store "
        "resumes, skipping finished shards. The Dawid-Skene family, annotator-beta, glad and "
        "su-difficulty (--model) with --workers "
        "or --scheduler: one chain with its items in shards on the workers, checkpointed to "
        "--store every 200 sweeps; a re-run with the same --store resumes from the last "
        "checkpoint with the draws of an uninterrupted run")
    scale.add_argument("--store", default=None,
                       help="folder of the sharded Zarr trace or of the chain's checkpoints, "
                       "kept (default: a temporary trace, removed after the run; no "
                       "checkpoints)")
    scale.add_argument("--scheduler", default=None, metavar="ADDRESS",
                       help="Dask scheduler address, e.g. tcp://host:8786")
    scale.add_argument("--workers", type=_positive_int, default=None, metavar="N",
                       help="start a local Dask cluster of N workers (without --scheduler)")
    scale.add_argument("--shard-size", type=_positive_int, default=10_000,
                       help="items per shard (10000)")
    agg.set_defaults(handler=aggregate)

    ev = commands.add_parser(
        "evaluate", help="UA metrics of a classifier against a saved aggregation",
        description="Uncertainty-adjusted accuracy of predictions (a 'prediction' column) or "
        "scores (one column per class) against the posterior of a saved aggregation "
        "(plausible aggregate --save RUN.nc); for a model whose plausibility is the posterior "
        "of one true class, the expected accuracy against that class (rows accuracy, "
        "top<k>_accuracy).")
    ev.add_argument("run", help="a saved aggregation (.nc or .zarr)")
    ev.add_argument("predictions", help="table with an item column and a prediction column or "
                    "one score column per class")
    ev.add_argument("--item", default=None, metavar="COLUMN", help="the item column")
    ev.add_argument("--prediction", default=None, metavar="COLUMN",
                    help="the predicted-class column (default: prediction or label)")
    ev.add_argument("--k", type=_positive_int, nargs="+", default=[1, 2, 3],
                    help="top-k depths for scores (1 2 3)")
    ev.add_argument("-o", "--output", help="write the metrics to this .csv/.tsv/.parquet/.json")
    ev.add_argument("--force", action="store_true", help="overwrite an existing output file")
    ev.set_defaults(handler=evaluate)

    nxt = commands.add_parser(
        "next", help="which items (and annotators) to annotate next, under a budget",
        description="Fit the model (or load a saved aggregation, .nc/.zarr) and list the next "
        "batch of annotations, one per item, by expected information gain on the item's class; "
        "items whose top-1 certainty reaches --certainty are settled and left out. An empty "
        "batch means stop.", epilog=INPUT_HELP + NEXT_OUTPUT,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    nxt.add_argument("annotations", help="annotation file (see input formats) or a saved "
                     "aggregation (.nc, .zarr)")
    nxt.add_argument("--budget", type=_positive_int, required=True,
                     help="annotations in the batch (at most one per item)")
    nxt.add_argument("--model", default=None, help="registry name (default: by format)")
    nxt.add_argument("--strategy", choices=["information", "certainty", "uncertainty", "random"],
                     default="information", help="how candidates are ranked (information)")
    nxt.add_argument("--certainty", type=_probability, default=0.95,
                     help="an item is settled at this top-1 certainty (0.95)")
    nxt.add_argument("--min-gain", type=float, default=1e-3,
                     help="leave out annotations expected to gain fewer bits (0.001)")
    nxt.add_argument("--pairs", default=None, metavar="FILE",
                     help="annotator models: table of item, annotator pairs that can be asked "
                     "(default: every pair without a label)")
    _add_input_options(nxt)
    nxt.add_argument("--draws", type=_positive_int, default=1000, help="draws per chain (1000)")
    nxt.add_argument("--chains", type=_positive_int, default=4, help="number of chains (4)")
    nxt.add_argument("--seed", type=int, default=0, help="random seed (0)")
    nxt.add_argument("--init", metavar="RUN", default=None,
                     help="warm start (Dawid-Skene family): continue the chains of a saved run "
                     "on a subset of these annotations, as an annotate-refit loop does")
    nxt.add_argument("-o", "--output", help="write the batch to this .csv/.tsv/.parquet/.json")
    nxt.add_argument("--force", action="store_true", help="overwrite an existing output file")
    nxt.set_defaults(handler=next_annotations, threshold=None, scale=None, resolution=None)

    rep = commands.add_parser(
        "report", help="a saved run's report: one self-contained HTML page",
        description="Read a saved aggregation (plausible aggregate --save RUN.nc) and write its "
        "report: convergence, certainty, annotators, the next items to label, the posterior "
        "predictive checks and every item, in one HTML file that needs no server or network.",
        epilog=REPORT_OUTPUT, formatter_class=argparse.RawDescriptionHelpFormatter)
    rep.add_argument("run", help="a saved aggregation (.nc or .zarr)")
    rep.add_argument("-o", "--output", required=True, help="the report, an .html file")
    rep.add_argument("--budget", type=_positive_int, default=20,
                     help="how many next annotations to propose (20)")
    rep.add_argument("--certainty", type=_probability, default=0.95,
                     help="an item is settled at this top-1 certainty (0.95)")
    rep.add_argument("--draws", type=_positive_int, default=200,
                     help="replicated data sets of the predictive checks (200)")
    rep.add_argument("--seed", type=int, default=0, help="random seed of the checks (0)")
    rep.add_argument("--force", action="store_true", help="overwrite an existing output file")
    rep.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    rep.set_defaults(handler=report)

    ls = commands.add_parser("models", help="list the aggregation models")
    ls.set_defaults(handler=list_models)
    return parser


def _one_line(error: BaseException) -> str:
    text = str(error) if str(error) else type(error).__name__
    if isinstance(error, KeyError):
        text = f"missing {text}"
    return " ".join(text.split())


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """A warning as the command line says it: one line, no source location."""
    print(f"plausible: warning: {_one_line(message)}", file=sys.stderr)


def main(argv=None) -> int:
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as stop:  # --help, --version, or a usage error (already printed)
        return stop.code
    try:
        with warnings.catch_warnings():
            warnings.showwarning = _show_warning
            code = args.handler(args)
        sys.stdout.flush()  # a closed pipe shows here, not at exit
        return code
    except BrokenPipeError:  # e.g. | head: the files are written; stop printing quietly
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        print("plausible: interrupted; no output written", file=sys.stderr)
        return 130
    except ERRORS as error:
        if os.environ.get("PLAUSIBLE_DEBUG"):
            raise
        print(f"plausible: error: {_one_line(error)}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
