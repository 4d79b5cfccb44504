"""The package's figures, in one place. Each function draws on ``ax`` / ``axes`` (a new figure
when None) and returns them, so figures can be combined and restyled.

* simulation-based calibration: :func:`sbc_ranks`;
* posterior predictive checks: :func:`statistics_check`, :func:`annotation_check`,
  :func:`annotation_checks`;
* convergence: :func:`rank` (ArviZ's rank plot of the least converged variables);
* aggregation results: :func:`certainty` (the items' top-1 certainty), :func:`overview`
  (:func:`uncertainty` on a log scale, :func:`annotator_shares`, :func:`least_certain`);
* annotators: :func:`confusion_matrices` (heatmaps), :func:`annotator_intervals`;
* plausibilities against gold: :func:`reliability_diagram` (top label);
* calibration under disagreement (Mimori et al. 2021): :func:`dpe_reliability_diagram`,
  :func:`calibration_dispersion_map`;
* testing with noisy labels (Su 2024): :func:`labelers_tradeoff`.
"""

from __future__ import annotations

import arviz_plots as azp
import matplotlib.pyplot as plt
from matplotlib import ticker
import numpy as np
from scipy import stats

from plausible.calibration.bins import N_BINS
from plausible.calibration.disagreement import DISAGREEMENT, disagreement_table
from plausible.calibration.losses import calibration_table
from plausible.evaluation.mutual_information import labelers_to_match

ANNOTATION_UNITS = {"pattern": "items", "votes": "items", "annotator_rate": "positive rate",
                    "agreement": "agreement", "grade_range": "items"}


def _axes(ax):
    if ax is None:
        _, ax = plt.subplots(figsize=(4.5, 4))
    return ax


def reliability_diagram(tables: dict, *, ax=None, title: str = ""):
    """Top-label reliability: per bin of the top probability, the share of items whose top
    class is gold (y) against the mean top probability (x), one line per entry of ``tables``
    (name -> :func:`plausible.diagnostics.reliability`), marker area by the bin's items. The
    diagonal is perfect calibration; points below it are overconfident."""
    ax = _axes(ax)
    ax.plot([0, 1], [0, 1], color="0.6", ls=":", lw=1)
    for name, table in tables.items():
        sizes = 8 + 120 * table["items"] / table["items"].sum()
        line, = ax.plot(table["confidence"], table["accuracy"], lw=1, label=name)
        ax.scatter(table["confidence"], table["accuracy"], s=sizes, color=line.get_color())
    ax.set(xlim=(0, 1.02), ylim=(0, 1.02), xlabel="top probability (bin mean)",
           ylabel="share of items whose top class is gold", title=title)
    ax.legend(loc="upper left", fontsize="small")
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
    from :mod:`plausible.calibration.cpe`.
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


def certainty(values, threshold: float = 0.99, title: str = "", ax=None):
    """Histogram of per-item top-1 certainty ``values`` with the ``threshold`` marked and the
    number of items below it in the legend."""
    ax = _axes(ax)
    values = np.asarray(values, dtype=float)
    ax.hist(values, bins=np.linspace(min(values.min(initial=1.0), threshold) - 1e-9, 1.0, 41),
            color="C0")
    below = int((values < threshold).sum())
    ax.axvline(threshold, color="C3", ls="--", label=f"{below} of {values.size} items below "
               f"{threshold:g}")
    ax.set(xlabel="certainty of the top class (share of posterior draws)", ylabel="items",
           title=title)
    ax.legend()
    return ax


def overview(items, annotators=None, *, threshold: float = 0.99, show: int = 15,
             title: str = ""):
    """What a reader of an aggregation looks for, one panel each (a new figure; returns its
    axes): :func:`uncertainty`, with ``annotators`` :func:`annotator_shares`, and
    :func:`least_certain`.

    ``items``: a per-item frame with ``item``, ``top_class`` and ``certainty_top1``
    (:meth:`plausible.Aggregation.labels` with its index reset, or ``to_frame``)."""
    panels = 2 if annotators is None else 3
    fig, axes = plt.subplots(1, panels, figsize=(5 * panels, 4), squeeze=False)
    axes = axes[0]
    uncertainty(items["certainty_top1"], threshold=threshold, title=title, ax=axes[0])
    if annotators is not None:
        annotator_shares(annotators, ax=axes[1])
    least_certain(items, threshold=threshold, show=show, ax=axes[-1])
    fig.tight_layout()
    return axes


def uncertainty(certainty, *, threshold: float = 0.99, title: str = "", ax=None):
    """How uncertain the items are: a histogram of ``1 - certainty`` (per-item top-1
    certainty) on a log scale, since most items sit near certainty 1, where a linear
    histogram piles them into one bar; the items at certainty 1 are counted in the legend
    and ``threshold`` is marked."""
    ax = _axes(ax)
    certainty = np.asarray(certainty, dtype=float)
    doubt = 1.0 - certainty
    sure = int((doubt <= 0).sum())
    positive = doubt[doubt > 0]
    low = min(positive.min(initial=1.0), 1 - threshold) / 2
    ax.hist(positive, bins=np.geomspace(low, 1.0, 31), color="C0",
            label=f"{positive.size} items ({sure} more at certainty 1)")
    ax.axvline(1 - threshold, color="C3", ls="--",
               label=f"{int((certainty < threshold).sum())} items below {threshold:g}")
    ax.set(xscale="log", xlabel="1 - certainty of the top class (log scale)", ylabel="items",
           title=title or "item uncertainty")
    ax.legend(fontsize="small")
    return ax


def annotator_shares(annotators, *, label: int = 3, ax=None):
    """How often each annotator is right against how many labels they gave, with 90 %
    intervals (:func:`plausible.diagnostics.annotator_quality`); the ``label`` worst are
    named."""
    ax = _axes(ax)
    order = annotators.sort_values("share_correct")
    err = np.stack([order["share_correct"] - order["q05"], order["q95"] - order["share_correct"]])
    err = np.clip(err, 0.0, None)  # a mean can pass a quantile by rounding when draws agree
    ax.errorbar(order["labels"], order["share_correct"], yerr=err, fmt="o", ms=3, lw=0.8,
                color="C0", alpha=0.8)
    for name, row in order.head(label).iterrows():
        ax.annotate(str(name), (row["labels"], row["share_correct"]), fontsize="x-small",
                    xytext=(3, -3), textcoords="offset points")
    ax.set(xscale="log", ylim=(0, 1.02), xlabel="labels given (log scale)",
           ylabel="share of labels right (90% interval)", title="annotators")
    ax.xaxis.set_major_locator(ticker.LogLocator(subs=(1, 2, 5)))  # ticks within a decade
    ax.xaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _: f"{v:g}"))
    ax.xaxis.set_minor_formatter(ticker.NullFormatter())
    return ax


def least_certain(items, *, threshold: float = 0.99, show: int = 15, ax=None):
    """The ``show`` least certain items (the ones to label again): their top-1 certainty as
    bars, labelled with the item and its top class; ``threshold`` marked."""
    ax = _axes(ax)
    worst = items.sort_values("certainty_top1").head(show)[::-1]
    ax.barh(np.arange(len(worst)), worst["certainty_top1"], color="C1")
    ax.set_yticks(np.arange(len(worst)),
                  [f"{item} ({top})" for item, top in zip(worst["item"], worst["top_class"])],
                  fontsize="x-small")
    ax.axvline(threshold, color="C3", ls="--")
    ax.set(xlim=(0, 1), xlabel="certainty of the top class",
           title=f"least certain {len(worst)} items (top class): label again")
    return ax


def confusion_matrices(confusion, *, columns: int = 4, title: str = ""):
    """Heatmaps of posterior mean confusion matrices, one panel per annotator: ``confusion``
    a DataArray ``(annotator, class, label_class)`` (row: true class, column: the label
    given; each row sums to 1). A new figure; returns its axes."""
    names = confusion["annotator"].values
    rows = -(-len(names) // columns)
    n_classes = confusion.sizes["class"]
    size = 1.2 + 0.28 * n_classes
    fig, axes = plt.subplots(rows, columns, figsize=(columns * size, rows * size),
                             squeeze=False, constrained_layout=True)
    classes = [str(c) for c in confusion["class"].values]
    image = None
    for ax, name in zip(axes.ravel(), names):
        image = ax.imshow(confusion.sel(annotator=name).values, vmin=0, vmax=1, cmap="Blues")
        ax.set_title(str(name), fontsize="small")
        ax.set_xticks(range(n_classes), classes, fontsize="x-small", rotation=90)
        ax.set_yticks(range(n_classes), classes, fontsize="x-small")
    for ax in axes.ravel()[len(names):]:
        ax.set_visible(False)
    axes[-1, 0].set(xlabel="label given", ylabel="true class")
    if image is not None:
        fig.colorbar(image, ax=axes, shrink=0.6, label="posterior mean probability")
    if title:
        fig.suptitle(title)
    return axes


def annotator_intervals(table, columns, *, ax=None, xlabel: str = "posterior mean (90% interval)"):
    """Per annotator (rows of ``table``, index: ids), each of ``columns`` (names whose
    ``<name>``, ``<name>_q05`` and ``<name>_q95`` columns ``table`` holds) as a point with its
    interval, annotators from top to bottom in ``table``'s order."""
    if ax is None:
        _, ax = plt.subplots(figsize=(6, max(2.5, 0.22 * len(table) + 1)))
    y = np.arange(len(table))[::-1]
    for offset, (column, color) in enumerate(zip(columns, ("C0", "C1", "C2"))):
        mean = table[column].to_numpy(dtype=float)
        err = np.clip(np.stack([mean - table[f"{column}_q05"], table[f"{column}_q95"] - mean]),
                      0.0, None)
        ax.errorbar(mean, y + 0.2 * offset, xerr=err, fmt="o", ms=3, lw=0.8, color=color,
                    label=column)
    ax.set_yticks(y, [str(i) for i in table.index], fontsize="x-small")
    ax.set(xlim=(0, 1), xlabel=xlabel)
    ax.legend(fontsize="small", loc="lower left")
    return ax


def sbc_ranks(result, bins: int = 20, axes=None):
    """Rank histograms of a :class:`~plausible.inference.SBCResult`, one panel per variable,
    with the 99 % band of bin counts expected under uniformity."""
    names = list(result.ranks)
    if axes is None:
        _, axes = plt.subplots(1, len(names), figsize=(4 * len(names), 3), squeeze=False)
        axes = axes[0]
    for ax, name in zip(axes, names):
        binned = result.binned(result.ranks[name], bins).ravel()
        counts = np.bincount(binned, minlength=bins)
        low, high = stats.binom(binned.size, 1 / bins).ppf([0.005, 0.995])
        ax.axhspan(low, high, color="0.85")
        ax.bar(np.arange(bins), counts, width=1.0, color="C0")
        ax.set(title=f"SBC ranks: {name}", xlabel="rank bin", ylabel="count")
    return axes


def statistics_check(check, axes=None, columns: int = 4):
    """Histogram of each replicated statistic of a posterior predictive check that holds
    ``replicated_statistics`` and ``observed_statistics``
    (:class:`~plausible.diagnostics.VotePredictiveCheck`, ``RankingPredictiveCheck``,
    ``RatingPredictiveCheck``) with the observed value marked and its mid p-value in the
    title; at most ``columns`` panels a row."""
    names = list(check.replicated_statistics.columns)
    if axes is None:
        rows = -(-len(names) // columns)
        width = min(columns, len(names))
        _, grid = plt.subplots(rows, width, figsize=(4 * width, 3 * rows), squeeze=False)
        for ax in grid.ravel()[len(names):]:
            ax.set_visible(False)
        axes = grid.ravel()[:len(names)]
    p_values = check.p_values
    for ax, name in zip(axes, names):
        ax.hist(check.replicated_statistics[name], bins=30, color="C0", alpha=0.7)
        ax.axvline(check.observed_statistics[name], color="C3", lw=2, label="observed")
        ax.set(title=f"{name} (p = {p_values[name]:.2f})", xlabel=name)
    axes[0].legend()
    plt.gcf().tight_layout()
    return axes


def annotation_check(check, name: str, ax=None, log: bool | None = None, entries=None):
    """Statistic ``name`` of an :class:`~plausible.diagnostics.AnnotationPredictiveCheck`:
    observed values (red) over the replicated medians and intervals (blue bars); log scale
    for the count statistics unless ``log`` says otherwise; only ``entries`` (a list of the
    statistic's entries) when given."""
    table = check.summary(name)
    if entries is not None:
        table = table.loc[list(entries)]
    if ax is None:
        _, ax = plt.subplots(figsize=(max(4, 0.28 * len(table) + 2), 3))
    x = np.arange(len(table))
    lo, hi = table.columns[2], table.columns[3]
    ax.errorbar(x, table["median"], yerr=[table["median"] - table[lo], table[hi] - table["median"]],
                fmt="o", color="C0", ms=3, capsize=2,
                label=f"replicated ({100 * check.interval:g} %)")
    ax.scatter(x, table["observed"], color="C3", marker="x", zorder=3, label="observed")
    ax.set_xticks(x, [str(i) for i in table.index], rotation=90 if len(table) > 12 else 0)
    if log if log is not None else name in ("pattern", "votes", "grade_range"):
        ax.set_yscale("symlog", linthresh=1)
        ax.set_ylim(bottom=0)  # counts: no negative decades
    ax.set(title=name, ylabel=ANNOTATION_UNITS[name])
    ax.legend(fontsize="small")
    return ax


def annotation_checks(check):
    """:func:`annotation_check` of every statistic of ``check``, one panel each."""
    names = check.names
    fig, axes = plt.subplots(len(names), 1, figsize=(10, 3 * len(names)), squeeze=False)
    for ax, name in zip(axes[:, 0], names):
        annotation_check(check, name, ax=ax)
    fig.tight_layout()
    return axes[:, 0]


def rank(trace, var_names, **kwargs):
    """ArviZ's rank plot (``arviz_plots.plot_rank``) of ``var_names`` in ``trace``: per chain,
    the histogram of the draws' ranks among all chains, flat when the chains mix. Returns
    ArviZ's ``PlotCollection``; ``kwargs`` go to ``plot_rank``."""
    return azp.plot_rank(trace, var_names=var_names, **kwargs)


def labelers_tradeoff(pi1: float = 0.2, expert_errors=(0.02, 0.05, 0.1), eps_grid=None,
                      ax=None):
    """Curves of the number of labelers of error ``eps`` that match one expert (in mutual
    information with the true class, prevalence ``pi1``), per expert error."""
    eps_grid = np.linspace(0.05, 0.35, 31) if eps_grid is None else np.asarray(eps_grid)
    ax = plt.subplots()[1] if ax is None else ax  # a new figure: never draw onto a stale one
    for e in expert_errors:
        counts = [labelers_to_match(pi1, x, e) if x > e else 1 for x in eps_grid]
        ax.plot(eps_grid, counts, marker=".", label=f"expert error {e}")
    ax.set_xlabel("labeler error eps")
    ax.set_ylabel("labelers needed to match the expert")
    ax.set_yscale("log")
    ax.legend()
    return ax
