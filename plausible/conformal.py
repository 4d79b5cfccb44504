"""Prediction sets with a coverage guarantee when the ground truth is itself ambiguous.

A classifier gives scores ``s(x) (class,)``; the conformity of class ``y`` is its score
``E(x, y) = s_y(x)`` (higher conforms more: probabilities or logits, the "threshold"
conformity score). Calibration items ``i = 1..n`` carry a target: per item a distribution
``lambda_i`` over the classes, the posterior mean plausibility of a trace (the posterior
predictive probability of the item's label, so a label drawn from it is a draw of the
ambiguous ground truth).

* **single-label** (split conformal): one label ``y_i`` per calibration item (given, e.g.
  majority vote or gold, or the most plausible class), the p-value
  ``p(x, y) = (1 + #{i : E(x_i, y_i) <= E(x, y)}) / (n + 1)``.
* **Monte Carlo** (Stutz et al. 2023, "Conformal prediction under ambiguous ground truth"):
  ``m`` labels ``y_ij ~ lambda_i`` per item, a p-value ``p_j`` per sample ``j`` as above and
  their mean ``pbar = mean_j p_j``. The mean of p-values is only 2-valid (coverage
  ``>= 1 - 2 alpha``); the **ECDF correction** restores ``1 - alpha``: the calibration items
  are split in two, ``pbar`` is computed against the first part, and on the second part at one
  fresh label each, ``u_b = pbar(x_b, y_b)``, ``y_b ~ lambda_b``; then
  ``p(x, y) = (1 + #{b : u_b <= pbar(x, y)}) / (n_B + 1)``, a conformal p-value over ``u``
  (a test item's ``pbar(x, Y)``, ``Y ~ lambda(x)``, is exchangeable with the ``u_b``).

The set is ``C(x) = {y : p(x, y) > alpha}``, possibly empty (a score below every calibrated
one). Coverage is guaranteed for a label drawn from the target distribution, which is what
:func:`coverage` reports against the plausibilities; against one label per item (majority
vote, gold) it reports the share of items whose label is in the set.

``calibrate`` returns a :class:`ConformalPredictor` (``p_values``, ``predict``);
``prediction_sets`` calibrates and predicts in one call, cross-fitting the calibration items
themselves when no test scores are given.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import xarray as xr

from plausible.data.validation import fmt
from plausible.maths.categorical import categorical_draws
from plausible.metrics.draws import Draws, as_draws
from plausible.metrics.predictions import as_scores, class_positions

METHODS = ("monte-carlo", "single-label")


def _check_alpha(alpha) -> float:
    alpha = float(alpha)
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must lie in (0, 1) (the miscoverage), got {alpha}")
    return alpha


def _check_method(method: str) -> str:
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    return method


def _target_draws(target) -> Draws:
    """The reader of a target: an Aggregation (its trace), a trace or a plausibility."""
    return as_draws(getattr(target, "trace", target))


def _label_positions(labels, draws: Draws) -> np.ndarray:
    """One class position per calibration item from ``labels`` (a Series indexed by item, or
    an array in the target's item order; :func:`~plausible.metrics.predictions.class_positions`)."""
    return class_positions(labels, draws.item_labels, draws.class_labels, "label")


def _counts_at_most(sorted_scores: np.ndarray, values: np.ndarray) -> np.ndarray:
    """``#{e in sorted_scores : e <= v}`` for every ``v`` of ``values`` (any shape)."""
    return np.searchsorted(sorted_scores, values, side="right")


@dataclass(frozen=True)
class ConformalPredictor:
    """A calibrated conformal predictor (built by :func:`calibrate`).

    ``calibration`` float ``(samples, n)``: each row the sorted conformity scores of the
    calibration labels of one Monte Carlo sample (one row for single-label); ``correction``
    the sorted ECDF-correction p-values ``u`` ``(n_B,)`` or None; ``classes`` the class labels
    the scores' columns must match.
    """

    alpha: float
    method: str
    calibration: np.ndarray
    correction: np.ndarray | None
    classes: np.ndarray

    @property
    def n_calibration(self) -> int:
        """Calibration items the p-values count against (and those of the correction)."""
        extra = 0 if self.correction is None else self.correction.size
        return self.calibration.shape[1] + extra

    def _raw_p_values(self, conformity: np.ndarray) -> np.ndarray:
        n = self.calibration.shape[1]
        total = np.zeros(conformity.shape)
        for row in self.calibration:  # one pass per Monte Carlo sample, vectorised over items
            total += _counts_at_most(row, conformity)
        return (1.0 + total / self.calibration.shape[0]) / (n + 1.0)

    def p_values(self, scores) -> xr.DataArray:
        """Conformal p-values ``(item, class)`` of the classes for items with ``scores``
        (DataFrame indexed by item with a column per class, DataArray ``(item, class)`` or
        array ``(n, K)`` in the classes' order)."""
        values, items = _test_scores(scores, self.classes)
        p = self._raw_p_values(values)
        if self.correction is not None:
            p = (1.0 + _counts_at_most(self.correction, p)) / (self.correction.size + 1.0)
        return xr.DataArray(p, dims=("item", "class"),
                            coords={"item": items, "class": self.classes}, name="p_value")

    def predict(self, scores) -> xr.DataArray:
        """Prediction sets, bool ``(item, class)``: ``C(x) = {y : p(x, y) > alpha}``."""
        return (self.p_values(scores) > self.alpha).rename("prediction_set")


def _test_scores(scores, classes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(values (n, K) float64, item ids)`` of test scores, their classes checked against
    ``classes``."""
    if isinstance(scores, pd.DataFrame):
        absent = pd.Index(classes).difference(scores.columns)
        extra = scores.columns.difference(pd.Index(classes))
        if len(absent) or len(extra):
            raise ValueError(f"score columns must be the classes {list(classes)[:20]}: missing "
                             f"{list(absent)[:5]}, unexpected {list(extra)[:5]}")
        values, items = scores[list(classes)].to_numpy(), scores.index.to_numpy()
    elif isinstance(scores, xr.DataArray):
        if set(scores.dims) != {"item", "class"}:
            raise ValueError(f"scores must have dims ('item', 'class'), got {scores.dims}")
        scores = scores.transpose("item", "class")
        if "class" in scores.coords:
            own = scores["class"].values
            if set(own.tolist()) != set(classes.tolist()) or own.size != classes.size:
                raise ValueError(f"score classes {list(own)[:20]} do not match the calibration "
                                 f"classes {list(classes)[:20]}")
            scores = scores.sel({"class": classes})
        values = scores.values
        items = scores["item"].values if "item" in scores.coords else np.arange(values.shape[0])
    else:
        values = np.asarray(scores)
        if values.ndim != 2 or values.shape[1] != classes.size:
            raise ValueError(f"scores must be (item, class={classes.size}), got shape "
                             f"{values.shape}")
        items = np.arange(values.shape[0])
    if values.dtype.kind not in "fiub":
        raise TypeError(f"scores must be real numbers, got dtype {values.dtype}")
    values = values.astype(np.float64)
    bad = np.isnan(values).any(axis=1)
    if bad.any():
        raise ValueError(f"scores of item {fmt(items[int(np.argmax(bad))])} contain NaN")
    return values, items


def calibrate(scores, target, *, alpha: float = 0.1, method: str = "monte-carlo",
              samples: int = 10, labels=None, ecdf: bool = True, split: float = 0.5,
              seed: int | None = None) -> ConformalPredictor:
    """Calibrate a conformal predictor on annotated items.

    Parameters
    ----------
    scores
        The classifier's scores on the calibration items, aligned to ``target``'s items and
        classes (:func:`plausible.metrics.predictions.as_scores`: a DataArray ``(item,
        class)`` by label, or an array in the target's order; a DataFrame indexed by item).
    target
        A trace, an :class:`~plausible.Aggregation` or a plausibility (dense or candidate
        storage): its posterior mean plausibility is each item's label distribution.
    alpha : float in (0, 1)
        Target miscoverage: sets cover a label drawn from the target with probability
        ``>= 1 - alpha``.
    method : ``"monte-carlo"`` or ``"single-label"``
        Labels drawn from the plausibilities (``samples`` per item), or one label per item
        (``labels``, default the most plausible class).
    ecdf : bool
        Monte Carlo only: apply the ECDF correction (``split`` of the items calibrate, the rest
        correct); without it the guarantee is ``1 - 2 alpha``.
    seed : int, optional
        Seeds the label draws and the split.
    """
    alpha, method = _check_alpha(alpha), _check_method(method)
    draws = _target_draws(target)
    n = draws.layout.n_items
    if n == 0:
        raise ValueError("the calibration set is empty: no annotated items to calibrate on")
    conformity = as_scores(_frame_as_array(scores, draws), draws)
    classes = draws.class_labels
    rng = np.random.default_rng(seed)
    rows = np.arange(n)
    if method == "single-label":
        position = (draws.mean().argmax(axis=1) if labels is None
                    else _label_positions(labels, draws))
        return ConformalPredictor(alpha, method, np.sort(conformity[rows, position])[None, :],
                                  None, classes)
    samples = int(samples)
    if samples < 1:
        raise ValueError(f"samples must be a positive number of labels per item, got {samples}")
    plausibility = draws.mean()
    order = rng.permutation(n) if ecdf else rows
    n_fit = int(round(n * split)) if ecdf else n
    if ecdf and not (1 <= n_fit < n):
        raise ValueError(f"the ECDF correction needs at least one item on each side of the "
                         f"split; {n} calibration item(s) with split={split}")
    fit, held = order[:n_fit], order[n_fit:]
    sampled = categorical_draws(rng, plausibility[fit], size=(samples, fit.size))
    calibration = np.sort(conformity[fit[None, :], sampled], axis=1)
    correction = None
    if ecdf:
        uncorrected = ConformalPredictor(alpha, method, calibration, None, classes)
        fresh = categorical_draws(rng, plausibility[held])
        pbar = uncorrected._raw_p_values(conformity[held])
        correction = np.sort(pbar[np.arange(held.size), fresh])
    return ConformalPredictor(alpha, method, calibration, correction, classes)


def _frame_as_array(scores, draws: Draws):
    """A DataFrame of scores (indexed by item, a column per class) as a labelled DataArray."""
    if isinstance(scores, pd.DataFrame):
        return xr.DataArray(scores.to_numpy(), dims=("item", "class"),
                            coords={"item": scores.index.to_numpy(),
                                    "class": scores.columns.to_numpy()})
    return scores


def prediction_sets(scores, target, *, alpha: float = 0.1, test=None, folds: int = 2,
                    seed: int | None = None, **options) -> xr.DataArray:
    """Prediction sets, bool ``(item, class)``, calibrated on ``target``'s items.

    With ``test`` (scores of new items), the sets of those items from a predictor calibrated
    on all of ``target``'s items. Without it, the sets of the calibration items themselves by
    cross-fitting: the items are split at random into ``folds`` parts and each part's sets
    come from a predictor calibrated on the other parts, so no item calibrates its own set.
    ``options`` go to :func:`calibrate` (``method``, ``samples``, ``labels``, ``ecdf``).
    """
    if test is not None:
        return calibrate(scores, target, alpha=alpha, seed=seed, **options).predict(test)
    draws = _target_draws(target)
    n = draws.layout.n_items
    if not 2 <= int(folds) <= max(n, 2):
        raise ValueError(f"folds must be between 2 and the number of items ({n}), got {folds}")
    conformity = as_scores(_frame_as_array(scores, draws), draws)
    labels = options.pop("labels", None)
    positions = None if labels is None else _label_positions(labels, draws)
    rng = np.random.default_rng(seed)
    part = rng.permutation(n) % int(folds)
    out = np.zeros((n, draws.layout.n_classes), dtype=bool)
    items, classes = draws.item_labels, draws.class_labels
    mean = draws.mean()
    for fold in range(int(folds)):
        rest, own = np.flatnonzero(part != fold), np.flatnonzero(part == fold)
        plaus = xr.DataArray(mean[rest][None], dims=("draw", "item", "class"),
                             coords={"item": items[rest], "class": classes})
        fold_labels = None if positions is None else classes[positions[rest]]
        predictor = calibrate(conformity[rest], plaus, alpha=alpha, labels=fold_labels,
                              seed=int(rng.integers(2**32)), **options)
        out[own] = predictor.predict(conformity[own]).values
    return xr.DataArray(out, dims=("item", "class"), coords={"item": items, "class": classes},
                        name="prediction_set")


def coverage(sets, target=None, *, labels=None) -> pd.Series:
    """How the sets cover, averaged over their items: ``set_size`` (mean classes in a set),
    ``empty`` (share of empty sets), ``coverage_plausibility`` (mean over items of
    ``sum_{y in C(x)} lambda(y)``, the probability of covering a label drawn from the
    target's posterior mean plausibility) and ``coverage_labels`` (share of items whose label
    is in the set; ``labels`` a Series indexed by item). ``sets`` is a bool DataArray
    ``(item, class)`` whose items are among the target's / the labels' items."""
    if not isinstance(sets, xr.DataArray) or set(sets.dims) != {"item", "class"}:
        raise TypeError("sets must be a bool DataArray (item, class), as predict() returns")
    sets = sets.transpose("item", "class")
    member = sets.values.astype(bool)
    out = {"items": member.shape[0], "set_size": member.sum(axis=1).mean(),
           "empty": (~member.any(axis=1)).mean()}
    items, classes = sets["item"].values, sets["class"].values
    if target is not None:
        draws = _target_draws(target)
        where = pd.Index(draws.item_labels).get_indexer(items)
        if (where < 0).any():
            raise ValueError(f"item {fmt(items[int(np.argmax(where < 0))])} of the sets is not an "
                             "item of the target")
        if not np.array_equal(draws.class_labels, classes):
            raise ValueError("the sets' classes are not the target's classes (in order)")
        out["coverage_plausibility"] = (draws.mean()[where] * member).sum(axis=1).mean()
    if labels is not None:
        if not isinstance(labels, pd.Series):
            raise TypeError("labels must be a pandas Series indexed by item")
        position = class_positions(labels, items, classes, "label")
        out["coverage_labels"] = member[np.arange(items.size), position].mean()
    return pd.Series(out, dtype=float)


__all__ = ["METHODS", "ConformalPredictor", "calibrate", "coverage", "prediction_sets"]
