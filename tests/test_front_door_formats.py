"""Multi-label sets and pairwise comparisons through the front door: recognised from their
columns, fitted by their default models, summarised per item, checked, saved and reported,
and refused with one line naming the row on the command line."""

import warnings

import numpy as np
import pandas as pd
import pytest

import plausible as pl
from plausible.cli import main
from plausible.data.tables import from_frame, infer_format

FAST = dict(draws=150, chains=2, seed=0)


@pytest.fixture(scope="module")
def sets_table():
    simulated = pl.data.simulate_label_sets(n_items=40, seed=2)
    return simulated, simulated.data.to_wide().rename(columns={"item": "task",
                                                               "annotator": "worker"})


@pytest.fixture(scope="module")
def pairs_table():
    rng = np.random.default_rng(1)
    worth = np.linspace(2.0, -2.0, 12)  # item o0 the best
    rows = []
    for _ in range(400):
        i, j = rng.choice(12, 2, replace=False)
        won = rng.random() < 1 / (1 + np.exp(worth[j] - worth[i]))
        rows.append((f"w{rng.integers(6)}", f"o{i}", f"o{j}", f"o{i}" if won else f"o{j}"))
    return pd.DataFrame(rows, columns=["worker", "left", "right", "label"])


def test_shapes_are_recognised_from_their_columns(sets_table, pairs_table):
    _, wide = sets_table
    assert infer_format(wide) == "label_sets"
    assert infer_format(pairs_table) == "comparisons"
    long = pl.data.LabelSets.from_wide(wide).to_frame()
    assert infer_format(long) == "labels"  # the same columns as labels: named to be sets
    assert isinstance(from_frame(long, format="label_sets"), pl.data.LabelSets)
    with pytest.warns(UserWarning, match=r"sets.csv: \d+ \(item, annotator\) pairs carry "
                      "several different labels.*format='label_sets'"):
        tags = long.dropna(subset=["label"])  # an empty set has no label to read
        assert isinstance(from_frame(tags, source="sets.csv"), pl.data.Labels)
    one_each = tags.drop_duplicates(["item", "annotator"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # one label per pair: nothing to say
        from_frame(one_each)


def test_label_sets_through_aggregate(sets_table, tmp_path):
    simulated, wide = sets_table
    result = pl.aggregate(wide, **FAST)
    assert result.model == "multi-label" and "per label" in result.meaning
    frame = result.to_frame().set_index("item")
    assert {"predicted_set", "expected_hamming_accuracy"} <= set(frame.columns)
    truth = simulated.truth
    predicted = result.plausibility.transpose("item", "class").values >= 0.5
    order = pd.Index(simulated.data.items).get_indexer(result.plausibility["item"].values)
    assert (predicted == truth[order]).mean() > 0.85
    scores = result.evaluate(pd.DataFrame(predicted, index=result.plausibility["item"].values,
                                          columns=result.plausibility["class"].values))
    assert scores.loc["expected_hamming_accuracy", "mean"] > 0.85
    assert "co_occurrence" in result.check(draws=50).text
    loaded = pl.load(result.save(tmp_path / "sets.nc"))
    assert loaded.data.content_hash == result.data.content_hash
    page = result.report(tmp_path / "sets.html", draws=50).read_text()
    assert "mean_sensitivity" in page and "expected Hamming accuracy" in page
    assert "label sets to ask for" in page  # the next-annotation section plans sets


def test_comparisons_through_aggregate(pairs_table, tmp_path):
    result = pl.aggregate(pairs_table, **FAST)
    assert result.model == "noisy-bradley-terry" and "rank position" in result.meaning
    frame = result.to_frame().set_index("item").sort_values("expected_rank")
    true_rank = frame.index.str[1:].astype(int)
    assert np.corrcoef(np.arange(12), true_rank)[0, 1] > 0.8
    assert (frame["rank_q05"] <= frame["rank_q95"]).all()
    assert frame["expected_rank"].between(1, 12).all()
    assert frame["p_top3"].sum() == pytest.approx(3)  # three items are in the top 3
    assert not any(c.startswith("plausibility_") for c in frame.columns)  # no n rank columns
    pairs = result.next_items(3)
    assert list(pairs.columns[:3]) == ["left", "right", "information_gain"]
    assert len(set(pairs["left"]) | set(pairs["right"])) == 2 * len(pairs)
    loaded = pl.load(result.save(tmp_path / "pairs.nc"))
    assert loaded.data.content_hash == result.data.content_hash
    page = result.report(tmp_path / "pairs.html", draws=50).read_text()
    assert "posterior mean rank" in page and "likely spammers" in page


def test_bad_shapes_exit_2_naming_the_row(tmp_path, capsys, pairs_table):
    bad = pd.concat([pairs_table.head(5), pd.DataFrame(
        [("w1", "o3", "o3", "o3")], columns=pairs_table.columns)], ignore_index=True)
    bad.to_csv(tmp_path / "self.csv", index=False)
    outside = pairs_table.head(5).copy()
    outside.loc[2, "label"] = "zz"
    outside.to_csv(tmp_path / "outside.csv", index=False)
    wide = pd.DataFrame({"task": [0, 0], "worker": [0, 1], "a": [1, 0], "b": [2, 1]})
    wide.to_csv(tmp_path / "two.csv", index=False)
    for name, words in (("self.csv", ["self.csv", "row 5", "'o3' compared with itself"]),
                        ("outside.csv", ["outside.csv", "row 2", "'zz'"])):
        code = main(["aggregate", str(tmp_path / name), "-o", str(tmp_path / "out.csv")])
        err = capsys.readouterr().err
        assert code == 2 and len(err.strip().splitlines()) == 1, err
        assert all(word in err for word in words), err
    code = main(["aggregate", str(tmp_path / "two.csv"), "--format", "label_sets", "-o",
                 str(tmp_path / "out.csv")])
    err = capsys.readouterr().err
    assert code == 2 and "two.csv" in err and "'b'" in err, err


def test_compare_prefers_the_noisy_model_on_a_crowd_with_spammers():
    rng = np.random.default_rng(1)
    worth = np.linspace(2.0, -2.0, 15)
    rows = []
    for _ in range(500):
        i, j = rng.choice(15, 2, replace=False)
        worker = rng.integers(8)  # workers 0 and 1 answer at random
        p = 0.5 if worker < 2 else 1 / (1 + np.exp(worth[j] - worth[i]))
        rows.append((f"w{worker}", f"o{i}", f"o{j}", f"o{i}" if rng.random() < p else f"o{j}"))
    table = pd.DataFrame(rows, columns=["worker", "left", "right", "label"])
    comparison = pl.compare(table, ["bradley-terry", "noisy-bradley-terry"], seed=0,
                            progressbar=False)
    ranked = comparison.table
    assert ranked.index[0] == "noisy-bradley-terry"
    assert -ranked.loc["bradley-terry", "elpd_diff"] > 2 * ranked.loc["bradley-terry", "dse"]
    assert comparison.checks.loc[("bradley-terry", "annotator_consistency"), "missed"] > 0


def test_many_compared_items_keep_their_rank_summaries_without_the_rank_table(
        pairs_table, monkeypatch, tmp_path):
    """Past MAX_RANKED_ITEMS the model keeps no n x n rank table; the rank summaries come
    from the worths' draws, the same numbers (same seed, same draws), and what needs the
    table says so."""
    with_table = pl.aggregate(pairs_table, "bradley-terry", **FAST)
    monkeypatch.setattr(pl.models.bradley_terry, "MAX_RANKED_ITEMS", 11)
    result = pl.aggregate(pairs_table, "bradley-terry", **FAST)
    assert "plausibility" not in result.trace["posterior"]
    pd.testing.assert_frame_equal(result.labels(), with_table.labels())
    for read in (lambda: result.plausibility, lambda: result.certainty()):
        with pytest.raises(ValueError, match="12 compared items keeps no rank table"):
            read()
    loaded = pl.load(result.save(tmp_path / "ranks.nc"))
    pd.testing.assert_frame_equal(loaded.labels(), with_table.labels())
    assert "12 items x 12 classes" in repr(result)
    assert "posterior mean rank" in result.report(tmp_path / "ranks.html", draws=50).read_text()
