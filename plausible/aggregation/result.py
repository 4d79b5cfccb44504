"""The result of :func:`~plausible.aggregation.aggregate`: an :class:`Aggregation`, the trace
with the model's name and the data it was fitted to, and what it answers (labels, certainty,
evaluate, check, next items, prediction sets, the report, save and :func:`load`); the
:class:`Check` of its convergence and posterior predictive check."""

from __future__ import annotations

import warnings

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import xarray as xr

from plausible import active, conformal, metrics, models, plots, report
from plausible.models import classifier_prior
from plausible.aggregation.defaults import DEFAULT_REASON
from plausible.aggregation.persistence import (data_from_trace, read_tree, saved_tree, unpacked,
                                               write_atomic, write_tree)
from plausible.aggregation.tables import (label_set_table, label_table, plausibility_columns)
from plausible.data.tables import format_of
from plausible.diagnostics import (
    annotation_predictive_check,
    annotator_quality,
    convergence_report,
    ranking_predictive_check,
    rating_predictive_check,
    vote_predictive_check,
)
from plausible.diagnostics.convergence import combined_report
from plausible.diagnostics.model_selection import Selection
from plausible.inference.stacking import slot_counts
from plausible.metrics.multi_label import label_certainty
from plausible.metrics.predictions import class_positions
from plausible.metrics.worth_ranks import rank_summary


@dataclass
class Check:
    """What :meth:`Aggregation.check` found: the convergence report and the model's
    posterior predictive check (None where the model has none; :attr:`text` says so)."""

    convergence: object
    predictive: object | None
    predictive_note: str = ""

    @property
    def text(self) -> str:
        """The convergence report's text, then the predictive check's: its statistics with
        their mid p-values, or for many entries each statistic's count outside its 95%
        predictive interval (or why there is no check)."""
        lines = [self.convergence.text]
        if self.predictive is None:
            lines.append(f"Posterior predictive check: {self.predictive_note}")
        else:
            lines.append("Posterior predictive check (mid p-values near 0 or 1 flag misfit):")
            if isinstance(self.predictive, pd.DataFrame):  # a p-value per (statistic, entry)
                for name, rows in self.predictive.groupby(level="statistic", sort=False):
                    flagged = int(((rows["p_value"] < 0.025) | (rows["p_value"] > 0.975)).sum())
                    lines.append(f"  {name}: {flagged} of {len(rows)} mid p-values outside "
                                 "(0.025, 0.975)")
            elif hasattr(self.predictive, "names"):  # several statistics, many entries each
                for name in self.predictive.names:
                    table = self.predictive.summary(name)
                    outside = int((~table["inside"] & table["observed"].notna()).sum())
                    lines.append(f"  {name}: {outside} of {int(table['observed'].notna().sum())} "
                                 "observed values outside their 95% predictive interval")
            else:
                lines.append(self.predictive.summary().to_string())
        return "\n".join(lines)

    def __repr__(self) -> str:
        return self.text


@dataclass
class Aggregation:
    """A fitted aggregation: the trace, the model's name and the data it was fitted to.

    ``trace`` is the ``xarray.DataTree`` of :func:`plausible.sample` (posterior, log
    likelihood, observed and constant data); every method reads it, in either plausibility
    storage. ``default``: the model was chosen from the data's format. ``selection``: how
    ``model="auto"`` chose it (:class:`~plausible.diagnostics.model_selection.Selection`:
    the candidates' LOO table and the reason), None for a named model.
    """

    trace: xr.DataTree
    model: str
    data: object
    default: bool = False
    options: dict = field(default_factory=dict)
    selection: Selection | None = None
    members: dict[str, Aggregation] | None = None

    def __post_init__(self):
        self._cache = {}
        self._record_meaning()

    def _record_meaning(self) -> None:
        """Write what the plausibility means into the trace (the posterior group's attrs and a
        stored plausibility's), where the metrics read it
        (:mod:`plausible.metrics.meaning`)."""
        if "posterior" not in self.trace.children:
            return
        meaning = models.entry(self.model).plausibility
        posterior = self.trace["posterior"]
        posterior.attrs[metrics.meaning.ATTR] = meaning
        if "plausibility" in posterior.data_vars:
            posterior["plausibility"].attrs[metrics.meaning.ATTR] = meaning

    @property
    def format(self) -> str:
        """The annotations' format; ``"labels"`` for a chain whose labels were read by the
        workers (``data`` None, :func:`plausible.distributed.sample_partitions`)."""
        return "labels" if self.data is None else format_of(self.data)

    @property
    def plausibility(self) -> xr.DataArray:
        """Posterior mean plausibility ``(item, class)`` with the data's ids as coords. A
        comparison model of many items keeps no rank table (``n^2`` values a draw):
        :meth:`labels` has its rank summaries."""
        if "mean" not in self._cache:
            self._refuse_without_rank_table()
            self._cache["mean"] = metrics.posterior_mean(self.trace)
        return self._cache["mean"]

    def _refuse_without_rank_table(self) -> None:
        if self.format == "comparisons" and not _has_plausibility(self.trace):
            raise ValueError(
                f"this run of {self.data.n_items} compared items keeps no rank table (it would "
                f"be {self.data.n_items}^2 values a draw): labels() and to_frame() give each "
                "item's rank summary, and the posterior the draws of the worths")

    @property
    def sizes(self) -> dict[str, int]:
        """``{"item": items, "class": classes}`` of the plausibility (for comparisons the
        classes are the rank positions, counted whether or not the run keeps a rank table)."""
        if self.format == "comparisons":
            return {"item": self.data.n_items, "class": self.data.n_items}
        return dict(self.plausibility.sizes)

    def certainty(self, top: int = 1) -> xr.DataArray:
        """Annotation certainty of the top-``top`` set per item
        (:func:`plausible.metrics.annotation_certainty`); for multi-label sets, each label's
        certainty ``(item, class)`` (:func:`plausible.metrics.multi_label.label_certainty`)."""
        if self.format == "label_sets":
            mean = self.plausibility
            return xr.DataArray(label_certainty(self.trace), dims=mean.dims,
                                coords=mean.coords, name="label_certainty")
        self._refuse_without_rank_table()
        return metrics.annotation_certainty(self.trace, top=top)

    def labels(self) -> pd.DataFrame:
        """Per item (index, the original ids): ``top_class`` (most often the most plausible
        class over the draws), ``probability_top_class`` (its posterior mean plausibility) and
        ``certainty_top1`` (the share of draws in which it is the most plausible). Comparisons
        (the classes are rank positions) have the rank summary of the worths' draws
        instead (:func:`plausible.metrics.worth_ranks.rank_summary`); multi-label sets have
        :func:`label_set_table` instead; a model's own columns follow where its registry entry
        declares them (``item_columns``: the multi-label model's most probable pattern)."""
        if "labels" not in self._cache:
            entry = models.entry(self.model)
            table = (label_set_table(self.plausibility) if self.format == "label_sets" else
                     rank_summary(entry.worth_draws(self.trace["posterior"]))
                     if self.format == "comparisons" else
                     label_table(self.trace, self.plausibility))
            if entry.item_columns is not None:
                table = table.join(entry.item_columns(self.trace, self.data))
            self._cache["labels"] = table
        return self._cache["labels"].copy()

    def to_frame(self) -> pd.DataFrame:
        """One row per item: :meth:`labels`' columns and one ``plausibility_<class>`` column
        per class (none for comparisons, whose classes are the rank positions: the rank
        summary of :meth:`labels` instead); ``known_class`` first, the known class or empty,
        when some items' classes are known; where the model's registry entry declares a
        consensus (ratings), also the consensus on the rating scale, ``consensus_score``,
        ``consensus_q025`` and ``consensus_q975`` (its 95 % interval)."""
        frame = self.labels()
        if self.format != "comparisons":  # ranks: the rank summary, not n columns of ranks
            frame = frame.join(plausibility_columns(self.plausibility))
        constant = self.trace["constant_data"] if "constant_data" in self.trace.children else {}
        if "known_class" in constant:  # the known classes (also of labels the workers read)
            codes = constant["known_class"].to_series().reindex(frame.index).to_numpy()
            classes = self.plausibility["class"].values
            frame.insert(0, "known_class", pd.Series(
                np.where(codes >= 0, classes[np.maximum(codes, 0)], None),
                index=frame.index, dtype=object))
        consensus = models.entry(self.model).consensus
        if consensus is not None:
            frame = frame.join(consensus(self.trace))
        return frame.reset_index()

    def evaluate(self, predictions, k=(1, 2, 3)) -> pd.DataFrame:
        """Uncertainty-adjusted accuracy of a classifier, one row per metric: ``mean``,
        ``std``, ``min``, ``max`` over the posterior draws of the dataset value.

        ``predictions``: scores ``(item, class)`` (array in the trace's item and class order,
        DataFrame indexed by item with a column per class, or DataArray) give UA top-``k``
        accuracy for each ``k`` (those ``<= K``); one predicted class per item (a Series
        indexed by item, or an array in item order) gives UA accuracy, the share of items
        whose predicted class is the draw's most plausible one.

        Those read each draw as an item's distribution over classes. A model whose
        plausibility is the posterior of each item's one true class (:attr:`meaning`) gets
        ``top{k}_accuracy`` and ``accuracy`` instead: per draw, the expected share of items
        whose true class is among the top ``k`` (is the predicted class), the true classes
        summed out given the draw's parameters (:func:`plausible.metrics.ua_coverage`), so
        a probable-but-uncertain class counts with its probability, not as certain.
        """
        classes = self.plausibility["class"].values
        items = self.plausibility["item"].values
        if self.format == "label_sets":
            return self._evaluate_sets(predictions, items, classes)
        if self.format == "comparisons":
            raise ValueError("evaluate scores a classifier's classes; for comparisons read "
                             "the rank table, to_frame(), or the worths in the trace")
        rows = {}
        one_true_class = models.entry(self.model).plausibility == models.TRUE_CLASS_POSTERIOR
        prefix = "" if one_true_class else "ua_"
        if _one_per_item(predictions):
            member = _one_hot(predictions, items, classes)
            self._warn_if_own_prior(np.argmax(member, axis=1), None)
            rows[f"{prefix}accuracy"] = metrics.summarize(
                metrics.ua_coverage(self.trace, member) if one_true_class
                else metrics.ua_set_accuracy(self.trace, member))
        else:
            scores = _aligned_scores(predictions, items, classes)
            self._warn_if_own_prior(np.argmax(scores, axis=1), scores)
            for j in sorted({int(j) for j in np.atleast_1d(k)}):
                if j <= classes.size:
                    rows[f"{prefix}top{j}_accuracy"] = metrics.summarize(
                        metrics.ua_coverage(self.trace, metrics.top_k_sets(scores, j))
                        if one_true_class else metrics.ua_topk_accuracy(self.trace, scores, k=j))
        return pd.DataFrame({name: {s: float(summary[s]) for s in ("mean", "std", "min", "max")}
                             for name, summary in rows.items()}).T.rename_axis("metric")

    def _warn_if_own_prior(self, predicted: np.ndarray, scores) -> None:
        """Warn, in one line, when the classifier evaluated is the one this aggregation took
        as its prior of each item's class (:func:`plausible.models.classifier_prior.
        same_classifier`). Its truth was then built from its own predictions, which flatters
        it."""
        if classifier_prior.same_classifier(self.trace, predicted, scores):
            warnings.warn("these predictions are the classifier this aggregation took as its "
                          "prior: its truth was built from them, so the metrics flatter it "
                          "(aggregate without predictions= to evaluate it)", stacklevel=3)

    def _evaluate_sets(self, predictions, items, classes, draws: int = 500,
                       seed: int | None = 0) -> pd.DataFrame:
        """Multi-label sets: the expected Hamming accuracy, F1 (per item, averaged) and
        exact-set accuracy of ``predictions``, a 0/1 table indexed by item with a column per
        label (or a bool ``(item, class)`` array in this result's order), over draws of the
        items' true sets (as the model's registry entry declares them, ``label_set_draws``)."""
        if isinstance(predictions, pd.DataFrame):
            missing = [c for c in classes if c not in predictions.columns]
            if missing:
                raise ValueError(f"predictions have no column for the labels {missing[:5]}")
            absent = pd.Index(items).difference(predictions.index)
            if len(absent):
                raise ValueError(f"predictions have no row for item {absent[0]!r}")
            predictions = predictions.loc[items, list(classes)].to_numpy()
        predicted = np.asarray(predictions).astype(bool)
        if predicted.shape != (items.size, classes.size):
            raise ValueError(f"predictions must be (item, class) = {(items.size, classes.size)}, "
                             f"got {predicted.shape}")
        sets = models.entry(self.model).label_set_draws(self.trace, self.data, draws=draws,
                                                        seed=seed)
        per_draw = {
            "expected_hamming_accuracy": (sets == predicted[None]).mean(axis=(1, 2)),
            "expected_f1": _set_f1(sets, predicted).mean(axis=1),
            "exact_set_accuracy": (sets == predicted[None]).all(axis=2).mean(axis=1)}
        return pd.DataFrame({name: {"mean": v.mean(), "std": v.std(), "min": v.min(),
                                    "max": v.max()} for name, v in per_draw.items()}
                            ).T.rename_axis("metric")

    def convergence(self):
        """The convergence report of the trace (:func:`plausible.diagnostics.
        convergence_report`), computed once: on stored per-item draws it can take longer
        than the sampling."""
        if "convergence" not in self._cache:
            self._cache["convergence"] = (
                convergence_report(self.trace) if self.members is None else
                combined_report({name: m.convergence() for name, m in self.members.items()}))
        return self._cache["convergence"]

    def check(self, *, draws: int = 200, seed: int | None = 0) -> Check:
        """The convergence report (:func:`plausible.diagnostics.convergence_report`) and the
        model's posterior predictive check on ``draws`` replicated data sets."""
        report = self.convergence()
        kind, entry = self.format, models.entry(self.model)
        if self.members is not None:
            return Check(report, annotation_predictive_check(
                self.data, self._replicate_stack(draws, seed)))
        if self.data is None:
            return Check(report, None, "the workers read the annotations, so this run holds no "
                                       "copy to replicate")
        if entry.predictive_check is not None:  # the model's own (comparisons, label sets,
            return Check(report, entry.predictive_check(self.trace, self.data, draws=draws,
                                                        seed=seed))  # a latent class of votes)
        if kind == "votes":
            return Check(report, vote_predictive_check(self.trace, draws=draws, seed=seed))
        if kind == "rankings":
            return Check(report, ranking_predictive_check(self.trace, self.data, draws=draws,
                                                          seed=seed))
        if entry.replicate is not None:
            replicated = entry.replicate(self.trace, self.data, draws=draws, seed=seed)
            if kind == "ratings":
                scale = self.options.get("scale", self.data.scale)
                return Check(report, rating_predictive_check(self.data, replicated, scale=scale))
            return Check(report, annotation_predictive_check(
                self.data, replicated, ordinal=entry.ordinal))
        return Check(report, None, f"the {self.model} model has none yet")

    def _replicate_stack(self, draws: int, seed: int | None) -> np.ndarray:
        """Labels replicated from a stacked result's mixture, int ``(sample, annotation)``:
        each member's replicates in the share of ``draws`` its weight gives
        (:func:`plausible.inference.stacking.slot_counts`)."""
        names = list(self.selection.stack)
        counts = slot_counts(np.array([self.selection.stack[n] for n in names]), draws)
        return np.concatenate([
            models.entry(name).replicate(self.members[name].trace, self.data, draws=count,
                                         seed=None if seed is None else seed + place)
            for place, (name, count) in enumerate(zip(names, counts)) if count])

    def next_items(self, budget: int, *, threshold: float = 0.95, strategy: str = "information",
                   min_gain: float = 1e-3, pairs=None, draws: int = 500,
                   seed: int | None = None) -> pd.DataFrame:
        """The next batch of at most ``budget`` annotations, one per unsettled item, best
        first: ``item`` (and ``annotator`` for annotator models), ``information_gain``
        (bits, on the item's class), ``certainty`` and ``certainty_gain``
        (:func:`plausible.active.next_items`). Items whose top-1 certainty reaches
        ``threshold`` are settled; an empty frame means stop. For comparisons, the next pairs
        to compare (:func:`plausible.active.next_pairs`); for label sets, the next (item,
        annotator) sets to ask for, an item settled when every label is
        (:func:`plausible.active.next_label_sets`). A stacked result asks the member of the
        largest weight (:attr:`members`)."""
        if self.members is not None:
            return self.members[next(iter(self.selection.stack))].next_items(
                budget, threshold=threshold, strategy=strategy, min_gain=min_gain,
                pairs=pairs, draws=draws, seed=seed)
        if self.format == "comparisons":
            if strategy != "information" or pairs is not None:
                raise ValueError("comparisons are planned by information gain on the worths' "
                                 "order; strategy= and pairs= apply to labels")
            return active.next_pairs(self.trace, self.data, budget, draws=draws)
        if self.format == "label_sets":
            return active.next_label_sets(self.trace, self.data, budget, threshold=threshold,
                                          strategy=strategy, min_gain=min_gain, pairs=pairs,
                                          draws=draws, seed=seed)
        return active.next_items(self.trace, self.data, self.model, budget, threshold=threshold,
                                 strategy=strategy, min_gain=min_gain, pairs=pairs,
                                 draws=draws, seed=seed)

    def prediction_sets(self, scores, alpha: float = 0.1, *, test=None,
                        method: str = "monte-carlo", samples: int = 10,
                        seed: int | None = None, **options) -> xr.DataArray:
        """Conformal prediction sets, bool ``(item, class)``, calibrated with the aggregated
        items as calibration set (:func:`plausible.conformal.prediction_sets`).

        ``scores``: the classifier's scores on the aggregated items (a DataFrame indexed by
        item with a column per class, a DataArray or an array in this result's order).
        ``method="monte-carlo"`` draws ``samples`` labels per item from the plausibilities
        (sets cover a draw of the ambiguous ground truth with probability ``>= 1 - alpha``);
        ``"single-label"`` calibrates on the most plausible class. With ``test`` (scores of
        new items) the sets of those items; without, the aggregated items' own sets by
        two-fold cross-fitting.
        """
        return conformal.prediction_sets(scores, self.trace, alpha=alpha, test=test,
                                         method=method, samples=samples, seed=seed, **options)

    def plot(self, threshold: float = 0.99, show: int = 15):
        """The items' uncertainty on a log scale, each annotator's share of labels right
        (label models; :func:`plausible.diagnostics.annotator_quality`) and the ``show``
        least certain items (:func:`plausible.plots.overview`); returns the axes."""
        quality = (annotator_quality(self.trace, self.data) if self.format == "labels"
                   else None)
        items = self.labels().reset_index()
        return plots.overview(items, quality, threshold=threshold, show=show,
                              title=f"{self.model}: {len(items)} items")

    def report(self, path, *, budget: int = 20, threshold: float = 0.95, draws: int = 200,
               seed: int | None = 0, progress=None) -> Path:
        """Write the run's report to ``path``: one self-contained HTML page (no server, no
        network) with the convergence, certainty, annotators, the next items to label, the
        predictive checks and every item (:func:`plausible.report.report_html`, which says
        what the arguments do); written atomically."""
        page = report.report_html(self, budget=budget, threshold=threshold, draws=draws,
                                  seed=seed, progress=progress)
        path = Path(path)
        write_atomic(path, lambda tmp: Path(tmp).write_text(page, encoding="utf-8"))
        return path

    def save(self, path) -> Path:
        """Write the trace, with the model's name, to ``path`` (netCDF, or Zarr for a
        ``.zarr`` path), atomically: a temporary file beside it, then a rename. Read back
        with :func:`load`. Plausibilities and log-likelihoods computed when read are
        computed block by block as they are written, so the file holds every draw."""
        return write_tree(self._saved_tree(), path)

    def _saved_tree(self) -> xr.DataTree:
        """The trace as :meth:`save` writes it (:func:`~plausible.aggregation.persistence.
        saved_tree`): the model's name, format, options and selection in its attributes, and
        a stacked result's members in its ``members`` group, one child each."""
        members = (None if self.members is None else
                   {name: member._saved_tree() for name, member in self.members.items()})
        return saved_tree(self.trace, model=self.model, format=self.format,
                          options=self.options, selection=self.selection, members=members)

    def __repr__(self) -> str:
        stacked = self.selection is not None and self.selection.stacked
        chosen = (f" (chosen by PSIS-LOO among {len(self.selection.candidates)} candidates"
                  + (f", stacked with {len(self.selection.stack) - 1} of the same meaning)"
                     if stacked else ")")
                  if self.selection is not None else
                  f" (default for {self.format}"
                  + (" with a classifier's predictions)" if "predictions" in self.options
                     else ")") if self.default else "")
        why = (self.selection.reason if self.selection is not None else
               DEFAULT_REASON if self.default and self.format == "labels" else None)
        posterior = self.trace["posterior"]
        labels = self.labels()
        column = ("expected_hamming_accuracy" if self.format == "label_sets"
                  else "certainty_top1")
        return (f"Aggregation: {self.model} model{chosen}, {self.sizes['item']} items x "
                f"{self.sizes['class']} classes, {posterior.sizes['chain']} chains x "
                f"{posterior.sizes['draw']} draws; mean {column} "
                f"{labels[column].mean():.3f}, "
                f"{int((labels[column] < 0.99).sum())} items below 0.99\n"
                f"plausibility: {self.meaning}"
                + ("" if why is None else f"\nchosen: {why}"))

    @property
    def meaning(self) -> str:
        """What this model's plausibility is, in words (:data:`plausible.models.MEANINGS`):
        an item's distribution over classes, or the posterior of its one true class."""
        return models.MEANINGS[models.entry(self.model).plausibility]


def load(path) -> Aggregation:
    """An :class:`Aggregation` saved by :meth:`Aggregation.save` (the data are rebuilt from
    the trace's ``observed_data``)."""
    return _from_tree(read_tree(path))


def _from_tree(tree: xr.DataTree, data=None) -> Aggregation:
    """The :class:`Aggregation` of a saved tree (:meth:`Aggregation._saved_tree`), its
    ``members`` group rebuilt as the stacked result's members, on ``data`` when given (a
    member shares its result's data)."""
    attrs, saved = unpacked(tree)
    data = data_from_trace(tree, attrs["plausible_format"]) if data is None else data
    members = (None if saved is None else
               {name: _from_tree(child.copy(), data) for name, child in saved.children.items()})
    return Aggregation(trace=tree, model=attrs["plausible_model"], data=data,
                       selection=attrs.get("plausible_selection"), members=members)


def _set_f1(sets: np.ndarray, predicted: np.ndarray) -> np.ndarray:
    """Per draw and item, the F1 of ``predicted (item, class)`` against ``sets (sample, item,
    class)``: ``2 |z & y| / (|z| + |y|)``, 1 when both are empty."""
    both = (sets & predicted[None]).sum(axis=2)
    total = sets.sum(axis=2) + predicted.sum(axis=1)[None]
    return np.where(total > 0, 2.0 * both / np.maximum(total, 1), 1.0)


def _has_plausibility(trace: xr.DataTree) -> bool:
    """Whether ``trace`` has plausibilities: stored or computed when read, or summarised."""
    return "plausibility" in trace["posterior"].data_vars or "plausibility_summary" in trace.children


def _one_per_item(predictions) -> bool:
    if isinstance(predictions, pd.Series):
        return True
    if isinstance(predictions, pd.DataFrame | xr.DataArray):
        return False
    return np.ndim(predictions) == 1


def _one_hot(predictions, items, classes) -> np.ndarray:
    position = class_positions(predictions, items, classes, "prediction")
    member = np.zeros((items.size, classes.size), dtype=bool)
    member[np.arange(items.size), position] = True
    return member


def _aligned_scores(scores, items, classes):
    if isinstance(scores, pd.DataFrame):
        missing = pd.Index(items).difference(scores.index)
        if len(missing):
            raise ValueError(f"no scores for item {missing[0]!r} ({len(missing)} items without)")
        absent = pd.Index(classes).difference(scores.columns)
        if len(absent):
            raise ValueError(f"no score column for class {absent[0]!r}")
        return scores.loc[items, list(classes)].to_numpy(dtype=float)
    return scores
