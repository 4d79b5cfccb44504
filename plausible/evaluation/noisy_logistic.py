"""Logistic regression trained on noisy labels (Su 2024).

``g_i = sigmoid(theta^T x_i)``; ``a_i = l_i(1)``, ``b_i = l_i(0)`` the label likelihoods,
``w_i = p(1 | z_i)`` the labels-only posterior. With an L2 penalty ``(lam / 2) ||theta||^2``
(the intercept, column 0 of the design, unpenalised):

* ML: ``J = -(1/N) sum_i log(a_i g_i + b_i (1 - g_i))``, gradient ``(1/N) sum (g_i - r_i) x_i``,
  ``r_i = a_i g_i / (a_i g_i + b_i (1 - g_i))`` (the posterior of ``y_i`` given ``x_i`` and ``z_i``).
* MMSE (expected cross-entropy): ``J = -(1/N) sum [w_i log g_i + (1 - w_i) log(1 - g_i)]``,
  gradient ``(1/N) sum (g_i - w_i) x_i``.

Both minimised by BFGS (``scipy.optimize.minimize``). Suboptimal comparators: train on
``argmax p(y | z_i)``; majority vote of one classifier per labeler (each on the items it
labeled); sample replication (each item copied ``R`` times with labels drawn from
``p(y | z_i)``). Gradients are checked by ``scipy.optimize.check_grad`` in
``tests/evaluation/test_noisy_logistic.py``.
"""

from __future__ import annotations

import numpy as np
from scipy import optimize
from scipy.special import expit, log_expit, logsumexp

from plausible.data.labels import Labels


def design(x) -> np.ndarray:
    """Design matrix ``(item, 1 + feature)``: a column of ones, then ``x``."""
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 2:
        raise ValueError(f"features must be (item, feature), got shape {x.shape}")
    return np.column_stack([np.ones(x.shape[0]), x])


def _penalty(theta, lam):
    t = theta.copy()
    t[0] = 0.0
    return 0.5 * lam * t @ t, lam * t


def _check_weights(name, w, n):
    w = np.asarray(w, dtype=np.float64)
    if w.shape != (n,):
        raise ValueError(f"{name} must have shape ({n},), got {w.shape}")
    if not np.all((w >= 0) & (w <= 1)):
        k = int(np.flatnonzero(~((w >= 0) & (w <= 1)))[0])
        raise ValueError(f"{name}[{k}] = {w[k]} is outside [0, 1]")
    return w


def ml_loss(theta, X, log_likelihood, lam: float = 0.0):
    """``(J, grad)`` of the ML loss; ``log_likelihood`` ``(item, 2)`` = ``log l_i(y)``."""
    s = X @ theta
    log_g = np.stack([log_expit(-s), log_expit(s)], axis=1)  # log(1 - g), log g
    joint = log_likelihood + log_g
    norm = logsumexp(joint, axis=1)
    r = np.exp(joint[:, 1] - norm)
    pen, dpen = _penalty(theta, lam)
    N = X.shape[0]
    return -norm.mean() + pen, X.T @ (expit(s) - r) / N + dpen


def mmse_loss(theta, X, w, lam: float = 0.0):
    """``(J, grad)`` of the MMSE (expected cross-entropy) loss; ``w`` ``(item,)`` = ``p(1 | z_i)``
    (hard labels are ``w`` in {0, 1})."""
    s = X @ theta
    pen, dpen = _penalty(theta, lam)
    J = -(w * log_expit(s) + (1 - w) * log_expit(-s)).mean()
    return J + pen, X.T @ (expit(s) - w) / X.shape[0] + dpen


def _fit(loss, X, args):
    res = optimize.minimize(loss, np.zeros(X.shape[1]), args=(X, *args), jac=True, method="BFGS")
    return res.x


def fit_ml(x, log_likelihood, lam: float = 1e-2) -> np.ndarray:
    """ML logistic regression on noisy labels; returns ``theta`` ``(1 + feature,)``."""
    X = design(x)
    L = np.asarray(log_likelihood, dtype=np.float64)
    if L.shape != (X.shape[0], 2):
        raise ValueError(f"log_likelihood must be ({X.shape[0]}, 2), got {L.shape}")
    return _fit(ml_loss, X, (L, lam))


def fit_mmse(x, w, lam: float = 1e-2) -> np.ndarray:
    """MMSE logistic regression with soft targets ``w = p(1 | z_i)``."""
    X = design(x)
    return _fit(mmse_loss, X, (_check_weights("w", w, X.shape[0]), lam))


def fit_argmax(x, w, lam: float = 1e-2) -> np.ndarray:
    """Comparator: hard labels ``1[w_i > 1/2]``."""
    X = design(x)
    return _fit(mmse_loss, X, ((_check_weights("w", w, X.shape[0]) > 0.5).astype(float), lam))


def fit_replicated(x, w, replicates: int = 10, lam: float = 1e-2, seed=None) -> np.ndarray:
    """Comparator: each item copied ``replicates`` times, labels drawn from ``Bernoulli(w_i)``."""
    X = design(x)
    w = _check_weights("w", w, X.shape[0])
    y = np.random.default_rng(seed).random((replicates, w.size)) < w
    return _fit(mmse_loss, np.tile(X, (replicates, 1)), (y.ravel().astype(float), lam))


def fit_per_labeler(x, labels: Labels, lam: float = 1e-2) -> np.ndarray:
    """Comparator: one classifier per labeler on the items it labeled, ``(labeler, 1 + feature)``
    (a labeler whose labels are all one class gets the constant classifier of that class)."""
    X = design(x)
    if labels.n_classes != 2 or labels.n_items != X.shape[0]:
        raise ValueError("per-labeler training needs binary labels for every row of x")
    thetas = []
    for t in range(labels.n_annotators):  # one fit per labeler (a handful)
        mine = labels.annotator == t
        thetas.append(_fit(mmse_loss, X[labels.item[mine]], (labels.label[mine].astype(float), lam)))
    return np.array(thetas)


def predict_proba(theta, x) -> np.ndarray:
    """``sigmoid(theta^T x)`` ``(item,)``; ``theta`` ``(labeler, p)`` gives the fraction of the
    per-labeler classifiers voting 1 (majority vote when thresholded at 1/2)."""
    X = design(x)
    theta = np.asarray(theta, dtype=np.float64)
    if theta.ndim == 2:
        return (X @ theta.T > 0).mean(axis=1)
    return expit(X @ theta)
