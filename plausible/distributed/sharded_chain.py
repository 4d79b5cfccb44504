"""A Gibbs chain over shards of items: the driver's global half, the shards' item half.

The label models whose items share only global parameters (the annotators' and the class
prior) split their scan into two halves that meet through sums over items:

1. **driver** (a :class:`GlobalHalf`): given the statistics the shards returned, summed over
   shards in shard order, draw the global parameters exactly from the chain's generator and
   send the shards their ``message`` (the arrays their item half conditions on);
2. **shards** (:class:`ItemShard`, each a contiguous block of items with their labels and,
   per chain, their latent state and generator): update every item given the message,
   fold the kept sweeps' class posteriors into the shard's summaries, and return their
   statistics (count tensors, or sums over each annotator's labels) for the next sweep;
   a driver's draw may also ask the shards for more sums while it draws (rounds of a slice
   update).

Members: the Dawid–Skene family and annotator-beta
(:mod:`plausible.distributed.shards.dawid_skene`), GLAD and Su's model
(:mod:`plausible.distributed.shards.difficulty`).

:class:`ShardedKernel` is that scan as a kernel of the one driver
(:mod:`plausible.inference.driver`: chains, warm-up, thinning, ``draws="auto"``): a kept sweep
records the half's parameters; each shard folds its items' class posteriors ``p_i`` of that
sweep into its summaries (posterior mean and top-1 counts), so no per-draw, per-item array
exists anywhere; at the end of a chain its summaries and last classes come back as per-chain
statistics, and :func:`sample_sharded` moves the summaries into the trace's
``plausibility_summary`` group (:mod:`plausible.metrics.accumulated`).

**Seeds.** A chain starts by drawing a 63-bit key from its generator; shard ``s`` draws that
chain's items from ``SeedSequence(key, spawn_key=(s,))``. So the draws depend on the seed
and the shard layout only, not on where a shard runs (a thread, another process, a Dask
worker). Statistics are summed over shards in shard order, so floating-point sums too are
the same wherever the shards run.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import xarray as xr

from plausible.data.labels import Labels
from plausible.diagnostics.convergence import RHAT_MAX
from plausible.distributed.checkpoints import (
    ChainCheckpoints,
    generator_state,
    read_arrays,
    set_generator_state,
    shard_path,
    write_arrays,
)
from plausible.models.dawid_skene.sampler import Design
from plausible.inference.draws import resolve_draws
from plausible.inference.driver import AUTO, sample_kernel
from plausible.inference.kernel import Kernel, Variable
from plausible.inference.sampling import no_variable_fails
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
class ShardChain:
    """One chain's part of a shard: the items' classes, the generator, the buffer a kept
    sweep writes its class posteriors into, their summaries, and the member's item state
    (``state``: name -> array, saved in a checkpoint; ``derived``: what the member rebuilds
    from the classes and ``state``, e.g. count tensors)."""

    z: np.ndarray
    rng: np.random.Generator
    buffer: np.ndarray
    summary: Accumulator
    state: dict = field(default_factory=dict)
    derived: dict = field(default_factory=dict)


class ItemShard:
    """One block of items: its labels (``labels``, whose annotators and classes are the run's,
    indexed globally; or a source whose ``load()`` reads them where the shard is built, as
    ``(design, item ids)``) and, per chain (by the chain's key), a :class:`ShardChain`.
    ``index``: the shard's place in the layout (its seeds).

    Runs wherever it is built (in-process, or as a Dask actor); every method takes and
    returns numbers and numpy arrays only. A member implements ``_start(rng, init)`` (a new
    chain's classes and item state, warm from this shard's part of ``init`` when given), ``_restart(chain)`` (its ``derived`` part, from the
    classes and the item state), ``_sweep(chain, message, store, keep)`` (one sweep; the class
    posteriors into ``store`` when it has rows; returns the items whose class changed) and
    ``_statistics(chain)`` (what the driver sums)."""

    item_means: tuple[str, ...] = ()
    """Item-state arrays whose mean over the kept sweeps a finished chain returns."""

    def __init__(self, labels, index: int, dtype=np.float32):
        if isinstance(labels, Labels):
            self.design, self.items = Design(labels), labels.items
        else:
            self.design, self.items = labels.load()
        self.index, self.dtype = int(index), dtype
        self.chains: dict[int, ShardChain] = {}
        self.lock = threading.Lock()

    def item_ids(self) -> np.ndarray:
        """The shard's item ids, in its order."""
        return self.items

    def n_items(self) -> int:
        """The number of the shard's items."""
        return self.design.n_items

    def start_chain(self, key: int, init: dict | None = None) -> tuple:
        """A new chain (``key``) from its generator, or (``init``) warm: ``init["first"]
        (shard + 1,)`` the first item of every shard in the run's item order, and per-item
        arrays of the run's items (``final_class``, -1 where unknown; a member's item state)
        or others (the annotators' values), from which this shard takes its own. Returns the
        chain's statistics."""
        rng = np.random.default_rng(np.random.SeedSequence(key, spawn_key=(self.index,)))
        if init is not None:
            first, stop = init["first"][self.index], init["first"][self.index + 1]
            n_items = init["final_class"].size
            init = {name: value[first:stop] if value.shape[:1] == (n_items,) else value
                    for name, value in init.items() if name != "first"}
        z, state = self._start(rng, init)
        design = self.design
        return self._hold(key, ShardChain(z, rng, np.zeros((design.n_items, design.n_classes),
                                                             dtype=self.dtype),
                                          Accumulator(1, design.n_items, design.n_classes),
                                          state))

    def _hold(self, key: int, chain: ShardChain) -> tuple:
        """Keep chain ``key`` (its derived state rebuilt); returns its statistics."""
        chain.state.update({f"{name}_sum": np.zeros(self.design.n_items)
                            for name in self.item_means if f"{name}_sum" not in chain.state})
        self._restart(chain)
        with self.lock:
            self.chains[key] = chain
        return self._statistics(chain)

    def sweep(self, key: int, message: tuple, keep: bool, split: bool = False):
        """One sweep of chain ``key``'s items given the driver's ``message``; ``keep``: fold
        the class posteriors into the summaries (``split``: as the first draw of the chain's
        second half). Returns the statistics, the items whose class changed and the sweep's
        seconds here."""
        began = time.perf_counter()
        chain = self.chains[key]
        changed = self._sweep(chain, message, chain.buffer if keep else chain.buffer[:0], keep)
        if keep:
            if split:
                chain.summary.split(0)
            chain.summary.add(0, chain.buffer)
            for name in self.item_means:
                chain.state[f"{name}_sum"] += chain.state[name]
        return self._statistics(chain), int(changed), time.perf_counter() - began

    def save_chain(self, key: int, directory: str) -> None:
        """Write chain ``key``'s classes, item state, generator and summaries into
        ``directory``, this shard's part of a checkpoint
        (:mod:`plausible.distributed.checkpoints`)."""
        chain = self.chains[key]
        write_arrays(shard_path(directory, self.index),
                     {"z": chain.z, **chain.summary.state(0),
                      **{f"state_{name}": value for name, value in chain.state.items()}},
                     {"rng": generator_state(chain.rng)})

    def load_chain(self, key: int, directory: str) -> tuple:
        """Chain ``key`` as :meth:`save_chain` wrote it into ``directory`` (replacing its
        state here, if any). Returns its statistics, as :meth:`start_chain`."""
        arrays, attrs = read_arrays(shard_path(directory, self.index))
        rng = np.random.default_rng()
        set_generator_state(rng, attrs["rng"])
        design = self.design
        summary = Accumulator(1, design.n_items, design.n_classes)
        state = {name.removeprefix("state_"): value for name, value in arrays.items()
                 if name.startswith("state_")}
        summary.restore(0, {name: value for name, value in arrays.items()
                            if name != "z" and not name.startswith("state_")})
        return self._hold(key, ShardChain(arrays["z"].astype(np.int64), rng,
                                          np.zeros((design.n_items, design.n_classes),
                                                   dtype=self.dtype), summary, state))

    def max_split_rhat(self, keys: list[int]) -> float:
        """The largest split R-hat over this shard's items and classes of chains ``keys``
        from their summaries so far (:func:`~plausible.metrics.accumulated.split_rhat`; NaN
        when none is computed)."""
        summaries = [self.chains[key].summary for key in keys]
        rhat = split_rhat(summary_dataset([s.moments(0) for s in summaries],
                                          [int(s.draws[0]) for s in summaries]))
        return float("nan") if rhat is None else float(rhat.max(skipna=True))

    def finish_chain(self, key: int) -> tuple[np.ndarray, dict, dict]:
        """Chain ``key``'s last classes ``(item,)``, the summaries of its kept sweeps (posterior
        mean ``(item, class)``, top-1 shares, half-chain moments) and the means of its
        :attr:`item_means` over them; the chain is released."""
        with self.lock:
            chain = self.chains.pop(key)
        kept = max(int(chain.summary.draws[0]), 1)
        return chain.z, chain.summary.moments(0), {
            name: chain.state[f"{name}_sum"] / kept for name in self.item_means}


class GlobalHalf:
    """The driver's half of a chain over shards (module). A member sets :attr:`shard`
    (the :class:`ItemShard` class and its keyword options) and :attr:`reliability`, and
    implements ``variables(n_annotators, n_classes)`` (name -> :class:`~plausible.inference.
    kernel.Variable` recorded per kept sweep), ``start(n_annotators, n_classes, init)`` (a chain's
    first global state, a tuple of arrays or None; ``init``: a warm start's values, or None), ``draw(rng, statistics, state, ask,
    warm_up)`` (the next state given the shards' summed statistics; ``ask(method, *args)``
    runs a shard method for the chain on every shard and returns the results summed, for a
    draw that needs rounds of evaluations on the items as they are; ``warm_up``: the sweep
    is before the chain's first kept one, so the half may tune its moves, which must be fixed
    from then on), ``message(state)`` (what the shards
    receive) and ``values(state)`` (the recorded values)."""

    shard: tuple[type, dict]
    reliability: float
    item_means: dict[str, str] = {}
    """The shard's item means, by the name the trace gives them."""


class ShardLost(RuntimeError):
    """A shard's worker was lost during a call: the shards must be rebuilt (``call.rebuild()``)
    and the chains restored."""


MAX_RECOVERIES = 3
"""Rebuilds of the shards one step of a chain may need before the run gives up."""


@dataclass(eq=False)
class ShardedState:
    """A chain's global half: its key and generator, the summed statistics, the half's global
    state, and the seconds its slowest shard spent per sweep (summed).

    Bookkeeping for faults: ``sweep`` and ``kept`` count the sweeps and kept draws so far;
    ``base`` is the sweep a restore starts from (the last checkpoint, or 0: the chain's
    start), with the generator state ``base_rng`` and global state ``base_globals`` there;
    ``flags`` say which sweeps since ``base`` were kept, first of a half, or warm-up (a
    replay repeats them as they were); ``pending`` holds the kept draws since the last checkpoint.
    A chain restored from a checkpoint of ``resume_at`` sweeps replays its first
    ``resume_at`` sweeps from ``stored`` (the store's draws) without sampling. ``init``: a
    warm start's values, which the shards start from (again after a lost shard)."""

    key: int
    rng: np.random.Generator
    statistics: tuple
    globals: tuple
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
    init: dict | None = None


class ShardedKernel(Kernel):
    """The scan of the module docstring for a global half ``half`` (:class:`GlobalHalf`) over
    the shards ``call`` reaches: ``call(method, *args)`` runs an :class:`ItemShard` method on
    every shard and returns their results in shard order, raising :class:`ShardLost` when a
    shard's worker was lost, after which ``call.rebuild()`` builds the shards afresh.
    ``n_annotators``, ``n_classes``, ``n_items``: the run's. The shards mark where each
    chain's second half begins (``split_at``, set by the driver), for the split R-hat of
    :func:`~plausible.metrics.accumulated.split_rhat`.

    **Faults.** ``checkpoints`` (a :class:`~plausible.distributed.checkpoints.
    ChainCheckpoints`) writes both halves of every chain every ``checkpoints.every`` sweeps; a
    chain whose key has a checkpoint there starts from it (a killed driver's run, re-run
    with the same seed). When a shard is lost, the shards are rebuilt and every chain started
    so far is restored (from its last checkpoint, or from its start without a store) and its
    sweeps since then replayed with the same random numbers, so the draws are those of a run
    without the fault."""

    name = "plausible.distributed.sharded_chain"
    default_thin = 1

    def __init__(self, call: Callable, half: GlobalHalf, *, n_annotators: int,
                 n_classes: int, n_items: int, checkpoints: ChainCheckpoints | None = None):
        self.call, self.half = call, half
        self.default_tune = half.default_tune
        self.checkpoints = checkpoints
        J, C, N = n_annotators, n_classes, n_items
        self.shape = (J, C)
        self.variables = half.variables(J, C)
        self.stats = {"classes_changed": Variable((), (), np.int64)}
        self.chain_stats = {"final_class": Variable(("item",), (N,), np.int64),
                            **{name: Variable(("item", "class"), (N, C))
                               for name in SUMMARIES[:-1]},
                            SUMMARIES[-1]: Variable((), (), np.int64),
                            **{name: Variable(("item",), (N,)) for name in half.item_means},
                            "shard_seconds": Variable((), ())}
        self.started: list[ShardedState] = []
        self.recoveries = 0
        self.first = None  # each shard's first item, for a warm start

    def start(self, rng):
        """A chain keyed by a draw from its generator, started on every shard, or restored
        from its last checkpoint in the store."""
        return self._begin(rng, None)

    def resume(self, values, rng):
        """A warm start: as :meth:`start`, the shards' items from ``values`` (an earlier
        run's last state: ``final_class (item,)``, -1 for an item it did not have, and the
        half's other values) instead of their labels."""
        if self.first is None:
            self.first = np.r_[0, np.cumsum(self.call("n_items"))]
        return self._begin(rng, {"first": self.first, **values})

    def _begin(self, rng, init):
        key = int(rng.integers(2**63))
        state = ShardedState(key, rng, (), self.half.start(*self.shape, init),
                             base_rng=generator_state(rng), init=init)
        state.base_globals = _copied(state.globals)
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
            results = self.call("start_chain", state.key, state.init)
        else:
            directory = self.checkpoints.latest(state.key)["directory"]
            results = self.call("load_chain", state.key, directory)
        state.statistics = _summed(results)
        state.globals = _copied(state.base_globals)
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
                    for flags in state.flags:
                        self._advance(state, *flags)

    def _advance(self, state, keep: bool, split: bool, warm_up: bool) -> list:
        """One sweep of the chain: the global half given the summed statistics (``warm_up``:
        before the chain's first kept sweep, when the half may tune itself), then every
        shard's items. Returns the shards' results."""
        def ask(method, *args):  # a round of the driver's draw, summed over the shards
            return _summed(self.call(method, state.key, *args))

        state.globals = self.half.draw(state.rng, state.statistics, state.globals, ask,
                                       warm_up)
        results = self.call("sweep", state.key, self.half.message(state.globals), keep, split)
        state.statistics = _summed(r[0] for r in results)
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
        warm_up = not keep and state.kept == 0
        results = self._recovering(lambda: self._advance(state, keep, split, warm_up))
        state.shard_seconds += max(r[2] for r in results)
        state.sweep += 1
        state.flags.append((keep, split, warm_up))
        if keep:
            for name, value in self.half.values(state.globals).items():
                out[name][...] = value
            out["classes_changed"][...] = sum(r[1] for r in results)
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
                                global_state=state.globals, kept=state.kept,
                                pending=state.pending)
        state.base, state.base_rng = state.sweep, generator_state(state.rng)
        state.base_globals = _copied(state.globals)
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
        for name, shard_name in self.half.item_means.items():
            out[name][...] = np.concatenate([p[2][shard_name] for p in parts])
        out["shard_seconds"][...] = state.shard_seconds


def sample_sharded(call: Callable, *, items, annotators, classes, half: GlobalHalf,
                   draws: int | str = 1000, chains: int = 4, seed=None,
                   tune: int | None = None, until=None, max_seconds: float | None = None,
                   max_draws: int | None = None,
                   checkpoints: ChainCheckpoints | None = None, init=None) -> xr.DataTree:
    """Sample :class:`ShardedKernel` of ``half`` over the shards ``call`` reaches (their
    ``items`` in shard order, the run's ``annotators`` and ``classes``) with the driver
    (:func:`~plausible.inference.driver.sample_kernel`; ``draws`` as
    :func:`~plausible.inference.draws.resolve_draws` reads them, ``"auto"`` with ``until``,
    ``max_seconds``, ``max_draws``; by default ``until`` the parameters pass the convergence
    report and the plausibilities' split R-hat, reduced on each shard, is at most
    :data:`~plausible.diagnostics.convergence.RHAT_MAX`). Chains run one after another (their
    shards are busy with one sweep at a time). The trace: posterior, the half's variables;
    ``plausibility_summary``; ``sample_stats`` ``classes_changed``, ``final_class (chain,
    item)``, the half's item means ``(chain, item)`` and ``shard_seconds (chain,)`` (the
    slowest shard's time per sweep, summed: the rest of ``sampling_seconds`` is the driver's
    draws and the round trips); the posterior's ``shard_recoveries`` attribute counts the
    rebuilds after lost shards. ``checkpoints``: as :class:`ShardedKernel`. ``init``: one
    warm start's values per chain (:meth:`ShardedKernel.resume`)."""
    kernel = ShardedKernel(call, half, n_annotators=len(annotators), n_classes=len(classes),
                           n_items=len(items), checkpoints=checkpoints)
    draws, max_draws = resolve_draws(draws, max_draws=max_draws)
    if draws == AUTO and until is None:
        def until(values):  # the parameters pass the report, the plausibilities split R-hat
            return no_variable_fails(values) and not kernel.max_split_rhat() > RHAT_MAX
    constant = xr.Dataset({"reliability": float(half.reliability)},
                          coords={"class": classes, "label_class": classes})
    trace = sample_kernel(kernel, draws=draws, chains=chains, seed=seed, tune=tune, cores=1,
                          until=until, max_seconds=max_seconds, max_draws=max_draws,
                          coords={"item": items, "class": classes, "annotator": annotators,
                                  "label_class": classes},
                          constant_data=constant, resume=init,
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


def _copied(values):
    """A copy of a chain's global state: arrays, tuples of them, None."""
    if isinstance(values, tuple):
        return tuple(_copied(v) for v in values)
    return None if values is None else np.array(values)


def _summed(results) -> tuple:
    """The shards' statistics (tuples of arrays and numbers) summed over the shards, in shard
    order."""
    total = None
    for statistics in results:
        total = tuple(np.array(s, copy=True) for s in statistics) if total is None \
            else tuple(t + s for t, s in zip(total, statistics))
    return total


__all__ = ["SUMMARIES", "GlobalHalf", "ItemShard", "ShardChain", "ShardLost", "ShardedKernel",
           "sample_sharded", "shard_ranges"]
