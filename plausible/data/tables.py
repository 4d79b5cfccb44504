"""Annotation tables and files to containers: the one reader behind ``pl.aggregate`` and the
command line.

A table is read in one of four formats, named as the registry names them
(:data:`FORMATS`); with ``format=None`` it is recognised from its column names:

* **labels** (long): one row per annotation, columns item, annotator, label — crowd-kit's
  ``task, worker, label`` are the default names, ``item, annotator, label`` also work, any
  others are named with ``item=``, ``annotator=``, ``label=`` -> :class:`Labels`;
* **ratings** (long): item, annotator and a numeric ``score`` column -> :class:`Ratings`;
* **rankings** (long): item, annotator (the reader), label and a ``rank`` column (lower is
  better, equal ranks tied) -> :class:`Rankings`; or a JSON file in the "selectors" format
  (items -> readers -> ordered blocks of tied class ids);
* **votes** (wide): one row per item, one integer column per class holding vote counts; the
  items are named by an ``item`` (or ``task``) column, by ``item=``, or by the frame's index
  (a ``pd.crosstab``) -> :class:`Votes`.
* **comparisons** (long): crowd-kit's pairwise table, a ``left`` and a ``right`` item, the
  picked one in ``label`` and the annotator in ``worker`` (or ``annotator``) ->
  :class:`Comparisons`;
* **label_sets**: multi-label sets, any subset of the classes per (item, annotator). Wide:
  item and annotator columns and one 0/1 column per label, recognised from the columns;
  long: ``task, worker, label`` with one row per label a pair carries (an empty label: the
  empty set), the same columns as labels, so it is read as label sets only when named
  (``format="label_sets"``) -> :class:`LabelSets`.

A table whose columns name some long-format roles but not all of them, or that has
non-numeric columns besides the item ids, is refused with a message naming its columns —
never read as counts. Files: ``.csv``, ``.tsv``/``.tab``, ``.parquet`` (a file, or a
directory of Parquet files: a partitioned dataset), ``.json`` (records, or selectors for
rankings), ``.npy`` (an integer ``(item, class)`` vote array). Text files are read as strings
and a column becomes integers only if every value round-trips (``"007"`` stays a string), so
ids and class names come out as they were written. Text and Parquet files are read through
Arrow, each text column dictionary-encoded (:mod:`plausible.data.arrow_tables`: one Python
object per distinct id, not per row).
"""

from __future__ import annotations

import functools
import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from plausible.data.arrow_tables import read_arrow
from plausible.data.comparisons import Comparisons
from plausible.data.label_sets import LabelSets
from plausible.data.labels import Labels
from plausible.data.rankings import Rankings
from plausible.data.ratings import Ratings
from plausible.data.validation import ROLES, pick_column
from plausible.data.votes import Votes

FORMATS = ("votes", "rankings", "labels", "ratings", "label_sets", "comparisons")
"""Annotation formats (as in :data:`plausible.models.FORMATS`)."""

LONG_HINTS = ("worker", "annotator", "rater", "reader", "label", "class", "score", "rating",
              "rank", "task")
"""Column names that only a long table would have: a wide table with one of them besides a
complete set of roles is ambiguous."""

SUFFIXES = {".csv": ",", ".tsv": "\t", ".tab": "\t"}


def _roles(frame: pd.DataFrame, **given) -> dict[str, str | None]:
    return {role: pick_column(frame, role, given.get(role)) for role in ROLES}


def infer_format(frame: pd.DataFrame, **given) -> str:
    """The format of ``frame`` from its columns (see the module docstring); ``ValueError``
    naming the columns when it is ambiguous. ``given``: role -> column name overrides."""
    roles = _roles(frame, **given)
    if {"left", "right"} <= set(frame.columns):
        return "comparisons"
    long_value = [r for r in ("label", "score", "rank") if roles[r] is not None]
    if roles["item"] and roles["annotator"] and not long_value and _zero_one(
            frame.drop(columns=[roles["item"], roles["annotator"]])):
        return "label_sets"
    if roles["item"] and roles["annotator"] and long_value:
        if roles["rank"]:
            if not roles["label"]:
                raise ValueError(f"a rank column {roles['rank']!r} but no label column naming the "
                                 f"ranked class; columns are {list(frame.columns)}")
            return "rankings"
        if roles["label"] and roles["score"]:
            raise ValueError(f"both a label column {roles['label']!r} and a score column "
                             f"{roles['score']!r}: pass format='labels' or format='ratings'")
        return "ratings" if roles["score"] else "labels"
    hinted = [c for c in frame.columns if str(c).lower() in LONG_HINTS and c != roles["item"]]
    if hinted or any(given.get(r) for r in ("annotator", "label", "score", "rank")):
        missing = [r for r in ("item", "annotator") if roles[r] is None]
        if not long_value:
            missing.append("label (or score, or rank)")
        raise ValueError(
            f"columns {list(frame.columns)} look like long-format annotations but name no "
            f"{' and no '.join(missing)} column: name them, e.g. item=, annotator=, label= "
            "(defaults task/item, worker/annotator, label), or pass the format")
    return "votes"


def _zero_one(columns: pd.DataFrame) -> bool:
    """Whether ``columns`` are one or more columns of 0/1 (or booleans): a wide label-set
    table's labels."""
    if columns.shape[1] == 0:
        return False
    for _, column in columns.items():
        if pd.api.types.is_bool_dtype(column):
            continue
        if not pd.api.types.is_integer_dtype(column) or not column.isin((0, 1)).all():
            return False
    return True


def from_frame(frame: pd.DataFrame, *, format: str | None = None, item: str | None = None,
               annotator: str | None = None, label: str | None = None,
               score: str | None = None, rank: str | None = None, source: str = "the table"):
    """The container of ``frame``'s annotations: :class:`Votes`, :class:`Labels`,
    :class:`Ratings` or :class:`Rankings` (see the module docstring).

    ``format``: one of :data:`FORMATS` or ``"long"`` (labels, or ratings with a score
    column); recognised from the columns when None. ``item``, ``annotator``, ``label``,
    ``score``, ``rank``: the column of each role, when not its default name. ``source``
    names the table in errors (a file path). Errors are ``ValueError`` naming the source and
    the column, item or annotator.
    """
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"expected a pandas DataFrame, got {type(frame).__name__}")
    try:
        annotations = _from_frame(frame, format, dict(item=item, annotator=annotator,
                                                      label=label, score=score, rank=rank))
    except ValueError as error:
        raise ValueError(f"{source}: {error}") from None
    if format is None and isinstance(annotations, Labels):
        _warn_if_sets(annotations, source)
    return annotations


def _warn_if_sets(labels: Labels, source: str) -> None:
    """Warn when labels recognised from the columns have (item, annotator) pairs with several
    different labels: read as repeated answers, which a table of tag sets also looks like."""
    pair = labels.item.astype(np.int64) * labels.n_annotators + labels.annotator
    distinct = np.unique(pair * labels.n_classes + labels.label) // labels.n_classes
    several = int((np.unique(distinct, return_counts=True)[1] >= 2).sum())
    if several:
        warnings.warn(f"{source}: {several} (item, annotator) pairs carry several different "
                      "labels, read as repeated answers of one class each; if a pair's labels "
                      "are a set of tags, read the table as label sets (format='label_sets', "
                      "--format label_sets)", stacklevel=3)


def _from_frame(frame, format, given):
    if frame.empty or frame.shape[0] == 0:
        raise ValueError(f"no rows (columns: {list(frame.columns)})")
    if format not in (None, "long", *FORMATS):
        raise ValueError(f"format must be one of {('long', *FORMATS)}, got {format!r}")
    given = {k: v for k, v in given.items() if v is not None}
    if format is None:
        format = infer_format(frame, **given)
    elif format == "long":
        format = "ratings" if pick_column(frame, "score", given.get("score")) else "labels"
    if format == "votes":
        return _votes(frame, given.get("item"))
    if format == "comparisons":
        return Comparisons.from_frame(frame, worker=given.get(
            "annotator", pick_column(frame, "annotator", None) or "worker"),
            label=given.get("label", "label"))
    roles = _roles(frame, **given)
    if format == "label_sets":
        if roles["label"] is not None:
            return LabelSets.from_frame(frame, item=roles["item"], annotator=roles["annotator"],
                                        label=roles["label"])
        return LabelSets.from_wide(frame, item=roles["item"], annotator=roles["annotator"])
    needed = {"labels": ("item", "annotator", "label"), "ratings": ("item", "annotator", "score"),
              "rankings": ("item", "annotator", "label", "rank")}[format]
    missing = [r for r in needed if roles[r] is None]
    if missing:
        raise ValueError(f"{format} need columns for {', '.join(missing)} (default names: "
                         + "; ".join(f"{r}: {'/'.join(ROLES[r])}" for r in missing)
                         + f"); the columns are {list(frame.columns)}")
    if format == "labels":
        return Labels.from_frame(frame, item=roles["item"], annotator=roles["annotator"],
                                 label=roles["label"])
    if format == "ratings":
        column = roles["score"]
        if not pd.api.types.is_numeric_dtype(frame[column]):
            raise ValueError(f"score column {column!r} must be numeric")
        return Ratings.from_frame(frame, item=roles["item"], annotator=roles["annotator"],
                                  score=column)
    return Rankings.from_long(frame, item=roles["item"], reader=roles["annotator"],
                              label=roles["label"], rank=roles["rank"])


def _votes(frame: pd.DataFrame, item: str | None) -> Votes:
    item = pick_column(frame, "item", item)
    if item is not None:
        items, counts = frame[item].to_numpy(), frame.drop(columns=[item])
    elif isinstance(frame.index, pd.RangeIndex):
        items, counts = None, frame
    else:  # a crosstab: items are the index
        items, counts = frame.index.to_numpy(), frame
    if counts.shape[1] == 0:
        raise ValueError("no class columns besides the item ids")
    text = [c for c in counts.columns if not pd.api.types.is_numeric_dtype(counts[c])]
    if text:
        raise ValueError(
            f"column(s) {text} are not numeric: a vote table has one integer count column per "
            f"class (and an 'item' column); the columns are {list(frame.columns)}. For long "
            "annotations name the columns: item=, annotator=, label=")
    values = counts.to_numpy()
    bad = ~np.isfinite(values) if values.dtype.kind == "f" else np.zeros(values.shape, bool)
    if bad.any():
        row, col = np.argwhere(bad)[0]
        who = items[row] if items is not None else row
        raise ValueError(f"item {who!r}, column {counts.columns[col]!r}: missing vote count")
    return Votes.from_counts(values, items=items, classes=counts.columns.to_numpy())


def _restore_types(frame: pd.DataFrame) -> pd.DataFrame:
    """Columns read as strings become int64 when every value round-trips (``"7"``), float64
    when every value is a number (``"2.5"``, ``"7.0"``), strings otherwise and when a value
    has a leading zero (``"007"``: an id). Empty cells stay missing (the containers name the
    row)."""
    out = {}
    for name, column in frame.items():
        present = column.dropna()
        numbers = pd.to_numeric(present, errors="coerce")
        if present.empty or numbers.isna().any():
            out[name] = column
            continue
        whole = bool((numbers == np.round(numbers)).all())
        if present.str.strip().str.match(r"^[+-]?0\d").any():
            out[name] = column  # "007": an id written that way stays as written
        elif whole and not column.isna().any() and \
                (numbers.astype(np.int64).astype(str) == present.str.strip()).all():
            out[name] = numbers.astype(np.int64)
        else:
            out[name] = pd.to_numeric(column)
    return pd.DataFrame(out, index=frame.index)


def read_table(path) -> pd.DataFrame | list:
    """The table in ``path`` (see the module docstring for the suffixes), or the nested
    lists of a JSON selectors file. ``ValueError`` naming the file when it cannot be read,
    is empty or has a header only; ``FileNotFoundError`` when it does not exist."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file")
    if path.is_dir() and not any(path.glob("**/*.parquet")):
        raise ValueError(f"{path} is a directory with no .parquet files, not an annotation file")
    suffix = ".parquet" if path.is_dir() else path.suffix.lower()
    try:
        if suffix in SUFFIXES:
            frame = read_arrow(path, SUFFIXES[suffix], _restore_types)
        elif suffix == ".parquet":
            frame = read_arrow(path, None, _restore_types)
        elif suffix == ".json":
            content = json.loads(path.read_text())
            if isinstance(content, list) and (not content or isinstance(content[0], list)):
                if not content:
                    raise ValueError("no items (an empty list)")
                return content
            frame = pd.DataFrame(content)
        elif suffix == ".npy":
            return pd.DataFrame(np.load(path, allow_pickle=False))
        else:
            raise ValueError(f"unknown file type {path.suffix!r}: use .csv, .tsv, .parquet, "
                             ".json or .npy")
    except pd.errors.EmptyDataError:
        raise ValueError(f"{path} is empty") from None
    except (json.JSONDecodeError, UnicodeDecodeError, pd.errors.ParserError, OSError) as error:
        raise ValueError(f"{path}: cannot be read as {suffix[1:]}: {error}") from None
    except ValueError as error:
        raise ValueError(f"{path}: {error}") from None
    if frame.shape[0] == 0:
        raise ValueError(f"{path} has a header but no rows (columns: {list(frame.columns)})")
    return frame


def read_annotations(path, *, format: str | None = None, **columns):
    """The annotations in file ``path`` as a container (:func:`read_table`, then
    :func:`from_frame` with ``format`` and the role ``columns``; a selectors JSON file gives
    :class:`Rankings`)."""
    content = read_table(path)
    if isinstance(content, list):
        if format not in (None, "rankings"):
            raise ValueError(f"{path}: a JSON list of lists holds rankings (selectors), not "
                             f"{format}")
        try:
            return Rankings.from_selectors(content)
        except (ValueError, TypeError) as error:
            raise ValueError(f"{path}: {error}") from None
    return from_frame(content, format=format, source=str(path), **columns)


def format_of(data) -> str:
    """The format of a container (one of :data:`FORMATS`)."""
    for name, kind in (("votes", Votes), ("rankings", Rankings), ("labels", Labels),
                       ("ratings", Ratings), ("label_sets", LabelSets),
                       ("comparisons", Comparisons)):
        if isinstance(data, kind):
            return name
    raise TypeError(f"expected a DataFrame, Votes, Labels, Ratings, Rankings, LabelSets or "
                    f"Comparisons, got {type(data).__name__}")


def reads(format: str):
    """Decorator of a model builder whose first argument is a ``format`` container: a
    DataFrame given there instead is read by :func:`from_frame` (crowd-kit's ``task, worker,
    label`` or the project's column names; name other columns with
    :func:`plausible.data.tables.from_frame` first). A labels builder also takes ``known=`` (item
    -> class: gold items, an expert's adjudication), applied as :meth:`Labels.with_known`
    before the builder sees the labels: every latent-class model clamps those items' classes
    (or refuses known classes in one line)."""
    if format not in FORMATS:
        raise ValueError(f"format must be one of {FORMATS}, got {format!r}")

    def decorate(build):
        @functools.wraps(build)
        def builder(data, *args, known=None, **kwargs):
            if isinstance(data, pd.DataFrame):
                data = from_frame(data, format=format)
            if known is not None:
                if format != "labels":
                    raise ValueError(f"known= (the true class of some items) is for label "
                                     f"models; {build.__name__} reads {format}")
                data = data.with_known(known)
            return build(data, *args, **kwargs)
        return builder
    return decorate


__all__ = ["FORMATS", "ROLES", "format_of", "from_frame", "infer_format", "read_annotations",
           "read_table", "reads"]

