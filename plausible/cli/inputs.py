"""What the command line reads: annotation files and the built-in data sets
(:func:`load_annotations`), ``--classes`` (:func:`declared_classes`), ``--gold``
(:func:`read_gold`), ``--init`` (:func:`load_init`), the model's options
(:func:`model_options`) and a classifier's probabilities per class
(:func:`read_classifier_prior`)."""

from __future__ import annotations

import inspect
from pathlib import Path

from plausible.cli.output import TRACE_SUFFIXES
from plausible.cli.parser import UsageError, models_taking


def load_annotations(args):
    """``(annotations, description)`` from the file or the built-in data set; for a folder
    of Parquet files (a partitioned dataset, read by the shards of the model's chain), its
    path."""
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
    if Path(args.annotations).is_dir():
        readers = "workers" if args.scheduler or args.workers else "shards"
        return Path(args.annotations), f"{args.annotations} (partitioned, read by the {readers})"
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
            raise UsageError(f"--{option} applies to {', '.join(models_taking(option))}; "
                             f"model {name!r} takes no {option}")
    missing = [option for option in entry.required if option not in options]
    if missing:
        raise UsageError(f"model {name!r} needs --{missing[0]} ({entry.summary})")
    return options


def read_classifier_prior(args, annotations):
    """``--predictions FILE``: a classifier's probabilities per class for the annotations'
    items and classes (:func:`plausible.data.predictions.read_predictions` with
    ``probabilities=True``), float64 ``(item, class)`` in their order, or None; a bad file is
    a ``UsageError`` naming it, raised before any fit."""
    if getattr(args, "predictions", None) is None:
        return None
    from plausible.data.predictions import read_predictions

    if isinstance(annotations, Path):
        raise UsageError(f"--predictions {args.predictions}: {annotations} is read by the "
                         "shards, so this process holds no items to align the predictions to; "
                         "give one file")
    from plausible.data import Comparisons

    classes = getattr(annotations, "classes", None)
    if classes is None or isinstance(annotations, Comparisons):
        raise UsageError(f"--predictions gives a classifier's probabilities per class; the "
                         f"annotations are {type(annotations).__name__.lower()}, without classes")
    try:
        return read_predictions(args.predictions, annotations.items, classes,
                                probabilities=True).values
    except (OSError, ValueError) as error:
        raise UsageError(f"--predictions {error}") from None
