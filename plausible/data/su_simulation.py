"""Seeded simulator of Su's testing setting (Su 2024 §5.1).

Per item ``i``: true class ``y_i ~ Cat(pi)``; optionally a classifier prediction
``yhat_i`` from row ``y_i`` of a confusion matrix ``K[y, yhat] = P(yhat | y)`` (binary: the
operating point ``(p_D, p_FA)`` gives ``K = [[1 - p_FA, p_FA], [1 - p_D, p_D]]``); difficulty
``delta_i ~ Beta(a, b)``. Per labeler ``t``: fallibility ``phi_t ~ U(lo, hi)`` and label
probability ``eta_t ~ U(0, 1)``. Each item's Bernoulli(``eta``) "who labels" vector is
redrawn until at least one labeler labels it (vectorised rejection); each chosen labeler
gives the true class with probability ``1 - epsilon(delta_i, phi_t)`` and each other class
with ``epsilon / (C - 1)`` (:func:`plausible.maths.fallibility.error_rate`).
Main setting: ``simulate_su(1000, 5, prior=[0.8, 0.2], operating_point=(0.8, 0.3),
difficulty=(1, 5), fallibility=(0, 0.4))``, about 2.8 labels per item. Same seed, same data.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from plausible.data.labels import Labels
from plausible.maths.fallibility import error_rate


@dataclass(frozen=True)
class SuSimulation:
    """Simulated labels with the truth behind them.

    ``labels``: long-format :class:`~plausible.data.labels.Labels`; ``truth``,
    ``prediction`` int64 ``(item,)`` (``None`` without a classifier); ``difficulty`` ``(item,)``; ``fallibility``,
    ``label_probability`` ``(labeler,)``; ``confusion`` ``(class, class)`` =
    ``P(yhat = column | y = row)`` (``None`` without a classifier); ``prior`` ``(class,)``.
    """

    labels: Labels
    truth: np.ndarray
    prediction: np.ndarray | None
    difficulty: np.ndarray
    fallibility: np.ndarray
    label_probability: np.ndarray
    confusion: np.ndarray | None
    prior: np.ndarray


def _probability_vector(name, value):
    value = np.asarray(value, dtype=np.float64)
    if value.ndim != 1 or value.size < 2:
        raise ValueError(f"{name} must be a vector of >= 2 class probabilities, got {value!r}")
    if (value < 0).any() or not np.isclose(value.sum(), 1.0):
        raise ValueError(f"{name} must be non-negative and sum to 1, got {value}")
    return value


def _confusion(prior, operating_point, confusion):
    C = prior.size
    if operating_point is not None and confusion is not None:
        raise ValueError("give at most one of operating_point (binary) or confusion")
    if operating_point is None and confusion is None:
        return None
    if operating_point is not None:
        if C != 2:
            raise ValueError(f"operating_point needs 2 classes, prior has {C}")
        p_d, p_fa = (float(v) for v in operating_point)
        if not (0 <= p_d <= 1 and 0 <= p_fa <= 1):
            raise ValueError(f"operating point (p_D, p_FA) must lie in [0, 1]^2, got {operating_point}")
        return np.array([[1 - p_fa, p_fa], [1 - p_d, p_d]])
    K = np.asarray(confusion, dtype=np.float64)
    if K.shape != (C, C):
        raise ValueError(f"confusion must be ({C}, {C}) like the prior, got {K.shape}")
    if (K < 0).any() or not np.allclose(K.sum(axis=1), 1.0):
        raise ValueError("confusion rows P(yhat | y) must be non-negative and sum to 1")
    return K


def _categorical(rng, probabilities):
    """One draw per row of ``probabilities`` ``(n, C)`` by inverse CDF."""
    cdf = np.cumsum(probabilities, axis=1)
    u = rng.random(probabilities.shape[0])[:, None] * cdf[:, -1:]
    return np.minimum((u >= cdf).sum(axis=1), probabilities.shape[1] - 1)


def simulate_su(n_items: int, n_labelers: int, *, prior, operating_point=None, confusion=None,
                difficulty=(1.0, 5.0), fallibility=(0.0, 0.4), label_probability=None,
                seed=None) -> SuSimulation:
    """Draw a data set of Su's setting (see the module docstring).

    ``prior``: class probabilities ``(C,)``. ``operating_point``: ``(p_D, p_FA)`` (binary)
    or ``confusion`` ``(C, C)`` rows ``P(yhat | y)`` of the classifier under test; neither:
    labels only (``prediction`` is ``None``). ``difficulty``: Beta ``(a, b)`` or a
    callable ``(rng, n_items) -> (n_items,)``. ``fallibility``: uniform ``(lo, hi)``.
    ``label_probability``: ``eta`` ``(n_labelers,)`` (scalar broadcast); default
    ``U(0, 1)`` per labeler.
    """
    if n_items < 1 or n_labelers < 1:
        raise ValueError(f"need n_items >= 1 and n_labelers >= 1, got {n_items}, {n_labelers}")
    prior = _probability_vector("prior", prior)
    K = _confusion(prior, operating_point, confusion)
    C = prior.size
    rng = np.random.default_rng(seed)
    truth = rng.choice(C, size=n_items, p=prior)
    prediction = None if K is None else _categorical(rng, K[truth])
    if callable(difficulty):
        delta = np.asarray(difficulty(rng, n_items), dtype=np.float64)
        if delta.shape != (n_items,) or ((delta < 0) | (delta > 1)).any():
            raise ValueError("difficulty callable must return (n_items,) values in [0, 1]")
    else:
        a, b = difficulty
        if not (a > 0 and b > 0):
            raise ValueError(f"difficulty must be Beta parameters (a > 0, b > 0), got {difficulty}")
        delta = rng.beta(a, b, size=n_items)
    lo, hi = fallibility
    if not 0 <= lo <= hi <= 1:
        raise ValueError(f"fallibility must be a range 0 <= lo <= hi <= 1, got {fallibility}")
    phi = rng.uniform(lo, hi, size=n_labelers)
    if label_probability is None:
        eta = rng.uniform(0, 1, size=n_labelers)
    else:
        eta = np.broadcast_to(np.asarray(label_probability, dtype=np.float64), (n_labelers,)).copy()
        if ((eta < 0) | (eta > 1)).any() or not (eta > 0).any():
            raise ValueError("label_probability must lie in [0, 1] with at least one > 0")
    # Vectorised rejection: redraw the who-labels rows that came out empty.
    labeled = rng.random((n_items, n_labelers)) < eta
    empty = ~labeled.any(axis=1)
    while empty.any():
        redraw = rng.random((int(empty.sum()), n_labelers)) < eta
        labeled[empty] = redraw
        empty = ~labeled.any(axis=1)
    item, labeler = np.nonzero(labeled)
    eps = error_rate(delta[item], phi[labeler], C)
    wrong = rng.random(item.size) < eps
    # A wrong label is uniform over the C - 1 other classes.
    offset = rng.integers(1, C, size=item.size) if C > 2 else np.ones(item.size, np.int64)
    label = np.where(wrong, (truth[item] + offset) % C, truth[item])
    labels = Labels(item, labeler, label, np.arange(n_items), np.arange(n_labelers), np.arange(C))
    return SuSimulation(labels, truth, prediction, delta, phi, eta, K, prior)
