"""Figures for calibration under disagreement (spec 04): the DPE reliability diagram and the
calibration-dispersion map. Each function draws on ``ax`` (a new figure when None) and
returns it, so several predictors can share one axes (call again with ``label=``).
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from plausible.metrics.calibration import calibration_table
from plausible.metrics.calibration_bins import N_BINS
from plausible.metrics.disagreement import DISAGREEMENT, disagreement_table


def _axes(ax):
    if ax is None:
        _, ax = plt.subplots(figsize=(4.5, 4))
    return ax


def dpe_reliability_diagram(
    hist, dpe, *, r: int = 2, kernel=DISAGREEMENT, n_bins: int = N_BINS, ax=None, label=None,
    color=None, show_counts: bool = True,
):
    """Observed against predicted disagreement, binned on the prediction.

    Per bin (items with ``n_i >= r`` only): x = mean DPE, y = mean order-``r``
    U-statistic (an unbiased estimate of the bin's disagreement rate, so no debiasing is
    needed for the points), error bars ``+- 2 s_b / sqrt(m_b)``. The diagonal is perfect
    calibration; points below it mean the DPE overestimates disagreement (what
    alpha-calibration shrinks). With ``show_counts`` a light histogram of the bin counts
    (fractions, right axis) sits underneath. ``dpe``: ``(item,)`` array or a predictive
    from :mod:`plausible.metrics.cpe`.
    """
    ax = _axes(ax)
    table = disagreement_table(hist, dpe, r, kernel, n_bins=n_bins)
    filled = table[table["count"] > 0]
    se = np.sqrt(filled["within_var"] / filled["count"]).fillna(0.0)
    if show_counts:
        twin = ax.twinx()
        twin.bar(
            (table["lower"] + table["upper"]) / 2, table["count"] / table["count"].sum(),
            width=table["upper"] - table["lower"], color=color or "0.5", alpha=0.15, zorder=0,
        )
        twin.set_ylim(0, 1)
        twin.set_ylabel("fraction of items")
        ax.set_zorder(twin.get_zorder() + 1)
        ax.patch.set_visible(False)
    ax.plot([0, 1], [0, 1], color="0.6", ls=":", lw=1)
    ax.errorbar(
        filled["mean_prediction"], filled["mean_target"], yerr=2 * se, marker="o", ms=4,
        capsize=2, color=color, label=label,
    )
    ax.set(
        xlim=(0, 1), ylim=(0, 1), xlabel="predicted disagreement (DPE)",
        ylabel=f"observed disagreement (order-{table.attrs['r']} U-statistic)",
    )
    if label is not None:
        ax.legend(loc="upper left")
    return ax


def calibration_dispersion_map(
    hist, cpe, *, class_index: int | None = None, n_bins: int = N_BINS, plugin: bool = True,
    debiased: bool = True, ax=None, min_labels: int = 2,
):
    """Per-bin calibration loss CL_b and dispersion loss DL_b against the predicted
    probability (Mimori et al.'s CD diagram): ``EL = sum_b (CL_b + DL_b)``.

    Summed over classes (class-wise bins) or for column ``class_index`` only; debiased
    curves solid, plug-in dotted. Items with ``n_i < min_labels`` are left out (the
    debiased DL needs 2 labels). CL_b large: the bin's mean label rate is off its mean
    CPE; DL_b large: within the bin the CPEs do not track the items' label rates.
    """
    ax = _axes(ax)
    table = calibration_table(hist, cpe, n_bins=n_bins, min_labels=min_labels)
    if class_index is not None:
        classes = table["class"].unique()
        table = table[table["class"] == classes[class_index]]
    per_bin = table.groupby("bin").agg(
        lower=("lower", "first"), upper=("upper", "first"),
        cl_plugin=("cl_plugin", "sum"), cl_debiased=("cl_debiased", "sum"),
        dl_plugin=("dl_plugin", "sum"), dl_debiased=("dl_debiased", "sum"),
    )
    centre = (per_bin["lower"] + per_bin["upper"]) / 2
    for kind, style, show in (("debiased", "-", debiased), ("plugin", ":", plugin)):
        if not show:
            continue
        ax.plot(centre, per_bin[f"cl_{kind}"], ls=style, color="C1", marker=".", label=f"CL ({kind})")
        ax.plot(centre, per_bin[f"dl_{kind}"], ls=style, color="C2", marker=".", label=f"DL ({kind})")
    ax.axhline(0, color="0.6", lw=0.8)
    ax.set(xlim=(0, 1), xlabel="predicted class probability (bin)", ylabel="loss contribution")
    ax.legend(fontsize=8)
    return ax
