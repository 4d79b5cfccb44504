import numpy as np
import pytest

from plausible.data.classifier_simulators import simulate_classifier, simulate_classifiers


def _point(n_items=400, n_classes=20, seed=0):
    rng = np.random.default_rng(seed)
    point = rng.dirichlet(np.full(n_classes, 0.3), size=n_items)
    point[point < 0.05] = 0.0
    return point


def test_perfect_classifier_ranks_consensus_first():
    point = _point()
    scores = simulate_classifier(point, 1.0, np.random.default_rng(1))
    assert np.array_equal(scores.argmax(axis=1), point.argmax(axis=1))
    order = np.argsort(-scores, axis=1, kind="stable")[:, :3]
    assert np.all(np.sort(scores, axis=1)[:, -3:] == [1.0, 2.0, 3.0])
    assert len({tuple(r) for r in np.sort(order, axis=1)}) > 1
    assert all(len(set(r)) == 3 for r in order)


def test_quality_orders_top3_hit_rate():
    point = _point()
    consensus = point.argmax(axis=1)
    scores = simulate_classifiers(point, {"A": 0.9, "B": 0.6, "C": 0.3}, seed=2)
    hits = {}
    for name, s in scores.items():
        top3 = np.argsort(-s, axis=1, kind="stable")[:, :3]
        hits[name] = (top3 == consensus[:, None]).any(axis=1).mean()
    assert hits["A"] > hits["B"] > hits["C"]
    assert abs(hits["A"] - 0.9) < 0.06


def test_seeded_and_validated():
    point = _point(50)
    a = simulate_classifiers(point, {"A": 0.5}, seed=3)["A"]
    b = simulate_classifiers(point, {"A": 0.5}, seed=3)["A"]
    assert np.array_equal(a, b)
    with pytest.raises(ValueError, match="quality"):
        simulate_classifier(point, 1.5, np.random.default_rng(0))
    with pytest.raises(ValueError, match=r"point\[0, 1\]"):
        bad = point.copy()
        bad[0, 1] = -1
        simulate_classifier(bad, 0.5, np.random.default_rng(0))
