"""Model-agnostic posterior predictive checks of long categorical annotations."""

import itertools

import numpy as np
import pandas as pd
import pytest

from plausible.data.labels import Labels
from plausible.diagnostics.annotation_predictive import annotation_predictive_check


def _complete(rng, n_items=30, n_annotators=3):
    item, annotator = np.divmod(np.arange(n_items * n_annotators), n_annotators)
    frame = pd.DataFrame({"item": item, "annotator": annotator, "label": rng.integers(0, 2, item.size)})
    return Labels.from_frame(frame, classes=[0, 1])


def test_statistics_against_brute_force():
    rng = np.random.default_rng(0)
    labels = _complete(rng)
    check = annotation_predictive_check(labels, labels.label[None].repeat(4, axis=0))
    table = labels.to_frame().pivot(index="item", columns="annotator", values="label")
    patterns = table.astype(str).agg("".join, axis=1).value_counts()
    for pattern in map("".join, itertools.product("01", repeat=3)):
        assert check.observed["pattern"][pattern] == patterns.get(pattern, 0)
    votes = table.sum(axis=1).value_counts()
    for v in range(4):
        assert check.observed["votes"][v] == votes.get(v, 0)
    np.testing.assert_allclose(check.observed["annotator_rate"].to_numpy(), table.mean(axis=0).to_numpy())
    assert check.observed["agreement"]["0-2"] == pytest.approx((table[0] == table[2]).mean())
    # replicates identical to the observation: every mid p-value is 1/2, all inside
    for name in check.names:
        summary = check.summary(name)
        assert (summary["p_value"] == 0.5).all() and summary["inside"].all()


def test_incomplete_replicated_design_agreement_and_p_values():
    # item 0: annotator a twice (1, 0), b once (1); item 1: a once (1), c once (0); item 2: b, c
    frame = pd.DataFrame({"item": [0, 0, 0, 1, 1, 2, 2], "annotator": list("aabacbc"),
                          "label": [1, 0, 1, 1, 0, 1, 1]})
    labels = Labels.from_frame(frame, classes=[0, 1])
    rep = np.zeros((3, labels.n_annotations), dtype=int)  # all-zero replicates
    check = annotation_predictive_check(labels, rep)
    assert "pattern" not in check.names  # not a complete design
    agreement = check.observed["agreement"]
    assert agreement["a-b"] == pytest.approx(1 / 2)  # pairs (1,1) agree, (0,1) do not
    assert agreement["a-c"] == pytest.approx(0.0)
    assert agreement["b-c"] == pytest.approx(1.0)
    # all-zero replicates: rate 0 < observed 2/3 for a -> p-value 0; agreement 1 >= obs
    assert check.p_values("annotator_rate")["a"] == 0.0
    assert check.p_values("agreement")["a-c"] == 1.0
    np.testing.assert_array_equal(check.replicated["votes"].iloc[0].to_numpy(), [3, 0, 0, 0])


def test_rejects_bad_replicates():
    labels = _complete(np.random.default_rng(1))
    with pytest.raises(ValueError, match="observed design"):
        annotation_predictive_check(labels, np.zeros((2, 5), dtype=int))
    with pytest.raises(ValueError, match="class indices"):
        annotation_predictive_check(labels, np.full((2, labels.n_annotations), 2))
