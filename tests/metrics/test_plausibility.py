"""The metrics' input convention: as_plausibility and point_estimate."""

import numpy as np
import pytest
import xarray as xr

from plausible.metrics import as_plausibility, label_certainty, point_estimate, sample_dims


def _draws():
    rng = np.random.default_rng(0)
    return xr.DataArray(
        rng.dirichlet(np.ones(3), size=(2, 5, 4)),
        dims=("chain", "draw", "item", "class"),
        coords={"item": list("wxyz"), "class": ["a", "b", "c"]},
        name="plausibility",
    )


def test_accepts_dataarray_dataset_and_datatree():
    p = _draws()
    assert as_plausibility(p) is p
    assert as_plausibility(p.to_dataset()).identical(p)
    tree = xr.DataTree.from_dict({"posterior": p.to_dataset(), "sample_stats": xr.Dataset()})
    assert as_plausibility(tree).identical(p)
    np.testing.assert_array_equal(label_certainty(tree).values, label_certainty(p).values)
    assert sample_dims(tree) == ("chain", "draw")


def test_clear_errors():
    p = _draws()
    with pytest.raises(ValueError, match="no variable 'plausibility'"):
        as_plausibility(p.rename("theta").to_dataset())
    with pytest.raises(ValueError, match="no 'posterior' group"):
        as_plausibility(xr.DataTree.from_dict({"prior": p.to_dataset()}))
    with pytest.raises(ValueError, match="posterior group has no variable"):
        as_plausibility(xr.DataTree.from_dict({"posterior": xr.Dataset({"x": 1})}))
    with pytest.raises(ValueError, match=r"missing \['class'\]"):
        as_plausibility(p.rename({"class": "label"}))
    with pytest.raises(TypeError, match="point_estimate"):
        as_plausibility(np.zeros((2, 3)))


def test_point_estimate_wraps_an_item_class_array():
    probs = np.array([[0.1, 0.9], [0.6, 0.4], [0.5, 0.5]])
    p = point_estimate(probs, items=["u", "v", "w"], classes=["neg", "pos"])
    assert p.name == "plausibility"
    assert p.dims == ("chain", "draw", "item", "class") and p.shape == (1, 1, 3, 2)
    assert np.shares_memory(p.values, probs)
    np.testing.assert_array_equal(label_certainty(p).values, [[0, 1], [1, 0], [1, 0]])
    da = xr.DataArray(probs.T, dims=("class", "item"), coords={"item": [7, 8, 9]})
    p2 = point_estimate(da)
    assert p2["item"].values.tolist() == [7, 8, 9] and p2["class"].values.tolist() == [0, 1]
    assert point_estimate(probs > 0.5).dtype == np.float64  # one-hot majority vote as bool


def test_point_estimate_validation():
    with pytest.raises(ValueError, match="shape"):
        point_estimate(np.zeros(3))
    with pytest.raises(ValueError, match="item coords"):
        point_estimate(np.zeros((2, 3)), items=[1])
    with pytest.raises(ValueError, match="item 1 is not finite"):
        point_estimate(np.array([[0.5, 0.5], [np.nan, 1.0]]))
