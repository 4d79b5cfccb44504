"""Sharded sampling on Dask with posteriors in a Zarr store, and shard-wise metric reduction.

Items are conditionally independent in the Dirichlet (and PrIRN, PL, NIG) models, so the
items are cut into contiguous shards of ``shard_size`` items; shard ``s`` is sampled with the
ordinary :func:`plausible.sample` on its own sub-model, seeded by the ``s``-th child of
``np.random.SeedSequence(seed).spawn(n_shards)``.

Store layout (a directory ``store``)::

    store/run.json                 config + seed of the run (checked on resume)
    store/shard-00000.zarr         posterior of shard 0: ``plausibility (chain, draw, item, class)``
    store/shard-00001.zarr         ...
    store/.tmp-shard-00001-<uuid>  a shard being written (never read, removed on resume)

A shard is written to a temporary name and renamed to ``shard-NNNNN.zarr`` only after its
Zarr write finished: the rename is the completion marker, so nothing partial is ever read
as complete. A re-run with the same store skips completed shards (resume) and refuses a
store whose ``run.json`` differs from the requested run.

Which equality holds
--------------------
* :func:`run_shards` with ``client=None`` (in-process, shards sequential) and with any Dask
  client give **bit-identical** draws, because each shard's draws depend only on its votes
  and its seed; :func:`sample_shards_in_memory` gives the same draws without a store.
* A sharded run is **not** bit-identical to one ``plausible.sample`` over all items (the RNG
  streams differ); it is equal in distribution, item by item (tested statistically).
"""

from __future__ import annotations

import gc
import hashlib
import json
import os
import resource
import shutil
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import xarray as xr

from plausible.data.votes import Votes
from plausible.inference.sampling import sample
from plausible.metrics import annotation_certainty, ua_topk_accuracy
from plausible.metrics.options import OPTIONS
from plausible.models import dirichlet

RUN_FILE = "run.json"
FORMAT = "plausible-shards/1"


def build_dirichlet(votes, **kwargs):
    """Default model builder: :func:`plausible.models.dirichlet.build`."""
    return dirichlet.build(votes, **kwargs)


def shard_bounds(n_items: int, shard_size: int) -> list[tuple[int, int]]:
    """``[(start, stop), ...]`` of contiguous item shards of at most ``shard_size`` items."""
    if shard_size < 1:
        raise ValueError(f"shard_size must be >= 1, got {shard_size}")
    return [(a, min(a + shard_size, n_items)) for a in range(0, n_items, shard_size)]


def shard_seeds(seed, n_shards: int) -> list[int]:
    """One integer seed per shard: ``SeedSequence(seed).spawn(n_shards)[s]``."""
    return [int(child.generate_state(1)[0]) for child in np.random.SeedSequence(seed).spawn(n_shards)]


def _shard_name(index: int) -> str:
    return f"shard-{index:05d}.zarr"


def _votes_digest(votes) -> str:
    h = hashlib.sha256()
    h.update(np.ascontiguousarray(votes.counts).tobytes())
    h.update(repr(votes.counts.shape).encode())
    h.update("\x00".join(map(str, votes.items)).encode())
    h.update("\x00".join(map(str, votes.classes)).encode())
    return h.hexdigest()


def _sub_votes(votes, start: int, stop: int):
    return Votes.from_counts(votes.counts[start:stop], items=votes.items[start:stop], classes=votes.classes)


# PyMC toggles global pytensor flags while it builds a model (``change_flags(cxx="")`` in
# its shape rewrites), which is not thread-safe: two shards sampled at once in threads of one
# process (a threaded worker, ``processes=False``) can leave the C compiler switched off for
# the rest of the process, and every later model then runs in pytensor's slow Python VM.
# Shards in one process are therefore sampled one at a time; processes give the parallelism.
_SAMPLE_LOCK = threading.Lock()


def _sample_shard(votes, build, build_kwargs, draws, chains, seed, dtype):
    """Plausibility draws of one shard: Dataset ``plausibility (chain, draw, item, class)``."""
    with _SAMPLE_LOCK:
        model = build(votes, **build_kwargs)
        # only the plausibilities are recorded: PyMC would also keep the transformed value
        # variables (e.g. the simplex coordinates), nearly doubling the shard's memory
        trace = sample(model, draws=draws, chains=chains, seed=seed, progressbar=False,
                       check_convergence=False, var_names=["plausibility"])
    ds = trace["posterior"].to_dataset()[["plausibility"]]
    if dtype is not None:
        ds["plausibility"] = ds["plausibility"].astype(dtype)
    # The DataTree is a reference cycle: without a collection here the shard's full-precision
    # trace outlives the task, and a worker's memory grows with the shards it has run.
    del trace, model
    gc.collect()
    return ds


def _peak_rss_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux: KiB


def _write_shard(store: str, index: int, votes, build, build_kwargs, draws, chains, seed, dtype):
    """Sample shard ``index`` and write it to ``store/shard-NNNNN.zarr`` (tmp name, then rename).

    Returns ``{"shard", "seconds", "peak_rss", "pid"}``. Runs on a Dask worker or in-process.
    """
    start = time.perf_counter()
    final = Path(store) / _shard_name(index)
    if final.exists():  # completed meanwhile (e.g. a retry after a lost result)
        return {"shard": index, "seconds": 0.0, "peak_rss": _peak_rss_bytes(), "pid": os.getpid()}
    ds = _sample_shard(votes, build, build_kwargs, draws, chains, seed, dtype)
    tmp = Path(store) / f".tmp-{final.stem}-{uuid.uuid4().hex}"
    # Zarr chunks (1 chain, draw block, all shard items, classes), the draw block sized like
    # the metrics' chunks (plausible.metrics.chunks.chunk_steps), so each streamed metric
    # chunk reads exactly one Zarr chunk, and no chunk exceeds ``chunk_elements`` values
    _, n_draws, n_items, n_classes = ds["plausibility"].shape
    draw_block = max(1, min(n_draws, OPTIONS["chunk_elements"] // max(1, n_items * n_classes)))
    encoding = {"plausibility": {"chunks": (1, draw_block, n_items, n_classes)}}
    ds.to_zarr(tmp, mode="w", encoding=encoding, consolidated=False, zarr_format=3)
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
        return not self.failed


class ShardFailure(RuntimeError):
    """Raised when shards still fail after their retries; ``.report`` says which and why.
    Completed shards stay in the store; re-running resumes from them."""

    def __init__(self, report: ShardReport):
        self.report = report
        lines = "; ".join(f"shard {s}: {e}" for s, e in sorted(report.failed.items()))
        super().__init__(f"{len(report.failed)} of {report.n_shards} shards failed after retries "
                         f"({lines}); completed shards are kept, re-run to resume")


def _check_or_write_config(store: Path, config: dict) -> None:
    store.mkdir(parents=True, exist_ok=True)
    path = store / RUN_FILE
    if path.exists():
        existing = json.loads(path.read_text())
        if existing != config:
            diff = sorted(k for k in set(existing) | set(config) if existing.get(k) != config.get(k))
            raise ValueError(
                f"store {store} belongs to another run (differs in {diff}); "
                "use a new --store path or delete this one"
            )
        return
    others = [p.name for p in store.iterdir() if p.name.startswith("shard-")]
    if others:
        raise ValueError(f"store {store} holds shards but no {RUN_FILE}; refusing to mix runs")
    tmp = store / f".{RUN_FILE}.{uuid.uuid4().hex}"
    tmp.write_text(json.dumps(config, indent=1, sort_keys=True))
    os.replace(tmp, path)


def connect(scheduler: str | None = None, workers: int = 2, threads_per_worker: int = 1,
            processes: bool = True, memory_limit="4GiB", timeout: float = 10.0):
    """A ``dask.distributed.Client``: to ``scheduler`` (an address such as
    ``tcp://host:8786``) or, by default, to a new ``LocalCluster`` of ``workers`` workers.

    Raises ``ValueError`` naming the address when no scheduler answers within ``timeout``.
    """
    from distributed import Client, LocalCluster

    if scheduler:
        try:
            return Client(scheduler, timeout=timeout)
        except (OSError, TimeoutError, ValueError) as err:
            raise ValueError(f"cannot reach a Dask scheduler at {scheduler!r}: {err}") from err
    cluster = LocalCluster(n_workers=workers, threads_per_worker=threads_per_worker,
                           processes=processes, memory_limit=memory_limit,
                           dashboard_address=":0")  # a free port: never clashes with another cluster
    return Client(cluster)


def run_shards(
    votes,
    store,
    *,
    shard_size: int = 10_000,
    draws: int = 1000,
    chains: int = 4,
    seed: int = 0,
    build=build_dirichlet,
    build_kwargs: dict | None = None,
    dtype: str | None = None,
    client=None,
    retries: int = 2,
) -> ShardReport:
    """Sample ``votes`` shard by shard into the Zarr ``store``.

    Parameters
    ----------
    votes : plausible.data.Votes
        ``(item, class)`` counts; shards are contiguous item ranges of ``shard_size``.
    store : path
        Directory for ``run.json`` and one Zarr store per shard (see module docstring).
    draws, chains, seed
        As in :func:`plausible.sample`; shard ``s`` is sampled with ``shard_seeds(seed)[s]``.
    build, build_kwargs
        Module-level (picklable) ``build(votes, **build_kwargs) -> pm.Model``.
    dtype
        Store the draws as this dtype (e.g. ``"float32"`` halves the store); ``None`` keeps
        the sampled float64.
    client
        A ``dask.distributed.Client`` (see :func:`connect`); ``None`` runs the shards
        sequentially in this process with identical results.
    retries
        Failed shards are resubmitted up to ``retries`` times; each failed attempt is in
        ``report.retried``. Shards failing every attempt raise :class:`ShardFailure`.

    Returns
    -------
    ShardReport
    """
    start = time.perf_counter()
    build_kwargs = dict(build_kwargs or {})
    store = Path(store)
    bounds = shard_bounds(votes.n_items, shard_size)
    seeds = shard_seeds(seed, len(bounds))
    config = {
        "format": FORMAT, "n_items": int(votes.n_items), "n_classes": int(votes.n_classes),
        "votes_sha256": _votes_digest(votes), "shard_size": int(shard_size),
        "n_shards": len(bounds), "draws": int(draws), "chains": int(chains), "seed": seed,
        "build": f"{build.__module__}.{build.__qualname__}",
        "build_kwargs": {k: build_kwargs[k] for k in sorted(build_kwargs)},
        "dtype": dtype,
    }
    _check_or_write_config(store, json.loads(json.dumps(config)))
    for stale in store.glob(".tmp-shard-*"):  # partial writes of a crashed run
        shutil.rmtree(stale, ignore_errors=True)

    report = ShardReport(n_shards=len(bounds))
    todo = []
    for index, (a, b) in enumerate(bounds):
        if (store / _shard_name(index)).exists():
            report.skipped.append(index)
        else:
            todo.append(index)

    def args(index):
        a, b = bounds[index]
        return (str(store), index, _sub_votes(votes, a, b), build, build_kwargs, draws, chains,
                seeds[index], dtype)

    if client is None:
        for index in todo:
            for attempt in range(retries + 1):
                try:
                    report.stats[index] = _write_shard(*args(index))
                    report.completed.append(index)
                    break
                except Exception as err:  # noqa: BLE001 - reported, retried
                    report.retried.setdefault(index, []).append(repr(err))
            else:
                report.failed[index] = report.retried[index][-1]
    else:
        from distributed import as_completed

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
    report.completed.sort()
    for index in list(report.retried):
        if index in report.failed:
            report.retried[index] = report.retried[index][:-1]
    report.seconds = time.perf_counter() - start
    if report.failed:
        raise ShardFailure(report)
    return report


def open_trace(store) -> xr.DataTree:
    """The lazily loaded trace of a complete store: a DataTree whose ``posterior`` holds a
    dask-backed ``plausibility (chain, draw, item, class)``, dask chunks = the Zarr chunks
    (one chain x a block of draws x one shard's items x classes).

    Raises ``ValueError`` when the store has no ``run.json`` or shards are missing.
    """
    store = Path(store)
    if not (store / RUN_FILE).exists():
        raise ValueError(f"{store} is not a shard store (no {RUN_FILE})")
    config = json.loads((store / RUN_FILE).read_text())
    missing = [s for s in range(config["n_shards"]) if not (store / _shard_name(s)).exists()]
    if missing:
        raise ValueError(f"store {store} is incomplete: shards {missing[:10]} missing; re-run to resume")
    parts = [xr.open_zarr(store / _shard_name(s), chunks={}, consolidated=False)
             for s in range(config["n_shards"])]
    posterior = xr.concat(parts, dim="item", data_vars="all", coords="different", compat="equals",
                          join="exact") if len(parts) > 1 else parts[0]
    posterior.attrs.update({"shard_store": str(store), "seed": config["seed"]})
    return xr.DataTree.from_dict({"posterior": posterior})


def _open_shard_posterior(store, index: int) -> xr.Dataset:
    path = Path(store) / _shard_name(index)
    if not path.exists():
        raise ValueError(f"shard {index} of {store} is not complete")
    return xr.open_zarr(path, chunks={}, consolidated=False)


def open_shard(store, index: int) -> xr.DataTree:
    """The lazy trace of one complete shard (same layout as :func:`open_trace`)."""
    return xr.DataTree.from_dict({"posterior": _open_shard_posterior(store, index)})


def sample_shards_in_memory(votes, *, shard_size=10_000, draws=1000, chains=4, seed=0,
                            build=build_dirichlet, build_kwargs=None, dtype=None) -> xr.DataTree:
    """The single-process reference: the same shards and seeds as :func:`run_shards`,
    sampled here and concatenated in memory (no store, no Dask)."""
    bounds = shard_bounds(votes.n_items, shard_size)
    seeds = shard_seeds(seed, len(bounds))
    parts = [_sample_shard(_sub_votes(votes, a, b), build, dict(build_kwargs or {}), draws, chains,
                           s, dtype) for (a, b), s in zip(bounds, seeds)]
    return xr.DataTree.from_dict({"posterior": xr.concat(parts, dim="item")})


def _shard_summary(store: str, index: int, scores, ks, tops):
    """Per-shard reduction: certainty per item and UA top-k hits summed over items per sample.

    The shard is read from Zarr once and held in memory while its metrics run (no more than
    sampling it took: the draws are stored as float32 or float64); reading it lazily would
    decompress it again for every metric. It is held as a plain Dataset, not a DataTree: a
    DataTree is a reference cycle, which would keep each loaded shard alive until the next
    garbage collection, so a worker would pile up shards."""
    plausibility = _open_shard_posterior(store, index).load()["plausibility"]
    out = {"shard": index}
    for top in tops:
        out[f"certainty_top{top}"] = annotation_certainty(plausibility, top=top).values
    if scores is not None:
        for k in ks:
            acc = ua_topk_accuracy(plausibility, scores, k=k)
            out[f"ua_top{k}_sum"] = acc.sum("item").values  # (chain, draw)
            out["n_items"] = acc.sizes["item"]
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
    store = Path(store)
    config = json.loads((store / RUN_FILE).read_text())
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
