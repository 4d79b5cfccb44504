"""Seeded simulators of numeric ratings: NIG draws, Wikipedia-Toxicity-like and AVA-like data.

* :func:`simulate_nig`: ``(mu_i, sigma2_i)`` from an NIG prior and Gaussian ratings — the
  model's own generative process, for calibration and recovery checks.
* :func:`simulate_toxicity`: shaped like Wikipedia Toxicity (Wulczyn et al. 2017): about 10
  raters per comment, integer scores ``-2..2`` (``-2`` very toxic, ``2`` very healthy), a
  comment is *toxic* iff its mean score is ``< 0``, about 1 % of comments are toxic.
* :func:`simulate_ava`: shaped like AVA aesthetics (Murray et al. 2012): histograms of
  scores ``1..10`` with about 200 ratings per image, image means around 5.4 (sd 0.7),
  per-image rating sd around 1.45; an image is *good* iff its mean score is ``>= 5``.

Scores of a comment/image come from a latent Gaussian ``N(m_i, s_i^2)`` rounded to the
scale's integers and clipped to its ends (AVA: the discretised Gaussian's probabilities of
each score, the tails folded onto 1 and 10), so the NIG model fits them only approximately,
as it fits real data. Same seed, same data.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import special

from plausible.data.ratings import Ratings, RatingSummary

AVA_SCORES = np.arange(1, 11)
TOXICITY_SCALE = (-2.0, 2.0)


@dataclass(frozen=True)
class NIGSimulation:
    """Ratings drawn from the NIG model with the true ``mu``, ``sigma2`` ``(item,)``."""

    ratings: Ratings
    mu: np.ndarray
    sigma2: np.ndarray


def simulate_nig(
    prior, n_items: int = 100, ratings_per_item=10, *, seed=None
) -> NIGSimulation:
    """``sigma2_i ~ InvGamma(alpha0, beta0)``, ``mu_i ~ N(mu0, sigma2_i / kappa0)``,
    ``x_ij ~ N(mu_i, sigma2_i)``; ``prior`` has ``mu0, kappa0, alpha0, beta0`` (proper).

    ``ratings_per_item``: an int, or an int array ``(n_items,)``. Annotator ``j`` gives
    the ``j``-th rating of every item.
    """
    rng = np.random.default_rng(seed)
    counts = np.broadcast_to(np.asarray(ratings_per_item, dtype=np.int64), (n_items,))
    if (counts < 1).any():
        raise ValueError("ratings_per_item must be >= 1")
    sigma2 = prior.beta0 / rng.gamma(prior.alpha0, size=n_items)
    mu = prior.mu0 + np.sqrt(sigma2 / prior.kappa0) * rng.standard_normal(n_items)
    item = np.repeat(np.arange(n_items), counts)
    position = np.arange(item.size) - np.repeat(np.cumsum(counts) - counts, counts)
    score = mu[item] + np.sqrt(sigma2[item]) * rng.standard_normal(item.size)
    ratings = Ratings(item, position, score, np.arange(n_items), np.arange(int(counts.max())))
    return NIGSimulation(ratings, mu, sigma2)


@dataclass(frozen=True)
class ToxicitySimulation:
    """Toxicity-like ratings with the latent per-comment mean and sd ``(item,)``.

    ``toxic``: bool ``(item,)``, observed mean score ``< threshold`` (0).
    """

    ratings: Ratings
    latent_mean: np.ndarray
    latent_sd: np.ndarray
    threshold: float = 0.0

    @property
    def toxic(self) -> np.ndarray:
        """Bool ``(item,)``: the observed mean score is below ``threshold``."""
        return self.ratings.per_item().mean < self.threshold


def simulate_toxicity(
    n_items: int = 10_000,
    *,
    raters_per_item: int = 10,
    toxic_share: float = 0.007,
    n_annotators: int = 4000,
    seed=None,
) -> ToxicitySimulation:
    """Wikipedia-Toxicity-like comments rated on ``-2..2``.

    A share ``toxic_share`` of comments has a latent mean ``m ~ N(-0.3, 0.5)``, the rest
    ``m ~ N(1.0, 0.3)``; rater disagreement ``s ~ LogNormal(log 0.7, 0.25)``; each comment
    gets ``raters_per_item - 2 + Binomial(4, 1/2)`` ratings (about 10), by consecutive
    annotators of a pool of ``n_annotators``, scores ``clip(round(m + s z), -2, 2)``. With
    the defaults about 1 % of comments are toxic (mean score < 0).
    """
    if raters_per_item < 3:
        raise ValueError("raters_per_item must be >= 3")
    rng = np.random.default_rng(seed)
    toxic_latent = rng.random(n_items) < toxic_share
    mean = np.where(toxic_latent, rng.normal(-0.3, 0.5, n_items), rng.normal(1.0, 0.3, n_items))
    sd = np.exp(rng.normal(np.log(0.7), 0.25, n_items))
    counts = raters_per_item - 2 + rng.binomial(4, 0.5, n_items)
    item = np.repeat(np.arange(n_items), counts)
    position = np.arange(item.size) - np.repeat(np.cumsum(counts) - counts, counts)
    annotator = (rng.integers(n_annotators, size=n_items)[item] + position) % n_annotators
    score = np.clip(np.round(mean[item] + sd[item] * rng.standard_normal(item.size)), *TOXICITY_SCALE)
    ratings = Ratings(item, annotator, score, np.arange(n_items), np.arange(n_annotators), TOXICITY_SCALE)
    return ToxicitySimulation(ratings, mean, sd)


@dataclass(frozen=True)
class AVASimulation:
    """AVA-like score histograms ``(item, 10)`` (counts of scores 1..10) with the latent
    per-image mean and sd ``(item,)``. ``good``: observed mean ``>= threshold`` (5)."""

    histograms: np.ndarray
    latent_mean: np.ndarray
    latent_sd: np.ndarray
    threshold: float = 5.0

    def summary(self) -> RatingSummary:
        """Count, mean and sum of squared deviations per image, from the histograms."""
        return histogram_summary(self.histograms, AVA_SCORES)

    @property
    def good(self) -> np.ndarray:
        """Bool ``(item,)``: the observed mean score is at least ``threshold``."""
        return self.summary().mean >= self.threshold

    def to_ratings(self) -> Ratings:
        """The histograms as long ratings (raters are anonymous: annotator ``j`` is the
        ``j``-th rating of an image); scale ``(1, 10)``. Only for modest sizes."""
        counts = self.histograms.ravel()
        item = np.repeat(np.repeat(np.arange(self.histograms.shape[0]), AVA_SCORES.size), counts)
        score = np.repeat(np.tile(AVA_SCORES, self.histograms.shape[0]), counts).astype(np.float64)
        per_item = self.histograms.sum(axis=1)
        position = np.arange(item.size) - np.repeat(np.cumsum(per_item) - per_item, per_item)
        return Ratings(item, position, score, np.arange(self.histograms.shape[0]),
                       np.arange(int(per_item.max())), (1.0, 10.0))


def histogram_summary(histograms, values) -> RatingSummary:
    """Per-item count, mean and sum of squared deviations of score histograms.

    ``histograms`` int ``(item, score)`` counts of each of ``values`` ``(score,)``;
    every item needs at least one rating.
    """
    histograms = np.asarray(histograms)
    values = np.asarray(values, dtype=np.float64)
    count = histograms.sum(axis=1).astype(np.int64)
    if (count < 1).any():
        raise ValueError(f"item {int(np.argmax(count < 1))} has no ratings")
    mean = histograms @ values / count
    sum_sq_dev = (histograms * (values[np.newaxis, :] - mean[:, np.newaxis]) ** 2).sum(axis=1)
    return RatingSummary(count, mean, sum_sq_dev)


def simulate_ava(n_items: int = 10_000, *, ratings_per_item: float = 200.0, seed=None) -> AVASimulation:
    """AVA-like histograms: ``m ~ N(5.4, 0.7)``, ``s ~ LogNormal(log 1.45, 0.15)``,
    ``n ~ max(Poisson(ratings_per_item), 2)``, counts ``Multinomial(n, p)`` with ``p_k`` the
    probability of ``N(m, s^2)`` rounding to score ``k`` (tails folded onto 1 and 10).
    About 70 % of images are good (mean >= 5)."""
    rng = np.random.default_rng(seed)
    mean = rng.normal(5.4, 0.7, n_items)
    sd = np.exp(rng.normal(np.log(1.45), 0.15, n_items))
    counts = np.maximum(rng.poisson(ratings_per_item, n_items), 2)
    edges = np.concatenate([[-np.inf], AVA_SCORES[:-1] + 0.5, [np.inf]])
    cdf = special.ndtr((edges[np.newaxis, :] - mean[:, np.newaxis]) / sd[:, np.newaxis])
    probs = np.diff(cdf, axis=1)
    probs /= probs.sum(axis=1, keepdims=True)
    histograms = rng.multinomial(counts, probs).astype(np.int64)
    return AVASimulation(histograms, mean, sd)
