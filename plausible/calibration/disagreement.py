"""Order-r metrics: U-statistics of label histograms and the loss and calibration of
disagreement predictions (Mimori et al. 2021).

**U-statistics.** A symmetric kernel ``kappa`` of ``r`` labels depends only on their
class histogram ``m`` (``sum_k m_k = r``). Its U-statistic over the ``n_i`` labels of
item ``i`` averages ``kappa`` over all ``binom(n_i, r)`` label subsets:

    muhat_r,i = sum_m kappa(m) prod_k binom(n_ik, m_k) / binom(n_i, r)

(a multivariate hypergeometric average), unbiased for ``theta_i = E kappa`` under
``Cat(mu_i)`` labels. The default kernel, *disagreement* (the ``r`` labels are not all
equal), has the closed form ``1 - sum_k n_ik^(r) / n_i^(r)`` with falling factorials
``x^(r) = x (x - 1) ... (x - r + 1)``; for ``r = 2`` this is the Gini-Simpson index
``1 - sum_k n_ik (n_ik - 1) / (n_i (n_i - 1))``. Other kernels are callables on the
``(n_compositions, K)`` array of ``r``-label histograms, enumerated
(``binom(r + K - 1, K - 1)`` of them: keep ``r`` and ``K`` small).

**Predictions.** A predictor gives ``phi_i`` (a DPE for the disagreement kernel), e.g.
from :mod:`plausible.calibration.cpe`. Over the ``N`` items with ``n_i >= r`` (the others are
**excluded, not scored 0**, and counted in ``attrs["n_excluded"]``):

* ``L_r = (1/N) sum_i [(phi_i - muhat_r,i)^2 + muhat_r,i (1 - muhat_r,i)]``, unbiased for
  the squared loss of ``phi_i`` against the kernel on ``r`` fresh labels (binary kernels);
* ``CL_r`` binned on ``phi`` exactly as the order-1 CL (15 bins, plug-in and debiased;
  :mod:`plausible.calibration.bins`), ``CE_r = sign(CL_r) sqrt(|CL_r|)``.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from itertools import combinations

import numpy as np
import pandas as pd
import xarray as xr
from scipy.special import comb

from plausible.calibration.losses import calibration_error, metric_value
from plausible.calibration.bins import N_BINS, binned_calibration
from plausible.calibration.inputs import ITEM, LabelHistogram, check_dpe, label_histogram

DISAGREEMENT = "disagreement"
Kernel = str | Callable[[np.ndarray], np.ndarray]


def check_order(r) -> int:
    """``r`` as an int >= 1."""
    if int(r) != r or r < 1:
        raise ValueError(f"the order r must be an integer >= 1, got {r!r}")
    return int(r)


@lru_cache(maxsize=32)
def _compositions(r: int, n_classes: int) -> np.ndarray:
    # stars and bars: choose the K - 1 bar positions among r + K - 1 slots
    slots = r + n_classes - 1
    out = []
    for bars in combinations(range(slots), n_classes - 1):
        edges = (-1, *bars, slots)
        out.append([edges[j + 1] - edges[j] - 1 for j in range(n_classes)])
    table = np.array(out, dtype=np.int64).reshape(-1, n_classes)
    table.flags.writeable = False
    return table


def compositions(r: int, n_classes: int) -> np.ndarray:
    """All class histograms of ``r`` labels: int64 ``(binom(r + K - 1, K - 1), K)``."""
    return _compositions(check_order(r), int(n_classes))


def kernel_values(kernel: Kernel, r: int, n_classes: int) -> np.ndarray:
    """``kappa(m)`` for every ``r``-label histogram ``m`` of :func:`compositions`."""
    m = compositions(r, n_classes)
    if kernel == DISAGREEMENT:
        return (m.max(axis=1) < r).astype(float)
    if not callable(kernel):
        raise ValueError(f"kernel must be {DISAGREEMENT!r} or a callable, got {kernel!r}")
    values = np.asarray(kernel(m), dtype=float)
    if values.shape != (m.shape[0],) or not np.isfinite(values).all():
        raise ValueError(
            f"the kernel must map the ({m.shape[0]}, {n_classes}) array of {r}-label histograms "
            f"to {m.shape[0]} finite values, got shape {values.shape}"
        )
    return values


def _falling(x: np.ndarray, r: int) -> np.ndarray:
    out = np.ones_like(x, dtype=float)
    for j in range(r):
        out = out * (x - j)
    return out


def u_statistic(hist, r: int = 2, kernel: Kernel = DISAGREEMENT) -> xr.DataArray:
    """Per-item U-statistic of order ``r``: float64 ``(item,)``, NaN for items with
    ``n_i < r`` (``attrs``: ``r``, ``n_excluded``). Default kernel: disagreement."""
    hist = label_histogram(hist)
    r = check_order(r)
    n = hist.totals
    keep = n >= r
    values = np.full(hist.n_items, np.nan)
    counts = hist.counts[keep]
    if kernel == DISAGREEMENT:
        values[keep] = 1.0 - _falling(counts, r).sum(axis=1) / _falling(n[keep], r)
    else:
        kappa = kernel_values(kernel, r, hist.n_classes)
        m = compositions(r, hist.n_classes)
        weights = comb(counts[:, None, :], m[None, :, :]).prod(axis=2) / comb(n[keep], r)[:, None]
        values[keep] = weights @ kappa
    name = DISAGREEMENT if kernel == DISAGREEMENT else "u_statistic"
    return xr.DataArray(
        values, dims=(ITEM,), coords={ITEM: hist.items}, name=name,
        attrs={"r": r, "n_excluded": int((~keep).sum())},
    )


def disagreement(hist, r: int = 2) -> xr.DataArray:
    """Unbiased per-item probability that ``r`` labels are not all equal (Gini-Simpson
    for ``r = 2``); NaN for items with ``n_i < r``."""
    return u_statistic(hist, r, DISAGREEMENT)


def _prediction(prediction, hist: LabelHistogram, r: int, kernel: Kernel) -> np.ndarray:
    """``phi (item,)`` from an array or from a predictive distribution over CPEs."""
    if hasattr(prediction, "kernel_expectation"):
        prediction = prediction.kernel_expectation(r, kernel)
    what = "dpe" if kernel == DISAGREEMENT else "prediction"
    return check_dpe(prediction, hist, what=what)


def _order_r(hist, prediction, r, kernel):
    hist = label_histogram(hist)
    r = check_order(r)
    phi = _prediction(prediction, hist, r, kernel)
    target = u_statistic(hist, r, kernel).values
    keep = ~np.isnan(target)
    if not keep.any():
        raise ValueError(
            f"order-{r} metrics need items with >= {r} labels; every one of the "
            f"{hist.n_items} items has fewer (max {hist.totals.max()})"
        )
    return hist, phi[keep], target[keep], int((~keep).sum())


def disagreement_loss(hist, dpe, r: int = 2, kernel: Kernel = DISAGREEMENT) -> xr.DataArray:
    """Unbiased order-``r`` squared loss ``L_r`` of predictions ``dpe`` (``(item,)`` array
    or a predictive distribution from :mod:`plausible.calibration.cpe`); binary kernels only."""
    if kernel != DISAGREEMENT:
        kappa = kernel_values(kernel, check_order(r), label_histogram(hist).n_classes)
        if not np.isin(kappa, (0.0, 1.0)).all():
            raise ValueError("L_r is unbiased only for binary kernels (values 0 or 1)")
    hist, phi, target, excluded = _order_r(hist, dpe, r, kernel)
    value = ((phi - target) ** 2 + target * (1 - target)).mean()
    return metric_value(value, f"L{r}", "unbiased", phi.size, excluded, r=r)


def disagreement_table(
    hist, dpe, r: int = 2, kernel: Kernel = DISAGREEMENT, *, n_bins: int = N_BINS, within: str = "labels"
) -> pd.DataFrame:
    """Per-bin table of the order-``r`` calibration loss, binned on the prediction:
    ``bin``, ``lower``, ``upper``, ``count``, ``mean_prediction``, ``mean_target`` (mean
    U-statistic), ``within_var``, ``cl_plugin``, ``cl_bias``, ``cl_debiased``; ``attrs``: ``r``,
    ``n_items``, ``n_excluded``, ``n_bins``. Also the data of the DPE reliability diagram."""
    hist, phi, target, excluded = _order_r(hist, dpe, r, kernel)
    table = binned_calibration(target, phi, n_bins, within)
    table.attrs.update(r=check_order(r), n_items=int(phi.size), n_excluded=excluded, n_bins=int(n_bins))
    return table


def disagreement_calibration_loss(
    hist, dpe, r: int = 2, kernel: Kernel = DISAGREEMENT, *, debiased: bool = True,
    n_bins: int = N_BINS, within: str = "labels",
) -> xr.DataArray:
    """Binned order-``r`` calibration loss ``CL_r`` (plug-in or debiased) over items with
    ``n_i >= r``; :func:`disagreement_calibration_error` gives ``CE_r``."""
    table = disagreement_table(hist, dpe, r, kernel, n_bins=n_bins, within=within)
    column = "cl_debiased" if debiased else "cl_plugin"
    return metric_value(
        table[column].sum(), f"CL{r}", "debiased" if debiased else "plug-in",
        table.attrs["n_items"], table.attrs["n_excluded"], r=table.attrs["r"], n_bins=int(n_bins),
    )


def disagreement_calibration_error(hist, dpe, r: int = 2, kernel: Kernel = DISAGREEMENT, **kwargs):
    """``CE_r = sign(CL_r) sqrt(|CL_r|)`` (see :func:`calibration_error`)."""
    return calibration_error(disagreement_calibration_loss(hist, dpe, r, kernel, **kwargs)).rename(f"CE{r}")
