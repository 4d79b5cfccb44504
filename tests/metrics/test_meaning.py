"""The uncertainty-adjusted metrics read each draw as an item's distribution over classes; given
a latent-class model's true-class posterior they warn and name the quantity that fits it."""

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr

import plausible as pl
from plausible.metrics.meaning import ATTR, TRUE_CLASS_POSTERIOR, PlausibilityMeaningWarning

FAST = {"draws": 60, "chains": 2, "seed": 1}


def split_crowd() -> pd.DataFrame:
    """20 items, 4 annotators each; the first 10 split 2-2 between two classes."""
    rows = []
    for i in range(20):
        answers = ["a", "a", "b", "b"] if i < 10 else ["a", "a", "a", "b"] if i % 2 else ["b"] * 4
        rows += [(f"q{i}", f"w{j}", answer) for j, answer in enumerate(answers)]
    return pd.DataFrame(rows, columns=["item", "annotator", "label"])


@pytest.fixture(scope="module")
def true_class_fit():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return pl.aggregate(split_crowd(), "dawid-skene", **FAST)


def test_a_true_class_posterior_warns_in_every_form_it_reaches_a_metric(true_class_fit, tmp_path):
    trace = true_class_fit.trace
    scores = np.tile([0.9, 0.1], (20, 1))
    sets = pl.metrics.top_k_sets(scores, 1)
    loaded = pl.load(true_class_fit.save(Path(tmp_path) / "run.nc")).trace
    for source in (trace, trace["posterior"]["plausibility"], pl.metrics.top_classes(trace, 1),
                   loaded):
        assert pl.metrics.meaning.meaning_of(source) == TRUE_CLASS_POSTERIOR
        with pytest.warns(PlausibilityMeaningWarning, match="one true class"):
            pl.metrics.ua_topk_accuracy(source, scores)
    with pytest.warns(PlausibilityMeaningWarning, match="ua_coverage"):
        pl.metrics.ua_set_accuracy(trace, sets)


def test_the_advised_quantity_is_the_probability_that_the_true_class_is_covered():
    """The warning names ``ua_coverage``: with every draw saying P(true class = a) = 0.7, a
    classifier answering ``a`` is right with probability 0.7, while the UA accuracy scores
    each draw's top class as certain: 1."""
    draws = np.broadcast_to([0.7, 0.3], (1, 50, 4, 2))
    posterior = xr.DataArray(draws, dims=("chain", "draw", "item", "class"),
                             coords={"item": list("wxyz"), "class": ["a", "b"]},
                             attrs={ATTR: TRUE_CLASS_POSTERIOR})
    scores = np.tile([0.9, 0.1], (4, 1))
    covered = pl.metrics.ua_coverage(posterior, pl.metrics.top_k_sets(scores, 1))
    np.testing.assert_allclose(covered, 0.7)
    with pytest.warns(PlausibilityMeaningWarning):
        assert pl.metrics.ua_topk_accuracy(posterior, scores).mean().item() == 1.0


def test_evaluate_scores_a_true_class_posterior_by_the_probability_of_being_right(true_class_fit):
    """``Aggregation.evaluate`` of a latent-class model: the expected accuracy of its own most
    probable classes is the mean of their posterior probabilities (``probability_top_class``),
    exactly; top-k rows likewise; no warning."""
    labels = true_class_fit.labels()
    mean = true_class_fit.plausibility.sel(item=labels.index.values).values
    scores = np.random.default_rng(0).random(mean.shape)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PlausibilityMeaningWarning)
        table = true_class_fit.evaluate(labels["top_class"])
        top = true_class_fit.evaluate(scores, k=(1, 2))
    assert list(table.index) == ["accuracy"]
    assert table.loc["accuracy", "mean"] == pytest.approx(labels["probability_top_class"].mean())
    assert list(top.index) == ["top1_accuracy", "top2_accuracy"]
    order = pl.metrics.top_k_sets(scores, 1)
    assert top.loc["top1_accuracy", "mean"] == pytest.approx((mean * order).sum(axis=1).mean())
    assert top.loc["top2_accuracy", "mean"] == pytest.approx(1.0)


def test_an_item_distribution_does_not_warn():
    votes = pd.DataFrame({"a": [3, 1, 2], "b": [1, 3, 2]}, index=pd.Index(["x", "y", "z"], name="item"))
    fit = pl.aggregate(votes, "dirichlet", **FAST)
    assert fit.trace["posterior"].attrs[ATTR] == "item distribution"
    with warnings.catch_warnings():
        warnings.simplefilter("error", PlausibilityMeaningWarning)
        pl.metrics.ua_topk_accuracy(fit.trace, np.tile([0.6, 0.4], (3, 1)))
        pl.metrics.ua_topk_accuracy(fit.trace["posterior"]["plausibility"].copy(), np.ones((3, 2)))
