"""Compiled Gibbs sampler of Dawid–Skene for anonymous votes
(:mod:`plausible.models.votes_dawid_skene`).

Item ``i``'s vote counts ``n_i (class,)`` given its class ``z_i = c`` are Dirichlet-multinomial
with ``alpha_c = kappa psi_c`` (the item's own vote distribution integrated out), so with
reliability ``gamma`` its class log-likelihood is::

    L[i, c] = gamma * (lgamma(kappa) - lgamma(kappa + N_i)
                       + sum_{x: n_ix > 0} lgamma(alpha_cx + n_ix) - lgamma(alpha_cx)),

``N_i = sum_x n_ix``. One sweep of a chain:

1. ``psi_c | kappa, z`` for every class ``c`` (the items of class ``c`` are the rows of a
   Dirichlet-multinomial population, :mod:`plausible.inference.step_methods.
   dirichlet_multinomial_population`: a slice scan of ``psi_c``'s Gamma weights, then their
   scale exactly; :func:`draw_base`), then ``kappa | psi, z`` (a slice update of ``log
   kappa`` over every class's rows, :func:`draw_concentration`); the rows' multiplicities
   are weighted by ``gamma``, so that the target is the tempered likelihood;
2. the class prior given ``z``: ``pi ~ Dirichlet(a + counts(z))`` exactly, or a classifier's
   ``(tau, b)`` (:class:`~plausible.models.classifier_prior.ClassifierPrior`);
3. ``z_i ~ softmax(log prior_i + L[i])`` for every item (:func:`class_sweep`).

The ``lgamma`` differences depend on an item only through its distinct counts and its total,
so each sweep tabulates them once per ``(class, vote class, distinct count)``
(:func:`log_gamma_tables`) and an item's ``L[i]`` is a sum of table entries over its nonzero
counts: ``O(items x classes x classes named)`` additions a sweep.

**Storage.** ``posterior/population_confusion (chain, draw, class, label_class)`` (``psi``),
``concentration (chain, draw)`` (``kappa``) and ``class_prior`` (or ``temperature``
and ``class_bias``) float64; ``plausibility (chain, draw, item, class)`` float32 (``p_i`` of
step 3 at the draw's parameters, Rao-Blackwellised), stored or computed from the stored
parameters when read (``lazy``). ``sample_stats/classes_changed``.

**Starts.** Each chain draws its items' classes from their vote shares (dispersed between
chains, oriented like the majority); its first sweep draws the population given them.
"""

from __future__ import annotations

import math
import uuid

import dask.array as da
import numba
import numpy as np

from plausible.inference.kernel import PyMCKernel, Variable
from plausible.inference.step_methods.dirichlet_multinomial_population import (
    population_log_density)
from plausible.inference.step_methods.univariate_slice import slice_update
from plausible.maths.categorical import inverse_cdf
from plausible.maths.logspace import log_gamma_draw, log_gamma_draws
from plausible.metrics.chunks import chunk_steps
from plausible.metrics.storage import Layout
from plausible.models.classifier_prior import block_log_prior

DEFAULT_TUNE = 100
"""Warm-up sweeps discarded by default: the chains start at the vote shares' classes and the
population's ``C^2 + 1`` coordinates settle within tens of sweeps."""
WIDTH = 1.0
"""Slice width on the log scales of ``kappa`` and of ``psi_c``'s Gamma weights."""


class VoteDesign:
    """Vote counts ``(item, class)`` in the sweep's layout: each item's nonzero counts
    (``offsets (item + 1,)``, their classes ``label`` and indices ``value_index`` into the
    distinct counts ``values``), and each item's total as an index ``total_index`` into the
    distinct totals ``totals``; ``counts`` the float64 table the population reads."""

    def __init__(self, counts: np.ndarray):
        counts = np.asarray(counts)
        self.counts = np.ascontiguousarray(counts, dtype=np.float64)
        self.n_items, self.n_classes = counts.shape
        item, label = np.nonzero(counts)
        self.offsets = np.r_[0, np.cumsum(np.bincount(item, minlength=self.n_items))].astype(
            np.int64)
        self.label = label.astype(np.int64)
        self.values, self.value_index = np.unique(self.counts[item, label], return_inverse=True)
        self.totals, self.total_index = np.unique(self.counts.sum(axis=1), return_inverse=True)

    def vote_share_classes(self, rng) -> np.ndarray:
        """int ``(item,)``: each item's class drawn from its vote shares."""
        cumulative = np.cumsum(self.counts / self.counts.sum(axis=1, keepdims=True), axis=1)
        return np.minimum((rng.random((self.n_items, 1)) > cumulative).sum(axis=1),
                          self.n_classes - 1)


@numba.njit(cache=True, nogil=True)
def log_gamma_tables(alpha, values, totals, gamma):  # pragma: no cover - compiled
    """``T (class, label_class, value)``: ``gamma (lgamma(alpha_cx + v) - lgamma(alpha_cx))``
    for each distinct count ``v``; ``U (class, total)``: ``gamma (lgamma(K_c) - lgamma(K_c +
    N))`` for each distinct total ``N``, ``K_c = sum_x alpha_cx``."""
    n_classes = alpha.shape[0]
    table = np.empty((n_classes, n_classes, values.size))
    total_table = np.empty((n_classes, totals.size))
    for c in range(n_classes):
        kappa = 0.0
        for x in range(n_classes):
            a = alpha[c, x]
            kappa += a
            base = math.lgamma(a)
            for k in range(values.size):
                table[c, x, k] = gamma * (math.lgamma(a + values[k]) - base)
        base = math.lgamma(kappa)
        for k in range(totals.size):
            total_table[c, k] = gamma * (base - math.lgamma(kappa + totals[k]))
    return table, total_table


@numba.njit(cache=True, nogil=True, inline="always")
def _item_terms(offsets, label, value_index, total_index, table, total_table, log_prior, i,
                row, out):  # pragma: no cover - compiled
    """``out[c] = log prior_ic + L[i, c]`` (``log_prior`` row ``row``); returns the largest."""
    top = -np.inf
    for c in range(out.size):
        s = log_prior[row, c] + total_table[c, total_index[i]]
        for k in range(offsets[i], offsets[i + 1]):
            s += table[c, label[k], value_index[k]]
        out[c] = s
        top = max(top, s)
    return top


@numba.njit(cache=True, nogil=True)
def class_sweep(offsets, label, value_index, total_index, table, total_table, log_prior, u, z,
                out):  # pragma: no cover - compiled
    """Every item's ``p_i = softmax(log prior_i + L[i])`` (written to ``out[i]`` when ``out``
    has rows), then ``z_i`` = the first class whose cumulative ``p_i`` exceeds ``u[i]``;
    ``log_prior (item, class)`` or ``(1, class)`` (the same for every item). Returns the
    number of items whose class changed."""
    n_items, n_classes = z.size, table.shape[0]
    per_item = log_prior.shape[0] > 1
    store = out.shape[0] > 0
    terms = np.empty(n_classes)
    changed = 0
    for i in range(n_items):
        top = _item_terms(offsets, label, value_index, total_index, table, total_table,
                          log_prior, i, i if per_item else 0, terms)
        total = 0.0
        for c in range(n_classes):
            terms[c] = math.exp(terms[c] - top)
            total += terms[c]
        if store:
            for c in range(n_classes):
                out[i, c] = terms[c] / total
        new = inverse_cdf(terms, u[i] * total)
        if new != z[i]:
            changed += 1
            z[i] = new
    return changed


@numba.njit(cache=True, nogil=True)
def item_kernel(offsets, label, value_index, total_index, values, totals, alpha, log_prior,
                gamma, start, stop, posterior, marginal):  # pragma: no cover - compiled
    """For each draw ``s`` of ``alpha (sample, class, label_class)`` and ``log_prior (sample,
    item or 1, class)`` (items ``start..stop``, numbered from 0 in a per-item prior): the
    class posteriors ``posterior[s, i - start]`` (when it has rows) and the marginal
    log-likelihoods ``marginal[s, i - start] = logsumexp_c(log prior_ic + L[i, c])`` (when it
    has rows)."""
    n_classes = alpha.shape[1]
    per_item = log_prior.shape[1] > 1
    terms = np.empty(n_classes)
    for s in range(alpha.shape[0]):
        table, total_table = log_gamma_tables(alpha[s], values, totals, gamma)
        for i in range(start, stop):
            top = _item_terms(offsets, label, value_index, total_index, table, total_table,
                              log_prior[s], i, i - start if per_item else 0, terms)
            total = 0.0
            for c in range(n_classes):
                terms[c] = math.exp(terms[c] - top)
                total += terms[c]
            if posterior.shape[0] > 0:
                for c in range(n_classes):
                    posterior[s, i - start, c] = terms[c] / total
            if marginal.shape[0] > 0:
                marginal[s, i - start] = top + math.log(total)


_base_update = slice_update(population_log_density)


@numba.njit(cache=True, nogil=True)
def draw_base(rng, v, values, weights, totals, total_weights, beta, shape, rate,
              width):  # pragma: no cover - compiled
    """One class's ``psi_c`` given ``kappa``: a slice update of each ``log g_x`` of ``v = (log
    kappa, log g)`` in turn (``v[0]`` fixed) with the class's rows summarised as
    :func:`~plausible.inference.step_methods.dirichlet_multinomial_population.count_summary`
    does (the distinct counts ``values (label_class, width)`` and their ``weights``, the
    distinct totals and theirs), then the scale of ``g`` from its conditional ``Gamma(sum beta, 1)``; in place."""
    args = (values, weights, totals, total_weights, beta, shape, rate)
    log_fx = population_log_density(v[1], 1, v, *args)
    for k in range(1, v.size):
        v[k], log_fx, _ = _base_update(rng, v[k], log_fx, -np.inf, np.inf, width, 0,
                                       (k, v, *args))
    log_g = v[1:]
    top = log_g.max()
    shift = log_gamma_draw(rng, beta.sum()) - (top + math.log(np.exp(log_g - top).sum()))
    for x in range(log_g.size):
        log_g[x] += shift


@numba.njit(cache=True, nogil=True)
def concentration_log_density(log_kappa, log_psi, values, weights, totals, total_weights,
                              shape, rate):  # pragma: no cover - compiled
    """``log p(log kappa | psi, z)`` up to a constant: every class's Dirichlet-multinomial
    rows at ``alpha_c = kappa psi_c`` (``values, weights (class, label_class, width)`` and
    ``totals, total_weights (class, width)``: each class's count summary, zero weights
    skipped)
    plus the Gamma ``(shape, rate)`` prior and the log scale's Jacobian."""
    kappa = math.exp(log_kappa)
    out = shape * log_kappa - rate * kappa
    lgamma_kappa = math.lgamma(kappa)
    for c in range(log_psi.shape[0]):
        for x in range(log_psi.shape[1]):
            alpha = kappa * math.exp(log_psi[c, x])
            lgamma_alpha = math.lgamma(alpha)
            for m in range(values.shape[2]):
                if weights[c, x, m] > 0.0:
                    out += weights[c, x, m] * (math.lgamma(alpha + values[c, x, m])
                                               - lgamma_alpha)
        for t in range(totals.shape[1]):
            if total_weights[c, t] > 0.0:
                out += total_weights[c, t] * (lgamma_kappa - math.lgamma(kappa + totals[c, t]))
    return out


_concentration_update = slice_update(concentration_log_density)


@numba.njit(cache=True, nogil=True)
def draw_concentration(rng, log_kappa, log_psi, values, weights, totals, total_weights, shape,
                       rate, width):  # pragma: no cover - compiled
    """A slice update of the shared ``log kappa`` (:func:`concentration_log_density`)."""
    args = (log_psi, values, weights, totals, total_weights, shape, rate)
    log_fx = concentration_log_density(log_kappa, *args)
    return _concentration_update(rng, log_kappa, log_fx, -np.inf, np.inf, width, 0, args)[0]


@numba.njit(cache=True, nogil=True)
def class_summaries(offsets, label, value_index, total_index, z, n_classes, n_values,
                    n_totals, gamma):  # pragma: no cover - compiled
    """Each class's rows summarised as the population's density reads them, in one pass over
    the nonzero counts: ``weights (class, label_class, value)`` ``gamma`` times the number of
    items of that class with that count of that vote class, ``total_weights (class, total)``
    ``gamma`` times the number with that total (the counts and totals themselves are the
    design's distinct ``values`` and ``totals``)."""
    weights = np.zeros((n_classes, n_classes, n_values))
    total_weights = np.zeros((n_classes, n_totals))
    for i in range(z.size):
        c = z[i]
        total_weights[c, total_index[i]] += gamma
        for k in range(offsets[i], offsets[i + 1]):
            weights[c, label[k], value_index[k]] += gamma
    return weights, total_weights


@numba.njit(cache=True, nogil=True)
def draw_population(rng, v, values, weights, totals, total_weights, beta, shape, rate,
                    width):  # pragma: no cover - compiled
    """Step 1 of the sweep, in place on ``v (class, 1 + label_class)``: each class's ``psi_c``
    given ``kappa`` (:func:`draw_base`), then ``kappa`` (:func:`draw_concentration`), from
    :func:`class_summaries`' weights of the distinct ``values (class, label_class, value)``
    and ``totals (class, total)``; returns ``log kappa`` and ``log psi (class,
    label_class)``."""
    n_classes = v.shape[0]
    for c in range(n_classes):
        draw_base(rng, v[c], values[c], weights[c], totals[c], total_weights[c], beta[c],
                  shape, rate, width)
    log_psi = np.empty((n_classes, n_classes))
    for c in range(n_classes):
        top = v[c, 1:].max()
        log_sum = top + math.log(np.exp(v[c, 1:] - top).sum())
        for x in range(n_classes):
            log_psi[c, x] = v[c, 1 + x] - log_sum
    log_kappa = draw_concentration(rng, v[0, 0], log_psi, values, weights, totals,
                                   total_weights, shape, rate, width)
    for c in range(n_classes):
        v[c, 0] = log_kappa
    return log_kappa, log_psi


class ChainState:
    """One chain's state: classes ``z (item,)``, the population's coordinates ``v (class, 1 +
    label_class)`` (``log kappa``, the same in every row, and ``log g_c``: ``psi_c = g_c / sum
    g_c``), ``log_prior``
    ``(1, class)`` or the classifier's ``(item, class)`` with its state ``prior``."""

    def __init__(self, kernel: VotesDawidSkeneKernel, z: np.ndarray, v: np.ndarray, x=None):
        self.z, self.v = z, v
        self.alpha = np.exp(v[:, :1] + v[:, 1:] - np.logaddexp.reduce(v[:, 1:], axis=1,
                                                                        keepdims=True))
        classifier = kernel.classifier
        self.prior = None if classifier is None else classifier.start(z, x)
        self.log_prior = (np.full((1, kernel.design.n_classes), -math.log(kernel.design.n_classes))
                          if classifier is None else self.prior["log_prior"])


class VotesDawidSkeneKernel(PyMCKernel):
    """The sweep of the module for a :class:`VoteDesign`: the rows' prior ``beta (class,
    label_class)`` (``psi_c ~ Dirichlet(beta_c)``), Gamma ``concentration_prior (shape,
    rate)`` of ``kappa``, class concentration ``a (class,)``, reliability ``gamma``;
    ``classifier``: a :class:`~plausible.models.classifier_prior.ClassifierPrior` in place of
    ``pi``."""

    name = "plausible.models.votes_dawid_skene.sampler"
    default_tune = DEFAULT_TUNE
    default_thin = 1
    lazy_variables = ("plausibility",)

    def __init__(self, design: VoteDesign, beta, concentration_prior, a, gamma: float, *,
                 classifier=None, dtype=np.float32):
        self.design, self.gamma, self.dtype = design, float(gamma), dtype
        self.beta = np.ascontiguousarray(beta, dtype=np.float64)
        self.shape, self.rate = (float(v) for v in concentration_prior)
        self.a = np.asarray(a, dtype=np.float64)
        self.classifier = classifier
        N, C = design.n_items, design.n_classes
        prior = ({"class_prior": Variable(("class",), (C,))} if classifier is None else
                 {"temperature": Variable((), ()), "class_bias": Variable(("class",), (C,))})
        self.variables = {
            **prior,
            "population_confusion": Variable(("class", "label_class"), (C, C)),
            "concentration": Variable((), ()),
            "plausibility": Variable(("item", "class"), (N, C), dtype)}
        self.stats = {"classes_changed": Variable((), (), np.int64)}
        # the distinct counts and totals as every class's summary has them
        self._values = np.ascontiguousarray(np.broadcast_to(design.values, (C, C,
                                                                           design.values.size)))
        self._totals = np.ascontiguousarray(np.broadcast_to(design.totals, (C,
                                                                           design.totals.size)))
        self._no_store = np.empty((0, C), dtype=dtype)

    def population_start(self, z: np.ndarray) -> np.ndarray:
        """``v``: ``kappa = C`` and ``psi_c`` the votes' pooled shares on the items of class
        ``c`` under ``z``, smoothed by ``beta_c``."""
        C = self.design.n_classes
        pooled = np.zeros((C, C))
        np.add.at(pooled, z, self.design.counts)
        pooled += self.beta
        return np.concatenate([np.full((C, 1), math.log(C)),
                               np.log(pooled / pooled.sum(axis=1, keepdims=True))], axis=1)

    def start(self, rng):
        z = self.design.vote_share_classes(rng)
        return ChainState(self, z, self.population_start(z))

    def load(self, values, rng):
        """The classes ``true_class``, ``psi`` and ``kappa`` from the model's values (``psi_c``'s
        Gamma weights with their scale drawn from its conditional, its prior ``Gamma(sum
        beta_c, 1)``), and the class prior's."""
        z = np.array(values["true_class"], dtype=np.int64)
        log_psi = np.log(np.asarray(values["population_confusion"], dtype=np.float64))
        log_kappa = np.full(self.design.n_classes, math.log(float(values["concentration"])))
        v = np.concatenate([log_kappa[:, None],
                            log_psi + log_gamma_draws(rng, self.beta.sum(axis=1))[:, None]], 1)
        x = (None if self.classifier is None else
             np.r_[float(values["temperature"]), np.asarray(values["class_bias"], float)])
        return ChainState(self, z, v, x)

    def to_point(self, state, draw):
        return {**{name: draw[name] for name in self.variables if name != "plausibility"},
                "true_class": state.z.copy()}

    def sweep(self, rng, state, out):
        design, C = self.design, self.design.n_classes
        weights, total_weights = class_summaries(
            design.offsets, design.label, design.value_index, design.total_index, state.z, C,
            design.values.size, design.totals.size, self.gamma)
        log_kappa, log_psi = draw_population(rng, state.v, self._values, weights, self._totals,
                                             total_weights, self.beta, self.shape, self.rate,
                                             WIDTH)
        state.alpha = np.exp(log_kappa + log_psi)
        if self.classifier is None:
            m = np.bincount(state.z, minlength=C)
            g = log_gamma_draws(rng, self.a + m)
            state.log_prior[0] = g - np.logaddexp.reduce(g)
        else:
            self.classifier.draw(rng, state.z, state.prior)
            state.log_prior = state.prior["log_prior"]
        u = rng.random(design.n_items)
        table, total_table = log_gamma_tables(state.alpha, design.values, design.totals,
                                              self.gamma)
        store = out.get("plausibility", self._no_store) if out is not None else self._no_store
        changed = class_sweep(design.offsets, design.label, design.value_index,
                              design.total_index, table, total_table, state.log_prior, u,
                              state.z, store)
        if out is not None:
            if self.classifier is None:
                out["class_prior"][...] = np.exp(state.log_prior[0])
            else:
                for name, value in self.classifier.values(state.prior).items():
                    out[name][...] = value
            out["population_confusion"][...] = np.exp(log_psi)
            out["concentration"][...] = math.exp(log_kappa)
            out["classes_changed"][...] = changed
        return state

    def compute_when_read(self, values) -> dict:
        if self.classifier is None:
            log_pi = np.log(values["class_prior"])

            def log_prior(c, d0, d1, i0, i1):
                return log_pi[c, d0:d1, None, :]
        else:
            tau, b, log_p = values["temperature"], values["class_bias"], self.classifier.log_p

            def log_prior(c, d0, d1, i0, i1):
                return block_log_prior(tau[c, d0:d1], b[c, d0:d1], log_p[i0:i1])
        alpha = values["concentration"][..., None, None] * values["population_confusion"]
        return {"plausibility": lazy_plausibility(self.design, alpha, log_prior, self.gamma,
                                                  self.dtype)}


def lazy_plausibility(design: VoteDesign, alpha, log_prior, gamma: float, dtype) -> da.Array:
    """``(chain, draw, item, class)`` dask array of the class posteriors at the stored
    ``alpha (chain, draw, class, label_class)`` and ``log_prior(chain, d0, d1, i0, i1)``
    (``(draw, item or 1, class)``), chunked by items as the metrics read them and one draw a
    chunk: a reader of every ``k``-th draw (the convergence report on a long run) computes
    only those."""
    chains, draws, C = alpha.shape[0], alpha.shape[1], design.n_classes
    _, item_step = chunk_steps(Layout(("chain", "draw"), (chains, draws), design.n_items, C), C)
    draw_step = 1

    def block(block_info=None):
        (c0, _), (d0, d1), (i0, i1), _ = block_info[None]["array-location"]
        out = np.empty((d1 - d0, i1 - i0, C))
        item_kernel(design.offsets, design.label, design.value_index, design.total_index,
                    design.values, design.totals, np.ascontiguousarray(alpha[c0, d0:d1]),
                    np.ascontiguousarray(log_prior(c0, d0, d1, i0, i1)), gamma, i0, i1, out,
                    np.empty((0, 0)))
        return out[None].astype(dtype, copy=False)

    chunks = ((1,) * chains, _steps(draws, draw_step), _steps(design.n_items, item_step), (C,))
    return da.map_blocks(block, chunks=chunks, dtype=dtype,
                         meta=np.empty((0, 0, 0, 0), dtype=dtype),
                         name=f"plausibility-{uuid.uuid4().hex}")


def _steps(n: int, step: int) -> tuple[int, ...]:
    return tuple(min(step, n - a) for a in range(0, n, step))


__all__ = ["ChainState", "VoteDesign", "VotesDawidSkeneKernel", "class_summaries",
           "class_sweep", "concentration_log_density", "draw_base", "draw_concentration",
           "draw_population", "item_kernel", "lazy_plausibility", "log_gamma_tables"]
