"""The runs of :func:`~plausible.aggregation.aggregate` whose items are in shards: shards of
independent items, each sampled once into a Zarr store (:func:`plausible.distributed.
run_shards`), and the one chain over shards of a label model whose items share its annotators'
parameters (:mod:`plausible.distributed.cluster_chain`), from labels in memory or from a partitioned
Parquet dataset its shards read. Either runs in this process or on Dask workers
(:func:`connected`); :func:`run_sharded` picks the one the model can take."""

from __future__ import annotations

import contextlib
import json
import shutil
import tempfile
import weakref
from pathlib import Path

from plausible import distributed, models
from plausible.aggregation.persistence import with_known
from plausible.aggregation.result import Aggregation
from plausible.inference.draws import SHARDS, resolve_draws


@contextlib.contextmanager
def connected(client, workers: int | None):
    """``(client, its number of workers)`` for a run: ``client`` itself (a
    ``dask.distributed.Client``, left open), a client of the scheduler at the address
    ``client``, or of a new local cluster of ``workers`` workers
    (:func:`plausible.distributed.connect`; both closed when the block ends); ``(None, 0)``
    without either (the shards in this process)."""
    if client is not None and workers is not None:
        raise ValueError("give client= (a Dask client or a scheduler's address) or workers= (a "
                         "local cluster of that many workers), not both")
    if client is None and workers is None:
        yield None, 0
        return
    if client is None or isinstance(client, str):
        client = distributed.connect(client, workers=2 if workers is None else workers)
        try:
            yield client, len(client.scheduler_info()["workers"])
        finally:
            client.close()
        return
    yield client, len(client.scheduler_info()["workers"])


def run_sharded(fitted, name: str, *, draws, chains: int, seed, max_seconds, init, known,
                client, workers, store, shard_size: int, progressbar: bool, default: bool,
                options: dict, columns: dict) -> Aggregation:
    """``name`` fitted to ``fitted`` with its items in shards: the chain over shards when
    ``fitted`` is a partitioned dataset (a folder's path) or the model's chain runs over
    shards on a cluster (``client`` or ``workers``); shards of independent items otherwise
    (in this process without a cluster). ``ValueError`` for a model that can take neither
    route, or a request its route cannot take (a warm start of shards of items, a chain's
    checkpoints without a cluster). ``columns``: a partitioned dataset's item, annotator and
    label column names."""
    partitioned = isinstance(fitted, Path)
    on_cluster = client is not None or workers is not None
    entry = models.entry(name)
    if partitioned or (on_cluster and distributed.runs_on_cluster(name)):
        return _chain(fitted, name, draws=draws, chains=chains, seed=seed,
                      max_seconds=max_seconds, init=init, known=known, client=client,
                      workers=workers, store=store, default=default, options=options,
                      columns=columns)
    if not entry.item_independent:
        if distributed.runs_on_cluster(name):
            raise ValueError(f"{name!r} runs one chain over shards on a cluster: add client= or "
                             "workers= (--scheduler, --workers), and store= (--store) is where "
                             "its chain is checkpointed; store= alone samples shards of "
                             "independent items in this process")
        shardable = ", ".join(models.available().query("item_independent").index)
        chained = ", ".join(e for e in models.available(entry.data).index
                            if distributed.runs_on_cluster(e))
        raise ValueError(f"{name!r} runs in one process only: its items are not independent, so "
                         f"it cannot be sampled in shards of items (store=, client=, workers=; "
                         f"--store, --scheduler, --workers; models that can: {shardable}), and "
                         "its chain does not run over shards on a cluster"
                         + (f" (models whose chain does: {chained})" if chained else ""))
    if init is not None:
        raise ValueError("init= (--init) continues a chain, in one process or over shards on a "
                         "cluster; shards of independent items (store=, client=, workers=) "
                         "start afresh")
    return _item_shards(fitted, name, draws=draws, chains=chains, seed=seed, client=client,
                        workers=workers, store=store, shard_size=shard_size,
                        progressbar=progressbar, default=default, options=options)


def _chain(fitted, name: str, *, draws, chains, seed, max_seconds, init, known, client,
           workers, store, default, options, columns) -> Aggregation:
    """The chain over shards (:func:`plausible.distributed.sample_on_cluster`, or
    :func:`~plausible.distributed.sample_partitions` for a partitioned dataset, whose
    result holds no copy of the labels), the number of Dask workers in the posterior's
    ``dask_workers`` attribute."""
    draws, _ = resolve_draws(draws)
    warm = None if init is None else init.trace
    with connected(client, workers) as (client, n_workers):
        if isinstance(fitted, Path):
            trace = distributed.sample_partitions(
                fitted, name, client=client, draws=draws, chains=chains, seed=seed,
                model_kwargs=options, store=store, max_seconds=max_seconds, init=warm,
                known=known, **columns)
            data = None
        else:
            trace = with_known(distributed.sample_on_cluster(
                fitted, name, client=client, draws=draws, chains=chains, seed=seed,
                model_kwargs=options, store=store, max_seconds=max_seconds, init=warm), fitted)
            data = fitted
    if n_workers:
        trace["posterior"].attrs["dask_workers"] = n_workers
    return Aggregation(trace=trace, model=name, data=data, default=default, options=options)


def _item_shards(fitted, name: str, *, draws, chains, seed, client, workers, store,
                 shard_size, progressbar, default, options) -> Aggregation:
    """Shards of independent items sampled into ``store``
    (:func:`plausible.distributed.run_shards`; without a store, a temporary folder removed
    with the result), the result on their lazily opened trace; the posterior's ``shards``
    attribute says (JSON) how many shards there were, which were already complete, sampled
    now and retried, and ``dask_workers`` how many workers sampled them."""
    draws, _ = resolve_draws(draws, route=SHARDS)
    folder = tempfile.mkdtemp(prefix="plausible-shards-") if store is None else store
    try:
        with connected(client, workers) as (client, n_workers), \
                _shard_progress(progressbar) as progress:
            report = distributed.run_shards(
                fitted, folder, model=name, model_kwargs=options, shard_size=shard_size,
                draws=draws, chains=chains, seed=seed, client=client, progress=progress)
        trace = distributed.open_trace(folder)
    except BaseException:
        if store is None:
            shutil.rmtree(folder, ignore_errors=True)
        raise
    trace["posterior"].attrs["shards"] = json.dumps({
        "n_shards": report.n_shards, "skipped": report.skipped, "sampled": report.completed,
        "retried": sorted(report.retried)})
    if n_workers:
        trace["posterior"].attrs["dask_workers"] = n_workers
    result = Aggregation(trace=trace, model=name, data=fitted, default=default, options=options)
    if store is None:  # the draws stay on disk while the result can read them
        weakref.finalize(result, shutil.rmtree, folder, ignore_errors=True)
    return result


@contextlib.contextmanager
def _shard_progress(shown: bool):
    """A callback ``progress(done, total)`` that moves a bar of the shards on a terminal
    (stderr) when ``shown``; None (nothing shown) elsewhere."""
    from rich.console import Console
    from rich.progress import Progress

    console = Console(stderr=True)
    if not shown or not console.is_terminal:
        yield None
        return
    with Progress(console=console, transient=True) as bar:
        task = bar.add_task("shards", total=None)
        yield lambda done, total: bar.update(task, completed=done, total=total)


__all__ = ["connected", "run_sharded"]
