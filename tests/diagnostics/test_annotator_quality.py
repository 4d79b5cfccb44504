"""Each annotator's share of labels right, against the same share computed label by label
from the stored plausibilities, and against the simulated truth of a crowd with a spammer."""

import warnings

import numpy as np
import xarray as xr

import plausible as pl
from plausible.diagnostics import annotator_quality


def test_share_right_is_the_mean_plausibility_of_each_label():
    rng = np.random.default_rng(0)
    labels = pl.data.Labels(np.array([0, 0, 1, 1, 2]), np.array([0, 1, 0, 1, 1]),
                            np.array([0, 1, 1, 1, 0]), np.arange(3), np.array(["a", "b"]),
                            np.arange(2))
    p = rng.dirichlet(np.ones(2), size=(2, 10, 3))
    trace = xr.DataTree.from_dict({"posterior": xr.Dataset(
        {"plausibility": (("chain", "draw", "item", "class"), p)})})
    table = annotator_quality(trace, labels, draws=20)
    by_hand = {"a": (p[..., 0, 0] + p[..., 1, 1]) / 2,
               "b": (p[..., 0, 1] + p[..., 1, 1] + p[..., 2, 0]) / 3}
    for name, share in by_hand.items():
        row = table.loc[name]
        assert row["labels"] == {"a": 2, "b": 3}[name]
        np.testing.assert_allclose(row["share_correct"], share.mean())
        np.testing.assert_allclose([row["q05"], row["q95"]], np.quantile(share, [0.05, 0.95]))


def test_a_spammer_is_found_with_a_wide_interval_for_few_labels():
    simulated = pl.data.simulate_glad(150, 6, n_classes=3, ability=(2.0, 0.3), seed=3)
    labels = simulated.labels
    rng = np.random.default_rng(1)
    spam = labels.annotator == 0
    label = np.where(spam, rng.integers(0, 3, labels.label.size), labels.label)
    crowd = pl.data.Labels(labels.item, labels.annotator, label, labels.items, labels.annotators,
                           labels.classes)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = pl.aggregate(crowd, "dawid-skene", draws=300, seed=0)
    table = annotator_quality(result.trace, crowd)
    assert table["share_correct"].idxmin() == labels.annotators[0]
    right = np.bincount(crowd.annotator, crowd.label == simulated.truth[crowd.item])
    np.testing.assert_allclose(table["share_correct"], right / table["labels"], atol=0.1)
