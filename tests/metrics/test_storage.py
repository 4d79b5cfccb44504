"""Every plausibility metric reads candidate-form traces natively (never densifying them) and
gives the dense path's result, on random sparse problems with ties: tied candidates, pooled
shares equal to candidate values, empty pools, items with no candidates, several chunk sizes
and dask-backed storage."""

import dask.array as da
import numpy as np
import pytest
import xarray as xr

import plausible.metrics as metrics
from plausible.metrics.draws import CandidateDraws
from plausible.metrics.storage import CandidateStorage, candidate_groups

K = 9


def sparse_trace(seed, n_items=7, chains=2, draws=30, width=K, dtype=np.float32):
    """A candidate-form trace with ties everywhere: values on a coarse grid, so candidates tie
    with each other and with the pooled share; some items name every class (empty pool), one
    names none."""
    rng = np.random.default_rng(seed)
    candidate_class = np.full((n_items, width), -1)
    n_pooled = np.empty(n_items, dtype=np.int64)
    for i in range(n_items):
        n = 0 if i == 0 else (K if i == 1 else rng.integers(1, 6))  # item 1: no pool
        candidate_class[i, :n] = rng.choice(K, size=n, replace=False)
        n_pooled[i] = K - n
    grid = rng.integers(0, 4, size=(chains, draws, n_items, width + 1)).astype(float) + 1.0
    grid[..., :-1][:, :, candidate_class < 0] = 0.0
    # pooled mass = (a grid value) * n_pooled: the share ties with candidates on the grid
    grid[..., -1] *= n_pooled
    total = grid.sum(axis=-1, keepdims=True)
    values = (grid / total).astype(dtype)
    posterior, constant = candidate_groups(
        values[..., :-1], values[..., -1], candidate_class, n_pooled,
        items=np.array([f"case-{i}" for i in range(n_items)]),
        classes=np.array([f"c{k}" for k in range(K)]))
    return xr.DataTree.from_dict({"posterior": posterior, "constant_data": constant})


def _inputs(trace, seed):
    rng = np.random.default_rng(seed)
    n_items = trace["posterior"].sizes["item"]
    classes = trace["constant_data"]["class"].values
    items = trace["posterior"]["item"].values
    scores = xr.DataArray(rng.integers(0, 3, (n_items, K)).astype(float), dims=("item", "class"),
                          coords={"item": items, "class": classes})
    sets = rng.random((n_items, K)) < 0.4
    sets[:, 0] = True
    blocks = np.where(rng.random((n_items, K)) < 0.5, rng.integers(0, 3, (n_items, K)), -1)
    groups = np.arange(K) % 3
    return scores, sets, blocks, groups


CASES = {
    "label_certainty": lambda p, s, m, b, g: metrics.label_certainty(p),
    "annotation_certainty_1": lambda p, s, m, b, g: metrics.annotation_certainty(p, top=1),
    "annotation_certainty_3": lambda p, s, m, b, g: metrics.annotation_certainty(p, top=3),
    "group_certainty": lambda p, s, m, b, g: metrics.group_certainty(p, g),
    "expected_group": lambda p, s, m, b, g: metrics.expected_group(p, g),
    "top_classes": lambda p, s, m, b, g: metrics.top_classes(p, k=4),
    "ua_topk_accuracy": lambda p, s, m, b, g: metrics.ua_topk_accuracy(p, s, k=2),
    "ua_set_accuracy": lambda p, s, m, b, g: metrics.ua_set_accuracy(p, m),
    "ua_overlap": lambda p, s, m, b, g: metrics.ua_overlap(p, m),
    "ua_coverage": lambda p, s, m, b, g: metrics.ua_coverage(p, m),
    "ua_average_overlap": lambda p, s, m, b, g: metrics.ua_average_overlap(p, s, depth=3),
    "ua_ranking_overlap": lambda p, s, m, b, g: metrics.ua_ranking_overlap(p, b, depth=3),
    "posterior_mean": lambda p, s, m, b, g: metrics.posterior_mean(p),
}


@pytest.fixture
def never_densify(monkeypatch):
    """Metrics on candidate form must not densify (to_dense, the reference, may)."""

    def refuse(*args, **kwargs):
        raise AssertionError("a metric densified candidate-form draws")

    monkeypatch.setattr(CandidateStorage, "densify", refuse)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("chunk_elements", [2**24, 11, 3 * (K + 1)])
def test_every_metric_on_candidates_equals_the_dense_path(seed, chunk_elements, never_densify):
    trace = sparse_trace(seed)
    storage = CandidateStorage.from_trace(trace)
    dense = xr.DataArray(
        _dense(storage, storage.values.values, storage.pooled.values),
        dims=("chain", "draw", "item", "class"),
        coords={"chain": storage.values["chain"].values, "draw": storage.values["draw"].values,
                "item": storage.items, "class": storage.classes}, name="plausibility")
    inputs = _inputs(trace, seed)
    with metrics.set_options(chunk_elements=chunk_elements):
        for name, metric in CASES.items():
            got, expected = metric(trace, *inputs), metric(dense, *inputs)
            xr.testing.assert_allclose(got, expected, rtol=1e-12, atol=0)
            assert got.dims == expected.dims and got.name == expected.name, name


def _dense(storage, values, pooled):
    """Densify by hand, independently of CandidateStorage.densify: candidates in their class
    slots, every pooled class the pooled mass over n_pooled rounded to the storage dtype."""
    out = np.zeros((*values.shape[:3], K), dtype=values.dtype)
    for i, (classes, n) in enumerate(zip(storage.candidate_class, storage.n_pooled)):
        pool = [c for c in range(K) if c not in set(classes[classes >= 0])]
        assert len(pool) == n
        share = (pooled[:, :, i].astype(np.float64) / max(n, 1)).astype(values.dtype)
        out[:, :, i, pool] = share[..., None]
        for slot, c in enumerate(classes):
            if c >= 0:
                out[:, :, i, c] = values[:, :, i, slot]
    return out


def test_to_dense_is_the_hand_densified_trace():
    trace = sparse_trace(5)
    storage = CandidateStorage.from_trace(trace)
    expected = _dense(storage, storage.values.values, storage.pooled.values)
    np.testing.assert_array_equal(metrics.to_dense(trace).values, expected)
    np.testing.assert_array_equal(metrics.to_dense(trace, items=[3, 1]).values,
                                  expected[:, :, [3, 1]])
    lazy = metrics.as_plausibility(trace)
    assert isinstance(lazy.data, da.Array)
    np.testing.assert_array_equal(lazy.values, expected)


def test_dask_backed_storage_is_read_block_by_block(never_densify):
    trace = sparse_trace(3, n_items=11, draws=40)
    reference = metrics.annotation_certainty(trace, top=2)
    posterior = trace["posterior"].to_dataset().chunk({"draw": 7, "item": 4})
    lazy = xr.DataTree.from_dict({"posterior": posterior,
                                  "constant_data": trace["constant_data"].to_dataset()})
    assert isinstance(CandidateDraws(CandidateStorage.from_trace(lazy)).storage.values.data,
                      da.Array)
    with metrics.set_options(chunk_elements=50):
        xr.testing.assert_identical(metrics.annotation_certainty(lazy, top=2), reference)


def test_top_classes_serve_every_rank_metric(never_densify):
    """A sweep computes the top classes once; each metric then reads them (up to their depth)."""
    trace = sparse_trace(4)
    scores, sets, blocks, groups = _inputs(trace, 4)
    top = metrics.top_classes(trace, k=3)
    for name in ("label_certainty", "annotation_certainty_3", "group_certainty",
                 "ua_topk_accuracy", "ua_average_overlap", "ua_ranking_overlap"):
        xr.testing.assert_identical(CASES[name](top, scores, sets, blocks, groups),
                                    CASES[name](trace, scores, sets, blocks, groups))
    with pytest.raises(ValueError, match="go 3 deep; the metric needs the top 4"):
        metrics.top_classes(top, k=4)
