"""Simulated multi-label crowds with known truth: true label sets drawn from a few
co-occurrence patterns, annotators with per-label sensitivity and specificity, and
long-tailed workloads (the setting of the multi-label model,
:mod:`plausible.models.multi_label`)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from plausible.data.label_sets import LabelSets


@dataclass(frozen=True)
class SimulatedLabelSets:
    """Label sets and their truth: ``truth`` bool ``(item, class)``, ``component`` int
    ``(item,)`` (the pattern each item's set came from), ``sensitivity`` and ``specificity``
    ``(annotator, class)``."""

    data: LabelSets
    truth: np.ndarray
    component: np.ndarray
    sensitivity: np.ndarray
    specificity: np.ndarray


def simulate_label_sets(*, n_items: int = 200, n_annotators: int = 10, per_item: int = 3,
                        label_rates=None, weights=None, sensitivity=(0.6, 0.95),
                        specificity=(0.9, 0.99), workload: float = 0.0,
                        skippers: int = 0, skip_sensitivity: float = 0.3,
                        seed=None) -> SimulatedLabelSets:
    """Each item's component ``m_i ~ Categorical(weights)`` and true labels ``y_ik ~
    Bernoulli(label_rates[m_i, k])`` (``label_rates (component, class)``, default three
    patterns over five labels); ``per_item`` distinct annotators per item, chosen with
    probability proportional to ``(j + 1)^-workload`` (0: even workloads; 1 or more: a long
    tail of annotators with a handful of items); annotator ``j`` reports each true label with
    probability ``se_jk ~ U(sensitivity)`` and each absent one with ``1 - sp_jk``, ``sp_jk ~
    U(specificity)``. The first ``skippers`` annotators tend to skip tags: their sensitivity
    is ``skip_sensitivity`` on every label."""
    rng = np.random.default_rng(seed)
    if label_rates is None:
        label_rates = np.array([[0.95, 0.9, 0.05, 0.05, 0.1],
                                [0.05, 0.1, 0.9, 0.85, 0.05],
                                [0.05, 0.05, 0.05, 0.1, 0.9]])
    label_rates = np.asarray(label_rates, dtype=np.float64)
    M, K = label_rates.shape
    weights = np.full(M, 1.0 / M) if weights is None else np.asarray(weights, dtype=np.float64)
    component = rng.choice(M, n_items, p=weights / weights.sum())
    truth = rng.random((n_items, K)) < label_rates[component]
    se = rng.uniform(*sensitivity, (n_annotators, K))
    sp = rng.uniform(*specificity, (n_annotators, K))
    se[:skippers] = skip_sensitivity
    chance = (np.arange(n_annotators) + 1.0) ** -float(workload)
    keys = np.log(rng.random((n_items, n_annotators))) / chance  # weighted draws without
    annotator = np.argsort(-keys, axis=1)[:, :per_item].ravel()  # replacement (Efraimidis)
    item = np.repeat(np.arange(n_items), per_item)
    y = truth[item]
    sets = rng.random(y.shape) < np.where(y, se[annotator], 1.0 - sp[annotator])
    data = LabelSets(item, annotator, sets, np.arange(n_items), np.arange(n_annotators),
                     np.array([f"label{k}" for k in range(K)]))
    return SimulatedLabelSets(data, truth, component, se, sp)


__all__ = ["SimulatedLabelSets", "simulate_label_sets"]
