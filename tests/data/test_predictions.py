"""plausible.data.read_predictions: every source of a classifier's predictions (a .npy array,
a table, an array or frame in memory) aligned to the run's items and classes, and every bad
one refused in one line naming the file and the row, item or column at fault."""

import numpy as np
import pandas as pd
import pytest

from plausible.data import read_predictions

ITEMS = np.array([f"i{i}" for i in range(6)])
CLASSES = np.array(["a", "b", "c"])
PROBS = np.random.default_rng(0).dirichlet(np.ones(3), size=6)


def table(probs=PROBS, items=ITEMS, columns=CLASSES, order=(5, 2, 0, 4, 1, 3)):
    """A table of per-class values, rows shuffled and columns reversed."""
    frame = pd.DataFrame(probs, columns=columns)[list(columns[::-1])]
    frame.insert(0, "item", items)
    return frame.iloc[list(order)]


def test_every_source_of_one_classifier_reads_the_same(tmp_path):
    """The same classifier as a float32 .npy (rows summing to one within 1e-6 only), a CSV and
    a Parquet table of probabilities, a DataFrame indexed by item, a .npy of class positions,
    a CSV and a Series of class names: the same values in the run's order, the same classes."""
    np.save(tmp_path / "p.npy", PROBS.astype(np.float32))
    table().to_csv(tmp_path / "p.csv", index=False)
    table().to_parquet(tmp_path / "p.parquet", index=False)
    top = PROBS.argmax(axis=1)
    np.save(tmp_path / "top.npy", top)
    classes = pd.DataFrame({"task": ITEMS, "prediction": CLASSES[top]}).iloc[::-1]
    classes.to_csv(tmp_path / "top.csv", index=False)

    per_class = [read_predictions(tmp_path / "p.npy", ITEMS, CLASSES),
                 read_predictions(tmp_path / "p.csv", ITEMS, CLASSES, probabilities=True),
                 read_predictions(tmp_path / "p.parquet", ITEMS, CLASSES),
                 read_predictions(pd.DataFrame(PROBS, index=ITEMS, columns=CLASSES), ITEMS,
                                  CLASSES)]
    for read in per_class:
        assert read.kind == "probabilities" and read.values.dtype == np.float64
        np.testing.assert_allclose(read.values, PROBS, atol=1e-7)
        np.testing.assert_allclose(read.values.sum(axis=1), 1, atol=1e-12)
    one_class = [read_predictions(tmp_path / "top.npy", ITEMS, CLASSES),
                 read_predictions(tmp_path / "top.csv", ITEMS, CLASSES),
                 read_predictions(pd.Series(CLASSES[top], index=ITEMS)[::-1], ITEMS, CLASSES)]
    for read in one_class:
        assert read.kind == "classes"
        np.testing.assert_array_equal(read.values, top)
    for read in per_class + one_class:
        np.testing.assert_array_equal(read.predicted, CLASSES[top])


def test_a_tables_scores_are_ranked_not_summed_but_an_arrays_are_probabilities(tmp_path):
    """Logits, or one-vs-rest scores in [0, 1], in a table are scores for evaluate; with
    probabilities=True, and in an array, they are refused by row, item and class."""
    logits = np.log(PROBS) + 10.0
    table(logits).to_csv(tmp_path / "logits.csv", index=False)
    read = read_predictions(tmp_path / "logits.csv", ITEMS, CLASSES)
    assert read.kind == "scores"
    np.testing.assert_allclose(read.values, logits)
    with pytest.raises(ValueError, match=r"line 2 \(item 'i5'\): the probability of class 'a' "
                                         r"is [\d.]+, above 1"):
        read_predictions(tmp_path / "logits.csv", ITEMS, CLASSES, probabilities=True)
    with pytest.raises(ValueError, match=r"^predictions, row 0 \(item 'i0'\): the probability of "
                                         r"class 'a' is [\d.]+, above 1 \(18 values outside "
                                         r"\[0, 1\] in all\); an array holds probabilities"):
        read_predictions(logits, ITEMS, CLASSES)


def test_ids_read_from_a_file_as_numbers_match_a_runs_text_ids(tmp_path):
    table(items=np.arange(6), columns=np.array(["0", "1", "2"])).to_csv(tmp_path / "p.csv",
                                                                        index=False)
    read = read_predictions(tmp_path / "p.csv", np.array(["0", "1", "2", "3", "4", "5"]),
                            np.array([0, 1, 2]))
    np.testing.assert_allclose(read.values, PROBS)


def bad_sources(tmp_path):
    """``(case, source, keywords, the message's words)``."""
    off = PROBS.copy()
    off[4] *= 0.9
    negative = PROBS.copy()
    negative[3] = [0.0, -0.2, 1.2]
    np.save(tmp_path / "rows.npy", PROBS[:5])
    np.save(tmp_path / "columns.npy", PROBS[:, :2])
    np.save(tmp_path / "cube.npy", PROBS[..., None])
    np.save(tmp_path / "off.npy", off)
    np.save(tmp_path / "negative.npy", negative)
    np.save(tmp_path / "top.npy", np.array([0, 1, 2, 3, 0, 1]))
    table(off).to_csv(tmp_path / "off.csv", index=False)
    table(columns=np.array(["a", "b", "z"])).to_csv(tmp_path / "unknown_column.csv", index=False)
    table().drop(columns="b").to_csv(tmp_path / "no_column.csv", index=False)
    table().iloc[:-1].to_csv(tmp_path / "missing_item.csv", index=False)
    extra = table().copy()
    extra.iloc[2, 0] = "i9"
    extra.to_csv(tmp_path / "extra_item.csv", index=False)
    pd.concat([table(), table().iloc[:1]]).to_csv(tmp_path / "twice.csv", index=False)
    pd.DataFrame({"item": ITEMS, "prediction": ["a", "b", "c", "d", "a", "b"]}).to_csv(
        tmp_path / "unknown_class.csv", index=False)
    pd.DataFrame({"item": ITEMS, "prediction": list("abcabc")}).to_csv(
        tmp_path / "classes.csv", index=False)
    pd.DataFrame({"id": ITEMS, "a": 1.0}).to_csv(tmp_path / "no_item.csv", index=False)
    with_nan = PROBS.copy()
    with_nan[2, 1] = np.nan
    return [
        ("too few rows", tmp_path / "rows.npy", {},
         ["rows.npy: expected shape (6, 3)", "got (5, 3)"]),
        ("too few columns", tmp_path / "columns.npy", {}, ["expected shape (6, 3)", "got (6, 2)"]),
        ("three dimensions", tmp_path / "cube.npy", {}, ["got (6, 3, 1)"]),
        ("in memory, wrong shape", PROBS.T, {}, ["predictions: expected shape (6, 3)",
                                                 "got (3, 6)"]),
        ("npy rows not summing to one", tmp_path / "off.npy", {},
         ["off.npy, row 4 (item 'i4')", "sum to 0.9,", "within 0.001"]),
        ("csv rows not summing to one", tmp_path / "off.csv", {"probabilities": True},
         ["off.csv, line 5 (item 'i4')", "sum to 0.9,"]),
        ("negative probability", tmp_path / "negative.npy", {},
         ["row 3 (item 'i3')", "class 'b' is -0.2, negative"]),
        ("not a number", with_nan, {}, ["row 2 (item 'i2')", "NaN for class 'b'"]),
        ("class position out of range", tmp_path / "top.npy", {},
         ["row 3 (item 'i3')", "class position 3 is not in 0..2"]),
        ("a column that is no class", tmp_path / "unknown_column.csv", {},
         ["unknown_column.csv: column 'z' is not one of the classes ('a', 'b', 'c')"]),
        ("a class without a column", tmp_path / "no_column.csv", {},
         ["no column for class 'b'"]),
        ("a prediction that is no class", tmp_path / "unknown_class.csv", {},
         ["line 5 (item 'i3')", "prediction 'd' is not one of the classes"]),
        ("an item of the run missing", tmp_path / "missing_item.csv", {},
         ["missing_item.csv: no row for item 'i3'", "1 of the 6 items without one"]),
        ("an item the run does not have", tmp_path / "extra_item.csv", {},
         ["line 4 (item 'i9')", "is not one of the 6 items"]),
        ("an item twice", tmp_path / "twice.csv", {}, ["line 8 (item 'i5')", "appears twice"]),
        ("no item column", tmp_path / "no_item.csv", {}, ["no item column", "'id'"]),
        ("classes where probabilities are required", tmp_path / "classes.csv",
         {"probabilities": True}, ["one predicted class per item",
                                   "probabilities per class are required"]),
    ]


def test_every_bad_source_is_refused_in_one_line_naming_the_culprit(tmp_path):
    for case, source, keywords, words in bad_sources(tmp_path):
        with pytest.raises(ValueError) as raised:
            read_predictions(source, ITEMS, CLASSES, **keywords)
        message = str(raised.value)
        assert "\n" not in message, case
        for word in words:
            assert word in message, (case, word, message)


def test_label_sets_hold_zero_or_one_per_label():
    sets = np.array([[1, 0, 1], [0, 0, 1], [1, 1, 1], [0, 1, 0], [1, 0, 0], [0, 0, 1]])
    frame = pd.DataFrame(sets, index=ITEMS, columns=CLASSES)
    read = read_predictions(frame, ITEMS, CLASSES, sets=True)
    assert read.kind == "sets" and read.values.dtype == np.float64
    np.testing.assert_array_equal(read.values, sets)
    with pytest.raises(ValueError, match=r"row 0 \(item 'i0'\): 0.5 for label 'b'"):
        read_predictions(frame.replace({0: 0.5}), ITEMS, CLASSES, sets=True)
