"""Conformal prediction under ambiguous ground truth (:mod:`plausible.conformal`): Monte
Carlo sets reach nominal coverage of labels drawn from a known ground-truth distribution over
repeated calibration/test splits, single-label sets miss it when the truth is ambiguous and
reach it when it is not; p-values against their formula; both storages; bad input."""

import numpy as np
import pandas as pd
import pytest
import xarray as xr

import plausible as pl
from plausible import conformal

K = 6


def world(rng, n, concentration):
    """Known label distributions ``lambda`` (item, class), Dirichlet or one-hot
    (``concentration=0``), and a classifier's noisy scores."""
    truth = (rng.dirichlet(np.full(K, concentration), size=n) if concentration
             else np.eye(K)[rng.integers(K, size=n)])
    return truth, np.log(truth + 1e-3) + rng.normal(0, 0.5, size=(n, K))


def as_target(truth):
    return xr.DataArray(truth[None], dims=("draw", "item", "class"),
                        coords={"item": np.arange(truth.shape[0]), "class": np.arange(K)})


def coverage_over_splits(concentration, method, repeats=150, n=400, alpha=0.1, **options):
    """Mean (over test items and repeats) probability that the set covers a label drawn from
    the item's ground-truth distribution, and its Monte Carlo standard error."""
    rng = np.random.default_rng(7)
    covered = []
    for repeat in range(repeats):
        truth, scores = world(rng, n, concentration)
        half = n // 2
        predictor = conformal.calibrate(scores[:half], as_target(truth[:half]), alpha=alpha,
                                        method=method, seed=repeat, **options)
        sets = predictor.predict(scores[half:]).values
        covered.append((truth[half:] * sets).sum(axis=1).mean())
    return np.mean(covered), np.std(covered) / np.sqrt(repeats)


@pytest.mark.parametrize("concentration", [0.3, 1.0])
def test_monte_carlo_sets_cover_ambiguous_truth_and_single_label_sets_do_not(concentration):
    """Nominal 0.9: Monte Carlo with the ECDF correction lies within three standard errors of
    [0.9, 0.9 + 1/(n_B + 1)] (the conformal guarantee's band, n_B = 100 correction items);
    calibrating on the most plausible class covers far less."""
    mean, se = coverage_over_splits(concentration, "monte-carlo")
    assert 0.9 - 3 * se <= mean <= 0.9 + 1 / 101 + 3 * se
    single, se_single = coverage_over_splits(concentration, "single-label")
    assert single < 0.9 - 0.1


def test_single_label_sets_cover_when_the_truth_is_not_ambiguous():
    """With one-hot distributions the most plausible class is the label: single-label
    conformal is valid again (guarantee band [0.9, 0.9 + 1/201])."""
    mean, se = coverage_over_splits(0, "single-label", repeats=100)
    assert 0.9 - 3 * se <= mean <= 0.9 + 1 / 201 + 3 * se


def test_p_values_follow_their_formula():
    calibration = np.array([[0.1, 0.9], [0.6, 0.4], [0.3, 0.7]])
    target = as_target_two(np.array([[0.0, 1.0], [1.0, 0.0], [0.0, 1.0]]))
    predictor = conformal.calibrate(calibration, target, alpha=0.3, method="single-label")
    test = np.array([[0.65, 0.35], [0.95, 0.05]])
    p = predictor.p_values(test).values
    # calibration conformities 0.9, 0.6, 0.7: p = (1 + #{E_i <= e}) / 4
    expected = np.array([[(1 + 1) / 4, (1 + 0) / 4], [(1 + 3) / 4, 1 / 4]])
    np.testing.assert_allclose(p, expected)
    assert predictor.predict(test).values.tolist() == [[True, False], [True, False]]
    # Monte Carlo without the correction, one-hot targets: the same p-values
    mc = conformal.calibrate(calibration, target, alpha=0.3, samples=5, ecdf=False, seed=0)
    np.testing.assert_allclose(mc.p_values(test).values, expected)


def as_target_two(truth):
    return xr.DataArray(truth[None], dims=("draw", "item", "class"),
                        coords={"item": np.arange(truth.shape[0]), "class": ["x", "y"]})


def test_a_candidate_form_trace_calibrates_like_its_dense_view():
    rng = np.random.default_rng(0)
    counts = rng.multinomial(3, [0.4, 0.2, 0.1, 0.1, 0.05, 0.05, 0.05, 0.05], size=60)
    votes = pl.data.Votes(counts, np.arange(60), np.array(list("abcdefgh")))
    result = pl.aggregate(votes, "dirichlet", draws=200, chains=2, seed=0)
    assert pl.metrics.storage_form(result.trace) == "candidate"
    scores = np.log(counts + 1) + rng.normal(0, 0.3, counts.shape)
    dense = pl.metrics.to_dense(result.trace)
    a = conformal.calibrate(scores, result.trace, seed=3).p_values(scores).values
    b = conformal.calibrate(scores, dense, seed=3).p_values(scores).values
    np.testing.assert_allclose(a, b)
    sets = result.prediction_sets(pd.DataFrame(scores, columns=list("abcdefgh")), alpha=0.2, seed=1)
    assert sets.dims == ("item", "class") and sets.sizes["item"] == 60
    report = conformal.coverage(sets, result, labels=result.labels()["top_class"])
    assert {"set_size", "coverage_plausibility", "coverage_labels"} <= set(report.index)
    new = pd.DataFrame(scores[:5], index=[f"new{i}" for i in range(5)], columns=list("abcdefgh"))
    assert result.prediction_sets(scores, test=new)["item"].values.tolist() == list(new.index)


@pytest.mark.parametrize("call, message", [
    (lambda s, t: conformal.calibrate(s, t, alpha=0), r"alpha must lie in \(0, 1\)"),
    (lambda s, t: conformal.calibrate(s, t, alpha=1.2), r"alpha must lie in \(0, 1\)"),
    (lambda s, t: conformal.calibrate(s[:5], t), "scores has shape"),
    (lambda s, t: conformal.calibrate(s[:, :3], t), "scores has shape"),
    (lambda s, t: conformal.calibrate(s, t, method="split"), "method must be one of"),
    (lambda s, t: conformal.calibrate(s, t, samples=0), "samples must be a positive"),
    (lambda s, t: conformal.calibrate(s, t, method="single-label", labels=np.full(20, 9)),
     "label 9 is not one of the classes"),
    (lambda s, t: conformal.calibrate(s[:0], t.isel(item=slice(0, 0))), "calibration set is empty"),
    (lambda s, t: conformal.calibrate(s[:1], t.isel(item=slice(0, 1))), "at least one item on each"),
    (lambda s, t: conformal.calibrate(s, t).predict(s[:, :4]), r"scores must be \(item, class=6\)"),
    (lambda s, t: conformal.calibrate(np.where(np.arange(20)[:, None] == 4, np.nan, s), t),
     "scores of item 4 contain NaN"),
])
def test_bad_input_is_named(call, message):
    rng = np.random.default_rng(1)
    truth, scores = world(rng, 20, 1.0)
    with pytest.raises(ValueError, match=message):
        call(scores, as_target(truth))


def test_test_scores_must_name_the_calibration_classes():
    rng = np.random.default_rng(2)
    truth, scores = world(rng, 20, 1.0)
    predictor = conformal.calibrate(scores, as_target(truth), seed=0)
    frame = pd.DataFrame(scores[:3], columns=[f"c{k}" for k in range(K)])
    with pytest.raises(ValueError, match="score columns must be the classes"):
        predictor.predict(frame)
