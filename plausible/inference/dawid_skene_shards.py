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
from dataclasses import dataclass, field

import numpy as np
import xarray as xr

from plausible.data.labels import Labels
from plausible.inference import dawid_skene_kernel as kernel_code
from plausible.inference.chain_checkpoints import (
    ChainCheckpoints,
    generator_state,
    read_arrays,
    set_generator_state,
    shard_path,
    write_arrays,
)
from plausible.inference.dawid_skene_sampler import DEFAULT_TUNE, Design
from plausible.inference.driver import AUTO, sample_kernel
from plausible.inference.sampling import no_variable_fails
from plausible.inference.kernel import Variable
from plausible.metrics.accumulated import (
    GROUP,
    MOMENTS,
    Accumulator,
    split_rhat,
    summary_dataset,
)

SUMMARIES = tuple(f"plausibility_{name}" for name in (*MOMENTS, "first_half_draws"))
"""The per-chain statistics a chain's shards summarise its kept sweeps in
(:meth:`~plausible.metrics.accumulated.Accumulator.moments`)."""


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
        design = self.design
        rng = np.random.default_rng(np.random.SeedSequence(key, spawn_key=(self.index,)))
        return self._hold(key, design.label_share_classes(rng), rng,
                          Accumulator(1, design.n_items, design.n_classes))

    def _hold(self, key: int, z: np.ndarray, rng, summary: Accumulator):
        """Keep chain ``key`` at classes ``z`` with its generator and summaries (its counts
        taken from ``z``); returns the counts and class counts."""
        design, C = self.design, self.design.n_classes
        chain = _Chain(z, np.zeros((design.n_annotators * C, C), dtype=np.int64),
                       np.zeros(C, dtype=np.int64), rng,
                       np.zeros((design.n_items, C), dtype=self.dtype), summary)
        kernel_code.count_labels(design.offsets, design.code, z, chain.counts,
                                 chain.class_counts, 0, design.n_items)
        with self.lock:
            self.chains[key] = chain
        return chain.counts.copy(), chain.class_counts.copy()

    def sweep(self, key: int, table: np.ndarray, log_pi: np.ndarray, keep: bool,
              split: bool = False):
        """One sweep of chain ``key``'s classes given ``table (annotator * C + label,
        class)`` and ``log_pi (class,)``; ``keep``: fold the class posteriors into the
        summaries (``split``: as the first draw of the chain's second half). Returns the
        counts, class counts, items whose class changed and the sweep's seconds here."""
        began = time.perf_counter()
        design, chain = self.design, self.chains[key]
        u = chain.rng.random(design.n_items)
        store = chain.buffer if keep else chain.buffer[:0]
        changed = kernel_code.class_sweep(design.offsets, design.code, table, log_pi,
                                          self.gamma, u, chain.z, chain.counts,
                                          chain.class_counts, store, 0, design.n_items)
        if keep:
            if split:
                chain.summary.split(0)
            chain.summary.add(0, chain.buffer)
        return (chain.counts.copy(), chain.class_counts.copy(), int(changed),
                time.perf_counter() - began)

    def save_chain(self, key: int, directory: str) -> None:
        """Write chain ``key``'s classes, generator and summaries into ``directory``, this
        shard's part of a checkpoint (:mod:`plausible.inference.chain_checkpoints`)."""
        chain = self.chains[key]
        write_arrays(shard_path(directory, self.index),
                     {"z": chain.z, **chain.summary.state(0)},
                     {"rng": generator_state(chain.rng)})

    def load_chain(self, key: int, directory: str) -> tuple[np.ndarray, np.ndarray]:
        """Chain ``key`` as :meth:`save_chain` wrote it into ``directory`` (replacing its
        state here, if any). Returns its counts and class counts, as :meth:`start_chain`."""
        arrays, attrs = read_arrays(shard_path(directory, self.index))
        rng = np.random.default_rng()
        set_generator_state(rng, attrs["rng"])
        summary = Accumulator(1, self.design.n_items, self.design.n_classes)
        summary.restore(0, {name: value for name, value in arrays.items() if name != "z"})
        return self._hold(key, arrays["z"].astype(np.int64), rng, summary)

    def max_split_rhat(self, keys: list[int]) -> float:
        """The largest split R-hat over this shard's items and classes of chains ``keys``
        from their summaries so far (:func:`~plausible.metrics.accumulated.split_rhat`; NaN
        when none is computed)."""
        summaries = [self.chains[key].summary for key in keys]
        rhat = split_rhat(summary_dataset([s.moments(0) for s in summaries],
                                          [int(s.draws[0]) for s in summaries]))
        return float("nan") if rhat is None else float(rhat.max(skipna=True))

    def finish_chain(self, key: int) -> tuple[np.ndarray, dict]:
        """Chain ``key``'s last classes ``(item,)``, posterior mean ``(item, class)`` and top-1
        shares of its kept sweeps; the chain is released."""
        with self.lock:
            chain = self.chains.pop(key)
        return chain.z, chain.summary.moments(0)


class ShardLost(RuntimeError):
    """A shard's worker was lost during a call: the shards must be rebuilt (``call.rebuild()``)
    and the chains restored."""


RHAT_MAX = 1.01
"""``draws="auto"`` extends the chains until the plausibilities' split R-hat is at most this
(and the parameters pass the convergence report)."""

MAX_RECOVERIES = 3
"""Rebuilds of the shards one step of a chain may need before the run gives up."""


@dataclass(eq=False)
class ShardedState:
    """A chain's global half: its key and generator, the summed counts, the member's state and
    table, log pi, and the seconds its slowest shard spent per sweep (summed).

    Bookkeeping for faults: ``sweep`` and ``kept`` count the sweeps and kept draws so far;
    ``base`` is the sweep a restore starts from (the last checkpoint, or 0: the chain's
    start), with the generator state ``base_rng`` and global state ``base_globals`` there;
    ``flags`` say which sweeps since ``base`` were kept (a replay folds the same ones into
    the shards' summaries); ``pending`` holds the kept draws since the last checkpoint.
    A chain restored from a checkpoint of ``resume_at`` sweeps replays its first
    ``resume_at`` sweeps from ``stored`` (the store's draws) without sampling."""

    key: int
    rng: np.random.Generator
    counts: np.ndarray
    class_counts: np.ndarray
    member_state: object
    table: np.ndarray
    log_pi: np.ndarray
    shard_seconds: float = 0.0
    sweep: int = 0
    kept: int = 0
    base: int = 0
    base_rng: str = ""
    base_globals: tuple = ()
    flags: list = field(default_factory=list)
    pending: dict = field(default_factory=dict)
    resume_at: int = 0
    stored: dict = field(default_factory=dict)
    stored_kept: int = 0


class ShardedKernel:
    """The scan of the module docstring for a member of the family (``member``, class
    concentration ``a``, reliability ``gamma``) over the shards ``call`` reaches:
    ``call(method, *args)`` runs a :class:`Shard` method on every shard and returns their
    results in shard order, raising :class:`ShardLost` when a shard's worker was lost, after
    which ``call.rebuild()`` builds the shards afresh. ``n_annotators``, ``n_classes``,
    ``n_items``: the run's. The shards mark where each chain's second half begins
    (``split_at``, set by the driver), for the split R-hat of
    :func:`~plausible.metrics.accumulated.split_rhat`.

    **Faults.** ``checkpoints`` (a :class:`~plausible.inference.chain_checkpoints.
    ChainCheckpoints`) writes both halves of every chain every ``checkpoints.every`` sweeps; a
    chain whose key has a checkpoint there starts from it (a killed driver's run, re-run
    with the same seed). When a shard is lost, the shards are rebuilt and every chain started
    so far is restored (from its last checkpoint, or from its start without a store) and its
    sweeps since then replayed with the same random numbers, so the draws are those of a run
    without the fault."""

    name = "plausible.inference.dawid_skene_shards"
    default_tune = DEFAULT_TUNE
    default_thin = 1

    def __init__(self, call: Callable, member, a, gamma: float, *, n_annotators: int,
                 n_classes: int, n_items: int, checkpoints: ChainCheckpoints | None = None):
        self.call, self.member, self.gamma = call, member, float(gamma)
        self.checkpoints = checkpoints
        self.split_at = None  # set by the driver before each block (the kernel protocol)
        self.a = np.asarray(a, dtype=np.float64)
        J, C, N = n_annotators, n_classes, n_items
        self.shape = (J, C)
        self.variables = {
            "class_prior": Variable(("class",), (C,)),
            **{name: Variable(dims, shape) for name, (dims, shape) in member.stored(J, C).items()}}
        self.stats = {"classes_changed": Variable((), (), np.int64)}
        self.chain_stats = {"final_class": Variable(("item",), (N,), np.int64),
                            **{name: Variable(("item", "class"), (N, C))
                               for name in SUMMARIES[:-1]},
                            SUMMARIES[-1]: Variable((), (), np.int64),
                            "shard_seconds": Variable((), ())}
        self.started: list[ShardedState] = []
        self.recoveries = 0

    def _fresh_globals(self) -> tuple:
        J, C = self.shape
        return self.member.start(J, C), np.zeros((J * C, C)), np.zeros(C)

    def start(self, rng):
        """A chain keyed by a draw from its generator, started on every shard, or restored
        from its last checkpoint in the store."""
        key = int(rng.integers(2**63))
        state = ShardedState(key, rng, None, None, *self._fresh_globals(),
                             base_rng=generator_state(rng))
        state.base_globals = _copied((state.member_state, state.table, state.log_pi))
        latest = self.checkpoints.latest(key) if self.checkpoints is not None else None
        if latest is not None:
            state.base = state.resume_at = latest["sweep"]
            state.stored_kept, state.base_rng = latest["kept"], latest["rng"]
            state.base_globals = self.checkpoints.global_state(latest)
            state.stored = self.checkpoints.draws(key, latest["kept"])
        self._recovering(lambda: self._restore(state))
        self.started.append(state)
        return state

    def _restore(self, state) -> None:
        """The chain at its ``base``: the shards' part (from the checkpoint, or started
        afresh), the global state and, when it is live, the generator."""
        if state.base == 0:
            results = self.call("start_chain", state.key)
        else:
            directory = self.checkpoints.latest(state.key)["directory"]
            results = self.call("load_chain", state.key, directory)
        state.counts, state.class_counts = _summed(results)
        state.member_state, state.table, state.log_pi = _copied(state.base_globals)
        if state.sweep >= state.resume_at:
            set_generator_state(state.rng, state.base_rng)

    def _recovering(self, step):
        """Run ``step()``; when a shard is lost, rebuild the shards, bring every chain
        started so far back to where it was, and run it again."""
        for attempt in range(MAX_RECOVERIES + 1):
            try:
                return step()
            except ShardLost:
                if attempt == MAX_RECOVERIES:
                    raise
                self.recoveries += 1
                self.call.rebuild()
                for state in self.started:
                    self._restore(state)
                    for keep, split in state.flags:
                        self._advance(state, keep, split)

    def _advance(self, state, keep: bool, split: bool) -> list:
        """One sweep of the chain: the global half given the summed counts, then every
        shard's classes. Returns the shards' results."""
        rng = state.rng
        state.member_state = self.member.draw(rng, state.counts[None], self.gamma, state.table,
                                              state.member_state)
        kernel_code.draw_class_prior(rng, state.class_counts[None], self.a, state.log_pi,
                                     np.empty(0))
        results = self.call("sweep", state.key, state.table, state.log_pi, keep, split)
        state.counts, state.class_counts = _summed(r[:2] for r in results)
        return results

    def sweep(self, rng, state, out):
        """One sweep (:meth:`_advance`), recovered from a lost shard; a sweep before the
        chain's checkpoint only writes the stored draw."""
        if state.sweep < state.resume_at:
            if out is not None:
                for name, view in out.items():
                    view[...] = state.stored[name][state.kept]
                state.kept += 1
            state.sweep += 1
            if state.sweep == state.resume_at:
                if state.kept != state.stored_kept:
                    raise ValueError(f"{self.checkpoints.store}: its checkpoint of chain "
                                     f"{state.key} after {state.resume_at} sweeps holds "
                                     f"{state.stored_kept} kept draws, this run would have "
                                     f"kept {state.kept}: it was written with another "
                                     "warm-up or thinning")
                set_generator_state(rng, state.base_rng)
                state.stored = {}
            return state
        keep = out is not None
        split = keep and state.kept == self.split_at
        results = self._recovering(lambda: self._advance(state, keep, split))
        state.shard_seconds += max(r[3] for r in results)
        state.sweep += 1
        state.flags.append((keep, split))
        if keep:
            pi = np.exp(state.log_pi)
            out["class_prior"][...] = pi
            values = self.member.values(state.table, state.member_state)
            if hasattr(self.member, "from_class_prior"):  # a member that names the prior
                values.update(self.member.from_class_prior(pi))
            for name, value in values.items():
                out[name][...] = value
            out["classes_changed"][...] = sum(r[2] for r in results)
            state.kept += 1
            if self.checkpoints is not None:
                for name, view in out.items():
                    state.pending.setdefault(name, []).append(np.array(view))
        if self.checkpoints is not None and state.sweep % self.checkpoints.every == 0:
            self._recovering(lambda: self._checkpoint(state))
        return state

    def _checkpoint(self, state) -> None:
        """Both halves of the chain after its sweeps so far, into the store; the new base."""
        directory = self.checkpoints.directory(state.key, state.sweep)
        self.call("save_chain", state.key, str(directory))
        self.checkpoints.commit(state.key, state.sweep, directory, rng=state.rng,
                                member_state=state.member_state, table=state.table,
                                log_pi=state.log_pi, kept=state.kept, pending=state.pending)
        state.base, state.base_rng = state.sweep, generator_state(state.rng)
        state.base_globals = _copied((state.member_state, state.table, state.log_pi))
        state.flags, state.pending = [], {}

    def max_split_rhat(self) -> float:
        """The largest split R-hat of the plausibilities of the chains started so far, from
        their summaries on the shards (each shard reduces its own items; NaN when none is
        computed)."""
        keys = [state.key for state in self.started]
        results = self._recovering(lambda: self.call("max_split_rhat", keys))
        values = [value for value in results if not np.isnan(value)]
        return max(values) if values else float("nan")

    def finish(self, state, out):
        """The chain's last classes and its shards' summaries, in shard order."""
        parts = self._recovering(lambda: self.call("finish_chain", state.key))
        self.started = [s for s in self.started if s is not state]
        out["final_class"][...] = np.concatenate([p[0] for p in parts])
        for name, moment in zip(SUMMARIES, (*MOMENTS, "first_half_draws")):
            if moment == "first_half_draws":  # the same on every shard
                out[name][...] = parts[0][1][moment]
            else:
                out[name][...] = np.concatenate([p[1][moment] for p in parts])
        out["shard_seconds"][...] = state.shard_seconds


def sample_sharded(call: Callable, *, items, annotators, classes, member,
                   class_concentration, reliability: float, draws: int | str = 1000,
                   chains: int = 4, seed=None, tune: int | None = None, until=None,
                   max_seconds: float | None = None, max_draws: int | None = None,
                   checkpoints: ChainCheckpoints | None = None) -> xr.DataTree:
    """Sample :class:`ShardedKernel` over the shards ``call`` reaches (their ``items`` in shard
    order, the run's ``annotators`` and ``classes``) with the driver
    (:func:`~plausible.inference.driver.sample_kernel`; ``draws="auto"`` with ``until``,
    ``max_seconds``, ``max_draws``; by default ``until`` the parameters pass the convergence
    report and the plausibilities' split R-hat, reduced on each shard, is at most
    :data:`RHAT_MAX`). Chains run one after another (their shards are busy with
    one sweep at a time). The trace: posterior ``class_prior`` and the member's variables;
    ``plausibility_summary``; ``sample_stats`` ``classes_changed``, ``final_class (chain,
    item)`` and ``shard_seconds (chain,)`` (the slowest shard's time per sweep, summed: the
    rest of ``sampling_seconds`` is the driver's draws and the round trips); the posterior's
    ``shard_recoveries`` attribute counts the rebuilds after lost shards. ``checkpoints``: as
    :class:`ShardedKernel`."""
    kernel = ShardedKernel(call, member, class_concentration, reliability,
                           n_annotators=len(annotators), n_classes=len(classes),
                           n_items=len(items), checkpoints=checkpoints)
    if draws == AUTO and until is None:
        def until(values):  # the parameters pass the report, the plausibilities split R-hat
            return no_variable_fails(values) and not kernel.max_split_rhat() > RHAT_MAX
    constant = xr.Dataset({"reliability": float(reliability)},
                          coords={"class": classes, "label_class": classes})
    trace = sample_kernel(kernel, draws=draws, chains=chains, seed=seed, tune=tune, cores=1,
                          until=until, max_seconds=max_seconds, max_draws=max_draws,
                          coords={"item": items, "class": classes, "annotator": annotators,
                                  "label_class": classes},
                          constant_data=constant,
                          attrs={"computed_when_read": "plausibility"})
    stats = trace["sample_stats"].to_dataset()
    n_draws = trace["posterior"].sizes["draw"]
    summary = summary_dataset(
        [{moment: stats[name].values[c] for name, moment in
          zip(SUMMARIES, (*MOMENTS, "first_half_draws"))} for c in range(chains)],
        [n_draws] * chains, {"item": items, "class": classes})
    trace["sample_stats"] = xr.DataTree(stats.drop_vars(list(SUMMARIES)))
    trace[GROUP] = xr.DataTree(summary)
    trace["posterior"].attrs["shard_recoveries"] = kernel.recoveries
    return trace


def _copied(values: tuple) -> tuple:
    """Copies of a chain's global state ``(member state, table, log pi)``."""
    member_state, *arrays = values
    if isinstance(member_state, tuple):
        member_state = tuple(np.array(a) for a in member_state)
    elif member_state is not None:
        member_state = np.array(member_state)
    return (member_state, *(np.array(a) for a in arrays))


def _summed(results) -> tuple[np.ndarray, np.ndarray]:
    """Counts and class counts summed over the shards, in shard order."""
    counts = class_counts = None
    for shard_counts, shard_class_counts in results:
        counts = shard_counts.copy() if counts is None else counts + shard_counts
        class_counts = (shard_class_counts.copy() if class_counts is None
                        else class_counts + shard_class_counts)
    return counts, class_counts


__all__ = ["SUMMARIES", "Shard", "ShardLost", "ShardedKernel", "sample_sharded", "shard_ranges"]
