"""Annotation files read through Arrow: the same containers as pandas' readers give, from a
CSV file, a Parquet file and a directory of Parquet files."""

import numpy as np
import pandas as pd
import pytest

from plausible.data import Labels, tables

FIELDS = ("item", "annotator", "label", "items", "annotators", "classes")


def same_labels(a: Labels, b: Labels) -> None:
    for name in FIELDS:
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)


@pytest.fixture
def table():
    rng = np.random.default_rng(0)
    n = 600
    return pd.DataFrame({"task": [f"t{i:03d}" for i in rng.integers(0, 150, n)],
                         "worker": [f"w{j}" for j in rng.integers(0, 12, n)],
                         "label": rng.choice(["cat", "ant", "bee"], n)})


def test_csv_parquet_and_a_parquet_directory_give_the_labels_pandas_gives(tmp_path, table):
    expected = Labels.from_frame(table)
    assert list(expected.classes) == ["ant", "bee", "cat"]  # sorted, not by first appearance
    table.to_csv(tmp_path / "a.csv", index=False)
    table.to_parquet(tmp_path / "a.parquet", index=False)
    (tmp_path / "parts").mkdir()
    for k, part in enumerate(np.array_split(np.arange(len(table)), 3)):
        table.iloc[part].to_parquet(tmp_path / "parts" / f"part-{k}.parquet", index=False)
    for path in ("a.csv", "a.parquet", "parts"):
        read = tables.read_table(tmp_path / path)
        assert isinstance(read["task"].dtype, pd.CategoricalDtype), path  # codes, not strings
        same_labels(tables.read_annotations(tmp_path / path), expected)


def test_text_cells_are_typed_as_written_and_blanks_are_not_ids(tmp_path):
    (tmp_path / "a.csv").write_text("task, worker,label\n007, 1, 2\n 007,2,10\n8,1,2\n")
    frame = tables.read_table(tmp_path / "a.csv")
    assert list(frame.columns) == ["task", "worker", "label"]
    assert list(frame["task"]) == ["007", "007", "8"]  # an id written with a leading zero
    assert frame["worker"].dtype == np.int64 and frame["label"].dtype == np.int64
    labels = tables.read_annotations(tmp_path / "a.csv")
    assert list(labels.items) == ["007", "8"] and list(labels.classes) == [2, 10]
    # a column with no value at all (a tool's empty review columns) is read, all missing
    (tmp_path / "b.csv").write_text("task,worker,label,comment\n1,a,x,\n2,b,y,\n")
    assert tables.read_table(tmp_path / "b.csv")["comment"].isna().all()


def test_a_missing_cell_names_its_row_and_an_empty_directory_is_refused(tmp_path):
    (tmp_path / "hole.csv").write_text("task,worker,label\na,u,x\nb,,y\n")
    with pytest.raises(ValueError, match=r"hole.csv.*row 1: missing 'worker'.*task='b'"):
        tables.read_annotations(tmp_path / "hole.csv")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="no .parquet files"):
        tables.read_table(tmp_path / "empty")
    (tmp_path / "ragged.csv").write_text("task,worker,label\na,u,x,extra\n")
    with pytest.raises(ValueError, match="ragged.csv"):
        tables.read_table(tmp_path / "ragged.csv")
