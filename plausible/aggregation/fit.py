"""``aggregate``: from annotations to a checked posterior, in one call, whatever the run.

The data are read (:func:`as_annotations`, :mod:`plausible.data.tables`) and put in the format
the model takes (:func:`data_for_model`); the model is the one named, the default
(:func:`~plausible.aggregation.defaults.default_model`) or, for ``"auto"``, PSIS-LOO's choice
among the candidates (:mod:`plausible.aggregation.choice`); it is built through the registry
and sampled with :func:`plausible.sample` in this process or, asked for a cluster
(``client=``, ``workers=``), a store of shards (``store=``) or given a partitioned dataset,
with its items in shards (:mod:`plausible.aggregation.sharded`). Every route returns an
:class:`~plausible.aggregation.Aggregation`, and its draws are those the route's own function
gives (:func:`plausible.inference.draws.resolve_draws` says how many)."""

from __future__ import annotations

import logging
import os
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from plausible import models
from plausible.aggregation.choice import choose
from plausible.aggregation.defaults import AUTO, default_model
from plausible.aggregation.persistence import with_known
from plausible.aggregation.result import Aggregation
from plausible.aggregation.sharded import run_sharded
from plausible.data import Votes
from plausible.data.predictions import read_predictions
from plausible.data.tables import format_of, from_frame
from plausible.inference import sample
from plausible.inference.draws import FIXED_DRAWS, AutoDrawsUnavailable, resolve_draws
from plausible.metrics.meaning import TRUE_CLASS_POSTERIOR


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
              draws: int | str | None = None, chains: int = 4, seed: int | None = None,
              max_seconds: float | None = None, format: str | None = None,
              item: str | None = None, annotator: str | None = None, label: str | None = None,
              score: str | None = None, rank: str | None = None, keep: str = "auto",
              init=None, client=None, workers: int | None = None, store=None,
              shard_size: int = 10_000, known=None, ordinal: bool = False,
              predictions=None, progressbar: bool = False, **options) -> Aggregation:
    """Fit an aggregation model to annotations and return its posterior as an
    :class:`Aggregation`: in this process, in shards of items, or on a Dask cluster.

    Parameters
    ----------
    data : DataFrame, Votes, Labels, Ratings, Rankings, or a folder's path
        A long table (one row per annotation: crowd-kit's ``task, worker, label`` names by
        default, or named with ``item=``, ``annotator=``, ``label=`` / ``score=`` / ``rank=``),
        a wide vote table (one count column per class), or a container. Or the path (str or
        ``Path``) of a partitioned Parquet dataset of labels, a folder of files each holding
        every label of its items, which the shards of the model's chain read themselves
        (:func:`plausible.distributed.sample_partitions`: columns by crowd-kit's names
        or ``item=``, ``annotator=``, ``label=``; ``model`` named; the result holds no copy of
        the labels, so it can be neither checked nor saved with them).
    model : str, optional
        A registry name (:func:`plausible.models.available`), or ``"auto"``: fit every model
        of :data:`AUTO_CANDIDATES` for the format and keep the converged one with the highest
        PSIS-LOO elpd (:func:`plausible.diagnostics.model_selection.select`; the result's
        ``selection`` says why; ``max_seconds`` then bounds all the fits together, and no
        model options are taken), stacked with the converged candidates of the same meaning
        of the plausibility (the mixture of their draws, :attr:`Aggregation.members`).
        Default by format (:data:`DEFAULT_MODELS`), or with ``ordinal`` the model for ordered
        grades, or with ``init`` its model (:func:`~plausible.aggregation.defaults.
        default_model`). Labels given to a votes model are counted per item.
    reliability : float, optional
        The model's reliability ``gamma`` (its own default when None).
    draws, chains, seed, max_seconds
        As :func:`plausible.sample`; a seed makes the result reproducible. The default,
        ``draws=None``, is ``"auto"``, which extends the chains until every variable passes
        the convergence report (exact draws: 1000; a model that ``pm.sample`` samples, NUTS:
        1000, said in a warning), except for shards of items, which are sampled once: 1000
        (:func:`plausible.inference.draws.resolve_draws` states the rule). Over 5 seeds of
        every label model on Snow et al.'s tasks, the dentistry data and a simulated crowd, 36
        of 140 fits at 4 x 1000 draws failed the report and none with ``"auto"``
        (``benchmarks/bench_auto_draws.py --seeds 5``).
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
        from their labels); a few new labels then need a few sweeps, not a full run. On a
        cluster, any model whose chain runs there (an earlier run in one process or on a
        cluster; GLAD and Su also continue from the annotators' last values and the items'
        difficulties). A stacked result of ``model="auto"`` continues through its member of
        this model. Shards of items start afresh.
    client : dask.distributed.Client or str, optional
        Run on a Dask cluster: this client's, or the scheduler's at this address (e.g.
        ``"tcp://host:8786"``, connected for the run). A Dawid–Skene-family, annotator-beta,
        GLAD or Su model runs one chain with its items in shards on the workers, one shard per
        worker (:func:`plausible.distributed.sample_on_cluster`: per-item summaries
        kept; the Dawid–Skene family's per-draw plausibilities computed when read; no
        log-likelihood); a worker lost during the run is replaced and the chain continues with
        the draws it would have made. A model whose items are independent samples shards of
        ``shard_size`` items on the workers instead (:func:`plausible.distributed.run_shards`;
        the same draws as in this process). The posterior's ``dask_workers`` attribute says
        how many workers ran.
    workers : int, optional
        Without ``client``: start a local Dask cluster of this many workers for the run
        (:func:`plausible.distributed.connect`), as ``client`` does with one.
    store : path, optional
        A folder every worker can write to. On a cluster, where the chain is checkpointed
        every 200 sweeps: the same call with the same store resumes a run whose process was
        killed, with the draws of an uninterrupted run. For a model whose items are
        independent, where its shards' draws are kept (in this process without a cluster):
        the same call again skips the shards already complete, and the result reads the
        draws from there (the posterior's ``shards`` attribute says, as JSON, which shards
        were skipped, sampled and retried). Shards of items on a cluster without a store are
        written to a temporary folder, removed with the result.
    shard_size : int
        Items per shard of a model whose items are independent (10,000).
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
    predictions : array, DataFrame or path, optional
        A classifier's probabilities per class for the items (an ``(item, class)`` array in the
        container's item and class order, a table indexed by item with a column per class, or
        a ``.npy`` / table file; :func:`plausible.data.read_predictions`), taken by the models
        whose builder has ``predictions=`` (the default label model among them) as the prior of
        each item's class, with a learned temperature and class bias
        (:mod:`plausible.models.classifier_prior`): the posterior's ``temperature`` says how
        far the classifier is trusted. Evaluating the same classifier against this result
        then warns: its truth was built from the classifier's own predictions.
    progressbar : bool
        Show the sweeps (or the shards of items) on a progress bar, on a terminal only.
    **options
        Passed to the model's builder (e.g. ``threshold=`` for ratings, ``alpha=``).
    """
    if init is not None and not isinstance(init, Aggregation):
        raise TypeError(f"init must be an earlier Aggregation (pl.aggregate or pl.load), got "
                        f"{type(init).__name__}")
    partitioned = isinstance(data, str | os.PathLike)
    sharded = partitioned or client is not None or workers is not None or store is not None
    if partitioned:
        annotations = Path(data)
        if not annotations.is_dir():
            raise ValueError(f"{annotations} is not a folder: a path given as data is a "
                             "partitioned Parquet dataset's (read a file with "
                             "plausible.data.tables.read_annotations)")
        if model is None:
            raise ValueError(f"{annotations}: a partitioned dataset is read by the shards of a "
                             "model's chain: name the model")
    else:
        annotations = as_annotations(data, format=format, item=item, annotator=annotator,
                                     label=label, score=score, rank=rank)
    name = model if model is not None else default_model(annotations, ordinal=ordinal,
                                                         init=init,
                                                         predictions=predictions is not None)
    if name == AUTO:
        if init is not None or sharded:
            raise ValueError("model='auto' fits every candidate in this process: name the model "
                             "to warm-start it (init=), to run it on a cluster (client=, "
                             "workers=) or in shards (store=, a partitioned dataset)")
        return choose(annotations, aggregate, default=model is None, reliability=reliability,
                      draws=draws, chains=chains, seed=seed, max_seconds=max_seconds,
                      keep=keep, known=known, progressbar=progressbar, **options)
    entry = models.entry(name)
    missing = [option for option in entry.required if option not in options]
    if missing:
        raise ValueError(f"model {name!r} needs {', '.join(f'{m}=' for m in missing)} "
                         f"({entry.summary})")
    fitted = annotations if partitioned else data_for_model(annotations, entry)
    if known is not None:
        if entry.data != "labels":
            raise ValueError(f"known= (the true class of some items) needs a label model; "
                             f"{name} takes {entry.data}")
        if not partitioned:  # a partitioned dataset's shards clamp their own items
            fitted = fitted.with_known(known)
    if init is not None:
        if init.members is not None:
            init = init.members.get(name, init)  # a stacked result: its member of this model
        if init.members is not None or init.model != name:
            others = [m for m in (init.members or ()) if m != init.model]
            raise ValueError(f"init is a {init.model} run"
                             + (f" stacked with {', '.join(others)}" if others else "")
                             + f"; this is {name}: a warm start continues the same model")
    if reliability is not None:
        options["reliability"] = reliability
    if predictions is not None:
        if sharded:
            raise ValueError("predictions= (a classifier's prior) is fitted in this process: "
                             "leave out client=, workers= and store=")
        options["predictions"] = classifier_prior(predictions, fitted, entry)
    if sharded:
        return run_sharded(fitted, name, draws=draws, chains=chains, seed=seed,
                           max_seconds=max_seconds, init=init, known=known, client=client,
                           workers=workers, store=store, shard_size=shard_size,
                           progressbar=progressbar, default=model is None, options=options,
                           columns={"item": item, "annotator": annotator, "label": label})
    kind = format_of(fitted)
    visits = (fitted.n_annotations * fitted.n_classes * chains  # a label model's work bound
              if kind == "labels" else  # and a latent-class vote model's, a vote a label
              int(fitted.counts.sum()) * fitted.n_classes * chains
              if kind == "votes" and entry.plausibility == TRUE_CLASS_POSTERIOR else None)
    draws, max_draws = resolve_draws(draws, visits=visits)
    built = entry.build(fitted, **options)
    pymc_log = logging.getLogger("pymc")
    level = pymc_log.level
    if not progressbar:  # quiet means quiet: no "Sequential sampling ..." lines either
        pymc_log.setLevel(max(level, logging.WARNING))
    try:
        try:
            trace = sample(built, draws=draws, chains=chains, seed=seed,
                           progressbar=progressbar, check_convergence=False,
                           max_seconds=max_seconds, max_draws=max_draws, keep=keep,
                           **({} if init is None else {"init": init.trace}))
        except AutoDrawsUnavailable:  # raised before sampling
            warnings.warn(f"{name} samples with pm.sample (NUTS), which cannot extend its "
                          f"chains: {FIXED_DRAWS} draws per chain", stacklevel=2)
            trace = sample(built, draws=FIXED_DRAWS, chains=chains, seed=seed,
                           progressbar=progressbar, check_convergence=False, keep=keep)
            trace["posterior"].attrs["draws_stopped_by"] = "fixed: pm.sample cannot extend"
    finally:
        pymc_log.setLevel(level)
    if predictions is not None:  # the trace holds them; the options say what they were
        options["predictions"] = "a classifier's probabilities (item, class)"
    return Aggregation(trace=with_known(trace, fitted), model=name, data=fitted,
                       default=model is None, options=options)


def classifier_prior(predictions, data, entry) -> np.ndarray:
    """``predictions`` as the float64 ``(item, class)`` probabilities in ``data``'s item and
    class order (:func:`plausible.data.read_predictions`), for a model whose builder takes
    them (``ValueError`` naming those that do otherwise)."""
    taking = models.models_taking("predictions")
    if entry.name not in taking:
        raise ValueError(f"model {entry.name!r} takes no classifier predictions; models that "
                         f"do: {', '.join(taking)}")
    return read_predictions(predictions, data.items, data.classes, probabilities=True).values
