"""Seeded studies of the acceptance criteria of testing with noisy labels (Su 2024).

* :func:`binary_seed_study`: the main binary example (``N = 1000``, ``T = 5``,
  ``pi(1) = 0.2``, operating point ``(p_D, p_FA) = (0.8, 0.3)``, difficulty ``~ Beta(1, 5)``,
  fallibility ``~ U(0, 0.4)``), one simulated data set per seed; every method estimates the
  five metrics from the noisy labels (known difficulty and fallibility, unknown OP) and is
  scored against the *ideal* metrics, those of the true labels
  (:func:`plausible.evaluation.binary.empirical_metrics`). :func:`binary_mae` gives the mean
  absolute error ``MAE = (1/S) sum_s |estimate_s - ideal_s|`` over the ``S`` seeds.
* :func:`multiclass_coverage_study`: ``C = 4``, ``N = 2000``; the 95 % interval of each cell
  ``C[n, l] = #{yhat = n, y = l}`` of the count confusion matrix against the true count, from
  Algorithm 4 (plug-in estimate of the confusion matrix), from the exact posteriors under the
  true confusion matrix (oracle) or from the joint Gibbs posterior of the classes and the
  confusion matrix (:func:`~plausible.evaluation.confusion_gibbs.confusion_gibbs`). The spec
  gives no confusion matrix for this case; :data:`MULTICLASS_CONFUSION` is the one of
  ``notebooks/testing_noisy_labels.ipynb``. :func:`coverage_rate` pools the ``S x C^2`` cells.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd
from scipy import stats

from plausible.data.su_simulation import simulate_su
from plausible.maths.fallibility import label_likelihood
from plausible.evaluation.binary import (
    METRICS,
    algorithm_labels,
    algorithm_ratios,
    algorithm_sampling,
    empirical_metrics,
    full_bayes,
    label_posterior,
)
from plausible.evaluation.confusion_gibbs import confusion_gibbs
from plausible.evaluation.labeler_baselines import labeler_summary
from plausible.evaluation.multiclass import algorithm_multiclass, count_moments, sampled_confusion_counts

MULTICLASS_METHODS = ("alg4", "oracle", "gibbs")
BINARY_METHODS = ("alg1_ratios", "alg2_sampling", "alg3_labels", "mmse_labels_only",
                  "labeler_mean", "labeler_median", "full_bayes")
MULTICLASS_PRIOR = (0.4, 0.3, 0.2, 0.1)
# Rows P(yhat | y); the notebook's choice (Su 2024 gives none).
MULTICLASS_CONFUSION = np.array([[0.7, 0.1, 0.1, 0.1], [0.1, 0.6, 0.2, 0.1],
                                 [0.05, 0.15, 0.7, 0.1], [0.1, 0.1, 0.1, 0.7]])


def _binary_estimates(sim, likelihood, methods, n_samples, seed) -> dict:
    """``{method: {metric: float}}`` for the requested methods on one data set."""
    args = (likelihood, sim.prior, sim.prediction)
    runs = {
        "alg1_ratios": lambda: algorithm_ratios(*args).metrics,
        "alg2_sampling": lambda: algorithm_sampling(*args, n_samples=n_samples, seed=seed).metrics,
        "alg3_labels": lambda: algorithm_labels(*args).metrics,
        "mmse_labels_only": lambda: algorithm_ratios(*args, j_max=0).metrics,
        "full_bayes": lambda: full_bayes(*args),
    }
    out = {m: runs[m]() for m in methods if m in runs}
    pooled = [m for m in methods if m.startswith("labeler_")]
    if pooled:
        base = labeler_summary(sim.labels, sim.prediction)
        out.update({m: base[m.removeprefix("labeler_")] for m in pooled})
    return out


def binary_seed_study(seeds: Iterable[int], *, methods: Iterable[str] = BINARY_METHODS,
                      n_items: int = 1000, n_labelers: int = 5, prior=(0.8, 0.2),
                      operating_point=(0.8, 0.3), difficulty=(1.0, 5.0), fallibility=(0.0, 0.4),
                      n_samples: int = 5000) -> pd.DataFrame:
    """One row per (seed, method, metric): ``seed``, ``method``, ``metric`` (``accuracy``,
    ``precision``, ``recall`` = p_D, ``p_fa``, ``f_beta`` with beta = 1), ``estimate``,
    ``ideal`` (the metric of the true labels) and ``error = estimate - ideal``.

    Data: ``simulate_su(n_items, n_labelers, ..., seed=seed)``; likelihoods from the true
    difficulty and fallibility (:func:`plausible.maths.fallibility.label_likelihood`).
    Methods (:data:`BINARY_METHODS`): Algorithms 1, 2 (``n_samples`` label vectors per
    update, seeded by ``seed``) and 3, the labels-only MMSE (Algorithm 1 with ``j_max = 0``),
    the per-labeler mean and median, the paper's prior-averaged Full Bayes. Same seeds,
    same table.
    """
    methods = tuple(methods)
    unknown = set(methods) - set(BINARY_METHODS)
    if unknown:
        raise ValueError(f"unknown methods {sorted(unknown)}; choose from {BINARY_METHODS}")
    rows = []
    for seed in seeds:
        sim = simulate_su(n_items, n_labelers, prior=prior,
                                        operating_point=operating_point, difficulty=difficulty,
                                        fallibility=fallibility, seed=seed)
        likelihood = label_likelihood(sim.labels, sim.difficulty, sim.fallibility)
        ideal = empirical_metrics(sim.truth, sim.prediction)
        estimates = _binary_estimates(sim, likelihood, methods, n_samples, seed)
        rows += [{"seed": seed, "method": method, "metric": metric,
                  "estimate": estimates[method][metric], "ideal": ideal[metric]}
                 for method in methods for metric in METRICS]
    study = pd.DataFrame(rows)
    study["error"] = study["estimate"] - study["ideal"]
    return study


def binary_mae(study: pd.DataFrame) -> pd.DataFrame:
    """Mean absolute error over seeds, ``(method, metric)`` table in the study's method order
    and :data:`~plausible.evaluation.binary.METRICS` order."""
    mae = study.assign(abs_error=study["error"].abs()).pivot_table(
        index="method", columns="metric", values="abs_error", aggfunc="mean")
    return mae.loc[study["method"].unique(), list(METRICS)]


def multiclass_coverage_study(seeds: Iterable[int], *, method: str = "alg4", n_items: int = 2000,
                              n_labelers: int = 5, prior=MULTICLASS_PRIOR,
                              confusion=MULTICLASS_CONFUSION, difficulty=(1.0, 5.0),
                              fallibility=(0.0, 0.4), n_samples: int | None = None,
                              draws: int = 1000) -> pd.DataFrame:
    """One row per (seed, cell): ``seed``, ``yhat`` (n), ``y`` (l), the true ``count``
    ``#{yhat = n, y = l}``, the posterior ``mean`` and ``sd`` of the cell, its 95 % interval
    ``lower``, ``upper``, and ``covered = lower <= count <= upper``.

    Data: ``simulate_su(n_items, n_labelers, prior=prior, confusion=confusion, ...,
    seed=seed)``. ``method`` (:data:`MULTICLASS_METHODS`):

    * ``"alg4"``: Algorithm 4 with ``n_samples`` (default ``2500 C``) seeded by ``seed``;
      normal intervals ``mean -+ 1.96 sd`` given its estimate of the confusion matrix;
    * ``"oracle"``: the same intervals from the label posterior under the true ``confusion``:
      exact posteriors of the simulation, so nominal coverage there isolates the error of
      Algorithm 4's plug-in estimate;
    * ``"gibbs"``: :func:`~plausible.evaluation.confusion_gibbs.confusion_gibbs` (uniform
      Dirichlet rows, 4 chains of ``draws`` kept draws, seeded by ``seed``); central
      quantile intervals of the count draws, which carry the uncertainty of the matrix.
    """
    if method not in MULTICLASS_METHODS:
        raise ValueError(f"unknown method {method!r}; choose from {MULTICLASS_METHODS}")
    z = stats.norm.ppf(0.975)
    rows = []
    for seed in seeds:
        sim = simulate_su(n_items, n_labelers, prior=prior, confusion=confusion,
                                        difficulty=difficulty, fallibility=fallibility, seed=seed)
        C = sim.prior.size
        likelihood = label_likelihood(sim.labels, sim.difficulty, sim.fallibility)
        if method == "oracle":
            posterior = label_posterior(likelihood, sim.prior, sim.prediction, sim.confusion)
            mean, var, _ = count_moments(posterior, sim.prediction)
            sd = np.sqrt(var)
            lower, upper = mean - z * sd, mean + z * sd
        else:
            if method == "alg4":
                result = algorithm_multiclass(likelihood, sim.prior, sim.prediction,
                                              n_samples=n_samples, seed=seed)
            else:
                result = confusion_gibbs(likelihood, sim.prior, sim.prediction, draws=draws,
                                         seed=seed)
            mean, sd, (lower, upper) = result.counts_mean, result.counts_sd, result.counts_interval
        count = sampled_confusion_counts(sim.truth[None], sim.prediction, C)[0]
        n, l = np.meshgrid(np.arange(C), np.arange(C), indexing="ij")
        rows.append(pd.DataFrame({
            "seed": seed, "yhat": n.ravel(), "y": l.ravel(), "count": count.ravel(),
            "mean": mean.ravel(), "sd": sd.ravel(), "lower": lower.ravel(),
            "upper": upper.ravel(),
        }))
    study = pd.concat(rows, ignore_index=True)
    study["covered"] = (study["lower"] <= study["count"]) & (study["count"] <= study["upper"])
    return study


def coverage_rate(study: pd.DataFrame) -> dict:
    """Pooled coverage of a :func:`multiclass_coverage_study`: ``rate`` (fraction of the
    ``cells`` covered), ``se_binomial = sqrt(rate (1 - rate) / cells)`` (cells treated as
    independent) and ``se_seeds``, the standard error of the mean of the per-seed rates
    (``std / sqrt(seeds)``, ddof 1), which allows for cells of one seed being correlated
    (they share the estimated confusion matrix and each row sums to the group size)."""
    covered = study["covered"].to_numpy(dtype=float)
    per_seed = study.groupby("seed")["covered"].mean()
    rate = covered.mean()
    return {"rate": float(rate), "cells": int(covered.size), "seeds": int(per_seed.size),
            "se_binomial": float(np.sqrt(rate * (1 - rate) / covered.size)),
            "se_seeds": float(per_seed.std(ddof=1) / np.sqrt(per_seed.size))}
