"""The report's sections, each read from a fitted :class:`plausible.Aggregation`.

* :func:`summary`: the run (model, data, draws) and its convergence, worst quantities named;
* :func:`certainty`: how certain the items' top class is;
* :func:`annotators`: each annotator's quality with intervals (label models), and the
  model's own annotator parameters: confusion matrices as heatmaps (Dawid–Skene family),
  sensitivity and specificity (binary models), spammer flags (where the registry entry
  declares how to read them);
* :func:`next_labels`: the items that need another label (:mod:`plausible.active`);
* :func:`predictive`: the posterior predictive checks as figures, with what they miss;
* :func:`item_table`: one row per item, sortable and searchable.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from plausible import models, plots
from plausible.diagnostics import annotator_quality, rhat
from plausible.diagnostics.annotator_quality import annotator_scalars
from plausible.diagnostics.convergence import CONVERGED, EXACT, NOT_CONVERGED
from plausible.report.page import Section, figure, paragraph, table, text

QUANTILES = (0.05, 0.95)
"""The intervals of the annotators' parameters (90 %, equal-tailed over the draws)."""
MAX_HEATMAPS = 12
"""Confusion matrices drawn: the annotators with the most labels (every one is in the
table)."""
MAX_HEATMAP_CLASSES = 12
"""Above this many classes a confusion matrix is not drawn (unreadable), only tabulated as
accuracy per annotator."""
MAX_PLOTTED_ENTRIES = 40
"""Entries of a predictive statistic drawn (the most extreme first)."""
SPAM_SHARE = 0.9
"""An annotator is flagged as a likely spammer when at least this share of the draws has them
answer at random more often than not (by the flag its registry entry declares: for MACE a
truthful-answer rate below 1/2, for ordered probit a rate of random answers above 1/2)."""
RANKED = 4
"""Variables in the convergence section's rank plot (the least converged first)."""
MAX_RANKED_VALUES = 20_000_000
"""Variables with more stored values than this (chain x draw x elements) are left out of the
rank plot: their R-hat per element would cost more than the plot tells."""
PLAUSIBILITY_COLUMNS = 12
"""Up to this many classes the item table has a plausibility column per class; above, the
three most plausible classes with their plausibilities."""


def _count(data) -> tuple[int, str]:
    """How many annotations ``data`` holds, and what they are called."""
    if hasattr(data, "n_annotations"):
        return data.n_annotations, "labels"
    if hasattr(data, "n_comparisons"):
        return data.n_comparisons, "comparisons"
    if hasattr(data, "n_responses"):
        return data.n_responses, "label sets"
    if hasattr(data, "n_ratings"):
        return data.n_ratings, "ratings"
    if hasattr(data, "n_readers"):
        return int(data.n_readers.sum()), "rankings"
    return int(np.asarray(data.counts).sum()), "votes"


def summary(result, check) -> Section:
    """The run and its convergence: model, plausibility meaning, sizes, draws, and the
    convergence report's verdict with every variable's worst R-hat and ESS (worst first)."""
    section = Section("summary", "Run and convergence")
    posterior = result.trace["posterior"]
    facts = {"model": f"{result.model}: {models.entry(result.model).summary}",
             "plausibility": result.meaning,
             "annotations": result.format,
             "items": result.sizes["item"],
             "classes": result.sizes["class"]}
    if result.data is not None:
        count, noun = _count(result.data)
        facts[noun] = count
        if getattr(result.data, "annotators", None) is not None and result.format != "votes":
            facts["annotators"] = result.data.n_annotators
    facts["chains x draws"] = f"{posterior.sizes['chain']} x {posterior.sizes['draw']}"
    seconds = posterior.attrs.get("sampling_seconds")
    if seconds is not None:
        facts["sampling time"] = f"{float(seconds):.1f} s"
    section.add(table(pd.DataFrame({"": pd.Series(facts)}).rename_axis("run"), id="run-facts"))
    if result.selection is not None:
        section.add(paragraph(f"Model chosen: {result.selection.reason}."))
        choice = result.selection.table.drop(columns="rank")
        section.add(table(choice.round(3), id="model-choice",
                          caption="The candidates' PSIS-LOO elpd, difference to the best and its "
                                  "standard error, stacking weight (Yao et al. 2018), share of "
                                  "items with an unreliable LOO term, convergence."))

    report = check.convergence
    kind = {CONVERGED: "ok", EXACT: "ok", NOT_CONVERGED: "bad"}.get(report.status, "unknown")
    section.add(f'<p class="verdict {kind}" id="convergence-verdict">{text(report.status)}</p>')
    section.add("<pre>" + text(report.text) + "</pre>")
    variables = report.table.sort_values("max_rhat", ascending=False, na_position="last")
    ess = ["min_ess_bulk", "min_ess_tail"]
    variables[ess] = variables[ess].round().astype("Int64")
    section.add(table(variables.rename_axis("variable"), id="convergence-table",
                      caption="Per variable: worst split R-hat (and where), smallest bulk and "
                              "tail ESS (Vehtari et al. 2021).", sortable=True))
    ranked = _rank_figure(result.trace, variables)
    if ranked:
        section.add(ranked)
    if report.modes is not None and len(report.modes):
        section.add(table(report.modes.head(50), id="chain-modes",
                          caption="Items on whose most plausible class the chains disagree."))
    return section


def _rank_figure(trace, variables: pd.DataFrame) -> str:
    """ArviZ's rank plot (:func:`plausible.plots.rank`) of the least converged element of each
    assessed variable stored per draw, at most :data:`RANKED` of them, worst first; empty
    when there is none (exact draws, summaries only)."""
    posterior = trace["posterior"]
    assessed = variables[variables["max_rhat"].notna()].index
    chosen, coords = [], {}
    for name in assessed:
        if name not in posterior.data_vars or len(chosen) == RANKED:
            continue
        var = posterior[name].transpose("chain", "draw", ...)
        if var.size > MAX_RANKED_VALUES:
            continue
        element = np.unravel_index(int(np.nanargmax(rhat(var.values))), var.shape[2:])
        at = {dim: var[dim].values[i] for dim, i in zip(var.dims[2:], element)}
        if any(dim in coords and coords[dim] != [value] for dim, value in at.items()):
            continue  # a shared dim already pinned elsewhere: one element per dim in a plot
        coords.update({dim: [value] for dim, value in at.items()})
        chosen.append(name)
    if not chosen:
        return ""
    collection = plots.rank(trace, chosen, coords=coords)
    axes = next(iter(collection.viz["plot"].data_vars.values())).values.flat[0]
    return figure(axes.figure, "ArviZ's rank plots of the least converged elements (one per "
                               "variable where their dims allow): each chain's ECDF of its "
                               "fractional ranks among all draws, minus the uniform's; near 0 "
                               "when the chains mix, black points outside the simultaneous "
                               "band.")


def certainty(result, items: pd.DataFrame, threshold: float) -> Section:
    """The items' top-1 certainty: a log-scale histogram of its complement and the least
    certain items."""
    section = Section("certainty", "Certainty of the items")
    if result.format == "comparisons":
        return _ranks(section, items)
    if result.format == "label_sets":
        return _label_sets(section, items, threshold)
    values = items["certainty_top1"].to_numpy(dtype=float)
    below = int((values < threshold).sum())
    section.add(paragraph(
        f"Mean top-1 certainty {values.mean():.3f} over {values.size} items; {below} items "
        f"below {threshold:g}. Certainty is the share of posterior draws in which the item's "
        "top class is the most plausible one."))
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    plots.uncertainty(values, threshold=threshold, ax=axes[0])
    plots.least_certain(items, threshold=threshold, ax=axes[1])
    fig.tight_layout()
    section.add(figure(fig, "Left: 1 - certainty of each item's top class (log scale). "
                            "Right: the least certain items."))
    consensus = models.entry(result.model).consensus
    if consensus is not None:
        section.add(_consensus(consensus(result.trace)))
    return section


def _ranks(section: Section, items: pd.DataFrame) -> Section:
    """Comparisons: every item's posterior mean rank with its 90 % interval."""
    ranked = items.sort_values("expected_rank")
    wide = ranked["rank_q95"] - ranked["rank_q05"]
    section.add(paragraph(
        f"{len(ranked)} items ranked by their posterior mean rank (1: the best). The median "
        f"90 % rank interval spans {float(wide.median()):g} places; an item's plausibility is "
        "its distribution over the rank positions, and p_top1/p_top3/p_top10 in the item "
        "table are the probabilities that it is among the best 1, 3 or 10."))
    fig, ax = plt.subplots(figsize=(11, 3.5))
    x = np.arange(len(ranked))
    ax.vlines(x, ranked["rank_q05"], ranked["rank_q95"], color="C0", lw=1)
    ax.plot(x, ranked["expected_rank"], "o", ms=2.5, color="C0")
    ax.invert_yaxis()
    ax.set(xlabel="items, by posterior mean rank", ylabel="rank",
           title="posterior mean rank with its 90% interval")
    section.add(figure(fig, "Each item's posterior mean rank (points) and 90 % interval "
                            "(bars); overlapping intervals are orders the comparisons leave "
                            "open."))
    return section


def _label_sets(section: Section, items: pd.DataFrame, threshold: float) -> Section:
    """Multi-label sets: the expected Hamming accuracy of each item's predicted set."""
    values = items["expected_hamming_accuracy"].to_numpy(dtype=float)
    below = int((values < threshold).sum())
    section.add(paragraph(
        f"Each item's predicted set holds the labels whose plausibility is at least 1/2; its "
        f"expected Hamming accuracy (the expected share of labels it gets right) averages "
        f"{values.mean():.3f} over {values.size} items, {below} of them below {threshold:g}."))
    fig, ax = plt.subplots(figsize=(6, 4))
    plots.uncertainty(values, threshold=threshold, ax=ax)
    ax.set_xlabel("1 - expected Hamming accuracy of the predicted set")
    section.add(figure(fig, "1 - expected Hamming accuracy of each item's predicted set (log "
                            "scale)."))
    return section


def _consensus(consensus: pd.DataFrame) -> str:
    """Every item's consensus score on the annotation scale with its 95 % interval, from the
    table the model's entry declares (``consensus``, ``_q025``, ``_q975`` columns)."""
    consensus = consensus.sort_values("consensus_score")
    fig, ax = plt.subplots(figsize=(11, 3.5))
    x = np.arange(len(consensus))
    ax.vlines(x, consensus["consensus_q025"], consensus["consensus_q975"], color="C0", lw=1)
    ax.plot(x, consensus["consensus_score"], "o", ms=2.5, color="C0")
    ax.set(xlabel="items, by consensus score", ylabel="rating",
           title="consensus score (the expected rating of a new rater) with its 95% interval")
    return figure(fig, "Each item's consensus score on the rating scale, with its 95 % "
                       "interval; the item table lists them.")


def _intervals(parameters: dict[str, np.ndarray]) -> dict:
    """``name``, ``name_q05``, ``name_q95`` of each ``{name: draws (sample, annotator)}``."""
    columns = {}
    for name, draws in parameters.items():
        low, high = np.quantile(draws, QUANTILES, axis=0)
        columns.update({name: draws.mean(axis=0), f"{name}_q05": low, f"{name}_q95": high})
    return columns


def _parameters(result) -> dict[str, np.ndarray]:
    """The per-annotator parameters the model's entry declares for the report (by default
    every per-annotator scalar of the posterior), each ``(sample, annotator)``."""
    declared = models.entry(result.model).annotator_parameters or annotator_scalars
    return declared(result.trace["posterior"])


def _spammers(section: Section, frame: pd.DataFrame, entry, parameters: dict) -> None:
    """The likely spammers by the entry's declared flag, as a column of ``frame`` and a
    paragraph (with the entry's note on its parameters before it)."""
    frame["likely_spammer"] = entry.spammer(parameters).mean(axis=0) >= SPAM_SHARE
    flagged = frame.index[frame["likely_spammer"]]
    section.add(paragraph(
        (f"{entry.annotator_note} " if entry.annotator_note else "")
        + f"{len(flagged)} of {len(frame)} annotators are likely spammers (at least "
        f"{SPAM_SHARE:.0%} of the draws have them answer at random more often than not)"
        + (f": {', '.join(map(str, flagged[:20]))}" if len(flagged) else "") + "."))


def annotators(result) -> Section:
    """Each annotator's share of labels right with its interval (every label model), the
    per-annotator parameters the model declares with intervals, its likely spammers where it
    declares a flag, and its confusion matrices as heatmaps where it declares them."""
    section = Section("annotators", "Annotators")
    if result.format in ("comparisons", "label_sets"):
        return _annotator_parameters(section, result)
    if result.format != "labels" or result.data is None:
        section.add(paragraph(
            f"The {result.model} model has no per-annotator parameters for {result.format}; "
            "the predictive checks below show how the annotations as a whole are fitted."))
        return section
    entry = models.entry(result.model)
    quality = annotator_quality(result.trace, result.data)
    parameters = _parameters(result)
    columns = _intervals(parameters)
    frame = quality.join(pd.DataFrame(columns, index=quality.index))
    section.add(paragraph(
        "share_correct: the posterior mean share of the annotator's labels that are the "
        "item's class, with its 90 % interval (q05, q95); an annotator with few labels gets "
        "a wide interval."))
    if "gold_labels" in frame:
        gold = frame[frame["gold_labels"] > 0]
        outside = ((gold["gold_share_correct"] < gold["q05"])
                   | (gold["gold_share_correct"] > gold["q95"]))
        section.add(paragraph(
            f"{result.data.n_known} items have a known class (gold), clamped in the model. "
            "gold_share_correct: the share of an annotator's labels on those items that are "
            "the known class (gold_labels of them), beside share_correct, the model's "
            f"estimate over all items. {len(gold)} of {len(frame)} annotators labelled gold "
            f"items; for {int(outside.sum())} of them the gold share lies outside the model's "
            "90 % interval (a share from a few gold labels is itself uncertain)."))
    if entry.spammer is not None:
        _spammers(section, frame, entry, parameters)
    frame = frame.sort_values("share_correct")
    fig, ax = plt.subplots(figsize=(6, 4))
    plots.annotator_shares(quality, ax=ax)
    section.add(figure(fig, "Share of each annotator's labels right against labels given "
                            "(90 % intervals); the worst are named."))
    plotted = [name for name in entry.annotator_plot if name in frame]
    if plotted:
        busiest = frame.sort_values("labels", ascending=False).head(30)
        ax = plots.annotator_intervals(busiest, plotted)
        section.add(figure(ax.figure, f"{' and '.join(plotted).capitalize()} of the "
                                      f"{len(busiest)} annotators with the most labels (90 % "
                                      "intervals)."))
    if entry.confusion is not None and result.data.n_classes <= MAX_HEATMAP_CLASSES:
        busiest = quality.sort_values("labels", ascending=False).index[:MAX_HEATMAPS]
        axes = plots.confusion_matrices(entry.confusion(result.trace["posterior"], busiest))
        section.add(figure(axes.ravel()[0].figure,
                           f"Posterior mean confusion matrices of the {len(busiest)} annotators "
                           "with the most labels (rows: true class; columns: label given)."))
    section.add(table(frame, id="annotator-table", sortable=True, searchable=True,
                      caption="Every annotator, least often right first."))
    return section


def _annotator_parameters(section: Section, result) -> Section:
    """Comparisons and label sets: each annotator's declared parameters with 90 % intervals,
    and the likely spammers where the model declares a flag."""
    entry = models.entry(result.model)
    parameters = _parameters(result)
    columns = _intervals(parameters)
    if not columns:
        section.add(paragraph(f"The {result.model} model has no per-annotator parameters; the "
                              "predictive checks below show how the annotations are fitted."))
        return section
    frame = pd.DataFrame(columns, index=pd.Index(result.data.annotators, name="annotator"))
    if entry.spammer is not None:
        _spammers(section, frame, entry, parameters)
    elif entry.annotator_note:
        section.add(paragraph(entry.annotator_note))
    section.add(table(frame, id="annotator-table", sortable=True, searchable=True,
                      caption="Every annotator's parameters (posterior mean and 90 % interval)."))
    return section


def next_labels(result, budget: int, threshold: float) -> Section:
    """The next ``budget`` annotations by expected information gain
    (:meth:`plausible.Aggregation.next_items`)."""
    section = Section("next", "Pairs to compare next" if result.format == "comparisons"
                      else "Items that need another label")
    try:
        batch = result.next_items(budget, threshold=threshold, seed=0)
    except (ValueError, NotImplementedError) as error:
        section.add(paragraph(f"Not available for this run: {error}"))
        return section
    by_label = result.format == "label_sets"
    certainty = "every label's certainty" if by_label else "top-1 certainty"
    if batch.empty:
        section.add(paragraph(f"None: every item's {certainty} reaches {threshold:g}, or no "
                              "new label is expected to change it. Stop labelling."))
        return section
    section.add(paragraph(
        f"The next {len(batch)} comparisons, best first, by the expected information gain "
        "(bits) of their outcome about the worths; each item in at most one pair."
        if result.format == "comparisons" else
        f"The next {len(batch)} label sets to ask for, best first, by the expected information "
        "gain (bits) of the annotator's answer about each label, summed over the labels; "
        f"items whose every label's certainty reaches {threshold:g} are settled and left out; "
        "certainty is the item's least certain label's."
        if by_label else
        f"The next {len(batch)} annotations, best first, by the expected information gain "
        f"(bits) of one more label on the item's class; items whose top-1 certainty reaches "
        f"{threshold:g} are settled and left out."))
    section.add(table(batch, id="next-table", index=False, sortable=True))
    return section


def predictive(result, check) -> Section:
    """The posterior predictive checks as figures, and in words what they miss."""
    section = Section("checks", "Posterior predictive checks")
    found = check.predictive
    if found is None:
        section.add(paragraph(f"No posterior predictive check: {check.predictive_note}."))
        return section
    section.add(paragraph(
        "Each statistic is computed on the observed annotations and on annotations "
        "replicated from the posterior; an observed value far in the replicates' tails "
        "(mid p-value near 0 or 1) is something the model does not reproduce."))
    if isinstance(found, pd.DataFrame):  # a mid p-value per statistic and entry
        section.add(_p_value_table(found))
    elif hasattr(found, "names"):
        for name in found.names:
            section.add(_annotation_statistic(found, name))
    else:
        section.add(_statistics(found))
    return section


def _p_value_table(found: pd.DataFrame) -> str:
    """A check given as one mid p-value per statistic and entry (comparisons, label sets):
    per statistic how many are extreme (outside (0.025, 0.975)) against the 5 % expected by
    chance, and the extreme entries in a table."""
    extreme = (found["p_value"] < 0.025) | (found["p_value"] > 0.975)
    words = "; ".join(f"{name}: {int(flags.sum())} of {len(flags)} entries extreme (about "
                      f"{0.05 * len(flags):.1f} expected by chance)"
                      for name, flags in extreme.groupby(level="statistic", sort=False))
    out = paragraph(words + ".")
    if extreme.any():
        out += table(found[extreme].reset_index().head(50), id="check-extreme", index=False, sortable=True,
                     caption="The entries the model does not reproduce (mid p-value below "
                             "0.025 or above 0.975).")
    return out


def _statistics(found) -> str:
    """One figure of every statistic's replicates, and the extreme ones in words."""
    p = found.p_values
    extreme = p[(p < 0.05) | (p > 0.95)]
    if extreme.empty:
        words = paragraph(f"None of the {len(p)} statistics is extreme (every mid p-value "
                          "between 0.05 and 0.95): the check finds no misfit in these "
                          "statistics; it cannot vouch for others.")
    else:
        missed = [f"{name} (observed {found.observed_statistics[name]:.3g}, p = {value:.3f}: "
                  f"{'above' if value < 0.5 else 'below'} what the model replicates)"
                  for name, value in extreme.items()]
        words = paragraph(f"The model misses {len(extreme)} of {len(p)} statistics: "
                          + "; ".join(missed) + ".")
    axes = plots.statistics_check(found)
    return words + figure(axes[0].figure, "Replicated statistics (histograms) and the "
                                          "observed value (red line).")


def _annotation_statistic(found, name: str) -> str:
    """Statistic ``name`` of a label check: how many entries fall outside their predictive
    interval (against the share expected by chance), the worst named, and a figure of the
    most extreme entries."""
    summary = found.summary(name)
    observed = summary[summary["observed"].notna()]
    outside = observed[~observed["inside"]]
    expected = (1 - found.interval) * len(observed)
    words = (f"{name}: {len(outside)} of {len(observed)} observed values outside their "
             f"{100 * found.interval:g} % predictive interval (about {expected:.1f} expected "
             "by chance)")
    if len(outside):
        worst = outside.assign(distance=(outside["p_value"] - 0.5).abs()) \
            .sort_values("distance", ascending=False).head(5)
        words += "; the most extreme: " + ", ".join(
            f"{entry} (observed {row['observed']:.3g}, replicated median {row['median']:.3g})"
            for entry, row in worst.iterrows())
    order = observed.assign(distance=(observed["p_value"] - 0.5).abs()) \
        .sort_values("distance", ascending=False).index[:MAX_PLOTTED_ENTRIES]
    shown = [entry for entry in summary.index if entry in set(order)]
    longest = max((len(str(entry)) for entry in shown), default=1)
    fig, ax = plt.subplots(figsize=(max(4, 0.28 * len(shown) + 2),
                                    3 + (0.075 * longest if len(shown) > 12 else 0)))
    plots.annotation_check(found, name, entries=shown, ax=ax)
    fig.tight_layout()
    caption = (f"{name}: observed (red) against the replicates' median and interval (blue)"
               + (f", the {len(shown)} most extreme of {len(observed)} entries"
                  if len(shown) < len(observed) else "") + ".")
    return paragraph(words + ".") + figure(ax.figure, caption)


def item_table(result, items: pd.DataFrame) -> Section:
    """Every item: top class, its probability and certainty, and the plausibilities (one
    column per class up to :data:`PLAUSIBILITY_COLUMNS` classes, else the top three)."""
    section = Section("items", "Every item")
    frame = result.to_frame().set_index("item")
    if result.sizes["class"] > PLAUSIBILITY_COLUMNS and result.format != "comparisons":
        mean = result.plausibility
        frame = frame[[c for c in frame.columns if not c.startswith("plausibility_")]]
        order = np.argsort(-mean.values, axis=1, kind="stable")[:, :3]
        classes = mean["class"].values
        for rank in range(min(3, classes.size)):
            frame[f"class_{rank + 1}"] = classes[order[:, rank]]
            frame[f"plausibility_{rank + 1}"] = np.take_along_axis(
                mean.values, order[:, rank:rank + 1], axis=1)[:, 0]
    section.add(paragraph(
        f"{len(frame)} items. Click a column header to sort; type in the box to filter. "
        f"Plausibility: {result.meaning}."))
    section.add(table(frame, id="item-table", sortable=True, searchable=True))
    return section


__all__ = ["annotators", "certainty", "item_table", "next_labels", "predictive", "summary"]
