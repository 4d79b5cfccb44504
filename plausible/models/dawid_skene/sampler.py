"""Compiled exact Gibbs sampler of the Bayesian Dawid–Skene family, for millions of labels.

The same Gibbs scan as the PyMC builds of :mod:`plausible.models.dawid_skene` (every
conditional exact), without PyMC's per-draw loop. One sweep of a chain:

1. the annotator parameters given the classes, through the counts ``n_j[c, x]`` (annotator
   ``j``'s labels ``x`` on items of class ``c``), by the model's member of
   :mod:`plausible.models.dawid_skene.members` (full Dawid–Skene: ``theta_j[c] | z ~
   Dirichlet(beta_c + gamma n_j[c, :])`` for every annotator and row, compiled; one-coin, MACE
   and the hierarchical model likewise), then ``pi | z ~ Dirichlet(a + m)`` (``m_c``: items
   of class ``c``), drawn on the log scale
   (:func:`~plausible.models.dawid_skene.kernel.draw_class_prior`);
2. ``z_i | pi, theta ~ p_i = softmax(log pi + gamma L[i])`` for every item
   (:func:`~plausible.models.dawid_skene.kernel.class_sweep`), which also keeps ``n`` and
   ``m`` current.

Every tenth sweep, before step 1 (the collapsed sweep: after its class sweep), full
Dawid–Skene, one-coin and the hierarchical model propose to exchange two classes in every
item at once, a Metropolis move on the classes with the parameters integrated out
(:mod:`plausible.inference.step_methods.class_swap`): what takes a chain out of a relabelled mode, where
the annotators split into groups that contradict each other.
``sample_stats/classes_swapped (chain, draw)`` is 1 where it was accepted in the sweep.

The plausibility of a kept draw is ``p_i`` of its step 2, computed from that draw's ``pi`` and
``theta``: Rao-Blackwellised, and a function of the stored parameters.

**Storage.** ``posterior/class_prior (chain, draw, class)`` and the member's parameters
(full Dawid–Skene: ``confusion (chain, draw, annotator, class, label_class)``) float64, as
the PyMC builds name them, and
``posterior/plausibility (chain, draw, item, class)`` float32: written by the sweep
(``lazy=False``), or, when it would not fit in memory (``lazy=True``, named in the
posterior's ``computed_when_read`` attribute; :func:`plausible.sample` decides from the
memory budget), a dask array computed from the stored parameters block by block when read
(:func:`~plausible.models.dawid_skene.kernel.plausibility_kernel`; the blocks are those
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
import uuid
from concurrent.futures import ThreadPoolExecutor

import dask.array as da
import numpy as np
import pandas as pd
import xarray as xr

from plausible.data.labels import Labels
from plausible.inference.step_methods import class_swap
from plausible.models.dawid_skene import kernel as kernel_code
from plausible.inference.chains import available_cores
from plausible.models.dawid_skene.collapsed import repeated_annotators
from plausible.data.label_groups import LabelGroups
from plausible.inference.driver import sample_kernel
from plausible.inference.kernel import PyMCKernel, Variable
from plausible.maths.known_classes import clamp_known
from plausible.metrics.chunks import chunk_steps
from plausible.metrics.storage import Layout
from plausible.models.classifier_prior import block_log_prior

DEFAULT_TUNE = 100
"""Warm-up sweeps discarded by default. The chains start near the posterior's mode (the
majority's classes, dispersed), and the exact Gibbs scan typically settles within tens of
sweeps; R-hat across dispersed chains checks it."""


WARM_TUNE = 10
"""Warm-up sweeps discarded by default after a warm start (:func:`warm_start`): the chains
resume where an earlier run on most of the same labels left them, near the new posterior;
the items new to this run start from their label shares and settle in a sweep or two."""


class Design:
    """The labels in the kernel's layout: grouped by item (``offsets (item + 1,)``) and coded
    ``code = annotator * C + label`` (int32, in item order; ``annotator`` and ``label`` its two
    parts, in the same order; ``most_labels`` the busiest annotator's labels, ``most_code``
    the most labels of one code); ``repeats (item,)``: the items
    an annotator labelled more than once; ``fixed (item,)``: each item's known class, -1
    where it is not known (:attr:`Labels.known`)."""

    def __init__(self, labels: Labels):
        C = labels.n_classes
        by_item = LabelGroups.by(labels.item, labels.annotator, labels.label, labels.n_items)
        self.offsets = by_item.offsets
        self.code = (by_item.partner * C + by_item.label).astype(np.int32)
        self.annotator = by_item.partner.astype(np.int32)
        self.label = by_item.label.astype(np.int32)
        self.n_items, self.n_annotators, self.n_classes = (labels.n_items, labels.n_annotators, C)
        self.annotator_labels = np.bincount(labels.annotator, minlength=labels.n_annotators)
        self.most_labels = int(self.annotator_labels.max(initial=0))
        self.most_code = int(np.bincount(self.code).max(initial=0)) if self.code.size else 0
        self.repeats = repeated_annotators(self.offsets, self.code, C)
        self.fixed = (np.full(labels.n_items, -1, dtype=np.int64) if labels.known is None
                      else labels.known)

    @classmethod
    def concatenate(cls, designs) -> Design:
        """One design of ``designs``' items, one after another (the same annotators and
        classes): a shard read file by file never holds more than one file's labels in the
        layout's temporaries."""
        designs = list(designs)
        first = designs[0]
        design = cls.__new__(cls)
        shifts = np.cumsum([0] + [d.offsets[-1] for d in designs[:-1]])
        design.offsets = np.concatenate([first.offsets[:1]] + [d.offsets[1:] + shift
                                                               for d, shift in zip(designs, shifts)])
        design.code = np.concatenate([d.code for d in designs])
        design.annotator = np.concatenate([d.annotator for d in designs])
        design.label = np.concatenate([d.label for d in designs])
        design.n_items = sum(d.n_items for d in designs)
        design.n_annotators, design.n_classes = first.n_annotators, first.n_classes
        design.annotator_labels = np.sum([d.annotator_labels for d in designs], axis=0)
        design.most_labels = int(design.annotator_labels.max(initial=0))
        design.most_code = int(np.bincount(design.code).max(initial=0)) if design.code.size else 0
        design.repeats = np.concatenate([d.repeats for d in designs])
        design.fixed = np.concatenate([d.fixed for d in designs])
        return design

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
        shares = np.zeros((self.n_items, self.n_classes))
        kernel_code.label_shares(self.offsets, self.code, shares)
        return shares


    def label_share_classes(self, rng) -> np.ndarray:
        """int ``(item,)``: each item's class drawn from its labels' class shares (a chain's
        start, dispersed between chains by ``rng``)."""
        cumulative = np.cumsum(self.label_shares(), axis=1)
        z = np.minimum((rng.random((self.n_items, 1)) > cumulative).sum(axis=1),
                       self.n_classes - 1)
        return self.clamp_classes(z)

    def clamp_classes(self, z: np.ndarray) -> np.ndarray:
        """``z (item,)`` with every known item's class set to it, in place (and returned)."""
        rows = self.fixed >= 0
        z[rows] = self.fixed[rows]
        return z


class ChainState:
    """One chain's state: the classes ``z (item,)``, the counts of each item part ``counts
    (part, annotator * C + label, class)`` and ``class_counts (part, class)``, the member's
    state, the classifier prior's state (``prior``: its ``(tau, b)`` to start from, else its
    mode given ``z``), and the buffers and thread pool of the sweep."""

    def __init__(self, kernel: DawidSkeneKernel, z: np.ndarray, member_state, prior=None):
        design, C = kernel.design, kernel.design.n_classes
        self.z = z
        self.counts = np.zeros((len(kernel.parts), design.n_annotators * C, C), dtype=np.int64)
        self.class_counts = np.zeros((len(kernel.parts), C), dtype=np.int64)
        for p, (start, stop) in enumerate(kernel.parts):
            kernel_code.count_labels(design.offsets, design.code, z, self.counts[p],
                                     self.class_counts[p], start, stop)
        self.member_state = member_state
        self.sweeps = 0  # the class-swap move's cycle
        self.collapsed = (kernel.member.collapsed_statistics(
            design, z, self.counts[0], int(kernel.gamma)) if kernel.collapsed else None)
        self.table = np.empty((design.n_annotators * C, C))
        classifier = kernel.classifier
        self.prior = None if classifier is None else classifier.start(z, prior)
        self.log_pi = np.empty(C) if classifier is None else self.prior["log_prior"]
        self.u = np.empty(design.n_items)
        self.pool = (ThreadPoolExecutor(max_workers=len(kernel.parts)) if len(kernel.parts) > 1
                     else None)


def check_collapsible(member, gamma: float) -> None:
    """``ValueError`` unless ``member`` has a collapsed sweep and ``gamma`` is a whole
    number >= 1 (the collapsed sweep counts every label ``gamma`` times)."""
    if not hasattr(member, "collapsed_sweep"):
        raise ValueError(f"{type(member).__name__} has no collapsed sweep; use sampler='joint'")
    if gamma != round(gamma) or gamma < 1:
        raise ValueError(f"the collapsed sampler counts every label reliability times, which "
                         f"must be a whole number >= 1 (got {gamma}); use sampler='joint' for "
                         "tempering")


class DawidSkeneKernel(PyMCKernel):
    """The sweep of the module for a member of the family (``member``, one of
    :mod:`plausible.models.dawid_skene.members`) on ``design``, with class concentration
    ``a (class,)`` and reliability ``gamma``; each sweep's items run in ``n_parts``
    contiguous parts (threads of the chain, when more than one). ``class_swaps=False``
    leaves out the class-swap move (to show what it does; the sampler always makes it).
    ``classifier``: a :class:`~plausible.models.classifier_prior.ClassifierPrior`, whose
    per-item prior takes the place of ``pi`` (joint sweep only; the classifier orients the
    classes, so no class-swap move)."""

    name = "plausible.models.dawid_skene.sampler"
    default_tune = DEFAULT_TUNE
    default_thin = 1
    lazy_variables = ("plausibility",)

    def __init__(self, design: Design, member, a, gamma: float, *, n_parts: int = 1,
                 dtype=np.float32, collapsed: bool = False, class_swaps: bool = True,
                 classifier=None):
        self.design, self.member, self.gamma, self.dtype = design, member, float(gamma), dtype
        self.classifier = classifier
        if classifier is not None and collapsed:
            raise ValueError("a classifier's prior takes the joint class sweep; use "
                             "sampler='joint'")
        self.a = np.asarray(a, dtype=np.float64)
        self.collapsed = bool(collapsed)
        if self.collapsed:
            check_collapsible(member, self.gamma)
            n_parts = 1  # one item after another: every draw sees all the others' classes
        self.parts = design.parts(max(1, int(n_parts)))
        C, J, N = design.n_classes, design.n_annotators, design.n_items
        prior = ({"class_prior": Variable(("class",), (C,))} if classifier is None else
                 {"temperature": Variable((), ()), "class_bias": Variable(("class",), (C,))})
        self.variables = {
            **prior,
            **{name: Variable(dims, shape) for name, (dims, shape) in member.stored(J, C).items()},
            "plausibility": Variable(("item", "class"), (N, C), dtype)}
        self.stats = {"classes_changed": Variable((), (), np.int64)}
        self.swappable = (class_swap.swappable_classes(C, design.fixed)
                          if class_swaps and classifier is None
                          and hasattr(member, "swap_log_ratio")
                          else np.empty(0, np.int64))
        if self.swappable.size >= 2:
            self.stats["classes_swapped"] = Variable((), (), np.int64)
        self.chain_stats = {"final_class": Variable(("item",), (N,), np.int64)}
        self._no_store = np.empty((0, C), dtype=dtype)

    def start(self, rng):
        """Each item's class drawn from its own label shares."""
        return ChainState(self, self.design.label_share_classes(rng),
                          self.member.start(self.design.n_annotators, self.design.n_classes))

    def resume(self, values, rng):
        """A warm start: each item's class from ``values["final_class"] (item,)`` (an earlier
        run's last state), an item marked -1 (new to this run) drawn as :meth:`start` draws
        it; the annotator parameters are drawn given them by the first sweep."""
        z = self.design.label_share_classes(rng)
        previous = np.asarray(values["final_class"])
        earlier = previous >= 0
        z[earlier] = previous[earlier]
        return ChainState(self, self.design.clamp_classes(z), self.member.start(
            self.design.n_annotators, self.design.n_classes))
    def finish(self, state, out):
        """The chain's last classes, for a warm start of a later run (:meth:`resume`)."""
        out["final_class"][...] = state.z

    def load(self, values, rng):
        """The classes ``true_class`` and the member's state from the model's values; the
        sweep draws the annotator parameters and ``pi`` afresh before reading them."""
        z = self.design.clamp_classes(np.array(values["true_class"], dtype=np.int64))
        prior = (None if self.classifier is None else
                 np.r_[float(values["temperature"]), np.asarray(values["class_bias"], float)])
        return ChainState(self, z, self.member.load(values, self.design.n_annotators,
                                                    self.design.n_classes, rng), prior)

    def to_point(self, state, draw):
        return {**{name: draw[name] for name in self.variables if name != "plausibility"},
                "true_class": state.z.copy()}

    def close(self, state):
        if state is not None and state.pool is not None:
            state.pool.shutdown()

    def sweep(self, rng, state, out):
        """The joint scan (the annotator parameters and ``pi`` given the counts, then every
        item's class) or the collapsed one."""
        if self.collapsed:
            return self._collapsed_sweep(rng, state, out)
        design, parts = self.design, self.parts
        swapped = self._swap(rng, state)
        state.member_state = self.member.draw(rng, state.counts, self.gamma, state.table,
                                              state.member_state)
        self._draw_prior(rng, state, state.u)
        store = out.get("plausibility", self._no_store) if out is not None else self._no_store
        sweep = functools.partial(kernel_code.class_sweep, design.offsets, design.code,
                                  state.table, state.log_pi, self.gamma, state.u, state.z,
                                  design.fixed)
        if state.pool is None:
            changed = sum(sweep(state.counts[p], state.class_counts[p], store, start, stop)
                          for p, (start, stop) in enumerate(parts))
        else:
            changed = sum(future.result() for future in
                          [state.pool.submit(sweep, state.counts[p], state.class_counts[p], store,
                                             start, stop)
                           for p, (start, stop) in enumerate(parts)])
        self._record(state, out, changed, swapped)
        return state

    def _draw_prior(self, rng, state, u) -> None:
        """``state.log_pi``: ``log pi`` drawn given the classes, or the classifier prior's
        ``log_softmax(b + tau log p)`` after its updates; then ``u`` filled with uniforms."""
        if self.classifier is None:
            kernel_code.draw_class_prior(rng, state.class_counts, self.a, state.log_pi, u)
            return
        self.classifier.draw(rng, state.z, state.prior)  # state.log_pi is its log prior
        u[...] = rng.random(u.size)

    def _swap(self, rng, state) -> bool:
        """The class-swap move on ``state``'s classes and counts (module docstring;
        :mod:`plausible.inference.step_methods.class_swap`); True when it was accepted."""
        state.sweeps += 1
        if self.swappable.size < 2 or state.sweeps % class_swap.EVERY:
            return False
        u = rng.random(3)
        a, b = class_swap.propose(u[:2], self.swappable)
        log_ratio = (class_swap.class_prior_log_ratio(self.a, state.class_counts, a, b)
                     + self.member.swap_log_ratio(state.counts, a, b, self.gamma,
                                                  state.member_state))
        if not class_swap.accept(u[2], log_ratio):
            return False
        class_swap.relabel(state.z, a, b)
        state.counts[..., [a, b]] = state.counts[..., [b, a]]
        state.class_counts[..., [a, b]] = state.class_counts[..., [b, a]]
        if state.collapsed is not None:
            state.collapsed = self.member.collapsed_statistics(
                self.design, state.z, state.counts[0], int(self.gamma))
        return True

    def _record(self, state, out, changed: int, swapped: bool) -> None:
        """A kept sweep's ``pi``, the member's parameters, the classes that moved and
        whether the class-swap move was accepted."""
        if out is not None:
            if self.classifier is None:
                out["class_prior"][...] = np.exp(state.log_pi)
            else:
                for name, value in self.classifier.values(state.prior).items():
                    out[name][...] = value
            for name, value in self.member.values(state.table, state.member_state).items():
                out[name][...] = value
            out["classes_changed"][...] = changed
            if "classes_swapped" in out:
                out["classes_swapped"][...] = swapped

    def _collapsed_sweep(self, rng, state, out):
        """Every item's class given the others' with the parameters integrated out, then the
        annotator parameters and ``pi`` given the classes (exact), which a kept draw records
        with the plausibilities at them."""
        design = self.design
        changed = self.member.collapsed_sweep(rng, design, self.a, int(self.gamma), state.z,
                                              state.counts[0], state.class_counts[0],
                                              state.collapsed, state.member_state)
        swapped = self._swap(rng, state)
        draw = getattr(self.member, "collapsed_draw", None)
        state.member_state = (draw(rng, state.collapsed, state.table) if draw is not None else
                              self.member.draw(rng, state.counts, self.gamma, state.table,
                                               state.member_state, rows=out is not None))
        kernel_code.draw_class_prior(rng, state.class_counts, self.a, state.log_pi,
                                     state.u[:0])
        if out is not None and "plausibility" in out:
            kernel_code.class_posteriors(design.offsets, design.code, state.table, state.log_pi,
                                         self.gamma, out["plausibility"])
            clamp_known(out["plausibility"], design.fixed)
        self._record(state, out, changed, swapped)
        return state

    def compute_when_read(self, values) -> dict:
        prior = {"class_prior", "temperature", "class_bias"}
        stored = {name: values[name] for name in self.variables
                  if name not in prior | {"plausibility"}}
        if self.classifier is None:
            log_pi = values["class_prior"]
            shape = log_pi.shape[:2]
        else:
            tau, b = values["temperature"], values["class_bias"]
            shape = tau.shape[:2]
            log_p = self.classifier.log_p

            def log_pi(c, d0, d1, i0, i1):
                return block_log_prior(tau[c, d0:d1], b[c, d0:d1], log_p[i0:i1])
        return {"plausibility": _lazy_plausibility(self.design, log_pi, shape, stored,
                                                   self.member, self.gamma, self.dtype)}


def _lazy_plausibility(design, pi, shape, values, member, gamma, dtype) -> da.Array:
    """``(chain, draw, item, class)`` dask array of the class posteriors at the stored
    ``pi (chain, draw, class)`` (or, for a prior per item, a function ``pi(chain, d0, d1, i0,
    i1)`` of the log prior of draws ``d0..d1`` and items ``i0..i1``, ``(draw, item, class)``)
    and the member's stored ``values`` (name: ``(chain, draw, ...)``), chunked as the metrics
    read it, with no more draws per block than the block's confusion tables ``(draw,
    annotator * C, C)`` allow within the same element budget (a block recomputes them: with
    hundreds of classes they outweigh the plausibilities)."""
    (chains, draws), C = shape, design.n_classes
    lay = Layout(("chain", "draw"), (chains, draws), design.n_items, C)
    draw_step, item_step = chunk_steps(lay, C)
    table_draws, _ = chunk_steps(Layout(("draw",), (draws,), 1, design.n_annotators * C * C),
                                 design.n_annotators * C * C)
    draw_step = min(draw_step, table_draws)

    def block(block_info=None):
        (c0, c1), (d0, d1), (i0, i1), _ = block_info[None]["array-location"]
        with np.errstate(divide="ignore"):
            theta = member.confusion({name: v[c0, d0:d1] for name, v in values.items()}, C)
            table = design.table(np.log(theta))
        if callable(pi):  # a prior per item: the block's items, numbered from 0
            p = kernel_code.plausibility_kernel(pi(c0, d0, d1, i0, i1), table, gamma,
                                                design.offsets[i0:i1 + 1], design.code, 0,
                                                i1 - i0)
        else:
            with np.errstate(divide="ignore"):
                log_pi = np.log(pi[c0, d0:d1])
            p = kernel_code.plausibility_kernel(log_pi, table, gamma, design.offsets,
                                                design.code, i0, i1)
        clamp_known(p, design.fixed[i0:i1])
        return p[None].astype(dtype, copy=False)

    chunks = ((1,) * chains, _steps(draws, draw_step), _steps(design.n_items, item_step), (C,))
    return da.map_blocks(block, chunks=chunks, dtype=dtype,  # named: the design is not hashed
                         meta=np.empty((0, 0, 0, 0), dtype=dtype),
                         name=f"plausibility-{uuid.uuid4().hex}")


def _steps(n: int, step: int) -> tuple[int, ...]:
    return tuple(min(step, n - a) for a in range(0, n, step))


def warm_start(previous: xr.DataTree, labels: Labels, chains: int) -> list[dict]:
    """Per chain, ``{"final_class": (item,)}``: the last classes of ``previous`` (a trace of
    this sampler on an earlier version of the labels, ``sample_stats/final_class (chain,
    item)``) in ``labels``' items and classes (:func:`previous_classes`)."""
    return [{"final_class": z}
            for z in previous_classes(previous, labels.items, labels.classes, chains)]


def previous_classes(previous: xr.DataTree, items, classes, chains: int) -> list[np.ndarray]:
    """Per chain, the last classes ``(item,)`` of ``previous`` (a trace that recorded its
    chains' ``sample_stats/final_class (chain, item)``, or the last draw of its
    ``true_class``, as PyMC's loop stores it) for ``items`` and ``classes``, matched by id;
    -1 for an item (or a class) the earlier run did not have. Chain ``c`` continues the
    earlier chain ``c`` modulo their number."""
    stats = previous["sample_stats"] if "sample_stats" in previous.children else None
    posterior = previous["posterior"]
    if stats is not None and "final_class" in stats.data_vars:
        final = stats["final_class"]
    elif "true_class" in posterior.data_vars:
        final = posterior["true_class"].isel(draw=-1)
    else:
        raise ValueError("init= needs an earlier run that recorded its chains' final classes "
                         "(sample_stats/final_class, or true_class draws): refit it with this "
                         "version")
    earlier = previous["posterior"]["class"].values
    position = pd.Index(final["item"].values).get_indexer(items)
    to_class = pd.Index(classes).get_indexer(earlier)
    values = final.transpose("chain", "item").values
    return [np.where(position >= 0, to_class[values[c % len(values)][position]], -1)
            for c in range(chains)]


def sample_dawid_skene(labels: Labels, *, member, class_concentration: np.ndarray,
                       reliability: float = 1.0, constant_data: dict | None = None,
                       draws: int | str = 1000, tune: int | None = None, chains: int = 4,
                       seed: int | None = None, cores: int | None = None, thin: int = 1,
                       lazy: bool = False, dtype=np.float32, collapsed: bool = False,
                       until=None, max_seconds: float | None = None,
                       max_draws: int | None = None, max_stored: int | None = None,
                       init: xr.DataTree | None = None, classifier=None) -> xr.DataTree:
    """Sample a member of the Bayesian Dawid–Skene family (module docstring) for ``labels``:
    ``member`` one of :mod:`plausible.models.dawid_skene.members`, ``class_concentration a
    (class,)``, ``reliability gamma > 0``; ``constant_data`` (name: ``(dims, values)``)
    written to the trace's ``constant_data`` beside the reliability. ``lazy``: compute the
    plausibilities from the stored parameters when read instead of storing them. ``cores``:
    threads (default ``min(chains, CPUs)``, or all CPUs split over the chains' items when
    there are more CPUs than chains); the draws do not depend on it. ``draws="auto"`` with
    ``until``, ``max_seconds``, ``max_draws``, ``max_stored``: as
    :func:`~plausible.inference.driver.sample_kernel`. ``init``: a trace of an earlier run on
    a subset of these labels, whose chains' final classes start these chains
    (:func:`warm_start`; ``tune`` then defaults to :data:`WARM_TUNE`). ``classifier``: a
    :class:`~plausible.models.classifier_prior.ClassifierPrior` in place of ``pi`` (the trace
    then holds ``temperature`` and ``class_bias`` instead of ``class_prior``). Returns the
    trace described in the module docstring."""
    if tune is None:
        tune = DEFAULT_TUNE if init is None else WARM_TUNE
    available = available_cores() if cores is None else int(cores)
    if available < 1:
        raise ValueError(f"cores must be a positive integer, got {cores!r}")
    gamma = float(reliability)
    kernel = DawidSkeneKernel(Design(labels), member, class_concentration, gamma,
                              n_parts=max(1, available // chains), dtype=dtype,
                              collapsed=collapsed, classifier=classifier)
    constant = xr.Dataset({"reliability": gamma, **(constant_data or {})},
                          coords={"class": labels.classes, "label_class": labels.classes})
    return sample_kernel(kernel, draws=draws, chains=chains, seed=seed, tune=tune, thin=thin,
                         cores=min(chains, available), lazy=lazy, until=until,
                         max_seconds=max_seconds, max_draws=max_draws, max_stored=max_stored,
                         resume=None if init is None else warm_start(init, labels, chains),
                         coords={"item": labels.items, "class": labels.classes,
                                 "annotator": labels.annotators, "label_class": labels.classes},
                         constant_data=constant)
