"""The Dawid–Skene family's Gibbs scan over shards of items: the chain a cluster runs.

The joint scan of :mod:`plausible.inference.dawid_skene_sampler` splits into a global half
and an item half that meet only through count tensors:

1. **driver** (the global parameters): given the summed counts ``n[j C + x, c]`` (annotator
   ``j``'s label ``x`` on items of class ``c``) and ``m_c`` (items of class ``c``), the
   member's annotator parameters (:mod:`plausible.inference.dawid_skene_members`, exact) and
   ``pi ~ Dirichlet(a + m)``, from the chain's generator; they go to every shard as the
   table ``T[j C + x, c] = log theta_j[c, x]`` and ``log pi``;
2. **shards** (:class:`Shard`, each a contiguous block of items with its labels and classes):
   every item's class ``z_i ~ softmax(log pi + gamma L[i])`` from the shard's own generator,
   then the shard's counts, returned to the driver, which sums them (over shards, in shard
   order) for the next sweep.

:class:`ShardedKernel` is that scan as a kernel of the one driver
(:mod:`plausible.inference.driver`: chains, warm-up, thinning, ``draws="auto"``): a kept sweep
records ``pi`` and the member's parameters; each shard folds its items' class posteriors
``p_i`` of that sweep into its summaries (posterior mean and top-1 counts), so no per-draw,
per-item array exists anywhere; at the end of a chain its summaries and last classes come
back as per-chain statistics, and :func:`sample_sharded` moves the summaries into the
trace's ``plausibility_summary`` group (:mod:`plausible.metrics.accumulated`).

**Seeds.** A chain starts by drawing a 63-bit key from its generator; shard ``s`` draws that
chain's classes from ``SeedSequence(key, spawn_key=(s,))``. So the draws depend on the seed
and the shard layout only, not on where a shard runs (a thread, another process, a Dask
worker). This is a different Markov chain from the one-process sampler's (which draws every
item's uniform from its chain's generator), with the same stationary distribution.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import xarray as xr

from plausible.data.labels import Labels
from plausible.inference import dawid_skene_kernel as kernel_code
from plausible.inference.dawid_skene_sampler import DEFAULT_TUNE, Design
from plausible.inference.driver import sample_kernel
from plausible.inference.kernel import Variable
from plausible.metrics.accumulated import GROUP, Accumulator

SUMMARIES = ("plausibility_mean", "plausibility_top1_share")
"""The per-chain statistics a chain's shards summarise its kept sweeps in."""


def shard_ranges(labels: Labels, n_shards: int) -> list[tuple[int, int]]:
    """``n_shards`` contiguous item ranges with about equal numbers of labels."""
    counts = np.bincount(labels.item, minlength=labels.n_items)
    offsets = np.r_[0, np.cumsum(counts)]
    targets = np.linspace(0, offsets[-1], n_shards + 1)[1:-1]
    bounds = np.unique(np.r_[0, np.searchsorted(offsets, targets), labels.n_items])
    return list(zip(bounds[:-1].tolist(), bounds[1:].tolist()))


@dataclass
class _Chain:
    """One chain's part of a shard: classes, counts, generator, the buffer a kept sweep writes
    its class posteriors into, and their summaries."""

    z: np.ndarray
    counts: np.ndarray
    class_counts: np.ndarray
    rng: np.random.Generator
    buffer: np.ndarray
    summary: Accumulator


class Shard:
    """One block of items: its labels (``labels``, whose annotators and classes are the run's,
    indexed globally; or a source whose ``load()`` reads them where the shard is built, as
    ``(design, item ids)``) and,
    per chain (by the chain's key), its classes, counts, generator and the summaries of its
    kept sweeps. ``index``: the shard's place in the layout (its seeds).

    Runs wherever it is built (in-process, or as a Dask actor); every method takes and
    returns numbers and numpy arrays only."""

    def __init__(self, labels, index: int, gamma: float, dtype=np.float32):
        if isinstance(labels, Labels):
            self.design, self.items = Design(labels), labels.items
        else:
            self.design, self.items = labels.load()
        self.index, self.gamma, self.dtype = int(index), float(gamma), dtype
        self.chains: dict[int, _Chain] = {}
        self.lock = threading.Lock()

    def item_ids(self) -> np.ndarray:
        """The shard's item ids, in its order."""
        return self.items

    def start_chain(self, key: int) -> tuple[np.ndarray, np.ndarray]:
        """A new chain (``key``): each item's class drawn from its label shares. Returns its
        counts ``(annotator * C + label, class)`` and class counts ``(class,)``."""
        design, C = self.design, self.design.n_classes
        rng = np.random.default_rng(np.random.SeedSequence(key, spawn_key=(self.index,)))
        z = design.label_share_classes(rng)
        chain = _Chain(z, np.zeros((design.n_annotators * C, C), dtype=np.int64),
                       np.zeros(C, dtype=np.int64), rng,
                       np.zeros((design.n_items, C), dtype=self.dtype),
                       Accumulator(1, design.n_items, C))
        kernel_code.count_labels(design.offsets, design.code, z, chain.counts,
                                 chain.class_counts, 0, design.n_items)
        with self.lock:
            self.chains[key] = chain
        return chain.counts.copy(), chain.class_counts.copy()

    def sweep(self, key: int, table: np.ndarray, log_pi: np.ndarray, keep: bool):
        """One sweep of chain ``key``'s classes given ``table (annotator * C + label,
        class)`` and ``log_pi (class,)``; ``keep``: fold the class posteriors into the
        summaries. Returns the counts, class counts, items whose class changed and the
        sweep's seconds here."""
        began = time.perf_counter()
        design, chain = self.design, self.chains[key]
        u = chain.rng.random(design.n_items)
        store = chain.buffer if keep else chain.buffer[:0]
        changed = kernel_code.class_sweep(design.offsets, design.code, table, log_pi,
                                          self.gamma, u, chain.z, chain.counts,
                                          chain.class_counts, store, 0, design.n_items)
        if keep:
            chain.summary.add(0, chain.buffer)
        return (chain.counts.copy(), chain.class_counts.copy(), int(changed),
                time.perf_counter() - began)

    def finish_chain(self, key: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Chain ``key``'s last classes ``(item,)``, posterior mean ``(item, class)`` and top-1
        shares of its kept sweeps; the chain is released."""
        with self.lock:
            chain = self.chains.pop(key)
        summary = chain.summary
        n = max(int(summary.draws[0]), 1)
        return chain.z, summary.total[0] / n, summary.top[0] / n


@dataclass
class ShardedState:
    """A chain's global half: its key, the summed counts, the member's state and table, log
    pi, and the seconds its slowest shard spent per sweep (summed)."""

    key: int
    counts: np.ndarray
    class_counts: np.ndarray
    member_state: object
    table: np.ndarray
    log_pi: np.ndarray
    shard_seconds: float = 0.0


class ShardedKernel:
    """The scan of the module docstring for a member of the family (``member``, class
    concentration ``a``, reliability ``gamma``) over the shards ``call`` reaches:
    ``call(method, *args)`` runs a :class:`Shard` method on every shard and returns their
    results in shard order. ``n_annotators``, ``n_classes``, ``n_items``: the run's."""

    name = "plausible.inference.dawid_skene_shards"
    default_tune = DEFAULT_TUNE
    default_thin = 1

    def __init__(self, call: Callable, member, a, gamma: float, *, n_annotators: int,
                 n_classes: int, n_items: int):
        self.call, self.member, self.gamma = call, member, float(gamma)
        self.a = np.asarray(a, dtype=np.float64)
        J, C, N = n_annotators, n_classes, n_items
        self.shape = (J, C)
        self.variables = {
            "class_prior": Variable(("class",), (C,)),
            **{name: Variable(dims, shape) for name, (dims, shape) in member.stored(J, C).items()}}
        self.stats = {"classes_changed": Variable((), (), np.int64)}
        self.chain_stats = {"final_class": Variable(("item",), (N,), np.int64),
                            SUMMARIES[0]: Variable(("item", "class"), (N, C)),
                            SUMMARIES[1]: Variable(("item", "class"), (N, C)),
                            "shard_seconds": Variable((), ())}

    def start(self, rng):
        """A chain keyed by a draw from its generator, started on every shard."""
        key = int(rng.integers(2**63))
        counts, class_counts = _summed(self.call("start_chain", key))
        J, C = self.shape
        return ShardedState(key, counts, class_counts, self.member.start(J, C),
                            np.zeros((J * C, C)), np.zeros(C))

    def sweep(self, rng, state, out):
        """The global half given the summed counts, then every shard's classes."""
        state.member_state = self.member.draw(rng, state.counts[None], self.gamma, state.table,
                                              state.member_state)
        kernel_code.draw_class_prior(rng, state.class_counts[None], self.a, state.log_pi,
                                     np.empty(0))
        results = self.call("sweep", state.key, state.table, state.log_pi, out is not None)
        state.counts, state.class_counts = _summed(r[:2] for r in results)
        state.shard_seconds += max(r[3] for r in results)
        if out is not None:
            out["class_prior"][...] = np.exp(state.log_pi)
            for name, value in self.member.values(state.table, state.member_state).items():
                out[name][...] = value
            out["classes_changed"][...] = sum(r[2] for r in results)
        return state

    def finish(self, state, out):
        """The chain's last classes and its shards' summaries, in shard order."""
        parts = self.call("finish_chain", state.key)
        out["final_class"][...] = np.concatenate([p[0] for p in parts])
        out[SUMMARIES[0]][...] = np.concatenate([p[1] for p in parts])
        out[SUMMARIES[1]][...] = np.concatenate([p[2] for p in parts])
        out["shard_seconds"][...] = state.shard_seconds


def sample_sharded(call: Callable, *, items, annotators, classes, member,
                   class_concentration, reliability: float, draws: int | str = 1000,
                   chains: int = 4, seed=None, tune: int | None = None, until=None,
                   max_seconds: float | None = None, max_draws: int | None = None
                   ) -> xr.DataTree:
    """Sample :class:`ShardedKernel` over the shards ``call`` reaches (their ``items`` in shard
    order, the run's ``annotators`` and ``classes``) with the driver
    (:func:`~plausible.inference.driver.sample_kernel`; ``draws="auto"`` with ``until``,
    ``max_seconds``, ``max_draws``). Chains run one after another (their shards are busy with
    one sweep at a time). The trace: posterior ``class_prior`` and the member's variables;
    ``plausibility_summary``; ``sample_stats`` ``classes_changed``, ``final_class (chain,
    item)`` and ``shard_seconds (chain,)`` (the slowest shard's time per sweep, summed: the
    rest of ``sampling_seconds`` is the driver's draws and the round trips)."""
    kernel = ShardedKernel(call, member, class_concentration, reliability,
                           n_annotators=len(annotators), n_classes=len(classes),
                           n_items=len(items))
    constant = xr.Dataset({"reliability": float(reliability)},
                          coords={"class": classes, "label_class": classes})
    trace = sample_kernel(kernel, draws=draws, chains=chains, seed=seed, tune=tune, cores=1,
                          until=until, max_seconds=max_seconds, max_draws=max_draws,
                          coords={"item": items, "class": classes, "annotator": annotators,
                                  "label_class": classes},
                          constant_data=constant,
                          attrs={"computed_when_read": "plausibility"})
    stats = trace["sample_stats"].to_dataset()
    summary = xr.Dataset({"mean": stats[SUMMARIES[0]], "top1_share": stats[SUMMARIES[1]]},
                         attrs={"draws": trace["posterior"].sizes["draw"]})
    trace["sample_stats"] = xr.DataTree(stats.drop_vars(list(SUMMARIES)))
    trace[GROUP] = xr.DataTree(summary)
    return trace


def _summed(results) -> tuple[np.ndarray, np.ndarray]:
    """Counts and class counts summed over the shards, in shard order."""
    counts = class_counts = None
    for shard_counts, shard_class_counts in results:
        counts = shard_counts.copy() if counts is None else counts + shard_counts
        class_counts = (shard_class_counts.copy() if class_counts is None
                        else class_counts + shard_class_counts)
    return counts, class_counts


__all__ = ["SUMMARIES", "Shard", "ShardedKernel", "sample_sharded", "shard_ranges"]
