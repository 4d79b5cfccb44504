"""Chunked streaming gives exactly the unchunked results, for every layout."""

import numpy as np
import pytest
import xarray as xr

import plausible.metrics as pm
from plausible.metrics.chunks import chunk_steps, iter_blocks, read
from plausible.metrics.storage import layout


def _draws(shape=(2, 7, 13, 5), seed=4):
    rng = np.random.default_rng(seed)
    values = rng.integers(0, 5, size=shape).astype(float) + 0.5  # ties everywhere
    return xr.DataArray(
        values,
        dims=("chain", "draw", "item", "class"),
        coords={"chain": np.arange(shape[0]), "draw": np.arange(shape[1]), "item": np.arange(100, 100 + shape[2])},
        name="plausibility",
    )


def _all_metrics(p):
    rng = np.random.default_rng(9)
    scores = rng.integers(0, 3, size=(p.sizes["item"], p.sizes["class"])).astype(float)
    sets = pm.top_k_sets(scores, 2)
    sets[::3, 4] = True  # variable sizes
    groups = np.array([0, 1, 1, 2, 0])
    return {
        "top": pm.top_classes(p, 3),
        "certainty": pm.label_certainty(p),
        "ac1": pm.annotation_certainty(p, 1),
        "ac2": pm.annotation_certainty(p, 2),
        "ac3": pm.annotation_certainty(p, 3),
        "group": pm.group_certainty(p, groups),
        "risk": pm.expected_group(p, groups),
        "top1": pm.ua_topk_accuracy(p, scores, 1),
        "top3": pm.ua_topk_accuracy(p, scores, 3),
        "set": pm.ua_set_accuracy(p, sets),
        "overlap": pm.ua_overlap(p, sets),
        "ao": pm.ua_average_overlap(p, scores, 3),
    }


@pytest.mark.parametrize("chunk_elements", [1, 5, 17, 64])
def test_tiny_chunks_give_identical_results(chunk_elements):
    p = _draws()
    reference = _all_metrics(p)
    with pm.set_options(chunk_elements=chunk_elements):
        chunked = _all_metrics(p)
    for name, value in reference.items():
        xr.testing.assert_identical(chunked[name], value)


def test_other_layouts_give_identical_results():
    p = _draws()
    reference = _all_metrics(p)
    transposed = p.transpose("item", "class", "draw", "chain")  # a view; no flat reshape possible
    with pm.set_options(chunk_elements=10):
        result = _all_metrics(transposed)
    for name, value in reference.items():
        xr.testing.assert_identical(result[name].transpose(*value.dims), value)
    strided = p.isel(draw=slice(None, None, 2))  # non-flattenable sample dims
    np.testing.assert_array_equal(
        pm.top_classes(strided, 2).values, pm.top_classes(p, 2).values[:, ::2]
    )


def test_blocks_cover_everything_once_within_budget():
    p = _draws(shape=(3, 4, 11, 6))
    with pm.set_options(chunk_elements=40):
        lay = layout(p)
        seen = np.zeros((lay.n_samples, lay.n_items), dtype=int)
        for block in iter_blocks(lay, lay.n_classes):
            values = read(p, block)
            assert values.size <= 40
            assert np.shares_memory(values, p.values)  # views, never copies
            seen[block.samples, block.items] += 1
            np.testing.assert_array_equal(
                values, p.values.reshape(-1, 11, 6)[block.samples, block.items]
            )
        assert (seen == 1).all()
        assert chunk_steps(lay, lay.n_classes) == (1, 6)


def test_no_sample_dims():
    p = _draws().isel(chain=0, draw=0)
    assert pm.label_certainty(p).values.max() == 1.0
    assert pm.top_classes(p, 2).dims == ("item", "rank")


def test_set_options_validation_and_restore():
    before = pm.get_options()["chunk_elements"]
    with pm.set_options(chunk_elements=7):
        assert pm.get_options()["chunk_elements"] == 7
    assert pm.get_options()["chunk_elements"] == before
    with pytest.raises(ValueError, match="positive int"):
        pm.set_options(chunk_elements=0)
    with pytest.raises(ValueError, match="unknown option"):
        pm.set_options(chunks=3)
