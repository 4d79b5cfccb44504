"""Simulated classifiers of controlled quality for case studies without public predictions.

The dermatology study (Stutz et al. 2023) evaluates four classifiers A–D whose predictions are not
public. :func:`simulate_classifier` derives a classifier from the annotations themselves: given a
point aggregate ``(item, class)`` (e.g. IRN) and a quality ``q`` in ``[0, 1]``, per item

1. the *consensus* is the aggregate's top-1 class (ties to the lowest class index);
2. with probability ``q`` the classifier's top-3 list contains the consensus ("hit"); it then sits
   at rank 1 with probability ``q``, otherwise at rank 2 or 3 (uniformly);
3. every other slot of the list is, with probability ``q``, the next class the aggregate supports
   (positive score, in decreasing aggregate order, consensus excluded) and otherwise a random
   class drawn with probability proportional to ``1 +`` the number of items whose aggregate
   supports it (consensus and classes already listed excluded);
4. all other classes score below the list, ordered by that same frequency.

Scores are ``top_k + 1 - rank`` for the ``top_k`` listed classes (``top_k = 3`` by default) and in
``[0, 1)`` for the rest, so ``argsort(-scores)`` recovers the list. ``q = 1`` gives a classifier
whose top-1 is always the consensus; smaller ``q`` degrades every part of the list. Everything is
seeded by the ``numpy.random.Generator``.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np


def _check_point(point) -> np.ndarray:
    point = np.asarray(point, dtype=np.float64)
    if point.ndim != 2 or point.shape[1] < 1:
        raise ValueError(f"point must be an (item, class) array, got shape {point.shape}")
    bad = ~np.isfinite(point) | (point < 0)
    if bad.any():
        item, cls = np.argwhere(bad)[0]
        raise ValueError(f"point[{item}, {cls}] = {point[item, cls]!r}: must be finite and >= 0")
    return point


def _check_quality(quality) -> float:
    q = float(quality)
    if not 0.0 <= q <= 1.0:
        raise ValueError(f"quality must be in [0, 1], got {quality!r}")
    return q


def simulate_classifier(point, quality: float, rng: np.random.Generator, *, top_k: int = 3) -> np.ndarray:
    """Scores ``(item, class)`` float64 of one simulated classifier (see the module docstring)."""
    point = _check_point(point)
    q = _check_quality(quality)
    n_items, n_classes = point.shape
    if not 1 <= top_k <= n_classes:
        raise ValueError(f"top_k must be in 1..{n_classes}, got {top_k!r}")
    support = (point > 0).sum(axis=0).astype(np.float64)
    weight = support + 1.0
    background = support / (support.max() + 1.0)  # in [0, 1)
    scores = np.tile(background, (n_items, 1))
    consensus = point.argmax(axis=1)
    for i in range(n_items):
        c = consensus[i]
        order = np.argsort(-point[i], kind="stable")
        supported = [int(k) for k in order if point[i, k] > 0 and k != c]
        listed: list[int] = [-1] * top_k
        if rng.random() < q:
            pos = 0 if (top_k == 1 or rng.random() < q) else int(rng.integers(1, top_k))
            listed[pos] = int(c)
        taken = {int(c)}
        for slot in range(top_k):
            if listed[slot] >= 0:
                continue
            nxt = next((k for k in supported if k not in taken), None)
            if nxt is not None and rng.random() < q:
                listed[slot] = nxt
            else:
                w = weight.copy()
                w[list(taken)] = 0.0
                if w.sum() == 0:  # fewer classes than slots
                    w[:] = 1.0
                    w[list(taken)] = 0.0
                listed[slot] = int(rng.choice(n_classes, p=w / w.sum()))
            taken.add(listed[slot])
        scores[i, listed] = top_k + 1.0 - np.arange(1, top_k + 1)
    return scores


def simulate_classifiers(point, qualities: Mapping[str, float], seed=None, *, top_k: int = 3) -> dict[str, np.ndarray]:
    """One :func:`simulate_classifier` per ``name -> quality``, from one seeded generator
    (in the mapping's order). Returns ``name -> scores (item, class)``."""
    rng = np.random.default_rng(seed)
    return {name: simulate_classifier(point, q, rng, top_k=top_k) for name, q in qualities.items()}
