"""Order-1 calibration metrics of class probability estimates against label histograms
(Mimori et al. 2021).

Item ``i`` has true class probabilities ``mu_i`` and ``n_i`` labels drawn from
``Cat(mu_i)``, histogram ``n_ik``, ``muhat_ik = n_ik / n_i``; a classifier gives a CPE
``q_i``. With ``N`` items (all sums over classes ``k``):

* expected squared loss, unbiased for every ``n_i >= 1`` and weights ``w_i`` (sum 1):
  ``L = sum_i w_i sum_k [(q_ik - muhat_ik)^2 + muhat_ik (1 - muhat_ik)]``
  (``E L = sum_i w_i E_{y ~ mu_i} sum_k (q_ik - 1[y = k])^2``);
* epistemic loss ``EL = E sum_k (q_k - mu_k)^2``: plug-in ``(1/N) sum_ik (q_ik - muhat_ik)^2``
  is biased up by ``(1/N) sum_ik mu_ik (1 - mu_ik) / n_i``; unbiased
  ``(1/N) sum_ik [(q_ik - muhat_ik)^2 - muhat_ik (1 - muhat_ik) / (n_i - 1)]`` (needs ``n_i >= 2``);
* calibration loss ``CL``: class-wise, binned on ``q_ik`` (15 equal-width bins, last bin
  closed), plug-in and debiased (:mod:`plausible.calibration.bins`), summed over
  classes; ``CE = sign(CL) sqrt(|CL|)`` (:func:`calibration_error`);
* dispersion loss ``DL = EL - CL`` and irreducible loss ``IL = L - EL``; the unbiased IL is
  the mean Gini-Simpson disagreement ``1 - sum_k n_ik (n_ik - 1) / (n_i (n_i - 1))``
  (the squared loss of a perfect predictor).

**Excluded items.** An estimator that needs ``r`` labels per item (the unbiased EL, DL and
IL need ``r = 2``) drops items with ``n_i < r`` -- they are not scored 0 -- and the result
says how many in ``attrs["n_excluded"]`` (``attrs["n_items"]`` counts the items used).

Every metric returns a 0-d ``xarray.DataArray`` named after it, with attrs ``estimator``
(``"plug-in"``, ``"unbiased"`` or ``"debiased"``), ``n_items`` and ``n_excluded``.
Arguments: ``hist`` is a :class:`~plausible.data.Votes`, a
:class:`~plausible.calibration.inputs.LabelHistogram` or an ``(item, class)``
count array; ``cpe`` an ``(item, class)`` array (numpy or DataArray with dims ``item``,
``class``) of rows summing to 1.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import xarray as xr

from plausible.calibration.bins import N_BINS, bin_index, binned_calibration
from plausible.calibration.inputs import (
    LabelHistogram,
    check_cpe,
    check_weights,
    label_histogram,
)


def metric_value(value: float, name: str, estimator: str, n_items: int, n_excluded: int = 0, **attrs):
    """A 0-d DataArray carrying a dataset-level metric and how it was computed."""
    return xr.DataArray(
        float(value),
        name=name,
        attrs={"estimator": estimator, "n_items": int(n_items), "n_excluded": int(n_excluded), **attrs},
    )


def _inputs(hist, cpe) -> tuple[LabelHistogram, np.ndarray]:
    hist = label_histogram(hist)
    return hist, check_cpe(cpe, hist)


def _estimator(debiased: bool, word: str = "unbiased") -> str:
    return word if debiased else "plug-in"


def _need_labels(hist: LabelHistogram, min_labels: int, what: str) -> np.ndarray:
    """Mask of items with ``n_i >= min_labels``; raises when none is left."""
    keep = hist.totals >= min_labels
    if not keep.any():
        raise ValueError(
            f"{what} needs items with >= {min_labels} labels; every one of the "
            f"{hist.n_items} items has fewer (max {hist.totals.max()})"
        )
    return keep


def calibration_error(cl) -> xr.DataArray | float:
    """``CE = sign(CL) sqrt(|CL|)``.

    A debiased CL can be slightly negative when the predictor is close to calibrated
    (its expectation is >= 0, an estimate need not be): the sign is kept rather than
    clipped to 0 or dropped, so the CE of a calibrated predictor still averages near 0
    and a negative CE reads "calibrated within the label noise". For a DataArray the
    name ``CL...`` becomes ``CE...`` (``CE2`` for ``CL2``) and the attrs are kept.
    """
    if isinstance(cl, xr.DataArray):
        name = "CE" + cl.name[2:] if isinstance(cl.name, str) and cl.name.startswith("CL") else cl.name
        return (np.sign(cl) * np.sqrt(np.abs(cl))).rename(name).assign_attrs(cl.attrs)
    cl = np.asarray(cl, dtype=float)
    out = np.sign(cl) * np.sqrt(np.abs(cl))
    return float(out) if out.ndim == 0 else out


def expected_accuracy(hist, cpe) -> xr.DataArray:
    """Probability that a fresh label agrees with the top class of the CPE:
    ``(1/N) sum_i muhat_i[argmax_k q_ik]`` (ties to the lowest index). Unbiased for
    ``E P(y = argmax q)`` with any ``n_i >= 1``, and free of ties among the labels."""
    hist, q = _inputs(hist, cpe)
    top = q.argmax(axis=1)
    value = hist.muhat[np.arange(hist.n_items), top].mean()
    return metric_value(value, "accuracy", "unbiased", hist.n_items)


def expected_squared_loss(hist, cpe, weights=None) -> xr.DataArray:
    """Unbiased expected squared loss ``L`` (module docstring); every item is used."""
    hist, q = _inputs(hist, cpe)
    w = check_weights(weights, hist.n_items)
    m = hist.muhat
    per_item = ((q - m) ** 2 + m * (1 - m)).sum(axis=1)
    return metric_value(w @ per_item, "L", "unbiased", hist.n_items)


def _el_terms(hist: LabelHistogram, q: np.ndarray):
    """Per (item, class): plug-in EL terms and their bias estimate (NaN where n_i < 2)."""
    m = hist.muhat
    n = hist.totals[:, None].astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        bias = np.where(n >= 2, m * (1 - m) / (n - 1), np.nan)
    return (q - m) ** 2, bias


def epistemic_loss(hist, cpe, *, debiased: bool = True) -> xr.DataArray:
    """Epistemic loss ``EL``: plug-in over all items, or unbiased over items with
    ``n_i >= 2`` (the others are excluded and counted in ``attrs["n_excluded"]``)."""
    hist, q = _inputs(hist, cpe)
    plug, bias = _el_terms(hist, q)
    if not debiased:
        return metric_value(plug.sum(axis=1).mean(), "EL", "plug-in", hist.n_items)
    keep = _need_labels(hist, 2, "the unbiased EL")
    value = (plug[keep] - bias[keep]).sum(axis=1).mean()
    return metric_value(value, "EL", "unbiased", keep.sum(), (~keep).sum())


def calibration_loss(
    hist, cpe, *, debiased: bool = True, n_bins: int = N_BINS, within: str = "labels"
) -> xr.DataArray:
    """Class-wise binned calibration loss ``CL`` over all items, summed over classes;
    ``debiased`` subtracts the within-bin variance term (``within``: see
    :mod:`plausible.calibration.bins`)."""
    hist, q = _inputs(hist, cpe)
    table = binned_calibration(hist.muhat, q, n_bins, within)
    column = "cl_debiased" if debiased else "cl_plugin"
    return metric_value(
        table[column].sum(), "CL", _estimator(debiased, "debiased"), hist.n_items, n_bins=n_bins
    )


def dispersion_loss(
    hist, cpe, *, debiased: bool = True, n_bins: int = N_BINS, within: str = "labels"
) -> xr.DataArray:
    """Dispersion loss ``DL = EL - CL``, both on the same items: all of them for the
    plug-in, those with ``n_i >= 2`` for the debiased one (others excluded, counted)."""
    hist, q = _inputs(hist, cpe)
    table = calibration_table(hist, q, n_bins=n_bins, within=within, min_labels=2 if debiased else 1)
    column = "dl_debiased" if debiased else "dl_plugin"
    return metric_value(
        table[column].sum(), "DL", _estimator(debiased, "debiased"),
        table.attrs["n_items"], table.attrs["n_excluded"], n_bins=n_bins,
    )


def irreducible_loss(hist, *, debiased: bool = True) -> xr.DataArray:
    """Irreducible loss ``IL = L - EL`` (independent of the CPE): the probability that two
    labels of an item disagree. Unbiased: mean Gini-Simpson U-statistic
    ``sum_k muhat_ik (1 - muhat_ik) n_i / (n_i - 1)`` over items with ``n_i >= 2``
    (others excluded, counted); plug-in: ``sum_k muhat_ik (1 - muhat_ik)`` over all items."""
    hist = label_histogram(hist)
    m = hist.muhat
    gini = (m * (1 - m)).sum(axis=1)
    if not debiased:
        return metric_value(gini.mean(), "IL", "plug-in", hist.n_items)
    keep = _need_labels(hist, 2, "the unbiased IL")
    n = hist.totals[keep]
    return metric_value((gini[keep] * n / (n - 1)).mean(), "IL", "unbiased", keep.sum(), (~keep).sum())


def calibration_table(
    hist, cpe, *, n_bins: int = N_BINS, within: str = "labels", min_labels: int = 2
) -> pd.DataFrame:
    """Per (class, bin) decomposition of the epistemic loss, ``EL = CL + DL``.

    Items with ``n_i < min_labels`` are left out of the whole table (so every column
    refers to the same ``N`` items); ``attrs`` hold ``n_items``, ``n_excluded``,
    ``n_bins``. Columns: ``class``, ``bin``, ``lower``, ``upper``, ``count``,
    ``mean_cpe``, ``mean_label`` (mean ``muhat``), ``within_var`` (within-bin variance
    of ``muhat``, the CL bias term times ``N``), ``el_plugin``, ``el_bias``,
    ``el_debiased``, ``cl_plugin``, ``cl_bias``, ``cl_debiased``, ``dl_plugin``
    (``el_plugin - cl_plugin``), ``dl_debiased``. Sums over the rows are the dataset
    values. With ``min_labels = 1`` and single-label items present the EL bias is not
    estimable: ``el_bias``, ``el_debiased`` and ``dl_debiased`` are NaN.
    """
    hist, q = _inputs(hist, cpe)
    if int(min_labels) != min_labels or min_labels < 1:
        raise ValueError(f"min_labels must be an integer >= 1, got {min_labels!r}")
    keep = _need_labels(hist, min_labels, "the calibration table")
    hist_k, q_k = hist.subset(keep), q[keep]
    table = binned_calibration(hist_k.muhat, q_k, n_bins, within)
    table = table.rename(
        columns={"column": "class", "mean_prediction": "mean_cpe", "mean_target": "mean_label"}
    )
    n_bins = int(n_bins)
    plug, bias = _el_terms(hist_k, q_k)
    codes = (bin_index(q_k, n_bins) + n_bins * np.arange(hist.n_classes)).ravel()
    size = n_bins * hist.n_classes
    n_used = hist_k.n_items
    el_plugin = np.bincount(codes, plug.ravel(), size) / n_used
    el_bias = np.bincount(codes, np.nan_to_num(bias).ravel(), size) / n_used
    if np.isnan(bias).any():
        el_bias = np.full(size, np.nan)
    table["class"] = np.asarray(hist.classes)[table["class"].to_numpy()]
    table.insert(table.columns.get_loc("cl_plugin"), "el_plugin", el_plugin)
    table.insert(table.columns.get_loc("cl_plugin"), "el_bias", el_bias)
    table.insert(table.columns.get_loc("cl_plugin"), "el_debiased", el_plugin - el_bias)
    table["dl_plugin"] = table["el_plugin"] - table["cl_plugin"]
    table["dl_debiased"] = table["el_debiased"] - table["cl_debiased"]
    table.attrs.update(n_items=int(n_used), n_excluded=int((~keep).sum()), n_bins=n_bins)
    return table
