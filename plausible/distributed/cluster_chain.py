"""The annotator models on a Dask cluster: one Gibbs chain whose items live on the workers.

The Dawid–Skene family, Carpenter's annotator-beta model, GLAD and Su's model share their
annotators' parameters across all items, so their items cannot be sampled shard by shard as
:mod:`plausible.distributed` samples item-independent models. Their Gibbs scan splits instead
into a global half and an item half that meet through sums over items
(:mod:`plausible.distributed.sharded_chain`): every sweep, the driver draws the annotators'
parameters and the class prior exactly from the summed statistics and sends them to the
shards; each shard (a Dask actor holding a block of items, their labels and every chain's
latent state) updates its items and returns its statistics, which the driver sums in shard
order. For the Dawid–Skene family and annotator-beta they are count tensors ``(annotator x
label, class)`` (:mod:`plausible.distributed.shards.dawid_skene`); GLAD and Su update their
items' difficulties by slice where they are and return class counts and each annotator's
sum over their labels, and the driver's slice update of the annotators asks the shards for
such sums once per round (:mod:`plausible.distributed.shards.difficulty`).

* :func:`sample_on_cluster` — labels in memory, cut into ``n_shards`` blocks of items with
  about equal numbers of labels, each sent to an actor;
* :func:`sample_partitions` — a partitioned Parquet dataset (a directory of files, every item's
  labels in one file): each actor reads its own files, so the driver never holds the labels
  (it reads only each file's distinct annotator and class ids, to index them globally).

**Same chain anywhere.** Each shard draws from its own generator (seeded by the run's seed,
the chain and the shard's place), so for the same seed and shard layout the draws are
bit-identical whether the shards run as actors on any number of workers or in this process
(``client=None``). The result is a trace as :func:`plausible.sample` makes with
``keep="summary"``: the global parameters per draw, the per-item posterior mean and top-1
shares (the shards' summaries), the chains' final classes (GLAD, Su: and each item's
difficulty parameter's posterior mean per chain, ``sample_stats``); for the Dawid–Skene
family with labels in memory the per-draw plausibilities are also computed from the
parameters when read.

**Faults.** A worker lost mid-run (its actor unreachable) is replaced: the shards are built
again from their sources (the labels, or the files, read again) and every chain is restored
from its last checkpoint (``store=``) or its start and replayed with the same random
numbers, so the draws are those of a run without the fault. With ``store=`` both halves of
every chain are written to a Zarr store every ``checkpoint_every`` sweeps
(:mod:`plausible.distributed.checkpoints`); the same call again, after the driver was
killed, restores every chain from its last checkpoint (the draws before it read from the
store) and finishes the run with the draws of an uninterrupted one.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import xarray as xr

from plausible.data.labels import Labels, known_pairs
from plausible.data.tables import read_table
from plausible.data.validation import ROLES, fmt
from plausible.models.dawid_skene.sampler import (
    WARM_TUNE,
    DawidSkeneKernel,
    Design,
    previous_classes,
)
from plausible.distributed.checkpoints import ChainCheckpoints
from plausible.distributed.shards.dawid_skene import DawidSkeneHalf
from plausible.distributed.sharded_chain import ShardLost, sample_sharded, shard_ranges
from plausible.distributed.run_stores import RUN_FILE, check_or_write_run, read_run
from plausible.models.annotator_beta.collapsed import AnnotatorBetaCollapsedGibbs
from plausible.models.annotator_beta.gibbs import AnnotatorBetaGibbs
from plausible.models.annotator_beta.member import AnnotatorBeta
from plausible.inference.declarations import declared_gibbs, declared_sampler
from plausible.distributed.shards.difficulty import DifficultyHalf
from plausible.inference.step_methods.difficulty_slice import DifficultySlice
from plausible.inference.step_methods.latent_class_gibbs import ClassGibbs
from plausible.models.registry import entry

DEFAULT_EVERY = 200
"""Sweeps between a checkpointed chain's checkpoints."""


def global_half(model: str, annotators, classes, **model_kwargs):
    """The driver's half of the chain over shards (:mod:`plausible.distributed.sharded_chain`)
    that the registry's builder of ``model`` declares for labels with these ``annotators``
    and ``classes`` (built on a one-label stand-in: the options depend on the ids, not on the
    labels): a Dawid–Skene-family sampler's
    member, annotator-beta's exact sweep as
    :class:`~plausible.models.annotator_beta.member.AnnotatorBeta`, or GLAD's and Su's
    slice scans as :class:`~plausible.distributed.shards.difficulty.DifficultyHalf`.
    ``ValueError`` for another model or the collapsed sweep."""
    stand_in = Labels(np.array([0]), np.array([0]), np.array([0]), np.array(["_"], dtype=object),
                      np.asarray(annotators), np.asarray(classes))
    built = entry(model).build(stand_in, **model_kwargs)
    kwargs = getattr(declared_sampler(built), "kwargs", {})
    declared = {d.step: d for d in declared_gibbs(built)}
    if AnnotatorBetaCollapsedGibbs in declared:
        return _joint_instead(model, annotators, classes, model_kwargs)
    if AnnotatorBetaGibbs in declared:
        member, concentration, reliability = AnnotatorBeta.from_gibbs(
            declared[AnnotatorBetaGibbs], built)
        return DawidSkeneHalf(member, concentration, reliability)
    if DifficultySlice in declared:
        scan = declared[DifficultySlice].kwargs
        return DifficultyHalf(scan["link"], declared[ClassGibbs].kwargs["concentration"],
                              scan["annotator_prior"], scan["item_prior"],
                              scan.get("reliability", 1.0))
    if "member" not in kwargs:
        raise ValueError(f"a chain over shards on a cluster runs the label models whose "
                         f"items share only the annotators' parameters; {model!r} is not one "
                         "(dawid-skene, one-coin, mace, hierarchical-dawid-skene, "
                         "annotator-beta, glad, su-difficulty, each with its Gibbs sweep)")
    if kwargs.get("collapsed"):
        return _joint_instead(model, annotators, classes, model_kwargs)
    return DawidSkeneHalf(kwargs["member"], kwargs["class_concentration"],
                          kwargs["reliability"])


def _joint_instead(model: str, annotators, classes, model_kwargs):
    """:func:`global_half` of the joint scan where the builder chose the collapsed sweep (which
    draws one item after another, so it cannot run over shards); ``ValueError`` where the
    caller asked for the collapsed sweep by name."""
    if model_kwargs.get("sampler") == "collapsed":
        raise ValueError("the collapsed sweep draws one item after another: a chain over "
                         "shards runs the joint scan (sampler='joint')")
    return global_half(model, annotators, classes, **model_kwargs, sampler="joint")


def runs_on_cluster(model: str) -> bool:
    """Whether ``model``'s chain can run over shards, as its registry entry declares
    (``cluster_chain``: the Dawid–Skene family, annotator-beta, GLAD, Su's model)."""
    return entry(model).cluster_chain


class LocalShards:
    """The shards as objects in this process, one per source (``shard``: the
    :class:`~plausible.distributed.sharded_chain.ItemShard` class and its options);
    ``call(method, *args)`` runs a shard method on each, in shard order; :meth:`rebuild`
    builds them afresh."""

    def __init__(self, sources, shard: tuple[type, dict]):
        self.sources, self.shard = list(sources), shard
        self.rebuild()

    def rebuild(self) -> None:
        kind, options = self.shard
        self.shards = [kind(source, s, **options) for s, source in enumerate(self.sources)]

    def __call__(self, method, *args):
        return [getattr(shard, method)(*args) for shard in self.shards]


REPLACEMENT_WAIT = 60.0
"""Seconds a rebuild waits for lost workers to be replaced before it places the shards on
the workers there are."""


class ActorShards:
    """The shards as Dask actors on ``client``'s workers, one per source (an actor binds to
    the current client, so they are made under ``client.as_current()``). A call whose actor's
    worker was lost raises :class:`ShardLost`; :meth:`rebuild` waits for the cluster to
    replace its lost workers (at most :data:`REPLACEMENT_WAIT` seconds) and makes every
    shard afresh from its source."""

    def __init__(self, client, sources, shard: tuple[type, dict]):
        self.client, self.sources, self.shard = client, list(sources), shard
        self.n_workers = len(client.scheduler_info()["workers"])
        self.futures: list = []
        self.rebuild()

    def rebuild(self) -> None:
        if self.futures:
            self.futures = self.actors = []
            try:
                self.client.wait_for_workers(self.n_workers, timeout=REPLACEMENT_WAIT)
            except TimeoutError:
                self.client.wait_for_workers(1, timeout=REPLACEMENT_WAIT)
        kind, options = self.shard
        with self.client.as_current():
            self.futures = [self.client.submit(kind, source, s, **options, actor=True,
                                               pure=False)
                            for s, source in enumerate(self.sources)]
            self.actors = [future.result() for future in self.futures]

    def __call__(self, method, *args):
        try:  # a lost actor refuses even the method's lookup
            futures = [getattr(actor, method)(*args) for actor in self.actors]
            return [future.result() for future in futures]
        except Exception as err:
            if isinstance(err, OSError) or any(f.status != "finished" for f in self.futures):
                raise ShardLost(f"a shard's worker was lost during {method}: {err}") from err
            raise


def _shards(client, sources, *, shard):
    """The shards, one per source (``shard``: their class and options): Dask actors on
    ``client``'s workers, or (``client=None``) objects in this process."""
    if client is None:
        return LocalShards(sources, shard)
    return ActorShards(client, sources, shard)


def _checkpoints(store, every, *, model, model_kwargs, draws, chains, tune, seed,
                 data: dict) -> ChainCheckpoints | None:
    """The run's checkpoints in ``store`` (None without one), after checking that the store
    holds this run (the model, its options, the sampling settings and ``data``, what
    identifies the labels and their shards) or none."""
    if store is None:
        return None
    check_or_write_run(store, {"format": "plausible chain checkpoints 1", "model": model,
                               "options": repr(sorted((model_kwargs or {}).items())),
                               **data, "draws": draws, "chains": int(chains), "tune": tune,
                               "seed": seed, "checkpoint_every": int(every)})
    return ChainCheckpoints(store, every)


def warm_values(previous: xr.DataTree, half, *, items, annotators, classes,
                chains: int) -> list[dict]:
    """One warm start per chain from ``previous``, a trace of an earlier run of the same
    model (in one process or on a cluster) on an earlier version of the labels: its chains'
    last classes (:func:`~plausible.models.dawid_skene.sampler.previous_classes`, by item
    and class id; -1 for new items, which start from their labels) and, for GLAD and Su, each
    annotator's last value (by id; new annotators at the chain's start) and each item's
    difficulty, its posterior mean per chain where the run kept one (else the last draw's;
    new items at the prior mean)."""
    classes_of = previous_classes(previous, items, classes, chains)
    if not isinstance(half, DifficultyHalf):
        return [{"final_class": z} for z in classes_of]
    annotator, item = half.names
    posterior = previous["posterior"]
    if annotator not in posterior.data_vars:
        raise ValueError(f"init= needs an earlier run of the same model (its {annotator!r} "
                         "draws)")
    last = posterior[annotator].isel(draw=-1).transpose("chain", "annotator")
    stats = previous["sample_stats"]
    means = (stats[f"{item}_mean"] if f"{item}_mean" in stats.data_vars
             else posterior[item].isel(draw=-1)).transpose("chain", "item")
    at = pd.Index(last["annotator"].values).get_indexer(annotators)
    where = pd.Index(means["item"].values).get_indexer(items)
    start = half.start(len(annotators), len(classes))[0]
    n = last.sizes["chain"]
    return [{"final_class": z,
             "annotator_x": np.where(at >= 0, last.values[c % n][at], start),
             "x": np.where(where >= 0, means.values[c % n][where], np.nan)}
            for c, z in enumerate(classes_of)]


def _run_seed(seed, store):
    """The seed of a checkpointed run: the store's when it has one (a re-run resumes the same
    chains), else ``seed``, else a fresh one (recorded in the store)."""
    if store is not None and seed is None:
        if (Path(store) / RUN_FILE).exists():
            return read_run(store).get("seed")
        return int(np.random.SeedSequence().entropy % 2**63)
    return seed


def sample_on_cluster(labels: Labels, model: str = "dawid-skene", *, client=None,
                      n_shards: int | None = None, draws: int | str = 1000, chains: int = 4,
                      seed=None, tune: int | None = None,
                      model_kwargs: dict | None = None, store=None,
                      checkpoint_every: int = DEFAULT_EVERY,
                      max_seconds: float | None = None,
                      init: xr.DataTree | None = None) -> xr.DataTree:
    """Sample a label ``model`` with a chain over shards (:func:`runs_on_cluster`: the
    Dawid–Skene family, annotator-beta, GLAD, Su) for ``labels`` with its items in ``n_shards``
    shards (default: one per worker of ``client``; two without one) on ``client``'s workers,
    or in this process with ``client=None`` (module docstring). Returns the trace (the
    Dawid–Skene family's with the per-draw plausibilities computed from the parameters when
    read). ``draws="auto"``: the
    chains are extended in blocks (250 draws, then doubling) until the parameters pass the
    convergence report and the plausibilities' split R-hat (from the shards' summaries) is
    at most 1.01, up to 16,000 draws per chain or ``max_seconds``.

    ``store``: a directory (every worker can write to) where each chain is checkpointed every
    ``checkpoint_every`` sweeps (:mod:`plausible.distributed.checkpoints`); the same call
    with the same store resumes a run whose driver was killed from its last checkpoints, and
    gives the draws of an uninterrupted run (without a seed, the store's is used). A worker
    lost during the run is replaced and the chains restored, from the store or, without one,
    from their start; the draws are those of a run without the fault.

    ``init``: a warm start from the trace of an earlier run of the same model on fewer
    labels (:func:`warm_values`); ``tune`` then defaults to 10 sweeps."""
    half = global_half(model, labels.annotators, labels.classes, **(model_kwargs or {}))
    warm = None if init is None else warm_values(
        init, half, items=labels.items, annotators=labels.annotators, classes=labels.classes,
        chains=chains)
    tune = WARM_TUNE if warm is not None and tune is None else tune
    if n_shards is None:
        n_shards = len(client.scheduler_info()["workers"]) if client is not None else 2
    ranges = shard_ranges(labels, n_shards)
    seed = _run_seed(seed, store)
    checkpoints = _checkpoints(store, checkpoint_every, model=model, model_kwargs=model_kwargs,
                               draws=draws, chains=chains, tune=tune, seed=seed,
                               data={"data_sha256": labels.content_hash,
                                     "shards": [list(r) for r in ranges],
                                     "init": _digest(warm)})
    call = _shards(client, [labels.subset(slice(a, b)) for a, b in ranges], shard=half.shard)
    trace = sample_sharded(call, items=labels.items, annotators=labels.annotators,
                           classes=labels.classes, half=half, draws=draws, chains=chains,
                           seed=seed, tune=tune, checkpoints=checkpoints, init=warm,
                           max_seconds=max_seconds)
    if not isinstance(half, DawidSkeneHalf):  # the items' parameters are not stored per draw
        return trace
    kernel = DawidSkeneKernel(Design(labels), half.member, half.a, half.reliability)
    posterior = trace["posterior"].to_dataset()
    values = {name: posterior[name].values for name in posterior.data_vars}
    lazy = kernel.compute_when_read(values)["plausibility"]
    trace["posterior"] = xr.DataTree(posterior.assign(plausibility=(
        ("chain", "draw", "item", "class"), lazy)).assign_coords(item=labels.items))
    return trace


class PartitionSource:
    """A shard's Parquet files, read on the worker that holds the shard: the labels with the
    run's annotators and classes (global ids), the items as they appear, file after file;
    ``known``: the run's known classes (a Series of class ids by item id, or None), of which
    each file's labels take their items'."""

    def __init__(self, paths, columns: dict, annotators, classes, known=None):
        self.paths, self.columns = [str(p) for p in paths], columns
        self.annotators, self.classes, self.known = annotators, classes, known

    def load(self) -> tuple[Design, np.ndarray]:
        """The files' labels in the sampler's layout and their item ids, read one file at a
        time (a file's table and labels are freed before the next is read)."""
        designs, items = [], []
        for path in self.paths:
            labels = Labels.from_frame(read_table(path), item=self.columns["item"],
                                       annotator=self.columns["annotator"],
                                       label=self.columns["label"],
                                       annotators=self.annotators, classes=self.classes)
            if self.known is not None:
                labels = labels.with_known(self.known[self.known.index.isin(labels.items)])
            designs.append(Design(labels))
            items.append(labels.items)
        return Design.concatenate(designs), np.concatenate(items)


def _distinct(path: str, columns: list[str]) -> list[np.ndarray]:
    """The distinct values of ``columns`` in one Parquet file (its dictionaries)."""
    frame = read_table(path)
    return [pd.unique(frame[c].dropna().to_numpy()) for c in columns]


def partition_files(path) -> list[Path]:
    """The Parquet files of a partitioned dataset, in sorted order."""
    files = sorted(Path(path).glob("**/*.parquet"))
    if not files:
        raise ValueError(f"{path}: no .parquet files (a partitioned dataset is a directory of "
                         "them, every item's labels in one file)")
    return files


def sample_partitions(path, model: str = "dawid-skene", *, client=None,
                      n_shards: int | None = None, draws: int | str = 1000, chains: int = 4,
                      seed=None, tune: int | None = None, item: str | None = None,
                      annotator: str | None = None, label: str | None = None,
                      model_kwargs: dict | None = None, store=None,
                      checkpoint_every: int = DEFAULT_EVERY,
                      max_seconds: float | None = None,
                      init: xr.DataTree | None = None, known=None) -> xr.DataTree:
    """Sample a label ``model`` with a chain over shards (as :func:`sample_on_cluster`) for
    the labels of a partitioned Parquet dataset
    ``path`` (module docstring): its files are dealt to ``n_shards`` shards (default: one per
    worker, or two), each read by its actor. Columns by crowd-kit's names or ``item=``,
    ``annotator=``, ``label=``. Annotators and classes are indexed in sorted order. An item
    whose labels are in two files is refused. ``store``, ``checkpoint_every``,
    ``draws="auto"``, ``max_seconds``, ``init``: as :func:`sample_on_cluster` (a rebuilt
    shard reads its files again; the run is identified by its files' names and sizes).
    ``known``: the true class of some items (a Series of class ids by item id, as
    :meth:`~plausible.data.Labels.with_known` takes), clamped by the shards that hold them
    and kept as ``constant_data/known_class``; ``ValueError`` naming an item without labels
    or a class outside the data's."""
    files = partition_files(path)
    schema = pq.read_schema(files[0])
    columns = {}
    for role, given in (("item", item), ("annotator", annotator), ("label", label)):
        name = given or next((n for n in ROLES[role] if n in schema.names), None)
        if name is None or name not in schema.names:
            raise ValueError(f"{files[0]}: no {role} column (looked for "
                             f"{given or '/'.join(ROLES[role])}; columns {schema.names})")
        columns[role] = name
    wanted = [columns["annotator"], columns["label"]]
    if client is None:
        distinct = [_distinct(str(f), wanted) for f in files]
    else:
        distinct = client.gather(client.map(_distinct, [str(f) for f in files],
                                            columns=wanted, pure=False))
    annotators = np.sort(pd.unique(np.concatenate([d[0] for d in distinct])))
    classes = np.sort(pd.unique(np.concatenate([d[1] for d in distinct])))
    if n_shards is None:
        n_shards = len(client.scheduler_info()["workers"]) if client is not None else 2
    n_shards = min(n_shards, len(files))
    groups = [list(g) for g in np.array_split(np.array(files, dtype=object), n_shards)]
    known = None if known is None else _known_classes(known, classes)
    sources = [PartitionSource(g, columns, annotators, classes, known) for g in groups]
    half = global_half(model, annotators, classes, **(model_kwargs or {}))
    call = _shards(client, sources, shard=half.shard)
    items = np.concatenate(call("item_ids"))
    repeated = pd.Index(items)[pd.Index(items).duplicated()]
    if len(repeated):
        raise ValueError(f"{path}: item {repeated[0]!r} has labels in two shards' files; "
                         "partition the dataset by item")
    if known is not None:
        missing = pd.Index(items).get_indexer(known.index) < 0
        if missing.any():
            raise ValueError(f"known: item {fmt(known.index[int(np.argmax(missing))])} has "
                             f"no labels in {path}")
    warm = None if init is None else warm_values(init, half, items=items,
                                                 annotators=annotators, classes=classes,
                                                 chains=chains)
    tune = WARM_TUNE if warm is not None and tune is None else tune
    seed = _run_seed(seed, store)
    checkpoints = _checkpoints(store, checkpoint_every, model=model, model_kwargs=model_kwargs,
                               draws=draws, chains=chains, tune=tune, seed=seed,
                               data={"shards": [[[f.name, f.stat().st_size] for f in g]
                                                for g in groups], "columns": columns,
                                     "init": _digest(warm),
                                     "known": None if known is None else
                                     hashlib.sha256(known.to_json().encode()).hexdigest()})
    trace = sample_sharded(call, items=items, annotators=annotators, classes=classes,
                           half=half, draws=draws, chains=chains, seed=seed, tune=tune,
                           checkpoints=checkpoints, init=warm,
                           max_seconds=max_seconds)
    if known is not None:
        code = np.full(items.size, -1, dtype=np.int64)
        code[pd.Index(items).get_indexer(known.index)] = pd.Index(classes).get_indexer(known)
        trace["constant_data"] = trace["constant_data"].to_dataset().assign(
            known_class=xr.DataArray(code, dims="item", coords={"item": items}))
    return trace


def _known_classes(known, classes) -> pd.Series:
    """``known`` (as :meth:`~plausible.data.Labels.with_known` takes it) as a Series of class
    ids by item id (:func:`~plausible.data.labels.known_pairs`); ``ValueError`` naming an item
    whose class is missing or not one of ``classes``."""
    pairs = known_pairs(known)
    outside = pd.Index(classes).get_indexer(pairs.to_numpy()) < 0
    if outside.any():
        k = int(np.argmax(outside))
        raise ValueError(f"known: item {fmt(pairs.index[k])}: class {fmt(pairs.iloc[k])} is not "
                         f"one of the classes ({', '.join(map(str, classes[:20]))})")
    return pairs


def _digest(warm) -> str | None:
    """What identifies a warm start's values in a run's store (None for a cold start)."""
    if warm is None:
        return None
    digest = hashlib.sha256()
    for values in warm:
        for name in sorted(values):
            digest.update(name.encode() + np.ascontiguousarray(values[name]).tobytes())
    return digest.hexdigest()


__all__ = ["PartitionSource", "global_half", "partition_files", "runs_on_cluster",
           "sample_on_cluster", "sample_partitions", "warm_values"]
