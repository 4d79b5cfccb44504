"""top_classes and the selection kernels: descending, ties lowest class index first."""

import numpy as np
import pytest
import xarray as xr

from plausible.metrics import top_classes
from plausible.metrics.selection import ARGMAX_SCAN_MAX_CLASSES, index_dtype, select_top, select_top1


def test_top_classes_by_hand():
    draws = np.array([[[0.2, 0.4, 0.4, 0.0], [0.25, 0.25, 0.25, 0.25]]])  # (draw, item, class)
    p = xr.DataArray(draws, dims=("draw", "item", "class"), coords={"item": ["u", "v"]})
    top = top_classes(p, 3)
    assert top.dims == ("draw", "item", "rank")
    np.testing.assert_array_equal(top["rank"].values, [1, 2, 3])
    np.testing.assert_array_equal(top.values[0], [[1, 2, 0], [0, 1, 2]])
    np.testing.assert_array_equal(top_classes(p, 1).values[0, :, 0], [1, 0])


@pytest.mark.parametrize("n_classes", [1, 3, 10, ARGMAX_SCAN_MAX_CLASSES + 6])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
def test_selection_equals_stable_descending_argsort(n_classes, dtype):
    rng = np.random.default_rng(n_classes)
    values = rng.integers(0, 4, size=(3, 50, n_classes)).astype(dtype)  # heavy ties
    expected = np.argsort(-values.astype(np.float64), axis=-1, kind="stable")
    np.testing.assert_array_equal(select_top1(values), expected[..., 0])
    for k in {1, min(2, n_classes), min(3, n_classes), n_classes}:
        np.testing.assert_array_equal(select_top(values, k), expected[..., :k])


def test_selection_on_non_contiguous_views():
    rng = np.random.default_rng(5)
    base = rng.random((4, 30, 7))
    view = base.transpose(1, 0, 2)[:, ::2]  # strided, not C-contiguous
    expected = np.argsort(-view, axis=-1, kind="stable")
    np.testing.assert_array_equal(select_top(view, 3), expected[..., :3])
    out = np.empty((30, 2, 3), dtype=np.int8)
    select_top(view, 3, out=out)
    np.testing.assert_array_equal(out, expected[..., :3])


def test_index_dtype():
    assert index_dtype(10) == np.int8
    assert index_dtype(419) == np.int16
    assert index_dtype(40000) == np.int32


def test_k_checked():
    p = xr.DataArray(np.ones((1, 2, 3)), dims=("draw", "item", "class"))
    with pytest.raises(ValueError, match="k must be in 1..3"):
        top_classes(p, 4)
    with pytest.raises(ValueError, match="k must be an int"):
        top_classes(p, 1.5)
