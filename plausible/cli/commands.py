"""One function a subcommand: ``plausible aggregate``, ``evaluate``, ``next``, ``report`` and
``models``, each reading its inputs (:mod:`plausible.cli.inputs`), running and writing its
outputs (:mod:`plausible.cli.output`); an error is raised, and :func:`plausible.cli.main`
says it in one line."""

from __future__ import annotations

import logging
import time
from pathlib import Path

from plausible.cli.inputs import (declared_classes, load_annotations, load_init, model_options,
                                  read_classifier_prior, read_gold)
from plausible.cli.output import (REPORT_SUFFIXES, TRACE_SUFFIXES, check_output,
                                  pipe_console, print_summary, report_progress, write_results,
                                  write_table)
from plausible.cli.parser import UsageError


def aggregate(args) -> int:
    """``plausible aggregate``: read the annotations, fit them with
    :func:`plausible.aggregate` (in this process, in shards or on a cluster, as it decides)
    and write what was asked."""
    output = check_output(args.output, "-o", args.force)
    saved = check_output(args.save, "--save", args.force, TRACE_SUFFIXES)
    args.report = check_output(args.report, "--report", args.force, REPORT_SUFFIXES)
    if args.store is not None and Path(args.store).exists() and not Path(args.store).is_dir():
        raise UsageError(f"--store {args.store} is a file; give a folder (new, or of an earlier "
                         "run to resume)")
    logging.getLogger("pymc").setLevel(logging.WARNING)

    from plausible import aggregation, models

    if (args.store or args.scheduler or args.workers) and args.model == aggregation.AUTO:
        raise UsageError("--store/--scheduler/--workers run one model: name it with --model "
                         "(--model auto fits every candidate in this process)")
    console = pipe_console()
    annotations, description = load_annotations(args)
    partitioned = isinstance(annotations, Path)
    if partitioned:
        if args.model is None:
            raise UsageError(f"{annotations} is a partitioned dataset, read by the shards of a "
                             "model's chain: name the model with --model")
        if args.classes is not None or args.ordinal:
            raise UsageError(f"--classes and --ordinal are not read by the shards that read "
                             f"{annotations}; leave them out")
        if args.check or saved is not None:
            raise UsageError(f"{annotations} is read by the shards, so this process holds no "
                             "labels to check or save with the trace: drop --check/--save, or "
                             "give one file")
    else:
        annotations = declared_classes(args, annotations)
    prior = read_classifier_prior(args, annotations)
    init = load_init(args)
    name = args.model or aggregation.default_model(annotations, ordinal=args.ordinal, init=init,
                                                   predictions=prior is not None)
    options = model_options(args, name, None if name == aggregation.AUTO else models.entry(name))
    known = (None if args.gold is None else
             read_gold(args.gold, None if partitioned else annotations, args.item))
    start = time.perf_counter()
    try:
        result = aggregation.aggregate(
            annotations, args.model, draws=args.draws, chains=args.chains, seed=args.seed,
            max_seconds=args.max_seconds, item=args.item, annotator=args.annotator,
            label=args.label, init=init, known=known, client=args.scheduler,
            workers=None if args.scheduler else args.workers, store=args.store,
            shard_size=args.shard_size, ordinal=args.ordinal,
            progressbar=not args.no_progress, **options,
            **({} if prior is None else {"predictions": prior}))
    except ValueError as error:
        if str(error).startswith("known:"):  # a --gold item or class the shards' files lack
            raise UsageError(f"--gold {args.gold}: {str(error)[7:]}") from None
        raise
    frame, checked = write_results(args, result, output, saved)
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
        name = args.model or aggregation.default_model(annotations, ordinal=args.ordinal,
                                                       init=init)
        options = model_options(args, name, None if name == aggregation.AUTO
                                else models.entry(name))
        result = aggregation.aggregate(annotations, args.model, draws=args.draws,
                                       chains=args.chains, seed=args.seed, init=init,
                                       ordinal=args.ordinal, **options)
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


def evaluate(args) -> int:
    """``plausible evaluate RUN PREDICTIONS``: UA metrics of a classifier against a saved
    aggregation."""
    output = check_output(args.output, "-o", args.force)
    from plausible import aggregation
    from plausible.data.predictions import read_predictions

    run = Path(args.run)
    if not run.exists():
        raise FileNotFoundError(f"{run}: no such file (save an aggregation with "
                                "plausible aggregate --save RUN.nc)")
    result = aggregation.load(run)
    predictions = read_predictions(
        args.predictions, result.plausibility["item"].values,
        result.plausibility["class"].values, item=args.item, prediction=args.prediction,
        sets=result.format == "label_sets")
    metrics = result.evaluate(predictions.for_evaluate(), k=args.k)
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
