"""Scores against gold: checked against scikit-learn's, and bad input named."""

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from plausible.diagnostics import proper_scores, reliability

metrics = pytest.importorskip("sklearn.metrics")


def probabilities(seed=0, n=200, classes=("ant", "bee", "cat")):
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.full(len(classes), 0.6), n)
    items = [f"q{i}" for i in range(n)]
    gold = pd.Series([classes[rng.choice(len(classes), p=row)] for row in p], index=items)
    return xr.DataArray(p, dims=("item", "class"), coords={"item": items, "class": list(classes)}), gold


def test_scores_match_scikit_learn_and_the_table_its_own_sums():
    p, gold = probabilities()
    gold = gold.iloc[::-1]  # any order, any subset of the items
    scores = proper_scores(p, gold)
    frame = p.to_pandas().loc[gold.index]
    onehot = (frame.columns.to_numpy() == gold.to_numpy()[:, None]).astype(float)
    assert scores["accuracy"] == pytest.approx(metrics.accuracy_score(gold, frame.idxmax(axis=1)))
    assert scores["log_loss"] == pytest.approx(metrics.log_loss(gold, frame, labels=list(frame.columns)))
    assert scores["brier"] == pytest.approx(((frame.to_numpy() - onehot) ** 2).sum(axis=1).mean())
    table = reliability(p, gold, n_bins=5)
    assert table["items"].sum() == len(gold)
    top = frame.max(axis=1).to_numpy()
    hit = frame.idxmax(axis=1).to_numpy() == gold.to_numpy()
    low = top < 0.4  # the bins [0.2, 0.4) and below
    assert table["items"].iloc[0] == low.sum()
    assert table["accuracy"].iloc[0] == pytest.approx(hit[low].mean())
    gaps = (table["items"] * (table["accuracy"] - table["confidence"]).abs()).sum() / len(gold)
    assert proper_scores(p, gold, n_bins=5)["ece"] == pytest.approx(gaps)


def test_a_confident_miss_costs_the_floor_not_infinity_and_bad_input_is_named():
    p = pd.DataFrame({"a": [1.0, 0.0], "b": [0.0, 1.0]}, index=["x", "y"])
    assert proper_scores(p, pd.Series(["b", "b"], index=["x", "y"]))["log_loss"] == pytest.approx(
        -np.log(1e-15) / 2)
    with pytest.raises(ValueError, match="gold item 'z' has no probabilities"):
        proper_scores(p, pd.Series(["a"], index=["z"]))
    with pytest.raises(ValueError, match="gold class 'c' of item 'y' is not one of"):
        proper_scores(p, pd.Series(["a", "c"], index=["x", "y"]))
    with pytest.raises(ValueError, match="item 'x' are not finite"):
        proper_scores(p.assign(a=[np.nan, 0.0]), pd.Series(["a"], index=["x"]))
