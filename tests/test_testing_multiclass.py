"""Algorithm 4 (multi-class testing, spec 03 §3): count moments vs sampled label vectors,
projection, recovery of the confusion matrix."""

import numpy as np
import pytest

from plausible.data.su_simulation import simulate_su
from plausible.metrics.testing_multiclass import (
    algorithm_multiclass, count_moments, project_rows, sample_classes, sample_confusion_counts,
    sampled_confusion_counts,
)
from plausible.models.fallibility import label_likelihood

K_TRUE = np.array([[0.7, 0.1, 0.1, 0.1], [0.1, 0.6, 0.2, 0.1],
                   [0.05, 0.15, 0.7, 0.1], [0.1, 0.1, 0.1, 0.7]])


@pytest.fixture(scope="module")
def setting():
    s = simulate_su(1000, 5, prior=[0.4, 0.3, 0.2, 0.1], confusion=K_TRUE, seed=0)
    L = label_likelihood(s.labels, s.difficulty, s.fallibility)
    return s, L, algorithm_multiclass(L, s.prior, s.prediction, n_samples=2000, seed=0)


def test_count_moments_match_sampling(setting):
    s, _, r = setting
    y = sample_classes(r.posterior, 20000, seed=1)
    counts = sampled_confusion_counts(y, s.prediction, 4)  # (M, yhat, y)
    mean, var, acc = count_moments(r.posterior, s.prediction)
    sd = np.sqrt(var)
    np.testing.assert_allclose(counts.mean(0), mean, atol=0.05 * sd.max() + 0.02)
    np.testing.assert_allclose(counts.std(0), sd, rtol=0.05, atol=0.02)
    lo, hi = np.quantile(counts, [0.025, 0.975], axis=0)
    np.testing.assert_allclose(lo, r.counts_interval[0], atol=0.15 * sd.max() + 1)
    np.testing.assert_allclose(hi, r.counts_interval[1], atol=0.15 * sd.max() + 1)
    sampled_acc = (y == s.prediction).mean(1)
    assert abs(sampled_acc.mean() - acc.mean()) < 0.05 * acc.std()
    assert sampled_acc.std() == pytest.approx(acc.std(), rel=0.05)


def test_recovers_confusion(setting):
    s, _, r = setting
    assert r.converged
    truth = sampled_confusion_counts(s.truth[None], s.prediction, 4)[0]
    covered = (truth >= r.counts_interval[0]) & (truth <= r.counts_interval[1])
    assert covered.mean() >= 0.8
    # Against the realised P(yhat | y) (class 3 has only ~100 items: its row is noisy).
    realised = (truth / truth.sum(0, keepdims=True)).T
    np.testing.assert_allclose(r.confusion, realised, atol=0.1)
    assert abs(r.accuracy.mean() - (s.truth == s.prediction).mean()) < 3 * r.accuracy.std()


def test_projection_and_seed(setting):
    K = project_rows(np.array([[1.0, 0.0, 0.0], [0.5, 0.5, 0.0]]), 0.01)
    np.testing.assert_allclose(K.sum(1), 1)
    assert K.min() >= 0.01 - 1e-12 and K.max() <= 0.99 + 1e-12
    np.testing.assert_allclose(K[0], [0.98, 0.01, 0.01], atol=1e-9)
    with pytest.raises(ValueError, match="infeasible"):
        project_rows(np.eye(3), 0.5)
    s, L, _ = setting
    a = algorithm_multiclass(L, s.prior, s.prediction, n_samples=300, j_max=2, seed=3)
    b = algorithm_multiclass(L, s.prior, s.prediction, n_samples=300, j_max=2, seed=3)
    np.testing.assert_array_equal(a.confusion, b.confusion)
    with pytest.raises(ValueError, match="outside the classes"):
        algorithm_multiclass(L, s.prior, np.full(1000, 4))


def test_sample_confusion_counts_matches_count_moments(setting):
    s, _, r = setting
    counts = sample_confusion_counts(r.posterior, s.prediction, 20000, seed=2)  # (M, yhat, y)
    mean, var, _ = count_moments(r.posterior, s.prediction)
    sd = np.sqrt(var)
    sizes = np.bincount(s.prediction, minlength=4)
    np.testing.assert_array_equal(counts.sum(2), np.broadcast_to(sizes, (20000, 4)))
    np.testing.assert_allclose(counts.mean(0), mean, atol=5 * sd.max() / np.sqrt(20000))
    np.testing.assert_allclose(counts.std(0), sd, rtol=0.05, atol=0.02)
    again = sample_confusion_counts(r.posterior, s.prediction, 20000, seed=2)
    np.testing.assert_array_equal(counts, again)
