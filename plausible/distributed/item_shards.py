"""Sharded sampling on Dask with posteriors in a Zarr store, and shard-wise metric reduction.

Items are conditionally independent given fixed hyper-parameters in every model the registry
marks ``item_independent`` (Dirichlet, PrIRN, Plackett–Luce, Normal–Inverse-Gamma with fixed or
empirical-Bayes hyper-parameters), so the items are cut into contiguous shards of
``shard_size`` items (``data.subset``); shard ``s`` is sampled with the ordinary
:func:`plausible.sample` on the model the registry builds for it, seeded by the ``s``-th child
of ``np.random.SeedSequence(seed).spawn(n_shards)``. Options that depend on all items are
fixed first, on all items (the registry's ``shard_options``: an empirical-Bayes prior is
fitted once, not per shard), and the storage (dense or candidate form) is chosen once for
the whole run, so every shard stores the same variables.

Store layout (a directory ``store``)::

    store/run.json                 the run: model, options, data hash, seed (checked on resume)
    store/shard-00000.zarr         trace of shard 0: its plausibilities (posterior) and, in
                                   candidate form, its candidate layout (constant_data)
    store/shard-00001.zarr         ...
    store/.tmp-shard-00001-<uuid>  a shard being written (never read, removed on resume)

A shard is written to a temporary name and renamed to ``shard-NNNNN.zarr`` only after its
Zarr write finished: the rename is the completion marker, so nothing partial is ever read
as complete. A re-run with the same store skips completed shards (resume) and refuses a
store whose ``run.json`` differs from the requested run.

Which equality holds
--------------------
* :func:`run_shards` with ``client=None`` (in-process, shards sequential) and with any Dask
  client give **bit-identical** draws, because each shard's draws depend only on its data
  and its seed; :func:`sample_shards_in_memory` gives the same draws without a store.
* A sharded run is **not** bit-identical to one ``plausible.sample`` over all items (the RNG
  streams differ); it is equal in distribution, item by item (tested statistically).
"""

from __future__ import annotations

import gc
import os
import resource
import shutil
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import xarray as xr

from plausible.inference.driver import assemble
from plausible.distributed.run_stores import check_or_write_run, read_run
from plausible.inference.sampling import sample
from plausible.metrics import annotation_certainty, ua_topk_accuracy
from plausible.metrics.chunks import chunk_steps
from plausible.metrics.storage import (
    CANDIDATE,
    CANDIDATE_CLASS,
    CANDIDATES,
    CLASS,
    ITEM,
    N_POOLED,
    NAME,
    POOLED,
    PADDING,
    Layout,
    storage_form,
)
from plausible.models.registry import entry

FORMAT = "plausible-shards/2"


def shard_bounds(n_items: int, shard_size: int) -> list[tuple[int, int]]:
    """``[(start, stop), ...]`` of contiguous item shards of at most ``shard_size`` items."""
    if isinstance(shard_size, bool) or not isinstance(shard_size, (int, np.integer)) or shard_size < 1:
        raise ValueError(f"shard_size must be a whole number >= 1, got {shard_size!r}")
    return [(a, min(a + shard_size, n_items)) for a in range(0, n_items, shard_size)]


def shard_seeds(seed, n_shards: int) -> list[int]:
    """One integer seed per shard: ``SeedSequence(seed).spawn(n_shards)[s]``."""
    return [int(child.generate_state(1)[0]) for child in np.random.SeedSequence(seed).spawn(n_shards)]


def _shard_name(index: int) -> str:
    return f"shard-{index:05d}.zarr"


def run_options(data, model: str, model_kwargs: dict | None) -> dict:
    """The options every shard of ``model`` is built with: ``model_kwargs`` with the options
    that depend on all items fixed on all items (``ValueError`` for a model or options whose
    items are not conditionally independent)."""
    spec = entry(model)
    if not spec.item_independent:
        raise ValueError(f"model {model!r} shares parameters across items (annotators): its items "
                         "are not independent, so it cannot be sampled in shards")
    options = dict(model_kwargs or {})
    return spec.shard_options(data, **options) if spec.shard_options else options


def run_storage(data, model: str, storage: str) -> str:
    """``storage`` of every shard: ``"auto"`` decided once, on all items (candidate form when
    the model has one and it holds fewer values than the dense plausibilities)."""
    if storage != "auto":
        return storage
    width = entry(model).candidate_width
    if width is None:
        return "dense"
    return "candidate" if width(data) + 1 < data.n_classes else "dense"


# PyMC toggles global pytensor flags while it builds a model (``change_flags(cxx="")`` in
# its shape rewrites), which is not thread-safe: two shards sampled at once in threads of one
# process (a threaded worker, ``processes=False``) can leave the C compiler switched off for
# the rest of the process, and every later model then runs in pytensor's slow Python VM.
# Shards in one process are therefore sampled one at a time; processes give the parallelism.
_SAMPLE_LOCK = threading.Lock()


def _sample_shard(data, model: str, options: dict, storage: str, draws: int, tune, chains: int,
                  seed, dtype) -> xr.DataTree:
    """The plausibilities of one shard: a DataTree with the posterior's plausibility variables
    (dense, or candidate form with its constant_data)."""
    with _SAMPLE_LOCK:
        trace = sample(entry(model).build(data, **options), draws=draws, tune=tune, chains=chains,
                       seed=seed, storage=storage, progressbar=False, check_convergence=False)
    posterior = trace["posterior"].to_dataset()
    if storage_form(trace) == "dense":
        groups = {"posterior": posterior[[NAME]]}
        if dtype is not None:
            groups["posterior"][NAME] = groups["posterior"][NAME].astype(dtype)
    else:
        full = trace["constant_data"].to_dataset()
        constant = full[[CANDIDATE_CLASS, N_POOLED]].assign_coords({CLASS: full[CLASS]})
        groups = {"posterior": posterior[[CANDIDATES, POOLED]], "constant_data": constant}
    if "log_likelihood" in trace.children:
        groups["log_likelihood"] = trace["log_likelihood"].to_dataset()
    groups["sample_stats"] = xr.Dataset(attrs=trace["sample_stats"].attrs) \
        if "sample_stats" in trace.children else xr.Dataset()
    result = assemble(**{name: ds.load() for name, ds in groups.items()})
    # The DataTree is a reference cycle: without a collection here the shard's full trace
    # outlives the task, and a worker's memory grows with the shards it has run.
    del trace
    gc.collect()
    return result


def _peak_rss_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux: KiB


def _write_shard(store: str, index: int, data, model, options, storage, draws, tune, chains, seed,
                 dtype):
    """Sample shard ``index`` and write it to ``store/shard-NNNNN.zarr`` (tmp name, then rename).

    Returns ``{"shard", "seconds", "peak_rss", "pid"}``. Runs on a Dask worker or in-process.
    """
    start = time.perf_counter()
    final = Path(store) / _shard_name(index)
    if final.exists():  # completed meanwhile (e.g. a retry after a lost result)
        return {"shard": index, "seconds": 0.0, "peak_rss": _peak_rss_bytes(), "pid": os.getpid()}
    tree = _sample_shard(data, model, options, storage, draws, tune, chains, seed, dtype)
    posterior = tree["posterior"].to_dataset()
    # Zarr chunks (1 chain, draw block, all shard items, ...), the draw block sized like the
    # metrics' blocks (plausible.metrics.chunks.chunk_steps), so each block a metric streams
    # reads whole Zarr chunks
    n_chains, n_draws, n_items = (posterior.sizes[d] for d in ("chain", "draw", ITEM))
    width = (posterior.sizes[CANDIDATE] + 1) if CANDIDATE in posterior.sizes else posterior.sizes["class"]
    draw_block, _ = chunk_steps(Layout(("chain", "draw"), (n_chains, n_draws), n_items, 1), width)
    encoding = {f"/{group}": {name: {"chunks": (1, draw_block, *var.shape[2:])}
                              for name, var in tree[group].to_dataset().data_vars.items()}
                for group in ("posterior", "log_likelihood") if group in tree.children}
    tmp = Path(store) / f".tmp-{final.stem}-{uuid.uuid4().hex}"
    tree.to_zarr(tmp, mode="w", encoding=encoding, consolidated=False, zarr_format=3)
    try:
        os.rename(tmp, final)  # the completion marker: atomic on one filesystem
    except OSError:
        shutil.rmtree(tmp, ignore_errors=True)
        if not final.exists():
            raise
    return {"shard": index, "seconds": time.perf_counter() - start,
            "peak_rss": _peak_rss_bytes(), "pid": os.getpid()}


@dataclass
class ShardReport:
    """What :func:`run_shards` did: shards ``skipped`` (already complete), ``completed`` now,
    ``retried`` ``{shard: [error texts of failed attempts]}``, ``failed`` ``{shard: error}``,
    per-shard ``stats`` (seconds, peak RSS of the executing process, pid) and wall ``seconds``."""

    n_shards: int
    skipped: list[int] = field(default_factory=list)
    completed: list[int] = field(default_factory=list)
    retried: dict[int, list[str]] = field(default_factory=dict)
    failed: dict[int, str] = field(default_factory=dict)
    stats: dict[int, dict] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        """No shard failed."""
        return not self.failed


class ShardFailure(RuntimeError):
    """Raised when shards still fail after their retries; ``.report`` says which and why.
    Completed shards stay in the store; re-running resumes from them."""

    def __init__(self, report: ShardReport):
        self.report = report
        lines = "; ".join(f"shard {s}: {e}" for s, e in sorted(report.failed.items()))
        super().__init__(f"{len(report.failed)} of {report.n_shards} shards failed after retries "
                         f"({lines}); completed shards are kept, re-run to resume")


def distributed_package():
    """The ``distributed`` package, which the ``cluster`` extra installs
    (``pip install 'plausible[cluster]'``); an ``ImportError`` saying so where it is
    missing. Everything else (shards in-process, the Zarr store) runs without it."""
    try:
        import distributed
    except ImportError:
        raise ImportError("running on a Dask cluster needs the distributed package: "
                          "pip install 'plausible[cluster]'") from None
    return distributed


def connect(scheduler: str | None = None, workers: int = 2, threads_per_worker: int = 1,
            processes: bool = True, memory_limit="4GiB", timeout: float = 10.0):
    """A ``dask.distributed.Client``: to ``scheduler`` (an address such as
    ``tcp://host:8786``) or, by default, to a new ``LocalCluster`` of ``workers`` workers.

    Raises ``ValueError`` naming the address when no scheduler answers within ``timeout``.
    """
    distributed = distributed_package()
    Client, LocalCluster = distributed.Client, distributed.LocalCluster
    if scheduler:
        try:
            return Client(scheduler, timeout=timeout)
        except (OSError, TimeoutError, ValueError) as err:
            raise ValueError(f"cannot reach a Dask scheduler at {scheduler!r}: {err}") from err
    if isinstance(workers, bool) or not isinstance(workers, (int, np.integer)) or workers < 1:
        raise ValueError(f"workers must be a whole number >= 1, got {workers!r}")
    cluster = LocalCluster(n_workers=workers, threads_per_worker=threads_per_worker,
                           processes=processes, memory_limit=memory_limit,
                           dashboard_address=":0")  # a free port: never clashes with another cluster
    return Client(cluster)


def run_shards(
    data,
    store,
    *,
    model: str = "dirichlet",
    model_kwargs: dict | None = None,
    storage: str = "auto",
    shard_size: int = 10_000,
    draws: int = 1000,
    tune: int | None = None,
    chains: int = 4,
    seed: int = 0,
    dtype: str | None = None,
    client=None,
    retries: int = 2,
    progress: Callable[[int, int], None] | None = None,
) -> ShardReport:
    """Sample ``data`` shard by shard into the Zarr ``store``.

    Parameters
    ----------
    data : Votes, Rankings or Ratings
        The annotations; shards are contiguous item ranges of ``shard_size``
        (``data.subset``).
    store : path
        Directory for ``run.json`` and one Zarr store per shard (see module docstring).
    model, model_kwargs
        A model of the registry (:func:`plausible.models.available`) whose items are
        independent, and its builder's options (e.g. ``{"reliability": 20}``).
    storage : {"auto", "dense", "candidate"}
        As in :func:`plausible.sample`, decided once for the whole run.
    draws, tune, chains, seed
        As in :func:`plausible.sample`; shard ``s`` is sampled with ``shard_seeds(seed)[s]``.
    dtype
        Store dense draws as this dtype (e.g. ``"float32"`` halves the store); ``None`` keeps
        the sampled float64. Candidate form is float32 already.
    client
        A ``dask.distributed.Client`` (see :func:`connect`); ``None`` runs the shards
        sequentially in this process with identical results.
    retries
        Failed shards are resubmitted up to ``retries`` times; each failed attempt is in
        ``report.retried``. Shards failing every attempt raise :class:`ShardFailure`.
    progress
        Called as ``progress(done, total)`` after every shard (skipped shards count as done).

    Returns
    -------
    ShardReport
    """
    start = time.perf_counter()
    store = Path(store)
    options = run_options(data, model, model_kwargs)
    storage = run_storage(data, model, storage)
    bounds = shard_bounds(data.n_items, shard_size)
    seeds = shard_seeds(seed, len(bounds))
    config = {
        "format": FORMAT, "model": model, "options": options, "storage": storage,
        "n_items": int(data.n_items), "data_sha256": data.content_hash,
        "shard_size": int(shard_size), "n_shards": len(bounds), "draws": int(draws),
        "tune": tune, "chains": int(chains), "seed": seed, "dtype": dtype,
    }
    check_or_write_run(store, config)
    for stale in store.glob(".tmp-shard-*"):  # partial writes of a crashed run
        shutil.rmtree(stale, ignore_errors=True)

    report = ShardReport(n_shards=len(bounds))
    todo = []
    for index in range(len(bounds)):
        (report.skipped if (store / _shard_name(index)).exists() else todo).append(index)

    def args(index):
        a, b = bounds[index]
        return (str(store), index, data.subset(slice(a, b)), model, options, storage, draws,
                tune, chains, seeds[index], dtype)

    def done():
        if progress is not None:
            progress(len(report.skipped) + len(report.completed) + len(report.failed),
                     report.n_shards)

    done()
    if client is None:
        for index in todo:
            for _ in range(retries + 1):
                try:
                    report.stats[index] = _write_shard(*args(index))
                    report.completed.append(index)
                    break
                except Exception as err:  # noqa: BLE001 - reported, retried
                    report.retried.setdefault(index, []).append(repr(err))
            else:
                report.failed[index] = report.retried[index][-1]
            done()
    else:
        as_completed = distributed_package().as_completed

        attempts = {}
        futures = {}
        for index in todo:
            fut = client.submit(_write_shard, *args(index), key=f"shard-{index}-{uuid.uuid4().hex}",
                                pure=False)
            futures[fut] = index
            attempts[index] = 1
        pending = as_completed(list(futures))
        for fut in pending:
            index = futures.pop(fut)
            try:
                report.stats[index] = fut.result()
                report.completed.append(index)
                done()
            except Exception as err:  # noqa: BLE001 - reported, retried
                report.retried.setdefault(index, []).append(repr(err))
                if attempts[index] <= retries:
                    attempts[index] += 1
                    new = client.submit(_write_shard, *args(index),
                                        key=f"shard-{index}-{uuid.uuid4().hex}", pure=False)
                    futures[new] = index
                    pending.add(new)
                else:
                    report.failed[index] = repr(err)
                    done()
    report.completed.sort()
    for index in list(report.retried):
        if index in report.failed:
            report.retried[index] = report.retried[index][:-1]
    report.seconds = time.perf_counter() - start
    if report.failed:
        raise ShardFailure(report)
    return report


def open_shard(store, index: int) -> xr.DataTree:
    """The lazy trace of one complete shard (dask arrays over its Zarr chunks)."""
    path = Path(store) / _shard_name(index)
    if not path.exists():
        raise ValueError(f"shard {index} of {store} is not complete")
    return xr.open_datatree(path, engine="zarr", chunks={}, consolidated=False)


def _concat(parts: list[xr.DataTree], storage: str) -> xr.DataTree:
    """One trace from shard traces, concatenated along ``item`` (candidate slots padded to the
    widest shard); the pointwise log-likelihood too (along ``rating`` for ratings), and ``sample_stats`` keeps the shards'
    attributes (exact draws say so)."""
    posteriors = [p["posterior"].to_dataset() for p in parts]
    groups = {"sample_stats": xr.Dataset(attrs=parts[0]["sample_stats"].attrs)
              if "sample_stats" in parts[0].children else xr.Dataset()}
    if all("log_likelihood" in p.children for p in parts):
        pointwise = [p["log_likelihood"].to_dataset() for p in parts]
        along = "rating" if "rating" in pointwise[0].dims else ITEM  # ratings: per rating
        groups["log_likelihood"] = xr.concat(pointwise, dim=along, join="exact")
    if storage == "dense":
        posterior = xr.concat(posteriors, dim=ITEM, join="exact") if len(parts) > 1 else posteriors[0]
        return assemble(posterior, **groups)
    constants = [p["constant_data"].to_dataset() for p in parts]
    posterior = xr.concat(posteriors, dim=ITEM, join="outer", fill_value={CANDIDATES: 0.0}) \
        if len(parts) > 1 else posteriors[0]
    constant = xr.concat(constants, dim=ITEM, join="outer", fill_value={CANDIDATE_CLASS: PADDING},
                         data_vars="all", coords="different", compat="equals") \
        if len(parts) > 1 else constants[0]
    return assemble(posterior, constant_data=constant, **groups)


def open_trace(store) -> xr.DataTree:
    """The lazily loaded trace of a complete store: a DataTree whose ``posterior`` holds the
    dask-backed plausibilities of every item (dense, or candidate form with its
    ``constant_data``), dask chunks = the Zarr chunks.

    Raises ``ValueError`` when the store has no ``run.json`` or shards are missing.
    """
    config = read_run(store)
    missing = [s for s in range(config["n_shards"]) if not (Path(store) / _shard_name(s)).exists()]
    if missing:
        raise ValueError(f"store {store} is incomplete: shards {missing[:10]} missing; re-run to resume")
    trace = _concat([open_shard(store, s) for s in range(config["n_shards"])], config["storage"])
    trace["posterior"].attrs.update({"shard_store": str(store), "seed": config["seed"]})
    return trace


def sample_shards_in_memory(data, *, model="dirichlet", model_kwargs=None, storage="auto",
                            shard_size=10_000, draws=1000, tune=None, chains=4, seed=0,
                            dtype=None) -> xr.DataTree:
    """The single-process reference: the same shards and seeds as :func:`run_shards`,
    sampled here and concatenated in memory (no store, no Dask)."""
    options = run_options(data, model, model_kwargs)
    storage = run_storage(data, model, storage)
    bounds = shard_bounds(data.n_items, shard_size)
    seeds = shard_seeds(seed, len(bounds))
    return _concat([_sample_shard(data.subset(slice(a, b)), model, options, storage, draws, tune,
                                  chains, s, dtype) for (a, b), s in zip(bounds, seeds)], storage)


def _shard_summary(store: str, index: int, scores, ks, tops):
    """Per-shard reduction: certainty per item and UA top-k hits summed over items per sample.

    The shard is read from Zarr once and held in memory while its metrics run (no more than
    sampling it took); reading it lazily would decompress it again for every metric. The
    DataTree is dropped right after (a reference cycle: without a collection each loaded shard
    would stay alive until the next garbage collection, and a worker would pile them up)."""
    trace = open_shard(store, index).load()
    out = {"shard": index}
    for top in tops:
        out[f"certainty_top{top}"] = annotation_certainty(trace, top=top).values
    if scores is not None:
        for k in ks:
            acc = ua_topk_accuracy(trace, scores, k=k)
            out[f"ua_top{k}_sum"] = acc.sum(ITEM).values  # (chain, draw)
            out["n_items"] = acc.sizes[ITEM]
    del trace
    gc.collect()
    out["peak_rss"] = _peak_rss_bytes()
    return out


def stream_metrics(store, *, scores=None, ks=(1,), tops=(1,), client=None) -> dict:
    """Certainty per item and UA top-k accuracy per sample, reduced shard by shard.

    Each task reads one shard and reduces it (one shard in memory at a time per worker,
    less than sampling the shard needed); only per-item certainties and per-sample sums
    travel back. ``scores`` is the classifier's ``(item, class)`` array for all items
    (sliced per shard).

    Returns ``{"certainty_top{j}": (item,) array, "ua_top{k}": (chain, draw) mean over items,
    "peak_rss": {shard: bytes}}``; equal to the metrics on the in-memory trace.
    """
    config = read_run(store)
    bounds = shard_bounds(config["n_items"], config["shard_size"])
    scores = None if scores is None else np.asarray(scores)

    def args(s):
        a, b = bounds[s]
        return (str(store), s, None if scores is None else scores[a:b], tuple(ks), tuple(tops))

    if client is None:
        results = [_shard_summary(*args(s)) for s in range(len(bounds))]
    else:
        futures = [client.submit(_shard_summary, *args(s), pure=False) for s in range(len(bounds))]
        results = client.gather(futures)
    results.sort(key=lambda r: r["shard"])
    out = {f"certainty_top{j}": np.concatenate([r[f"certainty_top{j}"] for r in results]) for j in tops}
    if scores is not None:
        n = sum(r["n_items"] for r in results)
        for k in ks:
            out[f"ua_top{k}"] = sum(r[f"ua_top{k}_sum"] for r in results) / n
    out["peak_rss"] = {r["shard"]: r["peak_rss"] for r in results}
    return out
