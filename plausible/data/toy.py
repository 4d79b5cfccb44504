"""The 1-D toy of Stutz et al. 2023: three overlapping Gaussian classes with a known p(y | x).

A true class ``y`` is drawn from the class priors, then ``x ~ N(mean_y, scale_y^2)``. The
true plausibilities ``p(y | x)`` follow by Bayes' rule, and each annotator labels an item
with one class drawn from ``p(y | x)``: ambiguity is inherent where the Gaussians overlap,
and a finite number of annotators adds annotation uncertainty on top.
"""

from dataclasses import dataclass

import numpy as np

from plausible.data.votes import Votes

TOY_CLASSES = ("Benign1", "Benign2", "Cancer")
TOY_PRIORS = np.array([0.4, 0.4, 0.2])
TOY_MEANS = np.array([-1.0, 0.0, 1.0])
TOY_SCALES = np.array([0.5, 0.5, 0.5])


@dataclass(frozen=True)
class ToyData:
    """Simulated toy data: ``x`` float64 ``(item,)``, ``true_class`` int64 ``(item,)`` (the class
    ``x`` was drawn from), ``true_probs`` float64 ``(item, class)`` = p(y | x), and ``votes``
    ``(item, class)`` of the annotators."""

    x: np.ndarray
    true_class: np.ndarray
    true_probs: np.ndarray
    votes: Votes


def toy_posterior(x) -> np.ndarray:
    """True p(y | x), float64 ``(item, class)``, by Bayes' rule over the three Gaussians."""
    x = np.asarray(x, dtype=np.float64)[:, None]
    log_joint = np.log(TOY_PRIORS) - np.log(TOY_SCALES) - 0.5 * ((x - TOY_MEANS) / TOY_SCALES) ** 2
    joint = np.exp(log_joint - log_joint.max(axis=1, keepdims=True))
    return joint / joint.sum(axis=1, keepdims=True)


def simulate_toy(n_items: int = 1000, n_annotators: int = 10, seed=0) -> ToyData:
    """Draw ``n_items`` toy items, each labelled once by each of ``n_annotators`` annotators.

    ``seed`` goes to ``np.random.default_rng``: the same seed gives the same data.
    """
    if n_items < 1 or n_annotators < 1:
        raise ValueError(f"need n_items >= 1 and n_annotators >= 1, got {n_items}, {n_annotators}")
    rng = np.random.default_rng(seed)
    true_class = rng.choice(len(TOY_CLASSES), size=n_items, p=TOY_PRIORS)
    x = rng.normal(TOY_MEANS[true_class], TOY_SCALES[true_class])
    true_probs = toy_posterior(x)
    counts = rng.multinomial(n_annotators, true_probs)
    votes = Votes(counts, np.arange(n_items), np.array(TOY_CLASSES))
    return ToyData(x, true_class.astype(np.int64), true_probs, votes)


def toy_examples(toy: ToyData) -> dict[str, int]:
    """Item indices of a ``"crisp"`` (lowest entropy of ``true_probs``), an ``"ambiguous"``
    (highest) and an ``"in_between"`` example (entropy closest to the midpoint of the two)."""
    p = toy.true_probs
    entropy = -np.sum(p * np.log(np.where(p > 0, p, 1.0)), axis=1)
    low, high = entropy.min(), entropy.max()
    return {
        "crisp": int(np.argmin(entropy)),
        "in_between": int(np.argmin(np.abs(entropy - (low + high) / 2))),
        "ambiguous": int(np.argmax(entropy)),
    }
