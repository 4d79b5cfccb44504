"""One function a subcommand: ``plausible aggregate``, ``evaluate``, ``next``, ``report`` and
``models``, each reading its inputs (:mod:`plausible.cli.inputs`), running and writing its
outputs (:mod:`plausible.cli.output`); an error is raised, and :func:`plausible.cli.main`
says it in one line."""

from __future__ import annotations

import logging
import shutil
import time
from pathlib import Path

from plausible.cli.inputs import (declared_classes, load_annotations, load_init, model_options,
                                  read_gold, read_predictions)
from plausible.cli.output import (REPORT_SUFFIXES, TRACE_SUFFIXES, check_output,
                                  pipe_console, print_summary, report_progress, write_results,
                                  write_table)
from plausible.cli.parser import UsageError
from plausible.inference.draws import EXTENDED, SHARDS, resolve_draws

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

    console = pipe_console()
    from plausible import distributed_gibbs

    cluster_chain = (bool(args.scheduler or args.workers)
                     and args.model not in (None, aggregation.AUTO)
                     and distributed_gibbs.runs_on_cluster(args.model))
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
    args.draws, _ = resolve_draws(args.draws, route=SHARDS if sharded else EXTENDED)
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
        frame, checked = write_results(args, result, output, saved)
    finally:
        if temporary_store is not None:
            shutil.rmtree(temporary_store, ignore_errors=True)
    elapsed = time.perf_counter() - start
    print_summary(console, args, result, frame, description, elapsed, checked, output, saved)
    return 0


def _cluster_chain(args, console, output, saved) -> int:
    """``plausible aggregate --model <Dawid-Skene family, annotator-beta, GLAD, Su> --workers N`` (or
    ``--scheduler``): one chain per ``--chains`` with the items in shards on the workers
    (:mod:`plausible.distributed_gibbs`), checkpointed to ``--store`` when given; a directory
    of Parquet files is read by the workers themselves."""
    from plausible import aggregation, distributed, distributed_gibbs, models

    init = load_init(args)
    if init is not None and init.model != args.model:
        raise UsageError(f"--init {args.init} is a {init.model} run; this is {args.model}: a "
                         "warm start continues the same model")
    args.draws, _ = resolve_draws(args.draws)
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
                trace = distributed_gibbs.sample_partitions(
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
    frame, checked = write_results(args, result, output, saved)
    trace = result.trace
    console.print(f"{len(client_workers)} Dask workers; the slowest shard's sweeps "
                  f"{float(trace['sample_stats']['shard_seconds'].sum()):.1f} s of "
                  f"{trace['posterior'].attrs['sampling_seconds']:.1f} s sampling")
    print_summary(console, args, result, frame, description, time.perf_counter() - start,
                   checked, output, saved)
    return 0


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
    predictions = read_predictions(content, args, result)
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


def list_models(args) -> int:
    from plausible import models

    print(models.available().to_string())
    return 0
