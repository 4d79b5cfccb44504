"""Su simulator (Su 2024) and the known-parameter likelihood of plausible.maths.fallibility."""

import numpy as np
import pytest

from plausible.data.labels import Labels
from plausible.data.su_simulation import simulate_su
from plausible.maths.fallibility import error_rate, label_likelihood, label_log_likelihood

MAIN = dict(prior=[0.8, 0.2], operating_point=(0.8, 0.3), difficulty=(1, 5), fallibility=(0, 0.4))


def test_main_setting_frequencies():
    s = simulate_su(20000, 5, **MAIN, seed=3)
    assert abs(s.truth.mean() - 0.2) < 0.01
    assert abs(s.prediction[s.truth == 1].mean() - 0.8) < 0.015
    assert abs(s.prediction[s.truth == 0].mean() - 0.3) < 0.015
    per_item = np.bincount(s.labels.item, minlength=20000)
    assert per_item.min() >= 1
    # Each labeler labels an item with prob eta_t, conditioned on >= 1 label.
    eta = s.label_probability
    p_none = np.prod(1 - eta)
    assert abs(per_item.mean() - eta.sum() / (1 - p_none)) < 0.03
    # Label errors follow epsilon(delta_i, phi_t).
    eps = error_rate(s.difficulty[s.labels.item], s.fallibility[s.labels.annotator], 2)
    wrong = s.labels.label != s.truth[s.labels.item]
    assert abs(wrong.mean() - eps.mean()) < 0.01


def test_seed_reproducible_and_multiclass():
    K = np.full((4, 4), 0.1) + 0.6 * np.eye(4)
    a = simulate_su(300, 4, prior=[0.25] * 4, confusion=K, seed=7)
    b = simulate_su(300, 4, prior=[0.25] * 4, confusion=K, seed=7)
    np.testing.assert_array_equal(a.labels.label, b.labels.label)
    np.testing.assert_array_equal(a.prediction, b.prediction)
    assert set(np.unique(a.labels.label)) <= {0, 1, 2, 3}


def test_labels_only_without_classifier():
    """Without a classifier only labels are drawn; they follow the prior and the seed."""
    a = simulate_su(400, 3, prior=[0.8, 0.2], seed=1)
    b = simulate_su(400, 3, prior=[0.8, 0.2], seed=1)
    assert a.prediction is None and a.confusion is None
    np.testing.assert_array_equal(a.labels.label, b.labels.label)
    assert abs(a.truth.mean() - 0.2) < 0.06


def test_bad_input():
    with pytest.raises(ValueError, match="at most one"):
        simulate_su(10, 2, prior=[0.5, 0.5], operating_point=(0.8, 0.3), confusion=np.eye(2))
    with pytest.raises(ValueError, match="sum to 1"):
        simulate_su(10, 2, prior=[0.5, 0.6], operating_point=(0.8, 0.3))
    with pytest.raises(ValueError, match="operating point"):
        simulate_su(10, 2, prior=[0.5, 0.5], operating_point=(1.2, 0.3))
    with pytest.raises(ValueError, match="fallibility"):
        simulate_su(10, 2, prior=[0.5, 0.5], operating_point=(0.8, 0.3), fallibility=(0.5, 0.2))


def test_likelihood_matches_direct_product():
    s = simulate_su(200, 6, prior=[0.3, 0.3, 0.4], confusion=np.eye(3), seed=2)
    lab = s.labels
    L = label_likelihood(lab, s.difficulty, s.fallibility)
    eps = error_rate(s.difficulty[lab.item], s.fallibility[lab.annotator], 3)
    direct = np.ones((200, 3))
    for k in range(lab.n_annotations):  # independent route: one label at a time
        p = np.full(3, eps[k] / 2)
        p[lab.label[k]] = 1 - eps[k]
        direct[lab.item[k]] *= p
    np.testing.assert_allclose(L, direct, rtol=1e-12)


def test_perfect_labels_and_errors():
    lab = Labels(np.array([0, 0, 1, 1]), np.array([0, 1, 0, 1]), np.array([1, 1, 0, 1]),
                 np.arange(2), np.arange(2), np.arange(2))
    L = label_log_likelihood(lab, 0.0, [0.0, 0.2])
    assert L[0, 0] == -np.inf and np.isfinite(L[0, 1])
    assert np.isfinite(L[1, 0]) and L[1, 1] == -np.inf
    lab2 = Labels(np.array([0, 0]), np.array([0, 1]), np.array([0, 1]), np.arange(1), np.arange(2),
                  np.arange(2))
    assert np.all(label_log_likelihood(lab2, 0.0, 0.0) == -np.inf)  # contradictory perfect labels
    with pytest.raises(ValueError, match=r"fallibility\[1\] = 1.5"):
        label_likelihood(lab, 0.1, [0.1, 1.5])
    with pytest.raises(ValueError, match="difficulty must have shape"):
        label_likelihood(lab, [0.1, 0.2, 0.3], 0.1)
