"""Every plausibility metric accepts a candidate-storage trace (Plackett–Luce sampler) and
gives the same result as on the dense trace, densifying chunk by chunk."""

import dask.array as da
import numpy as np
import pytest

import plausible.metrics as metrics
from plausible.data.rankings import Rankings
from plausible.inference.plackett_luce_sampler import sample_candidates
from plausible.metrics import candidates

SELECTORS = [
    [[[0, 1], [2]], [[1], [3, 0]]],
    [[[2, 3, 4]], [[4], [0]], [[0, 1, 2, 3, 4, 5]]],
    [[[5]]],
    [[[6], [1]], [[6]]],
]
K = 9


@pytest.fixture(scope="module")
def trace():
    rankings = Rankings.from_selectors(SELECTORS, classes=K)
    return sample_candidates(rankings, draws=60, tune=20, chains=2, seed=3, shape=1.0)


@pytest.fixture(scope="module")
def dense(trace):
    return candidates.to_dense(trace)


@pytest.fixture(scope="module")
def inputs():
    rng = np.random.default_rng(0)
    scores = rng.random((len(SELECTORS), K))
    sets = rng.random((len(SELECTORS), K)) < 0.4
    sets[:, 0] = True
    groups = np.array([0, 1, 2, 0, 1, 2, 0, 1, 2])
    return scores, sets, groups


CASES = {
    "label_certainty": lambda p, s, m, g: metrics.label_certainty(p),
    "annotation_certainty": lambda p, s, m, g: metrics.annotation_certainty(p, top=2),
    "top_classes": lambda p, s, m, g: metrics.top_classes(p, k=3),
    "ua_topk_accuracy": lambda p, s, m, g: metrics.ua_topk_accuracy(p, s, k=2),
    "ua_set_accuracy": lambda p, s, m, g: metrics.ua_set_accuracy(p, m),
    "ua_overlap": lambda p, s, m, g: metrics.ua_overlap(p, m),
    "ua_average_overlap": lambda p, s, m, g: metrics.ua_average_overlap(p, s, depth=3),
    "group_certainty": lambda p, s, m, g: metrics.group_certainty(p, g),
    "expected_group": lambda p, s, m, g: metrics.expected_group(p, g),
}


def test_as_plausibility_is_lazy_and_chunked(trace, dense):
    with metrics.set_options(chunk_elements=2 * 10 * K):
        lazy = metrics.as_plausibility(trace)
    assert isinstance(lazy.data, da.Array)
    assert max(lazy.data.chunks[2]) * max(lazy.data.chunks[1]) * K <= 2 * 10 * K
    assert lazy.dims == dense.dims
    np.testing.assert_array_equal(lazy.values, dense.values)
    # a block densifies only its own items / draws
    np.testing.assert_array_equal(lazy[1, 5:9, 1:3].values, dense.values[1, 5:9, 1:3])


@pytest.mark.parametrize("chunk_elements", [2**24, 3 * K])
@pytest.mark.parametrize("name", sorted(CASES))
def test_metric_on_candidates_equals_dense(trace, dense, inputs, name, chunk_elements):
    with metrics.set_options(chunk_elements=chunk_elements):
        got = CASES[name](trace, *inputs)
        expected = CASES[name](dense, *inputs)
    np.testing.assert_allclose(np.asarray(got.values, dtype=float),
                               np.asarray(expected.values, dtype=float))
    assert got.dims == expected.dims


def test_candidate_helpers_agree_with_generic_metrics(trace):
    np.testing.assert_array_equal(candidates.top_classes(trace, 2).values,
                                  metrics.top_classes(trace, 2).values)
    np.testing.assert_allclose(candidates.label_certainty(trace).values,
                               metrics.label_certainty(trace).values)
