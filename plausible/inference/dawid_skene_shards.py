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

A kept sweep records ``pi`` and the member's parameters on the driver; each shard folds its
items' class posteriors ``p_i`` of that sweep into its summaries (posterior mean and top-1
counts, :class:`plausible.metrics.accumulated.Accumulator`), so no per-draw, per-item array
exists anywhere. Each chain's last classes stay on the shards (``final_classes``).

**Seeds.** With ``entropy`` (an integer, :func:`run_entropy`), chain ``c``'s driver draws come
from ``SeedSequence(entropy, spawn_key=(c,))`` and shard ``s``'s class draws in chain ``c``
from ``SeedSequence(entropy, spawn_key=(c, 1 + s))``: the draws depend on the seed and the
shard layout only, not on where a shard runs (a thread, another process, a Dask worker). This
is a different Markov chain from the one-process sampler's (which draws every item's uniform
from its chain's generator), with the same stationary distribution.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np
import xarray as xr

from plausible.data.labels import Labels
from plausible.inference import dawid_skene_kernel as kernel_code
from plausible.inference.dawid_skene_sampler import DEFAULT_TUNE, Design
from plausible.inference.driver import assemble
from plausible.metrics.accumulated import GROUP, Accumulator


def run_entropy(seed) -> int:
    """The integer entropy of a run's seeds (``seed`` itself, or fresh entropy for None)."""
    return int(np.random.SeedSequence(seed).entropy)


def shard_ranges(labels: Labels, n_shards: int) -> list[tuple[int, int]]:
    """``n_shards`` contiguous item ranges with about equal numbers of labels."""
    counts = np.bincount(labels.item, minlength=labels.n_items)
    offsets = np.r_[0, np.cumsum(counts)]
    targets = np.linspace(0, offsets[-1], n_shards + 1)[1:-1]
    bounds = np.unique(np.r_[0, np.searchsorted(offsets, targets), labels.n_items])
    return list(zip(bounds[:-1].tolist(), bounds[1:].tolist()))


class Shard:
    """One block of items of every chain: its labels (``labels``, whose annotators and classes
    are the run's, indexed globally; or a source whose ``load()`` reads them where the shard
    is built), each chain's classes, counts and generator, and the summaries of its kept
    sweeps. ``index``: the shard's place in the layout (its seeds).

    Runs wherever it is built (in-process, or as a Dask actor); every method takes and
    returns numpy arrays only."""

    def __init__(self, labels, index: int, chains: int, entropy: int, gamma: float,
                 dtype=np.float32):
        if not isinstance(labels, Labels):
            labels = labels.load()
        self.design = Design(labels)
        self.items = labels.items
        self.gamma = float(gamma)
        design, C = self.design, labels.n_classes
        self.rngs = [np.random.default_rng(np.random.SeedSequence(entropy, spawn_key=(c, 1 + index)))
                     for c in range(chains)]
        shares = np.cumsum(design.label_shares(), axis=1)
        self.z = [np.minimum((rng.random((design.n_items, 1)) > shares).sum(axis=1), C - 1)
                  for rng in self.rngs]
        self.counts = np.zeros((chains, design.n_annotators * C, C), dtype=np.int64)
        self.class_counts = np.zeros((chains, C), dtype=np.int64)
        for c in range(chains):
            kernel_code.count_labels(design.offsets, design.code, self.z[c], self.counts[c],
                                     self.class_counts[c], 0, design.n_items)
        self.summary = Accumulator(chains, design.n_items, C)
        self.buffer = np.zeros((design.n_items, C), dtype=dtype)
        self._no_store = np.empty((0, C), dtype=dtype)

    def item_ids(self) -> np.ndarray:
        """The shard's item ids, in its order."""
        return self.items

    def state(self) -> tuple[np.ndarray, np.ndarray]:
        """``(counts (chain, annotator * C + label, class), class_counts (chain, class))``."""
        return self.counts.copy(), self.class_counts.copy()

    def sweep(self, tables: np.ndarray, log_pis: np.ndarray, keep: bool):
        """One sweep of every chain's classes given ``tables (chain, annotator * C + label,
        class)`` and ``log_pis (chain, class)``; ``keep``: fold the class posteriors into the
        summaries. Returns :meth:`state`, the items whose class changed ``(chain,)`` and the
        sweep's seconds here."""
        began = time.perf_counter()
        design = self.design
        changed = np.zeros(len(self.rngs), dtype=np.int64)
        for c, rng in enumerate(self.rngs):
            u = rng.random(design.n_items)
            store = self.buffer if keep else self._no_store
            changed[c] = kernel_code.class_sweep(design.offsets, design.code, tables[c],
                                                 log_pis[c], self.gamma, u, self.z[c],
                                                 self.counts[c], self.class_counts[c], store,
                                                 0, design.n_items)
            if keep:
                self.summary.add(c, self.buffer)
        return *self.state(), changed, time.perf_counter() - began

    def summaries(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(items, mean (chain, item, class), top1 counts (chain, item, class))``, the draws
        folded so far in ``self.summary.draws``."""
        return self.items, self.summary.total / self.summary.draws[:, None, None], \
            self.summary.top

    def final_classes(self) -> np.ndarray:
        """Each chain's current classes ``(chain, item)``."""
        return np.stack(self.z)


def sample_sharded(call: Callable, *, labels_meta: dict, member, class_concentration,
                   reliability: float, draws: int, chains: int, entropy: int,
                   tune: int = DEFAULT_TUNE, progress=None) -> xr.DataTree:
    """Run the scan of the module docstring over the shards that ``call(method, *args)``
    reaches: it runs ``method`` on every :class:`Shard` and returns their results in shard
    order (in-process or on a cluster). ``labels_meta``: the run's ``annotators`` and
    ``classes``. The trace: posterior
    ``class_prior`` and the member's variables per kept draw; ``plausibility_summary``;
    ``sample_stats/classes_changed`` and ``final_class (chain, item)``; the posterior's
    ``sampling_seconds`` and ``shard_seconds`` (the slowest shard's sweeps, summed over
    sweeps: the rest of the sweeps' time is the driver's draws and the shards' round trips).
    ``progress(done, total)`` is called after every sweep."""
    annotators, classes = labels_meta["annotators"], labels_meta["classes"]
    J, C = len(annotators), len(classes)
    a = np.asarray(class_concentration, dtype=np.float64)
    gamma = float(reliability)
    rngs = [np.random.default_rng(np.random.SeedSequence(entropy, spawn_key=(c,)))
            for c in range(chains)]
    states = [member.start(J, C) for _ in range(chains)]
    stored = member.stored(J, C)
    values = {"class_prior": np.zeros((chains, draws, C)),
              **{name: np.zeros((chains, draws, *shape)) for name, (_, shape) in stored.items()}}
    changed = np.zeros((chains, draws), dtype=np.int64)
    tables = np.zeros((chains, J * C, C))
    log_pis = np.zeros((chains, C))
    empty = np.empty(0)
    start = time.perf_counter()
    shard_seconds = 0.0
    counts, class_counts = _summed(call("state"))
    for t in range(tune + draws):
        for c in range(chains):
            states[c] = member.draw(rngs[c], counts[c][None], gamma, tables[c], states[c])
            kernel_code.draw_class_prior(rngs[c], class_counts[c][None], a, log_pis[c], empty)
        kept = t >= tune
        results = call("sweep", tables, log_pis, kept)
        shard_seconds += max(r[3] for r in results)
        if kept:
            d = t - tune
            for c in range(chains):
                values["class_prior"][c, d] = np.exp(log_pis[c])
                for name, value in member.values(tables[c], states[c]).items():
                    values[name][c, d] = value
            changed[:, d] = sum(r[2] for r in results)
        counts, class_counts = _summed(r[:2] for r in results)
        if progress is not None:
            progress(t + 1, tune + draws)
    seconds = time.perf_counter() - start
    parts = call("summaries")
    finals = call("final_classes")
    index = {"chain": np.arange(chains), "draw": np.arange(draws)}
    coords = {"annotator": annotators, "class": classes, "label_class": classes}
    posterior = xr.Dataset(
        {"class_prior": (("chain", "draw", "class"), values["class_prior"]),
         **{name: (("chain", "draw", *dims), values[name]) for name, (dims, _) in stored.items()}},
        coords={**index, **{k: v for k, v in coords.items() if k != "label_class" or C}},
        attrs={"sampler": __name__, "tune": int(tune), "thin": 1,
               "sampling_seconds": seconds, "shard_seconds": shard_seconds,
               "computed_when_read": "plausibility", "shards": len(parts)})
    items = np.concatenate([p[0] for p in parts])
    summary = xr.Dataset(
        {"mean": (("chain", "item", "class"), np.concatenate([p[1] for p in parts], axis=1)),
         "top1_share": (("chain", "item", "class"),
                        np.concatenate([p[2] for p in parts], axis=1) / draws)},
        coords={"chain": index["chain"], "item": items, "class": classes}, attrs={"draws": draws})
    stats = xr.Dataset({"classes_changed": (("chain", "draw"), changed),
                        "final_class": (("chain", "item"), np.concatenate(finals, axis=1))},
                       coords={**index, "item": items})
    constant = xr.Dataset({"reliability": gamma}, coords={"class": classes,
                                                          "label_class": classes})
    trace = assemble(posterior, sample_stats=stats, constant_data=constant)
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


__all__ = ["Shard", "run_entropy", "sample_sharded", "shard_ranges"]
