"""summarize / histogram on known numbers."""

import numpy as np
import pytest
import xarray as xr

from plausible.metrics import histogram, point_estimate, summarize, ua_topk_accuracy

# per (draw, item) 0/1 values; per-draw means 0.5, 1, 0, 0.5
VALUES = xr.DataArray(
    np.array([[[1, 0], [1, 1], [0, 0], [1, 0]]], dtype=float), dims=("chain", "draw", "item")
)


def test_summarize_known_numbers():
    summary = summarize(VALUES)
    np.testing.assert_allclose(summary["per_sample"].values, [[0.5, 1.0, 0.0, 0.5]])
    assert float(summary["mean"]) == 0.5
    np.testing.assert_allclose(float(summary["std"]), np.sqrt(0.125))  # ddof = 0
    assert float(summary["min"]) == 0.0 and float(summary["max"]) == 1.0
    assert summary.attrs["n_samples"] == 4
    np.testing.assert_allclose(float(summarize(VALUES, ddof=1)["std"]), np.sqrt(0.5 / 3))


def test_summarize_keeps_other_dims():
    values = VALUES.expand_dims(group=[0, 1]).copy()
    values[1] = 1.0
    summary = summarize(values)
    assert summary["mean"].dims == ("group",)
    np.testing.assert_allclose(summary["mean"].values, [0.5, 1.0])


def test_histogram_known_numbers():
    hist = histogram(VALUES, bins=2)
    np.testing.assert_array_equal(hist["count"].values, [1, 3])  # 0 | 0.5, 1, 0.5
    np.testing.assert_allclose(hist["edges"].values, [0.0, 0.5, 1.0])
    np.testing.assert_allclose(hist["left_edge"].values, [0.0, 0.5])
    per_item = histogram(xr.DataArray([0.0, 0.75, 1.25, 2.0], dims="item"), bins=[0, 1, 2], item_dim=None)
    np.testing.assert_array_equal(per_item["count"].values, [2, 2])


def test_point_estimate_summary_has_zero_spread():
    p = point_estimate(np.array([[0.7, 0.3], [0.4, 0.6], [0.5, 0.5]]))
    acc = ua_topk_accuracy(p, np.array([[1.0, 0.0], [1.0, 0.0], [1.0, 0.0]]), 1)
    summary = summarize(acc)
    np.testing.assert_allclose(float(summary["mean"]), 2 / 3)
    assert float(summary["std"]) == 0.0
    assert float(summary["min"]) == float(summary["max"]) == float(summary["mean"])
    assert histogram(acc, bins=3)["count"].values.sum() == 1


def test_summarize_needs_dataarray():
    with pytest.raises(TypeError, match="DataArray"):
        summarize(np.zeros(3))
