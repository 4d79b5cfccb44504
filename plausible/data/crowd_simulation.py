"""A crowd as crowds are, for studies of the label models: long-tailed workloads, most workers
with few labels, confusions between neighbouring classes, spammers, and (optionally) items
that are genuinely ambiguous.

* 5 ordered classes, prevalence ``(0.35, 0.25, 0.2, 0.12, 0.08)`` of the items' classes;
* workloads long-tailed: worker ``w`` is picked for an item with probability ``∝ (w +
  1)^-1.1``, so a few workers label thousands of items and most a handful;
* a worker's errors go to the neighbouring classes (probability ``∝ 0.5^|x - c|``), their
  accuracy ``Beta(6, 2)``; 10 % of the workers are spammers, who answer uniformly at random;
* every item gets ``3 + Poisson(2)`` labels from distinct workers;
* ``ambiguous``: the share of items that are genuinely ambiguous. Such an item's distribution
  over the classes ``lambda_i`` puts ``w ~ Beta(4, 4)`` on its class ``c`` and ``1 - w`` on a
  neighbour (``c + 1``, or ``c - 1`` for the last class), and each label's intended class is
  drawn from it before the worker's confusion acts (the ambiguity model's generative story,
  :mod:`plausible.models.ambiguity`); a clear item's ``lambda_i`` is its class.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from plausible.data.labels import Labels

PREVALENCE = np.array([0.35, 0.25, 0.2, 0.12, 0.08])
SPAMMERS = 0.1


@dataclass(frozen=True)
class CrowdSimulation:
    """``labels``; ``truth (item,)``: each item's class (an ambiguous item's most plausible
    class); ``plausibility (item, class)``: each item's distribution ``lambda_i``;
    ``spammer (worker,)``; ``confusion (worker, class, label_class)``."""

    labels: Labels
    truth: np.ndarray
    plausibility: np.ndarray
    spammer: np.ndarray
    confusion: np.ndarray


def simulate_crowd(n_labels: int, seed: int | None = 0, *, ambiguous: float = 0.0
                   ) -> CrowdSimulation:
    """About ``n_labels`` labels (``n_labels / 5`` items, ``n_labels / 25`` workers, at
    least 10 and 20) of the crowd the module describes, ``ambiguous`` the share of ambiguous
    items."""
    if not 0 <= ambiguous <= 1:
        raise ValueError(f"ambiguous must be a share in [0, 1], got {ambiguous}")
    rng = np.random.default_rng(seed)
    C = PREVALENCE.size
    n_items = max(10, n_labels // 5)
    n_workers = max(20, n_labels // 25)
    truth = rng.choice(C, n_items, p=PREVALENCE)
    workload = (np.arange(n_workers) + 1.0) ** -1.1
    workload /= workload.sum()
    distance = np.abs(np.arange(C)[:, None] - np.arange(C)[None, :])
    errors = np.where(distance > 0, 0.5 ** distance, 0.0)
    errors /= errors.sum(axis=1, keepdims=True)
    accuracy = rng.beta(6, 2, size=n_workers)[:, None, None]
    confusion = accuracy * np.eye(C) + (1 - accuracy) * errors
    spammer = rng.random(n_workers) < SPAMMERS
    confusion[spammer] = 1.0 / C
    per_item = np.minimum(n_workers, 3 + rng.poisson(2, size=n_items))
    worker = np.concatenate([rng.choice(n_workers, k, replace=False, p=workload)
                             for k in per_item])
    item = np.repeat(np.arange(n_items), per_item)
    plausibility = np.eye(C)[truth]
    if ambiguous > 0:
        split = np.flatnonzero(rng.random(n_items) < ambiguous)
        weight = rng.beta(4, 4, size=split.size)
        neighbour = np.where(truth[split] < C - 1, truth[split] + 1, truth[split] - 1)
        plausibility[split, truth[split]] = weight
        plausibility[split, neighbour] = 1 - weight
        truth = plausibility.argmax(axis=1)
    intended = (rng.random((item.size, 1)) > plausibility[item].cumsum(axis=1)).sum(axis=1)
    intended = np.minimum(intended, C - 1)
    cumulative = confusion[worker, intended].cumsum(axis=1)
    label = np.minimum((rng.random((item.size, 1)) > cumulative).sum(axis=1), C - 1)
    labels = Labels(item, worker, label, np.arange(n_items), np.arange(n_workers), np.arange(C))
    return CrowdSimulation(labels, truth, plausibility, spammer, confusion)


__all__ = ["CrowdSimulation", "simulate_crowd"]
