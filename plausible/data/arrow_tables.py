"""Long annotation files read through Arrow: one code per row, one Python object per distinct
value.

A table of ten million labels has a few hundred thousand distinct item ids, a few hundred
annotators and a handful of classes. Reading it as Python strings costs an object per cell;
here every text column is read by Arrow (``pyarrow.csv`` for ``.csv`` / ``.tsv``,
``pyarrow.parquet`` for a Parquet file or a directory of Parquet files) and
dictionary-encoded, so a column becomes integer codes into its distinct values: a
``pandas.Categorical`` (whose ``pd.factorize`` works on the codes). The distinct values get
the types a text file's values get (``"7"`` an integer, ``"007"`` an id), typed once each;
a column whose values are numbers becomes a numeric column. Cells are read as pandas' reader of text files reads them:
every cell as text, an empty cell missing, leading blanks after a separator dropped.
"""

from __future__ import annotations

import csv
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pa_csv
import pyarrow.parquet as pq


def read_arrow(path: Path, delimiter: str | None, restore_types: Callable) -> pd.DataFrame:
    """The table in ``path`` as a DataFrame of categorical and numeric columns (module
    docstring): a delimited text file (``delimiter``) or, with ``delimiter=None``, a Parquet
    file or a directory of Parquet files. ``restore_types(frame)`` types a frame of text
    columns. Arrow's errors are raised as ``ValueError``."""
    try:
        if delimiter is None:
            schema = pq.ParquetDataset(path).schema
            text = [f.name for f in schema if pa.types.is_string(f.type)
                    or pa.types.is_large_string(f.type)]
            table = pq.read_table(path, read_dictionary=text)  # never a string per row
        else:
            table = _read_delimited(path, delimiter)
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError) as error:
        raise ValueError(str(error).splitlines()[0]) from None
    frame = pd.DataFrame({name: _column(table.column(name), restore_types, strip=delimiter
                                        is not None) for name in table.column_names},
                         columns=table.column_names)
    del table
    pa.default_memory_pool().release_unused()  # Arrow's pool keeps freed buffers otherwise
    return frame


def _read_delimited(path: Path, delimiter: str) -> pa.Table:
    with open(path, newline="", encoding="utf-8") as handle:
        header = next(csv.reader(handle, delimiter=delimiter, skipinitialspace=True), None)
    if not header:
        raise pd.errors.EmptyDataError(f"{path} is empty")
    names = _unique_names(header)
    text = pa.dictionary(pa.int32(), pa.string())
    return pa_csv.read_csv(
        path,
        read_options=pa_csv.ReadOptions(column_names=names, skip_rows=1),
        parse_options=pa_csv.ParseOptions(delimiter=delimiter, newlines_in_values=True),
        convert_options=pa_csv.ConvertOptions(column_types={n: text for n in names},
                                              null_values=[""], strings_can_be_null=True,
                                              quoted_strings_can_be_null=True))


def _unique_names(header: list[str]) -> list[str]:
    """Column names as pandas names a repeated header (``a, a.1``)."""
    names, seen = [], {}
    for name in header:
        base, k = name, seen.get(name, 0)
        while name in seen:
            k += 1
            name = f"{base}.{k}"
        seen[base] = k
        seen[name] = 0
        names.append(name)
    return names


def _column(column: pa.ChunkedArray, restore_types: Callable, *, strip: bool):
    """One column: codes into its distinct values (a Categorical), or numbers."""
    if not pa.types.is_dictionary(column.type):
        return column.to_pandas()
    column = column.unify_dictionaries()
    values = (column.chunk(0).dictionary if column.num_chunks
              else pa.array([], type=column.type.value_type))
    codes = np.concatenate([chunk.indices.fill_null(-1).to_numpy(zero_copy_only=False)
                            for chunk in column.chunks] or [np.zeros(0, np.int32)])
    codes = codes.astype(np.int32, copy=False)
    if strip:  # leading blanks dropped: "a" and " a" are one value
        merged, distinct = pd.factorize(pd.Series(
            pc.utf8_ltrim_whitespace(values).to_pylist(), dtype=object))
        if len(merged):  # (an empty column has no values and every code -1)
            codes = np.where(codes >= 0, merged.astype(np.int32)[np.maximum(codes, 0)], -1)
    else:
        distinct = np.asarray(values.to_pylist(), dtype=object)
    typed = restore_types(pd.DataFrame({"v": pd.Series(distinct, dtype=object)}))["v"]
    if pd.api.types.is_numeric_dtype(typed):
        numbers = typed.to_numpy()
        if (codes < 0).any():
            out = np.full(codes.size, np.nan)
            out[codes >= 0] = numbers[codes[codes >= 0]]
            return out
        return numbers[codes]
    return pd.Categorical.from_codes(codes, categories=pd.Index(distinct, dtype=object))


__all__ = ["read_arrow"]
