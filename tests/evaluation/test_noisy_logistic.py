"""Training logistic regression on noisy labels (Su 2024): gradients vs finite differences,
and the ML/MMSE fits against the comparators on breast-cancer data with simulated labelers."""

import numpy as np
import pytest
from scipy import optimize
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import train_test_split

from plausible.data.labels import Labels
from plausible.evaluation.binary import label_posterior
from plausible.evaluation import noisy_logistic as nl
from plausible.maths.fallibility import error_rate, label_log_likelihood


def test_gradients_match_finite_differences():
    rng = np.random.default_rng(0)
    X = nl.design(rng.normal(size=(50, 3)))
    L = np.log(rng.uniform(0.05, 1, size=(50, 2)))
    w = rng.uniform(size=50)
    for theta in rng.normal(size=(3, 4)):
        for f, arg in [(nl.ml_loss, L), (nl.mmse_loss, w)]:
            err = optimize.check_grad(lambda t: f(t, X, arg, 0.3)[0],
                                      lambda t: f(t, X, arg, 0.3)[1], theta)
            assert err < 1e-6


def test_mmse_with_certain_labels_is_logistic_regression():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(200, 2))
    y = (x @ [1.5, -1] + rng.normal(size=200) > 0).astype(float)
    big = np.log(np.where(y[:, None] == [0, 1], 1.0, 1e-12))
    np.testing.assert_allclose(nl.fit_ml(x, big, lam=0.1), nl.fit_mmse(x, y, lam=0.1), atol=1e-4)


@pytest.fixture(scope="module")
def cancer():
    data = load_breast_cancer()
    x = (data.data - data.data.mean(0)) / data.data.std(0)
    y = 1 - data.target  # 1 = malignant (pi(1) = 0.37, close to Ionosphere's 0.359)
    xtr, xte, ytr, yte = train_test_split(x, y, test_size=0.25, stratify=y, random_state=0)
    rng = np.random.default_rng(2)
    n, T = ytr.size, 5
    delta = rng.beta(1, 5, n)
    phi = rng.uniform(0, 0.5, T)
    labeled = rng.random((n, T)) < np.r_[1.0, rng.uniform(0.33, 1, T - 1)]
    item, ann = np.nonzero(labeled)
    wrong = rng.random(item.size) < error_rate(delta[item], phi[ann], 2)
    labels = Labels(item, ann, np.where(wrong, 1 - ytr[item], ytr[item]), np.arange(n),
                    np.arange(T), np.arange(2))
    return xtr, xte, yte, labels, label_log_likelihood(labels, delta, phi)


def test_training_on_breast_cancer(cancer):
    xtr, xte, yte, labels, L = cancer
    prior = [0.63, 0.37]
    w = label_posterior(L, prior, log=True)[:, 1]
    acc = {}
    for name, theta in [("ml", nl.fit_ml(xtr, L)), ("mmse", nl.fit_mmse(xtr, w)),
                        ("argmax", nl.fit_argmax(xtr, w)),
                        ("replicated", nl.fit_replicated(xtr, w, seed=0)),
                        ("vote", nl.fit_per_labeler(xtr, labels))]:
        acc[name] = ((nl.predict_proba(theta, xte) > 0.5) == yte).mean()
    assert acc["ml"] > 0.93 and acc["mmse"] > 0.93
    assert min(acc.values()) > 0.85
    with pytest.raises(ValueError, match=r"w\[0\] = 2.0"):
        nl.fit_mmse(xtr, np.r_[2.0, w[1:]])
    with pytest.raises(ValueError, match="log_likelihood must be"):
        nl.fit_ml(xtr, L[:10])
