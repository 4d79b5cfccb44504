"""A classifier's predictions for the aggregated items: :func:`read_predictions` reads them
from a ``.npy`` array, a table (CSV, TSV, Parquet, JSON records) or an array or frame in
memory, aligns them to a run's items and classes, and refuses a bad source with a one-line
``ValueError`` naming the file (``predictions`` for one in memory) and the row, item or
column at fault.

A source holds either

* **one class per item**: a 1-D integer array of class positions (``0..K-1``, not class
  names, one per item in the order of ``items``; in memory also an array of class names); a
  table with an item column (``item`` or ``task``, or named) and a
  ``prediction`` (or ``label``, or named) column of class names; a Series of class names
  indexed by item; or
* **one value per class**: a 2-D ``(item, class)`` array (rows in the order of ``items``,
  columns in the order of ``classes``); a table with an item column and one column per class,
  named as the classes and in any order, every class present and no other column; a
  DataFrame like it, or indexed by item.

The rows of a table may come in any order; every item of the run needs exactly one, and an
item the run does not have is an error. What per-class values mean depends on the source:

* an **array** (``.npy`` or in memory) holds **probabilities**: every value in [0, 1] and every
  row summing to one within :data:`SUM_TOLERANCE` (a float32 softmax's rows, within about
  1e-6, pass), each row then divided by its sum;
* a **table** names its columns and may hold **scores** (logits, margins, one-vs-rest
  sigmoids), of which only the order within a row counts (the top-``k`` classes), so no range
  or sum is checked (where they are probabilities, :attr:`Predictions.kind` says so and the
  rows are divided by their sums);
* with ``probabilities=True`` (a classifier prior for aggregation) every source must hold
  probabilities as an array does, and a source of one class per item is refused;
* with ``sets=True`` (the predicted label sets of a multi-label run) every value is a 0/1
  membership, and rows need not sum to one.

NaN and infinite values are always refused.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from plausible.data.tables import SUFFIXES, read_table
from plausible.data.validation import fmt, pick_column

SUM_TOLERANCE = 1e-3
"""How far (absolute) a row of probabilities may sum from one."""

PREDICTION_COLUMNS = ("prediction", "label")
"""The default names of a table's column of predicted classes (the first present)."""

KINDS = ("classes", "probabilities", "scores", "sets")
"""What :attr:`Predictions.values` holds (see :class:`Predictions`)."""


@dataclass(frozen=True)
class Predictions:
    """A classifier's predictions aligned to a run's items and classes
    (:func:`read_predictions`).

    ``kind`` (one of :data:`KINDS`) says what ``values`` holds:

    * ``"classes"``: int64 ``(item,)``, the position in ``classes`` of each item's predicted
      class;
    * ``"probabilities"``: float64 ``(item, class)``, each row summing to one;
    * ``"scores"``: float64 ``(item, class)``, finite, from a table, not probabilities
      (logits, margins);
    * ``"sets"``: float64 ``(item, class)`` of 0 and 1, an item's predicted label set.

    ``items`` ``(item,)`` and ``classes`` ``(class,)`` are the run's, in its order (row ``i``
    of ``values`` is item ``items[i]``); ``source`` names the file, or ``"predictions"``."""

    kind: str
    values: np.ndarray
    items: np.ndarray
    classes: np.ndarray
    source: str

    @property
    def per_class(self) -> bool:
        """Whether ``values`` holds one value per class (an ``(item, class)`` array)."""
        return self.kind != "classes"

    @property
    def predicted(self) -> np.ndarray:
        """The predicted class of every item, ``(item,)`` class names: the given ones, or for
        probabilities and scores the class of the row's highest value (ties: the first class).
        ``ValueError`` for label sets, which predict no one class."""
        if self.kind == "sets":
            raise ValueError(f"{self.source}: predicted label sets name no one class per item")
        positions = self.values if self.kind == "classes" else np.argmax(self.values, axis=1)
        return self.classes[positions]

    def for_evaluate(self):
        """What :meth:`Aggregation.evaluate <plausible.aggregation.Aggregation.evaluate>`
        takes: the predicted class names ``(item,)`` for one class per item, else the
        ``(item, class)`` values, both in the run's order."""
        return self.values if self.per_class else self.predicted


def read_predictions(source, items, classes, *, name: str | None = None,
                     item: str | None = None, prediction: str | None = None,
                     probabilities: bool = False, sets: bool = False) -> Predictions:
    """A classifier's predictions for ``items`` over ``classes`` (the run's, in its order),
    from ``source``: a path (``.npy``, or a table :func:`~plausible.data.tables.read_table`
    reads: ``.csv``, ``.tsv``, ``.parquet``, ``.json``), a numpy array, a DataFrame or a
    Series (see the module docstring for what each holds and how values are read).

    ``item`` and ``prediction`` name a table's item column and column of predicted classes
    when they are not named as by default (``item``/``task``; ``prediction``/``label``).
    ``probabilities``: one probability per class is required (rows summing to one);
    ``sets``: one 0/1 membership per class is required (a multi-label run's sets). ``name``
    stands for the source in messages (default: the path, or ``"predictions"``).

    Returns a :class:`Predictions`: ``values`` int64 ``(item,)`` of class positions, or float64
    ``(item, class)``, aligned to ``items`` and ``classes``. ``ValueError`` in one line naming
    the source and the row (with its item), item or column at fault; ``FileNotFoundError``
    for a path that does not exist."""
    if probabilities and sets:
        raise ValueError("probabilities and sets exclude each other: a label set is no "
                         "distribution over classes")
    items, classes = np.asarray(items), np.asarray(classes)
    need = "probabilities" if probabilities else "sets" if sets else None
    if isinstance(source, str | os.PathLike):
        path = Path(source)
        name = name or str(path)
        if not path.exists():
            raise FileNotFoundError(f"{name}: no such file")
        if path.suffix.lower() == ".npy":
            try:
                array = np.load(path, allow_pickle=False)
            except (OSError, ValueError) as error:
                raise ValueError(f"{name}: cannot be read as .npy: "
                                 f"{' '.join(str(error).split())}") from None
            return _from_array(array, items, classes, name, need)
        content = read_table(path)
        if isinstance(content, list):
            raise ValueError(f"{name}: a JSON list of lists; expected a table of predictions "
                             "(an item column and a prediction column or a column per class)")
        lines = path.suffix.lower() in SUFFIXES
        return _from_table(content, items, classes, name, need, item, prediction, lines=lines)
    name = name or "predictions"
    if isinstance(source, pd.Series):
        frame = pd.DataFrame({"item": source.index.to_numpy(), "prediction": source.to_numpy()})
        return _from_table(frame, items, classes, name, need, "item", "prediction")
    if isinstance(source, pd.DataFrame):
        return _from_table(source, items, classes, name, need, item, prediction, index=True)
    return _from_array(np.asarray(source), items, classes, name, need)


def _required(name: str, need: str) -> ValueError:
    what = ("probabilities per class are required" if need == "probabilities"
            else "a 0/1 membership per label is required")
    return ValueError(f"{name}: holds one predicted class per item; {what} (an (item, class) "
                      "array, or a table with a column per class)")


def _more(count: int, what: str) -> str:
    """`` (N what in all)`` after the first culprit, when it is not alone."""
    return f" ({count} {what} in all)" if count > 1 else ""


def _shown(classes: np.ndarray, limit: int = 10) -> str:
    listed = ", ".join(fmt(c) for c in classes[:limit])
    return listed + (", ..." if classes.size > limit else "")


def _from_array(array: np.ndarray, items, classes, name, need) -> Predictions:
    n, k = items.size, classes.size
    expected = f"({n}, {k}) (a row per item, in the items' order, a column per class)"
    if array.ndim == 1:
        if need:
            raise _required(name, need)
        if array.shape != (n,):
            raise ValueError(f"{name}: expected shape ({n},) (a class position per item, in the "
                             f"items' order), got {array.shape}")
        if array.dtype.kind in "USO":  # class names (in memory; a .npy holds no text)
            return Predictions("classes", _classes_of(
                array, classes, lambda r: f"{name}, row {r} (item {fmt(items[r])})", name),
                items, classes, name)
        if array.dtype.kind not in "iu":
            raise ValueError(f"{name}: a 1-D array of {array.dtype}; expected integer class "
                             f"positions 0..{k - 1}, or probabilities of shape {expected}")
        bad = np.flatnonzero((array < 0) | (array >= k))
        if bad.size:
            r = int(bad[0])
            raise ValueError(f"{name}, row {r} (item {fmt(items[r])}): class position "
                             f"{array[r]} is not in 0..{k - 1}{_more(bad.size, 'rows')}")
        return Predictions("classes", array.astype(np.int64), items, classes, name)
    if array.shape != (n, k):
        raise ValueError(f"{name}: expected shape {expected}, got {array.shape}")
    kind, values = _per_class(array, lambda r: f"{name}, row {r} (item {fmt(items[r])})",
                              classes, name, need or "array")
    return Predictions(kind, values, items, classes, name)


_ARRAY_HINT = "; an array holds probabilities: give scores such as logits as a table"


def _per_class(array: np.ndarray, where, classes, name: str,
               need: str | None) -> tuple[str, np.ndarray]:
    """``(kind, values)``: ``array`` (rows named by ``where(row)``) as checked float64 values
    per class. ``need``: ``"probabilities"`` or ``"array"`` (an array's values: rows in [0, 1]
    summing to one, divided by their sums), ``"sets"`` (0/1), or None (a table's scores:
    finite; probabilities, divided by their sums, when they are, and refused for nothing
    else)."""
    if array.dtype.kind not in "biuf":
        raise ValueError(f"{name}: expected numbers per class, got {array.dtype} values")
    values = array.astype(np.float64)
    bad = np.argwhere(~np.isfinite(values))
    if bad.size:
        r, c = bad[0]
        what = "NaN" if np.isnan(values[r, c]) else f"{values[r, c]}"
        raise ValueError(f"{where(r)}: {what} for class {fmt(classes[c])}"
                         f"{_more(len(bad), 'values not finite')}")
    if need == "sets":
        bad = np.argwhere((values != 0) & (values != 1))
        if bad.size:
            r, c = bad[0]
            raise ValueError(f"{where(r)}: {values[r, c]:g} for label {fmt(classes[c])}; a "
                             "predicted set holds 0 or 1 per label")
        return "sets", values
    outside = np.argwhere((values < 0) | (values > 1))
    sums = values.sum(axis=1)
    off = np.flatnonzero(np.abs(sums - 1) > SUM_TOLERANCE)
    if need is None and (outside.size or off.size):  # a table's scores: their order counts
        return "scores", values
    hint = _ARRAY_HINT if need == "array" else ""
    if outside.size:
        r, c = outside[0]
        what = "negative" if values[r, c] < 0 else "above 1"
        raise ValueError(f"{where(r)}: the probability of class {fmt(classes[c])} is "
                         f"{values[r, c]:g}, {what}"
                         f"{_more(len(outside), 'values outside [0, 1]')}{hint}")
    if off.size:
        r = int(off[0])
        raise ValueError(f"{where(r)}: the probabilities sum to {sums[r]:.6g}, not 1 within "
                         f"{SUM_TOLERANCE:g}{_more(off.size, 'rows')}{hint}")
    return "probabilities", values / sums[:, None]


def _match(ids: np.ndarray, known: np.ndarray) -> np.ndarray:
    """The position in ``known`` (unique) of every id, -1 where none; an id that matches no
    one as it is (``7`` read from a file, ``"7"`` in the run) is matched by its text."""
    positions = pd.Index(known).get_indexer(ids)
    if (positions < 0).any():
        text = pd.Index(known.astype(str))
        if text.is_unique:
            by_text = text.get_indexer(np.asarray(ids).astype(str))
            positions = np.where(positions < 0, by_text, positions)
    return positions


def _from_table(frame: pd.DataFrame, items, classes, name, need, item, prediction,
                lines: bool = False, index: bool = False) -> Predictions:
    """The predictions of a table; ``lines``: rows are named by their line in a text file
    (the header is line 1), else by their 0-based row; ``index``: without an item column
    the frame's index holds the items (a frame in memory)."""
    columns = list(frame.columns)
    try:
        item_column = pick_column(frame, "item", item)
    except ValueError as error:
        raise ValueError(f"{name}: {error}") from None
    if item_column is not None:
        ids, rest = frame[item_column].to_numpy(), frame.drop(columns=[item_column])
    elif index:
        ids, rest = frame.index.to_numpy(), frame
    else:
        raise ValueError(f"{name}: no item column (named item or task); its columns are "
                         f"{columns}")

    def where(r: int) -> str:
        row = f"line {r + 2}" if lines else f"row {r}"
        return f"{name}, {row} (item {fmt(ids[r])})"

    empty = np.flatnonzero(pd.isna(ids))
    if empty.size:
        row = f"line {empty[0] + 2}" if lines else f"row {empty[0]}"
        raise ValueError(f"{name}, {row}: no item id (an empty cell)")
    twice = np.flatnonzero(pd.Series(ids).duplicated().to_numpy())
    if twice.size:
        raise ValueError(f"{where(int(twice[0]))}: item {fmt(ids[twice[0]])} appears twice")
    if prediction is not None and prediction not in rest.columns:
        raise ValueError(f"{name}: no column {prediction!r} (the predicted classes); its "
                         f"columns are {columns}")
    chosen = prediction or next((c for c in PREDICTION_COLUMNS if c in rest.columns), None)
    if chosen is not None:
        if need and rest.shape[1] == 1:
            raise _required(name, need)
        if not need:
            return _aligned(_classes_of(rest[chosen].to_numpy(), classes, where, name),
                            ids, items, classes, name, where, "classes")
        rest = rest.drop(columns=[chosen])  # beside a column per class: read those
    positions = _match(np.asarray(rest.columns, dtype=object), classes)
    stray = np.flatnonzero(positions < 0)
    if stray.size:
        column = rest.columns[stray[0]]
        if stray.size == rest.shape[1]:
            raise ValueError(f"{name}: no prediction column ({' or '.join(PREDICTION_COLUMNS)}) "
                             f"and no column per class ({_shown(classes)}); its columns are "
                             f"{columns}")
        raise ValueError(f"{name}: column {column!r} is not one of the classes "
                         f"({_shown(classes)})")
    absent = np.setdiff1d(np.arange(classes.size), positions)
    if absent.size:
        raise ValueError(f"{name}: no column for class {fmt(classes[absent[0]])}"
                         f"{_more(absent.size, 'classes without one')}; its columns are {columns}")
    ordered = rest.iloc[:, np.argsort(positions)]
    text = [c for c in ordered.columns if not pd.api.types.is_numeric_dtype(ordered[c])
            and not pd.api.types.is_bool_dtype(ordered[c])]
    if text:
        cells = ordered[text[0]]
        r = int(np.argmax(pd.to_numeric(cells, errors="coerce").isna().to_numpy()))
        raise ValueError(f"{where(r)}: {fmt(cells.iloc[r])} in column {text[0]!r}; expected "
                         "numbers per class")
    kind, values = _per_class(ordered.to_numpy(dtype=np.float64), where, classes, name, need)
    return _aligned(values, ids, items, classes, name, where, kind)


def _classes_of(cells: np.ndarray, classes, where, name) -> np.ndarray:
    """The class positions of a column of predicted class names (rows in the file's order)."""
    empty = np.flatnonzero(pd.isna(cells))
    if empty.size:
        raise ValueError(f"{where(int(empty[0]))}: no prediction (an empty cell)")
    positions = _match(cells, classes)
    unknown = np.flatnonzero(positions < 0)
    if unknown.size:
        r = int(unknown[0])
        raise ValueError(f"{where(r)}: prediction {fmt(cells[r])} is not one of the classes "
                         f"({_shown(classes)})")
    return positions.astype(np.int64)


def _aligned(values: np.ndarray, ids, items, classes, name, where, kind) -> Predictions:
    """``values`` (rows in the table's order, its items ``ids``) in the order of ``items``:
    every item once, none the run does not have."""
    rows = _match(ids, items)
    extra = np.flatnonzero(rows < 0)
    if extra.size:
        raise ValueError(f"{where(int(extra[0]))}: item {fmt(ids[extra[0]])} is not one of the "
                         f"{items.size} items{_more(extra.size, 'rows')}")
    twice = np.flatnonzero(pd.Series(rows).duplicated().to_numpy())
    if twice.size:  # two ids of one text, e.g. 7 and "7"
        raise ValueError(f"{where(int(twice[0]))}: item {fmt(items[rows[twice[0]]])} appears "
                         "twice")
    if rows.size < items.size:
        missing = np.setdiff1d(np.arange(items.size), rows)
        raise ValueError(f"{name}: no row for item {fmt(items[missing[0]])} ({missing.size} "
                         f"of the {items.size} items without one)")
    order = np.empty_like(rows)
    order[rows] = np.arange(rows.size)
    return Predictions(kind, values[order], items, classes, name)
