"""The front door: ``pl.aggregate`` from a table of annotations to a checked posterior.

::

    result = pl.aggregate(df)                 # crowd-kit's task, worker, label columns
    result.labels()                           # most plausible class, its probability, certainty
    result.evaluate(scores)                   # UA top-k accuracy with its spread over draws
    result.check()                            # convergence + posterior predictive checks
    result.next_items(50)                     # what to annotate next, by information gain
    result.prediction_sets(scores, alpha=0.1) # conformal sets under ambiguous ground truth
    result.report("report.html")              # one HTML page: convergence, annotators, checks
    result.to_frame(); result.save("run.nc"); pl.load("run.nc")

``aggregate`` reads the data (:mod:`plausible.data.tables`), picks the model (named, or the
default for the data's format, :data:`DEFAULT_MODELS`, which says why; ``"auto"`` by name:
the candidate PSIS-LOO ranks first, stacked with the candidates of its meaning), builds it
through the registry, samples it with
:func:`plausible.sample` and wraps the trace in an :class:`Aggregation`.

**Top class and certainty.** Per item, ``top_class`` is the class most often the most
plausible over the posterior draws (the class annotation certainty is about; ties to the
lowest class index), ``certainty_top1`` the share of draws in which it is, and
``probability_top_class`` its posterior mean plausibility. The three always describe the
same class (the argmax of the posterior mean can differ from the modal top-1 class when the
posterior is spread out).
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import tempfile
import time
import warnings
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import pandas as pd
import xarray as xr

from plausible import active, conformal, distributed, metrics, models, plots, report
from plausible.data import Comparisons, Labels, LabelSets, Rankings, Ratings, Votes
from plausible.data.tables import format_of, from_frame
from plausible.diagnostics import (
    annotation_predictive_check,
    annotator_quality,
    convergence_report,
    ranking_predictive_check,
    rating_predictive_check,
    vote_predictive_check,
)
from plausible.diagnostics.convergence import NOT_CONVERGED, combined_report
from plausible.diagnostics.model_selection import Selection, select
from plausible.inference import sample
from plausible.inference.driver import AUTO_FIRST_DRAWS, assemble
from plausible.inference.stacking import mixture_draws, slot_counts
from plausible.inference.sampling import AUTO_MAX_DRAWS, AutoDrawsUnavailable
from plausible.metrics.predictions import class_positions
from plausible.metrics.multi_label import label_certainty
from plausible.metrics.worth_ranks import rank_summary
from plausible.models import bradley_terry, multi_label, ratings_censored
from plausible.models.registry import AUTO_CANDIDATES, DEFAULT_MODELS

AUTO = "auto"
"""The model name that asks :func:`aggregate` to choose among :data:`AUTO_CANDIDATES`."""
DEFAULT_REASON = ("the default for labels: it names each item's one true class, and on every "
                  "public crowd with gold of the project's panel it came closest to the better "
                  "of EM Dawid-Skene and majority vote while its chains mix")
"""Why a label model fitted by default is the one it is (the result's repr and the command
line say it)."""
AUTO_WORK = 2 * 10**9
"""A default run's most label-class visits: ``draws="auto"`` extends a label model's chains
to at most ``AUTO_WORK / (annotations x classes x chains)`` draws each (within the driver's
limits), so that 100,000 labels of four classes take about 20 s on two cores and the same
seed gives the same draws on any machine (a time limit would not)."""
_META = ("plausible_model", "plausible_format", "plausible_options", "plausible_selection")


def _kind(data) -> str:
    kind = format_of(data)
    return "labels (binary)" if kind == "labels" and data.n_classes == 2 else kind


def default_model(data, ordinal: bool = False) -> str:
    """The registry name of the default model for a container (:data:`DEFAULT_MODELS`), or
    with ``ordinal`` (its classes are ordered grades) the model that declares it reads them so
    (:func:`plausible.models.registry.ordinal_model`)."""
    if ordinal:
        return models.ordinal_model(format_of(data))
    return DEFAULT_MODELS[_kind(data)]


def auto_candidates(data) -> tuple[str, ...]:
    """The models ``model="auto"`` chooses among for a container (:data:`AUTO_CANDIDATES`;
    for a format without a candidate set, its default model alone)."""
    kind = _kind(data)
    return AUTO_CANDIDATES.get(kind, (DEFAULT_MODELS[kind],))


def as_annotations(data, *, format: str | None = None, **columns):
    """A container from a DataFrame (:func:`plausible.data.tables.from_frame`) or a
    container (returned as it is)."""
    if isinstance(data, pd.DataFrame):
        return from_frame(data, format=format, **columns)
    format_of(data)  # TypeError for anything else
    if format is not None and format not in ("long", format_of(data)):
        raise ValueError(f"format={format!r} but the data are {format_of(data)}")
    return data


def data_for_model(data, entry):
    """``data`` in the format the model takes (labels are counted into votes for a votes
    model); ``ValueError`` naming both formats otherwise."""
    kind = format_of(data)
    if kind == entry.data:
        return data
    if kind == "labels" and entry.data == "votes":
        return Votes.from_labels(data)
    raise ValueError(f"model {entry.name!r} takes {entry.data}; the data are {kind} (models for "
                     f"{kind}: {', '.join(models.available(kind).index)})")


def aggregate(data, model: str | None = None, *, reliability: float | None = None,
              draws: int | str = "auto", chains: int = 4, seed: int | None = None,
              max_seconds: float | None = None, format: str | None = None, item: str | None = None, annotator: str | None = None,
              label: str | None = None, score: str | None = None, rank: str | None = None,
              keep: str = "auto", init=None, client=None, store=None, known=None,
              ordinal: bool = False, progressbar: bool = False, **options) -> Aggregation:
    """Fit an aggregation model to annotations and return its posterior as an
    :class:`Aggregation`.

    Parameters
    ----------
    data : DataFrame, Votes, Labels, Ratings or Rankings
        A long table (one row per annotation: crowd-kit's ``task, worker, label`` names by
        default, or named with ``item=``, ``annotator=``, ``label=`` / ``score=`` / ``rank=``),
        a wide vote table (one count column per class), or a container.
    model : str, optional
        A registry name (:func:`plausible.models.available`), or ``"auto"``: fit every model
        of :data:`AUTO_CANDIDATES` for the format and keep the converged one with the highest
        PSIS-LOO elpd (:func:`plausible.diagnostics.model_selection.select`; the result's
        ``selection`` says why; ``max_seconds`` then bounds all the fits together, and no
        model options are taken), stacked with the converged candidates of the same meaning
        of the plausibility (the mixture of their draws, :attr:`Aggregation.members`).
        Default by format (:data:`DEFAULT_MODELS`), or with ``ordinal`` the model for ordered
        grades. Labels given to a votes model are counted per item.
    reliability : float, optional
        The model's reliability ``gamma`` (its own default when None).
    draws, chains, seed, max_seconds
        As :func:`plausible.sample`; a seed makes the result reproducible. The default,
        ``draws="auto"``, extends the chains until every variable passes the convergence
        report (exact draws: 1000; a model that ``pm.sample`` samples, NUTS: 1000, said in a
        warning). Over 5 seeds of every label model on Snow et al.'s tasks, the dentistry
        data and a simulated crowd, 36 of 140 fits at 4 x 1000 draws failed the report and
        none with ``"auto"`` (``benchmarks/bench_auto_draws.py --seeds 5``).
    keep : {"auto", "draws", "summary"}
        As :func:`plausible.sample`: a Dawid–Skene-family model stores its per-draw
        plausibilities when asked (``"draws"``) or when they are small (``"auto"``);
        otherwise the result holds the parameters and the per-item summaries accumulated
        while sampling (what :meth:`Aggregation.labels` and :meth:`Aggregation.to_frame`
        read), and computes the draws from the parameters when a metric reads them.
    init : Aggregation, optional
        A warm start: an earlier result of the same Dawid–Skene-family model on a subset of
        these annotations (``pl.load`` of a saved run too). Its chains continue from their
        last classes, matched by item and class id, after a short warm-up (new items start
        from their labels); a few new labels then need a few sweeps, not a full run. With
        ``client``, any model the cluster runs (an earlier run in one process or on a
        cluster; GLAD and Su also continue from the annotators' last values and the items'
        difficulties). A stacked result of ``model="auto"`` continues through its member of
        this model.
    client : dask.distributed.Client, optional
        Run a Dawid–Skene-family, annotator-beta, GLAD or Su chain with its items in shards on
        the cluster's workers, one shard per worker
        (:func:`plausible.distributed.cluster_chain.sample_on_cluster`: per-item summaries kept; the
        Dawid–Skene family's per-draw plausibilities computed when read; no log-likelihood). Item-independent models shard
        with :func:`plausible.distributed.run_shards`. A worker lost during the run is
        replaced and the chain continues with the draws it would have made.
    store : path, optional
        With ``client``: a directory every worker can write to, where the chain is
        checkpointed every 200 sweeps; the same call with the same store resumes a run whose
        process was killed, with the draws of an uninterrupted run.
    known : Series, dict or table, optional
        The true class of some items (gold or honeypot questions, an expert's adjudication):
        item id -> class id (:meth:`plausible.data.Labels.with_known`). A label model clamps
        those items' classes instead of sampling them, which is conditioning on them: the
        annotators are scored against them inside the posterior, and the other items' classes
        learn from the annotators' record on them. Their rows of :meth:`Aggregation.to_frame`
        carry ``known_class``; the report sets each annotator's share right on them beside
        the model's estimate; a run on a cluster (``client=``) clamps them in its shards.
    ordinal : bool
        The labels' classes are ordered grades, lowest first (name their order with
        ``Labels.from_frame(..., classes=[...])``): with no ``model``, fit the model that reads
        them so (:func:`plausible.models.ordinal_model`, ordered probit), as ``--ordinal``.
    **options
        Passed to the model's builder (e.g. ``threshold=`` for ratings, ``alpha=``).
    """
    annotations = as_annotations(data, format=format, item=item, annotator=annotator,
                                 label=label, score=score, rank=rank)
    name = model if model is not None else default_model(annotations, ordinal=ordinal)
    if name == AUTO:
        if init is not None or client is not None or store is not None:
            raise ValueError("model='auto' fits every candidate in this process: name the model "
                             "to warm-start it (init=) or to run it on a cluster (client=)")
        return _choose(annotations, default=model is None, reliability=reliability,
                       draws=draws, chains=chains, seed=seed, max_seconds=max_seconds,
                       keep=keep, known=known, progressbar=progressbar, **options)
    entry = models.entry(name)
    missing = [option for option in entry.required if option not in options]
    if missing:
        raise ValueError(f"model {name!r} needs {', '.join(f'{m}=' for m in missing)} "
                         f"({entry.summary})")
    fitted = data_for_model(annotations, entry)
    if known is not None:
        if entry.data != "labels":
            raise ValueError(f"known= (the true class of some items) needs a label model; "
                             f"{name} takes {entry.data}")
        fitted = fitted.with_known(known)
    if init is not None:
        if not isinstance(init, Aggregation):
            raise TypeError(f"init must be an earlier Aggregation (pl.aggregate or pl.load), got "
                            f"{type(init).__name__}")
        if init.members is not None:
            init = init.members.get(name, init)  # a stacked result: its member of this model
        if init.members is not None or init.model != name:
            others = [m for m in (init.members or ()) if m != init.model]
            raise ValueError(f"init is a {init.model} run"
                             + (f" stacked with {', '.join(others)}" if others else "")
                             + f"; this is {name}: a warm start continues the same model")
        options_init = {"init": init.trace}
    else:
        options_init = {}
    if reliability is not None:
        options["reliability"] = reliability
    if store is not None and client is None:
        raise ValueError("store= checkpoints a chain on a cluster (client=); an in-process "
                         "run keeps its result with Aggregation.save")
    if client is not None:
        trace = distributed.sample_on_cluster(
            fitted, name, client=client, draws=draws,
            chains=chains, seed=seed, model_kwargs=options, store=store,
            max_seconds=max_seconds, init=None if init is None else init.trace)
        return Aggregation(trace=_with_known(trace, fitted), model=name, data=fitted,
                           default=model is None, options=options)
    built = entry.build(fitted, **options)
    pymc_log = logging.getLogger("pymc")
    level = pymc_log.level
    if not progressbar:  # quiet means quiet: no "Sequential sampling ..." lines either
        pymc_log.setLevel(max(level, logging.WARNING))
    try:
        try:
            trace = sample(built, draws=draws, chains=chains, seed=seed,
                           progressbar=progressbar, check_convergence=False,
                           max_seconds=max_seconds, keep=keep,
                           **_work_limit(fitted, draws, chains), **options_init)
        except AutoDrawsUnavailable:  # raised before sampling
            warnings.warn(f"{name} samples with pm.sample (NUTS), which cannot extend its "
                          "chains: 1000 draws per chain", stacklevel=2)
            trace = sample(built, draws=1000, chains=chains, seed=seed,
                           progressbar=progressbar, check_convergence=False, keep=keep)
            trace["posterior"].attrs["draws_stopped_by"] = "fixed: pm.sample cannot extend"
    finally:
        pymc_log.setLevel(level)
    return Aggregation(trace=_with_known(trace, fitted), model=name, data=fitted,
                       default=model is None, options=options)


def _work_limit(data, draws, chains: int) -> dict:
    """``{"max_draws": ...}`` of a ``draws="auto"`` run on labels (:data:`AUTO_WORK`), else
    nothing (the driver's own limits)."""
    if draws != AUTO or format_of(data) != "labels":
        return {}
    visits = max(data.n_annotations * data.n_classes * chains, 1)
    return {"max_draws": int(min(AUTO_MAX_DRAWS, max(AUTO_FIRST_DRAWS, AUTO_WORK // visits)))}


def _choose(annotations, *, default: bool, reliability, max_seconds, known, **settings
            ) -> Aggregation:
    """``model="auto"``: fit every candidate (:func:`auto_candidates`) with the same
    settings and return the one :func:`plausible.diagnostics.model_selection.select` picks,
    its :class:`~plausible.diagnostics.model_selection.Selection` attached, or the stack of
    the candidates of its meaning (:func:`stacked_trace`, the members kept). ``max_seconds``
    bounds the whole choice: each fit gets an even share of what is left. Candidates that
    cannot take the request (a fractional reliability for a sampler that repeats labels,
    known classes for the ambiguity model) are left out and noted."""
    options = {key: value for key, value in settings.items()
               if key not in ("draws", "chains", "seed", "keep", "progressbar")}
    if options:
        raise ValueError(f"model='auto' takes no model options ({', '.join(options)}): its "
                         "candidates differ in them; name the model")
    candidates, skipped = [], []
    for name in auto_candidates(annotations):
        entry = models.entry(name)
        if (reliability is not None and entry.reliability == "repetitions"
                and not float(reliability).is_integer()):
            skipped.append(f"{name}: left out, its sampler repeats labels and reliability "
                           f"{reliability} is not a whole number")
        elif known is not None and entry.plausibility == models.ITEM_DISTRIBUTION:
            skipped.append(f"{name}: left out, known classes fix an item's one true class, "
                           "not its distribution over classes")
        else:
            candidates.append(name)
    deadline = None if max_seconds is None else time.monotonic() + max_seconds
    fits = {}
    for place, name in enumerate(candidates):
        budget = (None if deadline is None else
                  max(deadline - time.monotonic(), 0.0) / (len(candidates) - place))
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*LOO cannot rank")  # noted below
            fits[name] = aggregate(annotations, name, reliability=reliability,
                                   max_seconds=budget, known=known, **settings)
    not_converged = {name: _unconverged(fit.convergence()) for name, fit in fits.items()
                     if not fit.convergence().converged}
    selection = select({name: fit.trace for name, fit in fits.items()}, not_converged,
                       {name: models.entry(name).plausibility for name in fits})
    if skipped:
        selection = replace(selection, notes=(*selection.notes, *skipped))
    chosen = fits[selection.chosen]
    if not selection.stacked:
        return replace(chosen, default=default, selection=selection)
    members = {name: fits[name] for name in selection.stack}
    return Aggregation(trace=stacked_trace(members, selection.stack, settings.get("seed"),
                                           chosen.trace),
                       model=selection.chosen, data=chosen.data, default=default,
                       selection=selection, members=members)


def stacked_trace(members: dict[str, Aggregation], weights: dict[str, float],
                  seed: int | None, base: xr.DataTree) -> xr.DataTree:
    """The trace of a stacked result: ``posterior/plausibility (chain, draw, item, class)``,
    the mixture of the members' plausibility draws with ``weights``
    (:func:`plausible.inference.stacking.mixture_draws`, its draws chosen by ``seed``), the
    weights in the posterior's ``stack`` attribute (JSON), the members' summed
    ``sampling_seconds`` and what stopped each one's draws (``draws_stopped_by``);
    ``observed_data`` and ``constant_data`` of ``base`` (a member's trace: the members share
    the data)."""
    draws = {name: member.trace["posterior"]["plausibility"]
             for name, member in members.items()}
    mixed = mixture_draws(draws, weights, np.random.default_rng(seed))
    seconds = sum(float(member.trace["posterior"].attrs.get("sampling_seconds", 0.0))
                  for member in members.values())
    stopped = "; ".join(f"{name}: {member.trace['posterior'].attrs['draws_stopped_by']}"
                        for name, member in members.items()
                        if "draws_stopped_by" in member.trace["posterior"].attrs)
    posterior = xr.Dataset({"plausibility": mixed}, attrs={
        "sampler": "stacking", "stack": json.dumps(weights), "sampling_seconds": seconds,
        **({"draws_stopped_by": stopped} if stopped else {})})
    data = {group: base[group].to_dataset() for group in ("observed_data", "constant_data")
            if group in base.children}
    return assemble(posterior, **data)


def _unconverged(report) -> str:
    """What keeps a convergence report from passing: its worst failing variable, or that
    it could not be assessed."""
    if report.status == NOT_CONVERGED:
        return report.describe(report.worst_failing)
    return f"convergence not assessed ({report.n_chains} x {report.n_draws} draws)"


def _with_known(trace: xr.DataTree, data) -> xr.DataTree:
    """``trace`` with ``constant_data/known_class (item,)`` (the class index, -1 where not
    known) when ``data`` has known classes, so a saved run keeps them."""
    if getattr(data, "known", None) is not None:
        constant = (trace["constant_data"].to_dataset() if "constant_data" in trace.children
                    else xr.Dataset())
        trace["constant_data"] = constant.assign(
            known_class=xr.DataArray(data.known, dims="item", coords={"item": data.items}))
    return trace


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
        workers (``data`` None, :func:`plausible.distributed.cluster_chain.sample_partitions`)."""
        return "labels" if self.data is None else format_of(self.data)

    @property
    def plausibility(self) -> xr.DataArray:
        """Posterior mean plausibility ``(item, class)`` with the data's ids as coords. A
        comparison model of more than
        :data:`~plausible.models.bradley_terry.MAX_RANKED_ITEMS` items keeps no rank table
        (``n^2`` values a draw): :meth:`labels` has its rank summaries."""
        if "mean" not in self._cache:
            self._refuse_without_rank_table()
            self._cache["mean"] = metrics.posterior_mean(self.trace)
        return self._cache["mean"]

    def _refuse_without_rank_table(self) -> None:
        if self.format == "comparisons" and not _has_plausibility(self.trace):
            raise ValueError(
                f"this run of {self.data.n_items} compared items keeps no rank table (it would "
                f"be {self.data.n_items}^2 values a draw): labels() and to_frame() give each "
                "item's rank summary, and the posterior its log_worth draws")

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
        :func:`label_set_table` and each item's most probable label pattern
        (:func:`pattern_columns`) instead."""
        if "labels" not in self._cache:
            self._cache["labels"] = (label_set_table(self.plausibility).join(
                                         pattern_columns(self.trace, self.data))
                                     if self.format == "label_sets" else
                                     rank_summary(self.trace["posterior"]["log_worth"])
                                     if self.format == "comparisons" else
                                     label_table(self.trace, self.plausibility))
        return self._cache["labels"].copy()

    def to_frame(self) -> pd.DataFrame:
        """One row per item: :meth:`labels`' columns and one ``plausibility_<class>`` column
        per class (none for comparisons, whose classes are the rank positions: the rank
        summary of :meth:`labels` instead); ``known_class`` first, the known class or empty,
        when some items' classes are known; for ratings
        also the consensus rating on the rating scale, ``consensus_score``,
        ``consensus_q025`` and ``consensus_q975`` (its 95 % interval;
        :func:`plausible.models.ratings_censored.consensus`)."""
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
        if self.format == "ratings":
            frame = frame.join(ratings_censored.consensus(self.trace))
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
        true_class = models.entry(self.model).plausibility == models.TRUE_CLASS_POSTERIOR
        prefix = "" if true_class else "ua_"
        if _one_per_item(predictions):
            member = _one_hot(predictions, items, classes)
            rows[f"{prefix}accuracy"] = metrics.summarize(
                metrics.ua_coverage(self.trace, member) if true_class
                else metrics.ua_set_accuracy(self.trace, member))
        else:
            scores = _aligned_scores(predictions, items, classes)
            for j in sorted({int(j) for j in np.atleast_1d(k)}):
                if j <= classes.size:
                    rows[f"{prefix}top{j}_accuracy"] = metrics.summarize(
                        metrics.ua_coverage(self.trace, metrics.top_k_sets(scores, j))
                        if true_class else metrics.ua_topk_accuracy(self.trace, scores, k=j))
        return pd.DataFrame({name: {s: float(summary[s]) for s in ("mean", "std", "min", "max")}
                             for name, summary in rows.items()}).T.rename_axis("metric")

    def _evaluate_sets(self, predictions, items, classes, draws: int = 500,
                       seed: int | None = 0) -> pd.DataFrame:
        """Multi-label sets: the expected Hamming accuracy, F1 (per item, averaged) and
        exact-set accuracy of ``predictions``, a 0/1 table indexed by item with a column per
        label (or a bool ``(item, class)`` array in this result's order), over draws of the
        items' true sets (:func:`plausible.models.multi_label.draw_label_sets`)."""
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
        sets = multi_label.draw_label_sets(self.trace, self.data, draws=draws, seed=seed)
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
        if kind == "votes":
            return Check(report, vote_predictive_check(self.trace, draws=draws, seed=seed))
        if kind == "rankings":
            return Check(report, ranking_predictive_check(self.trace, self.data, draws=draws,
                                                          seed=seed))
        if kind == "comparisons":
            return Check(report, bradley_terry.predictive_check(self.trace, self.data,
                                                                draws=draws, seed=seed))
        if kind == "label_sets":
            replicated = multi_label.replicate_label_sets(self.trace, self.data, draws=draws,
                                                          seed=seed)
            return Check(report, multi_label.label_set_predictive_check(self.data, replicated))
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
        path = Path(path)
        tree = self._saved_tree()
        write_atomic(path, lambda tmp: tree.to_zarr(tmp) if path.suffix == ".zarr"
                     else tree.to_netcdf(tmp, engine="h5netcdf"))
        return path

    def _saved_tree(self) -> xr.DataTree:
        """The trace as :meth:`save` writes it: the model's name, format, options and
        selection in its attributes, and a stacked result's members in its ``members``
        group, one child each."""
        tree = self.trace.copy()
        if "computed_when_read" in tree["posterior"].attrs:
            tree["posterior"].attrs["computed_when_read"] = ""  # written out below
        tree.attrs.update({"plausible_model": self.model, "plausible_format": self.format,
                           "plausible_options": repr(self.options)})
        if self.selection is not None:
            tree.attrs["plausible_selection"] = self.selection.to_json()
        if self.members is not None:
            tree["members"] = xr.DataTree(children={
                name: member._saved_tree() for name, member in self.members.items()})
        return tree

    def __repr__(self) -> str:
        stacked = self.selection is not None and self.selection.stacked
        chosen = (f" (chosen by PSIS-LOO among {len(self.selection.candidates)} candidates"
                  + (f", stacked with {len(self.selection.stack) - 1} of the same meaning)"
                     if stacked else ")")
                  if self.selection is not None else
                  f" (default for {self.format})" if self.default else "")
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


def label_table(trace: xr.DataTree, mean: xr.DataArray | None = None) -> pd.DataFrame:
    """Per item (index, the ids): ``top_class``, ``probability_top_class`` and
    ``certainty_top1`` (:meth:`Aggregation.labels`) of ``trace``; ``mean``: its posterior
    mean plausibility, when already computed."""
    shares = metrics.label_certainty(trace)
    mean = metrics.posterior_mean(trace) if mean is None else mean
    top = shares.values.argmax(axis=1)
    rows = np.arange(top.size)
    return pd.DataFrame({"top_class": shares["class"].values[top],
                         "probability_top_class": mean.values[rows, top],
                         "certainty_top1": shares.values[rows, top]},
                        index=pd.Index(shares["item"].values, name="item"))


def _set_f1(sets: np.ndarray, predicted: np.ndarray) -> np.ndarray:
    """Per draw and item, the F1 of ``predicted (item, class)`` against ``sets (sample, item,
    class)``: ``2 |z & y| / (|z| + |y|)``, 1 when both are empty."""
    both = (sets & predicted[None]).sum(axis=2)
    total = sets.sum(axis=2) + predicted.sum(axis=1)[None]
    return np.where(total > 0, 2.0 * both / np.maximum(total, 1), 1.0)


def _has_plausibility(trace: xr.DataTree) -> bool:
    """Whether ``trace`` has plausibilities: stored or computed when read, or summarised."""
    return "plausibility" in trace["posterior"].data_vars or "plausibility_summary" in trace.children


def label_set_table(mean: xr.DataArray) -> pd.DataFrame:
    """Per item of a multi-label model (index, the ids): ``predicted_set`` (the labels whose
    plausibility is at least 1/2, joined by ``|``; empty for the empty set), ``set_size``,
    ``expected_hamming_accuracy`` of that set (exact: the mean over labels of ``max(p, 1 -
    p)``), and the item's ``least_certain_label`` with its ``plausibility_least_certain``."""
    p = mean.transpose("item", "class").values
    classes = np.asarray(mean["class"].values).astype(str)
    chosen = p >= 0.5
    closest = np.abs(p - 0.5).argmin(axis=1)
    rows = np.arange(p.shape[0])
    return pd.DataFrame({
        "predicted_set": ["|".join(classes[row]) for row in chosen],
        "set_size": chosen.sum(axis=1),
        "expected_hamming_accuracy": np.maximum(p, 1 - p).mean(axis=1),
        "least_certain_label": mean["class"].values[closest],
        "plausibility_least_certain": p[rows, closest]},
        index=pd.Index(mean["item"].values, name="item"))


def pattern_columns(trace: xr.DataTree, sets) -> pd.DataFrame:
    """Per item of a multi-label model (index, the ids): ``pattern``, its most probable
    mixture component (0 the heaviest; :func:`plausible.models.multi_label.component_membership`)
    and ``pattern_probability``, its posterior probability."""
    membership = multi_label.component_membership(trace, sets)
    p = membership.values
    best = p.argmax(axis=1)
    return pd.DataFrame({"pattern": membership["component"].values[best],
                         "pattern_probability": p[np.arange(best.size), best]},
                        index=pd.Index(membership["item"].values, name="item"))


def plausibility_columns(mean: xr.DataArray) -> pd.DataFrame:
    """``plausibility_<class>`` columns of a posterior mean ``(item, class)``, by item."""
    return pd.DataFrame(mean.values, index=pd.Index(mean["item"].values, name="item"),
                        columns=[f"plausibility_{c}" for c in mean["class"].values])


def write_atomic(path: Path, write) -> None:
    """``write(tmp)`` to a temporary path in ``path``'s folder, then rename it to ``path``
    (replacing a file or a Zarr folder); a failed write leaves nothing behind."""
    path = Path(path)
    folder = path.parent if str(path.parent) else Path(".")
    handle, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    os.close(handle)
    os.unlink(tmp)
    try:
        write(tmp)
        if path.is_dir():
            shutil.rmtree(path)
        os.replace(tmp, path)
    except BaseException:
        if os.path.isdir(tmp):
            shutil.rmtree(tmp, ignore_errors=True)
        elif os.path.exists(tmp):
            os.unlink(tmp)
        raise


def load(path) -> Aggregation:
    """An :class:`Aggregation` saved by :meth:`Aggregation.save` (the data are rebuilt from
    the trace's ``observed_data``)."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file")
    if path.suffix == ".zarr":
        tree = xr.open_datatree(path, engine="zarr").load()
    else:
        try:
            opened = xr.open_datatree(path, engine="h5netcdf")
        except OSError as error:
            raise ValueError(f"{path} is not a saved plausible aggregation (not a netCDF file: "
                             f"{error}); save one with Aggregation.save or plausible aggregate "
                             "--save") from None
        with opened:
            tree = opened.load()
    if "plausible_model" not in tree.attrs:
        raise ValueError(f"{path} is not a saved plausible aggregation (no model name)")
    return _from_tree(tree)


def _from_tree(tree: xr.DataTree, data=None) -> Aggregation:
    """The :class:`Aggregation` of a saved tree (:meth:`Aggregation._saved_tree`), its
    ``members`` group rebuilt as the stacked result's members, on ``data`` when given (a
    member shares its result's data)."""
    attrs = {k: tree.attrs.pop(k) for k in _META if k in tree.attrs}
    saved = tree["members"] if "members" in tree.children else None
    if saved is not None:
        del tree["members"]
    data = _data_from_trace(tree, attrs["plausible_format"]) if data is None else data
    members = (None if saved is None else
               {name: _from_tree(child.copy(), data) for name, child in saved.children.items()})
    selection = attrs.get("plausible_selection")
    return Aggregation(trace=tree, model=attrs["plausible_model"], data=data,
                       selection=None if selection is None else Selection.from_json(selection),
                       members=members)


def _data_from_trace(tree: xr.DataTree, kind: str):
    """The annotations a trace was fitted to, from its ``observed_data``."""
    observed = tree["observed_data"]
    if kind == "comparisons":  # the items are all it needs: its classes are rank positions
        won = observed["comparisons"]
        left, right = won["comparison_left"].values, won["comparison_right"].values
        return Comparisons.from_frame(pd.DataFrame({
            "worker": won["comparison_annotator"].values, "left": left, "right": right,
            "label": np.where(won.values.astype(bool), left, right)}),
            items=tree["posterior"]["item"].values)
    classes = tree["posterior"]["class"].values if "class" in tree["posterior"].coords else \
        tree["constant_data"]["class"].values
    if kind == "votes":
        votes = observed["votes"]
        return Votes(votes.values, votes["item"].values, votes["class"].values)
    if kind == "labels":
        labels = observed["labels"]
        frame = pd.DataFrame({"item": labels["label_item"].values,
                              "annotator": labels["label_annotator"].values,
                              "label": labels.values})
        labels = Labels.from_frame(frame, classes=classes)
        constant = tree["constant_data"] if "constant_data" in tree.children else None
        if constant is not None and "known_class" in constant.data_vars:
            codes = constant["known_class"]
            rows = codes.values >= 0
            labels = labels.with_known(pd.Series(classes[codes.values[rows]],
                                                 index=codes["item"].values[rows]))
        return labels
    if kind == "label_sets":
        sets = observed["label_sets"]
        frame = pd.DataFrame(sets.transpose("response", "class").values.astype(bool),
                             columns=list(sets["class"].values))
        frame.insert(0, "annotator", sets["response_annotator"].values)
        frame.insert(0, "item", sets["response_item"].values)
        return LabelSets.from_wide(frame, item="item", annotator="annotator",
                                   classes=list(sets["class"].values))
    if kind == "rankings":
        entries = observed["rankings"]
        reader = "entry_annotator" if "entry_annotator" in entries.coords else "entry_reader"
        frame = pd.DataFrame({"item": entries["entry_item"].values,
                              "reader": entries[reader].values,
                              "label": entries.values, "rank": entries["entry_block"].values})
        rankings = Rankings.from_long(frame, classes=classes)
        return rankings if reader == "entry_annotator" else replace(rankings, readers=None)
    ratings = observed["ratings"]
    frame = pd.DataFrame({"item": ratings["rating_item"].values,
                          "annotator": ratings["rating_annotator"].values,
                          "score": ratings.values})
    return Ratings.from_frame(frame)


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


__all__ = ["DEFAULT_MODELS", "Aggregation", "Check", "aggregate", "default_model", "load",
           "write_atomic"]
