"""Checks shared by the annotation containers and the model builders: id arrays, index
arrays, culprit messages, positive parameters.

Every check is vectorised and raises ``ValueError`` naming the first offender (and how
many more there are), so a message points at the row to fix.
"""

from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd


def fmt(value) -> str:
    """``repr`` of an id as the user wrote it (numpy scalars shown as Python scalars)."""
    return repr(value.item() if isinstance(value, np.generic) else value)


def raise_first(mask: np.ndarray, message: Callable[[int], str]) -> None:
    """Raise ``ValueError(message(i))`` for the first ``i`` where ``mask`` holds, if any."""
    bad = np.flatnonzero(mask)
    if bad.size:
        more = f" ({bad.size - 1} more like it)" if bad.size > 1 else ""
        raise ValueError(message(int(bad[0])) + more)


def id_array(ids, n: int | None, what: str) -> np.ndarray:
    """1-D array ``(n,)`` of unique ids; ``what`` names them in errors ("item", "class")."""
    ids = np.asarray(ids)
    if ids.ndim != 1:
        raise ValueError(f"{what} ids must be 1-D, got shape {ids.shape}")
    if n is not None and ids.shape[0] != n:
        raise ValueError(f"expected {n} {what} ids, got {ids.shape[0]}")
    codes, uniques = pd.factorize(ids, use_na_sentinel=False)
    if uniques.size < ids.size:
        dup = np.flatnonzero(np.bincount(codes) > 1)[0]
        raise ValueError(f"{what} {fmt(uniques[dup])} appears twice among the {what} ids")
    return ids


def index_array(values, what: str, where: Callable[[int], str] | None = None) -> np.ndarray:
    """1-D int64 array from integer-valued input (ints, or floats without a fraction).

    ``where(i)`` names entry ``i`` in errors (e.g. its item and reader); default ``what[i]``.
    """
    values = np.asarray(values)
    if values.ndim != 1:
        raise ValueError(f"{what} must be 1-D, got shape {values.shape}")
    if values.dtype.kind in "iu":
        return values.astype(np.int64)
    where = where or (lambda i: f"{what}[{i}]")
    bad = np.ones(values.shape, bool)
    if values.dtype.kind == "f":
        bad = ~np.isfinite(values) | (values != np.round(values))
    raise_first(bad, lambda i: f"{where(i)}: {what} {fmt(values[i])} is not an integer")
    return values.astype(np.int64)


def column_values(column: pd.Series):
    """A column's values for :func:`encode`: a categorical column's ``Categorical`` (codes
    into its distinct values, encoded without an object per row), any other as an array."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        return column.array
    return column.to_numpy()


def encode(values, known: Sequence | None, what: str, sort: bool = False):
    """Map ids to indices: ``(codes, uniques)``; ``codes`` is -1 for ids not in ``known``.

    Without ``known`` the uniques are the ids in order of first appearance (sorted when
    ``sort``). Missing values (NaN/None) must be caught by the caller beforehand.
    """
    if known is None:
        if sort and isinstance(values, pd.Categorical):  # by value, not by category order
            values = values.reorder_categories(values.categories.sort_values())
        codes, uniques = pd.factorize(values, sort=sort)
        return codes.astype(np.int64), np.asarray(uniques)
    known = id_array(known, None, what)
    return pd.Index(known).get_indexer(values).astype(np.int64), known


def encode_long(item_ids, annotator_ids, items=None, annotators=None):
    """Indices of a long table's item and annotator ids: ``(item_code, items, annotator_code,
    annotators)`` (:func:`encode`), ``ValueError`` naming the row's item and annotator when an
    id is not among the declared ``items`` / ``annotators``."""
    item_code, items = encode(item_ids, items, "item")
    raise_first(
        item_code < 0,
        lambda k: f"item {fmt(item_ids[k])} (annotator {fmt(annotator_ids[k])}) "
        "is not among the declared items",
    )
    annotator_code, annotators = encode(annotator_ids, annotators, "annotator")
    raise_first(
        annotator_code < 0,
        lambda k: f"item {fmt(item_ids[k])}: unknown annotator {fmt(annotator_ids[k])} "
        "(not among the declared annotators)",
    )
    return item_code, items, annotator_code, annotators


ROLES = {
    "item": ("task", "item"),
    "annotator": ("worker", "annotator"),
    "label": ("label",),
    "score": ("score",),
    "rank": ("rank",),
}
"""Default column names of each role of a long table (crowd-kit's first)."""


def pick_column(frame: pd.DataFrame, role: str, given: str | None) -> str | None:
    """The column playing ``role``: ``given`` (must exist) or the first default name of
    :data:`ROLES` present (None when none is)."""
    if given is not None:
        if given not in frame.columns:
            raise ValueError(f"column {given!r} (the {role}) is not in the table; its columns are "
                             f"{list(frame.columns)}")
        return given
    return next((name for name in ROLES[role] if name in frame.columns), None)


def role_columns(frame: pd.DataFrame, **given) -> list[str]:
    """The columns of the roles ``given`` (role: column name or None for the defaults), in
    order; ``ValueError`` naming the missing role, its default names and the columns."""
    columns = []
    for role, name in given.items():
        column = pick_column(frame, role, name)
        if column is None:
            raise ValueError(f"no {role} column (default names: {'/'.join(ROLES[role])}; name "
                             f"it with {role}=); the columns are {list(frame.columns)}")
        columns.append(column)
    return columns


def missing_rows(frame: pd.DataFrame, columns: Sequence[str]) -> None:
    """Reject rows with a missing value in one of ``columns``, naming the row."""
    for column in columns:
        if column not in frame.columns:
            raise ValueError(f"column {column!r} not in the frame (columns: {list(frame.columns)})")
    for column in columns:
        raise_first(
            frame[column].isna().to_numpy(),
            lambda i: f"row {fmt(frame.index[i])}: missing {column!r} "
            f"({', '.join(f'{c}={fmt(frame[c].iloc[i])}' for c in columns if c != column)})",
        )


def integer_counts(
    counts: np.ndarray, items: np.ndarray, classes: np.ndarray, *, prefix: str, dtype_error: str, empty: str
) -> np.ndarray:
    """int64 copy of ``(item, class)`` counts, checked integer-valued, >= 0, >= 1 per item.

    Messages name item and class, prefixed by ``prefix``; ``dtype_error`` opens the message
    for a non-numeric dtype and ``empty`` ends the one for an item whose counts are all 0.
    """

    def culprit(flat: int) -> str:
        i, k = divmod(flat, counts.shape[1])
        return f"{prefix}item {fmt(items[i])}, class {fmt(classes[k])}: count {fmt(counts[i, k])}"

    if counts.dtype.kind == "f":
        raise_first(
            (~np.isfinite(counts) | (counts != np.round(counts))).ravel(),
            lambda f: culprit(f) + " is not an integer",
        )
    elif counts.dtype.kind not in "iub":
        raise ValueError(f"{dtype_error}, got dtype {counts.dtype}")
    raise_first((counts < 0).ravel(), lambda f: culprit(f) + " is negative")
    counts = counts.astype(np.int64)
    raise_first(counts.sum(axis=1) == 0, lambda i: f"{prefix}item {fmt(items[i])} {empty}")
    return counts


def positive(name: str, value, *, scalar: bool = True):
    """``value`` as a float that is finite and > 0 (with ``scalar=False`` also a float64 array,
    finite and > 0 everywhere), else a ``ValueError`` naming ``name`` (a model parameter such
    as ``reliability`` or ``alpha``)."""
    if isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be a number > 0, got {value!r}")
    try:
        array = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number > 0, got {value!r}") from None
    if scalar and array.ndim:
        raise ValueError(f"{name} must be a single number > 0, got an array of shape {array.shape}")
    if not np.all(np.isfinite(array) & (array > 0)):
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return float(array) if array.ndim == 0 else array


def positive_integer(name: str, value, why: str = "") -> int:
    """``value`` as an int >= 1 (a float without fraction is accepted), else a ``ValueError``
    naming ``name`` and, when given, ``why`` an integer is needed."""
    number = positive(name, value)
    if number != round(number):
        reason = f" ({why})" if why else ""
        raise ValueError(f"{name} must be a whole number >= 1{reason}, got {value!r}")
    return int(round(number))


def positions(items, n: int) -> np.ndarray:
    """int64 positions ``(selected,)`` from a selection of ``n`` items: a slice, a boolean mask
    ``(n,)`` or integer positions (each in ``-n..n-1``, none twice), order kept."""
    if isinstance(items, slice):
        return np.arange(n)[items]
    index = np.asarray(items)
    if index.dtype == bool:
        if index.shape != (n,):
            raise ValueError(f"a boolean item selection needs shape ({n},), got {index.shape}")
        return np.flatnonzero(index)
    index = index_array(index.ravel() if index.ndim == 0 else index, "item position")
    raise_first((index < -n) | (index >= n),
                lambda i: f"item position {index[i]} out of range for {n} items")
    index = np.where(index < 0, index + n, index)
    codes, uniques = pd.factorize(index)
    if uniques.size < index.size:
        raise ValueError(f"item position {int(uniques[np.flatnonzero(np.bincount(codes) > 1)[0]])} "
                         "is selected twice")
    return index
