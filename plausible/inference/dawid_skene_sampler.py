"""Compiled exact Gibbs sampler of the Bayesian Dawid–Skene family, for millions of labels.

The same Gibbs scan as the PyMC builds of :mod:`plausible.models.dawid_skene` (every
conditional exact), without PyMC's per-draw loop. One sweep of a chain:

1. the annotator parameters given the classes, through the counts ``n_j[c, x]`` (annotator
   ``j``'s labels ``x`` on items of class ``c``), by the model's member of
   :mod:`plausible.inference.dawid_skene_members` (full Dawid–Skene: ``theta_j[c] | z ~
   Dirichlet(beta_c + gamma n_j[c, :])`` for every annotator and row, compiled; one-coin, MACE
   and the hierarchical model likewise), then ``pi | z ~ Dirichlet(a + m)`` (``m_c``: items
   of class ``c``), drawn on the log scale
   (:func:`~plausible.inference.dawid_skene_kernel.draw_class_prior`);
2. ``z_i | pi, theta ~ p_i = softmax(log pi + gamma L[i])`` for every item
   (:func:`~plausible.inference.dawid_skene_kernel.class_sweep`), which also keeps ``n`` and
   ``m`` current.

The plausibility of a kept draw is ``p_i`` of its step 2, computed from that draw's ``pi`` and
``theta``: Rao-Blackwellised, and a function of the stored parameters.

**Storage.** ``posterior/class_prior (chain, draw, class)`` and the member's parameters
(full Dawid–Skene: ``confusion (chain, draw, annotator, class, label_class)``) float64, as
the PyMC builds name them, and
``posterior/plausibility (chain, draw, item, class)`` float32: written by the sweep
(``lazy=False``), or, when it would not fit in memory (``lazy=True``, named in the
posterior's ``computed_when_read`` attribute; :func:`plausible.sample` decides from the
memory budget), a dask array computed from the stored parameters block by block when read
(:func:`~plausible.inference.dawid_skene_kernel.plausibility_kernel`; the blocks are those
the metrics read, :func:`plausible.metrics.chunks.chunk_steps`), so a trace of 500,000
items x 1000 draws holds 100 MB of parameters instead of 10 GB. The drawn
classes are not stored (the plausibilities carry more information).
``sample_stats/classes_changed (chain, draw)`` counts the items whose class moved in the
sweep.

**Starts.** Each chain starts its classes at a draw from every item's own label shares (the
majority's orientation, dispersed between chains; see :mod:`plausible.models.dawid_skene`
on label switching); ``tune`` sweeps are discarded, then every ``thin``-th is kept.

**Threads and seeds.** Chains run in threads (:func:`~plausible.inference.chains.run_chains`);
with more cores than chains, each chain's item sweep is split into contiguous parts run in
parallel, each with its own counts. Every random number of chain ``c`` comes from its
generator (child ``c`` of ``SeedSequence(seed)``; the class draws from uniforms it draws
for all items at once), so the draws depend on the seed only, not on ``cores``.
"""

from __future__ import annotations

import functools
from concurrent.futures import ThreadPoolExecutor

import dask.array as da
import numpy as np
import xarray as xr

from plausible.data.labels import Labels
from plausible.inference import dawid_skene_kernel as kernel
from plausible.inference.chains import available_cores, run_chains
from plausible.inference.difficulty_slice import LabelGroups
from plausible.metrics.chunks import chunk_steps
from plausible.metrics.storage import Layout

DEFAULT_TUNE = 100
"""Warm-up sweeps discarded by default. The chains start near the posterior's mode (the
majority's classes, dispersed), and the exact Gibbs scan typically settles within tens of
sweeps; R-hat across dispersed chains checks it."""


class Design:
    """The labels in the kernel's layout: grouped by item (``offsets (item + 1,)``) and coded
    ``code = annotator * C + label`` (int32, in item order)."""

    def __init__(self, labels: Labels):
        C = labels.n_classes
        by_item = LabelGroups.by(labels.item, labels.annotator, labels.label, labels.n_items)
        self.offsets = by_item.offsets
        self.code = (by_item.partner * C + by_item.label).astype(np.int32)
        self.n_items, self.n_annotators, self.n_classes = (labels.n_items, labels.n_annotators, C)

    def parts(self, n_parts: int) -> list[tuple[int, int]]:
        """``n_parts`` contiguous item ranges with about equal numbers of labels."""
        targets = np.linspace(0, self.offsets[-1], n_parts + 1)
        bounds = np.unique(np.r_[0, np.searchsorted(self.offsets, targets[1:-1]), self.n_items])
        return list(zip(bounds[:-1].tolist(), bounds[1:].tolist()))

    def table(self, log_theta: np.ndarray) -> np.ndarray:
        """``T[..., j C + x, c] = log theta[..., j, c, x]`` from ``log theta (..., annotator,
        class, label_class)``."""
        lead = log_theta.shape[:-3]
        C = self.n_classes
        return np.ascontiguousarray(np.swapaxes(log_theta, -1, -2)).reshape(
            *lead, self.n_annotators * C, C)

    def label_shares(self) -> np.ndarray:
        """``(item, class)``: each item's labels' class shares."""
        C = self.n_classes
        item = np.repeat(np.arange(self.n_items), np.diff(self.offsets))
        shares = np.bincount(item * C + self.code % C, minlength=self.n_items * C)
        shares = shares.reshape(self.n_items, C).astype(np.float64)
        return shares / shares.sum(axis=1, keepdims=True)


def _run_chain(design, parts, chain_seed, pi_out, values_out, plaus_out, changed_out, pool, *,
               member, a, gamma, draws, tune, thin, stop=None):
    """Warm-up and kept sweeps of one chain (module docstring), writing draw ``d`` into
    ``pi_out[0, d]``, ``values_out[name][0, d]`` (the member's stored variables),
    ``plaus_out[0, d]`` (when it has draws) and ``changed_out[0, d]``; its item ``parts`` run
    on ``pool`` (threads) when there is one. Returns early once ``stop`` is set."""
    rng = np.random.default_rng(chain_seed)
    C, N = design.n_classes, design.n_items
    cumulative = np.cumsum(design.label_shares(), axis=1)
    z = np.minimum((rng.random((N, 1)) > cumulative).sum(axis=1), C - 1)
    counts = np.zeros((len(parts), design.n_annotators * C, C), dtype=np.int64)
    class_counts = np.zeros((len(parts), C), dtype=np.int64)
    for p, (start, stop_) in enumerate(parts):
        kernel.count_labels(design.offsets, design.code, z, counts[p], class_counts[p], start,
                            stop_)
    no_store = np.empty((0, C), dtype=np.float32)
    table = np.empty((design.n_annotators * C, C))
    log_pi, u = np.empty(C), np.empty(N)
    state = member.start(design.n_annotators, C)
    for it in range(tune + draws * thin):
        if stop is not None and stop.is_set():
            return
        kept = it >= tune and (it - tune + 1) % thin == 0
        d = (it - tune) // thin
        state = member.draw(rng, counts, gamma, table, state)
        kernel.draw_class_prior(rng, class_counts, a, log_pi, u)
        out = plaus_out[0, d] if kept and plaus_out.shape[1] else no_store
        sweep = functools.partial(kernel.class_sweep, design.offsets, design.code, table, log_pi,
                                  gamma, u, z)
        if pool is None:
            changed = sum(sweep(counts[p], class_counts[p], out, start, stop_)
                          for p, (start, stop_) in enumerate(parts))
        else:
            changed = sum(future.result() for future in
                          [pool.submit(sweep, counts[p], class_counts[p], out, start, stop_)
                           for p, (start, stop_) in enumerate(parts)])
        if kept:
            pi_out[0, d] = np.exp(log_pi)
            for name, value in member.values(table, state).items():
                values_out[name][0, d] = value
            changed_out[0, d] = changed


def _lazy_plausibility(design, pi, values, member, gamma, dtype) -> da.Array:
    """``(chain, draw, item, class)`` dask array of the class posteriors at the stored
    ``pi (chain, draw, class)`` and the member's stored ``values`` (name: ``(chain, draw,
    ...)``), chunked as the metrics read it, with no more draws per block than the block's
    confusion tables ``(draw, annotator * C, C)`` allow within the same element budget (a
    block recomputes them: with hundreds of classes they outweigh the plausibilities)."""
    chains, draws, C = pi.shape
    lay = Layout(("chain", "draw"), (chains, draws), design.n_items, C)
    draw_step, item_step = chunk_steps(lay, C)
    table_draws, _ = chunk_steps(Layout(("draw",), (draws,), 1, design.n_annotators * C * C),
                                 design.n_annotators * C * C)
    draw_step = min(draw_step, table_draws)

    def block(block_info=None):
        (c0, c1), (d0, d1), (i0, i1), _ = block_info[None]["array-location"]
        with np.errstate(divide="ignore"):
            log_pi = np.log(pi[c0, d0:d1])
            theta = member.confusion({name: v[c0, d0:d1] for name, v in values.items()}, C)
            table = design.table(np.log(theta))
        return kernel.plausibility_kernel(log_pi, table, gamma, design.offsets, design.code,
                                          i0, i1)[None].astype(dtype, copy=False)

    chunks = ((1,) * chains, _steps(draws, draw_step), _steps(design.n_items, item_step), (C,))
    return da.map_blocks(block, chunks=chunks, dtype=dtype,
                         meta=np.empty((0, 0, 0, 0), dtype=dtype))


def _steps(n: int, step: int) -> tuple[int, ...]:
    return tuple(min(step, n - a) for a in range(0, n, step))


def sample_dawid_skene(labels: Labels, *, member, class_concentration: np.ndarray,
                       reliability: float = 1.0, constant_data: dict | None = None,
                       draws: int = 1000, tune: int = DEFAULT_TUNE, chains: int = 4,
                       seed: int | None = None, cores: int | None = None, thin: int = 1,
                       lazy: bool = False, dtype=np.float32) -> xr.DataTree:
    """Sample a member of the Bayesian Dawid–Skene family (module docstring) for ``labels``:
    ``member`` one of :mod:`plausible.inference.dawid_skene_members`, ``class_concentration a
    (class,)``, ``reliability gamma > 0``; ``constant_data`` (name: ``(dims, values)``)
    written to the trace's ``constant_data`` beside the reliability. ``lazy``: compute the plausibilities from the stored parameters when read instead of
    storing them. ``cores``: threads (default ``min(chains, CPUs)``, or all CPUs split over
    the chains' items when there are more CPUs than chains); the draws do not depend on it.
    Returns the trace described in the module docstring."""
    design = Design(labels)
    available = available_cores() if cores is None else int(cores)
    if available < 1:
        raise ValueError(f"cores must be a positive integer, got {cores!r}")
    n_parts = max(1, available // chains)
    parts = design.parts(n_parts)
    C, J = design.n_classes, design.n_annotators
    pi_out = np.empty((chains, draws, C))
    stored = member.stored(J, C)
    values_out = {name: np.empty((chains, draws, *shape)) for name, (_, shape) in stored.items()}
    plaus_out = np.empty((chains, 0 if lazy else draws, design.n_items, C), dtype=dtype)
    changed_out = np.zeros((chains, draws), dtype=np.int64)
    gamma = float(reliability)
    pools = [ThreadPoolExecutor(max_workers=len(parts)) if len(parts) > 1 else None
             for _ in range(chains)]
    try:
        run = functools.partial(_run_chain, design, parts, member=member,
                                a=np.asarray(class_concentration, dtype=np.float64),
                                gamma=gamma, draws=draws, tune=tune, thin=thin)
        jobs = [(seed_c, pi_out[c:c + 1], {name: v[c:c + 1] for name, v in values_out.items()},
                 plaus_out[c:c + 1],
                 changed_out[c:c + 1], pools[c]) for c, seed_c in
                enumerate(np.random.SeedSequence(seed).spawn(chains))]
        run_chains(run, jobs, min(chains, available))
    finally:
        for pool in pools:
            if pool is not None:
                pool.shutdown()
    plausibility = (_lazy_plausibility(design, pi_out, values_out, member, gamma, dtype) if lazy
                    else plaus_out)
    coords = {"chain": np.arange(chains), "draw": np.arange(draws), "item": labels.items,
              "class": labels.classes, "annotator": labels.annotators,
              "label_class": labels.classes}
    posterior = xr.Dataset(
        {"class_prior": (("chain", "draw", "class"), pi_out),
         **{name: (("chain", "draw", *dims), values_out[name])
            for name, (dims, _) in stored.items()},
         "plausibility": (("chain", "draw", "item", "class"), plausibility)},
        coords=coords,
        attrs={"sampler": "plausible.inference.dawid_skene_sampler", "tune": tune, "thin": thin,
               "computed_when_read": "plausibility" if lazy else ""})
    constant = xr.Dataset({"reliability": gamma, **(constant_data or {})},
                          coords={"class": labels.classes, "label_class": labels.classes})
    stats = xr.Dataset({"classes_changed": (("chain", "draw"), changed_out)},
                       coords={"chain": coords["chain"], "draw": coords["draw"]})
    return xr.DataTree.from_dict({"posterior": posterior, "sample_stats": stats,
                                  "constant_data": constant})
