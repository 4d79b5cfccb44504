"""All calibration metrics of one predictor in one row (Mimori et al. 2021): order 1 (about the
CPE) and order ``r`` (about disagreement), with how many items each could use."""

from __future__ import annotations

import pandas as pd

from plausible.calibration.losses import (
    calibration_error,
    calibration_loss,
    dispersion_loss,
    epistemic_loss,
    expected_accuracy,
    expected_squared_loss,
    irreducible_loss,
)
from plausible.calibration.bins import N_BINS
from plausible.calibration.inputs import label_histogram
from plausible.calibration.cpe import PointCPE
from plausible.calibration.disagreement import disagreement_calibration_loss, disagreement_loss


def calibration_summary(hist, prediction, *, r: int = 2, n_bins: int = N_BINS) -> pd.Series:
    """Order-1 and order-``r`` metrics of ``prediction`` against ``hist``.

    ``prediction``: a predictive from :mod:`plausible.calibration.cpe` (``PointCPE``,
    ``DirichletCPE``, ``EnsembleCPE``) or an ``(item, class)`` CPE array (a point CPE).
    Returns a Series: ``accuracy``, ``L``, ``EL`` (unbiased), ``EL_plugin``, ``CL``
    (debiased), ``CL_plugin``, ``CE`` (signed sqrt of the debiased CL), ``DL``, ``IL``,
    ``L{r}``, ``CL{r}`` (debiased), ``CE{r}``, and ``n_items``, ``n_excluded_order1``
    (items without the 2 labels the unbiased EL needs), ``n_excluded_order{r}``. Metrics
    that no item has enough labels for are NaN.
    """
    hist = label_histogram(hist)
    if not hasattr(prediction, "kernel_expectation"):
        prediction = PointCPE(prediction)
    q = prediction.cpe
    most = int(hist.totals.max())
    nan = float("nan")
    cl = calibration_loss(hist, q, n_bins=n_bins)
    row = {
        "accuracy": float(expected_accuracy(hist, q)),
        "L": float(expected_squared_loss(hist, q)),
        "EL": nan,
        "EL_plugin": float(epistemic_loss(hist, q, debiased=False)),
        "CL": float(cl),
        "CL_plugin": float(calibration_loss(hist, q, debiased=False, n_bins=n_bins)),
        "CE": float(calibration_error(cl)),
        "DL": nan,
        "IL": nan,
        f"L{r}": nan,
        f"CL{r}": nan,
        f"CE{r}": nan,
        "n_items": hist.n_items,
        "n_excluded_order1": int((hist.totals < 2).sum()),
        f"n_excluded_order{r}": int((hist.totals < r).sum()),
    }
    if most >= 2:  # the unbiased EL, DL, IL need 2 labels on some item
        row.update(
            EL=float(epistemic_loss(hist, q)),
            DL=float(dispersion_loss(hist, q, n_bins=n_bins)),
            IL=float(irreducible_loss(hist)),
        )
    if most >= r:
        cl_r = disagreement_calibration_loss(hist, prediction, r, n_bins=n_bins)
        row.update({
            f"L{r}": float(disagreement_loss(hist, prediction, r)),
            f"CL{r}": float(cl_r),
            f"CE{r}": float(calibration_error(cl_r)),
        })
    return pd.Series(row)
