"""Exact Gibbs kernel of the ambiguity model (:func:`plausible.models.ambiguity.build`): each
item's own distribution over the classes, annotators who report through their Dawid–Skene
confusion matrices.

Annotation ``r`` (annotator ``j_r`` on item ``i_r``, label ``x_r``) has an intended class
``t_r ~ Categorical(lambda_{i_r})``, ``lambda_i ~ Dirichlet(alpha)`` with ``alpha = kappa
mu``, and ``x_r ~ Categorical(theta_{j_r}[t_r])``, ``theta_j[c] ~ Dirichlet(beta_c)``. A
whole-number reliability ``gamma`` repeats every annotation ``gamma`` times, each copy with
its own intended class (the caller passes the repeated annotations: the kernel sees
``gamma = 1``), so that the classes summed out give ``gamma log sum_c lambda_ic theta_j[c,
x]``, the likelihood the PyMC graph tempers.

State: ``t (annotation,)``, the per-item counts ``n (item, class)`` of the intended classes,
the population's coordinates ``v = (log kappa, log g)``
(:mod:`plausible.inference.step_methods.dirichlet_multinomial_population`; only ``alpha`` fixed when the
population is). One sweep, every step an exact draw from a full conditional of ``p(t, theta,
alpha | x)`` (``lambda`` integrated out) or a slice update of one, so their composition leaves
it invariant:

1. ``theta_j[c] | t, x ~ Dirichlet(beta_c + counts_j[c, :])``, ``counts_j[c, x]`` the
   annotator's annotations intended ``c`` and labelled ``x``; or, for one-coin annotators
   (``theta_j = acc_j`` on the diagonal, ``(1 - acc_j) / (C - 1)`` elsewhere), ``acc_j | t,
   x ~ Beta(a + right_j, b + wrong_j)``, ``right_j`` the annotations whose label is their
   intended class;
2. ``(kappa, mu) | t`` from the Dirichlet-multinomial rows ``n_i`` (every ``lambda_i``
   integrated out: slice scan plus the scale of the base measure's Gamma weights, as the
   hierarchical Dirichlet vote model draws it,
   :mod:`plausible.models.dirichlet.hierarchical_sampler`);

then, with ``sampler="urn"`` (:func:`urn_step`; with the population fixed, 3 only),

2b. ``log kappa | mu, theta, x`` by a slice update with the intended classes summed out too,
   each item's ``log p(x_i | theta, kappa mu)`` by the Pólya urn's forward pass over the
   counts of its intended classes (:mod:`plausible.maths.dirichlet_mixture`);
3. every item's intended classes drawn jointly, ``t_i ~ p(t_i | x_i, theta, alpha)``, by the
   same forward pass and backward sampling. Step 2 alone moves ``kappa`` only as far as the
   current counts allow, and the counts only as far as ``kappa`` allows: on Snow's RTE the
   single-site chains below held ``kappa`` for hundreds of sweeps (bulk ESS 11 in 4 x 1000
   draws, R-hat 1.29); 2b moves it with the classes out of the way (ESS 706). 2b followed
   by 3 is a draw from ``p(kappa | mu, theta, x)``'s kernel and then from ``p(t | kappa, mu,
   theta, x)``, so it leaves the joint posterior invariant;

or, with ``sampler="single-site"`` (the default where a forward pass costs more than
:data:`URN_COST` products a label: many classes and many labels an item),

3. each ``t_r`` in turn with ``lambda_{i_r}`` integrated out, ``P(t_r = c | rest) ∝ (alpha_c
   + n_{i_r c}^{-r}) theta_{j_r}[c, x_r]`` (a compiled loop over the annotations, the counts
   updated in place; its uniforms are drawn from the chain's generator beforehand, so a seed
   gives the same draws);
   3b. per item, a Metropolis move swapping two classes in all its intended classes at once
   (:func:`swap_moves`). Single-site updates alone barely move an item whose population is
   concentrated near the simplex's corners (small ``kappa``): every intended class is held
   by the others' counts, ``alpha_c + n_ic``, so an item whose labels could come from either
   class through the annotators' errors sits in one mode for hundreds of sweeps (SBC showed
   it: the ranks of ``lambda`` piled at both ends). The swap crosses between the modes in
   one step and leaves the posterior invariant (symmetric proposal, exact ratio);
   3c. per item whose intended classes all agree, a Gibbs draw of the common class among
   the ``C`` unanimous assignments (:func:`unanimous_moves`). Where the data say items are
   hardly ambiguous the population's ``kappa`` goes to 0 and nearly every item is
   unanimous: this step is then Dawid–Skene's collapsed class draw, where a random pair
   swap would reach the right class only when the pair happens to hold it;
4. at kept sweeps, ``lambda_i ~ Dirichlet(alpha + n_i)``, an exact draw given the state,
   recorded as ``plausibility``.

Chains start dispersed: each ``t_r`` drawn from an even mix of its item's label shares and the
uniform distribution, and the population's coordinates jittered by ``U(-1, 1)`` on the log
scale (as the hierarchical Dirichlet kernel does).

The trace: ``posterior`` with ``confusion (annotator, class, label_class)`` (one-coin:
``accuracy (annotator)``), ``plausibility
(item, class)`` (``dtype``) and, with a learned population, ``concentration`` and
``base_measure (class)``; ``sample_stats/classes_changed``, the intended classes that moved
in the sweep.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from plausible.models.dawid_skene.members import OneCoin
from plausible.inference.step_methods.dirichlet_draws import dense_draws
from plausible.inference.step_methods.dirichlet_multinomial_population import count_summary, draw_population
from plausible.inference.kernel import PyMCKernel, Variable
from plausible.inference.step_methods.univariate_slice import slice_update
from plausible.maths.dirichlet_mixture import (compositions, item_backward, item_forward,
                                               pass_cost, predecessors)
from plausible.maths.logspace import log_beta_draws, log_gamma_draw

DEFAULT_TUNE = 300
"""Warm-up sweeps: the intended classes and the population settle within tens of sweeps on
small data; the extra margin is cheap (one pass over the annotations a sweep)."""
WIDTH = 1.0
"""Slice width on the log scale of ``kappa`` and of the base measure's weights."""
DISPERSION = 1.0
"""Half-width of the uniform jitter of each chain's population on those log scales."""
URN_COST = 20
"""Most products a forward pass over every item (:func:`plausible.maths.dirichlet_mixture.
pass_cost`) may take per annotation for ``sampler="urn"`` to be the default. An urn sweep
costs about seven passes (five or so density evaluations of the slice update, one at its
start, one for the classes), 3 to 7 times a single-site sweep on Snow's tasks, dentistry and
the simulated crowd alike; whether it pays is whether single-site mixes. Measured at 4 x 1000
draws (worst quantity's bulk ESS per second, urn against single-site): RTE (11 products a
label) 24x, TEMP (11) 3.2x, dentistry (6) 1.7x, where ``kappa`` is near 0.05-0.3 and the
single-site chains hold it; WSD (66) 0.39x and a simulated 5-class crowd (176) 0.42x, where
``kappa`` is near 0.005 and the unanimous move already mixes. Two classes and up to 19
labels an item are below it."""
URN_STATES = 10**5
"""Most count vectors the urn's tables may hold: the compositions of up to the largest item's
labels into the classes, ``binom(m + C, C)``, in three int64 tables of that many rows by
``C`` (24 MB at ten classes). Two classes allow items of up to 445 labels, three up to 82."""
SAMPLERS = ("urn", "single-site")


@numba.njit(nogil=True, cache=True)
def intended_sweep(item, annotator, label, t, n, theta, alpha, u):  # pragma: no cover
    """Draw every ``t[r]`` in turn given the others, ``lambda`` integrated out: ``P(t_r = c)
    ∝ (alpha_c + n[i_r, c] without r) theta[j_r, c, x_r]``, with ``u (annotation,)`` the
    uniforms; ``n (item, class)`` is kept up to date in place. Returns how many moved."""
    n_classes = alpha.size
    cumulative = np.empty(n_classes)
    changed = 0
    for r in range(t.size):
        i, j, x, old = item[r], annotator[r], label[r], t[r]
        n[i, old] -= 1
        total = 0.0
        for c in range(n_classes):
            total += (alpha[c] + n[i, c]) * theta[j, c, x]
            cumulative[c] = total
        new = old
        if total > 0.0:  # every row's entry underflowed: keep the class
            target = u[r] * total
            new = 0
            while new < n_classes - 1 and cumulative[new] <= target:
                new += 1
        t[r] = new
        n[i, new] += 1
        if new != old:
            changed += 1
    return changed


@numba.njit(nogil=True, cache=True)
def swap_moves(offsets, order, annotator, label, t, n, theta, alpha, u_pair, u_accept
               ):  # pragma: no cover - compiled
    """Step 3b: per item, a Metropolis move that swaps two classes ``a <-> b`` (a uniform
    pair, ``u_pair (item, 2)``) in all its intended classes at once, accepted with ``u_accept
    (item,)`` at the ratio of ``p(t_i | alpha, theta) ∝ DM(n_i | alpha) prod_r theta_{j_r}[t_r,
    x_r]``: ``Gamma(alpha_a + n_b) Gamma(alpha_b + n_a) / (Gamma(alpha_a + n_a) Gamma(alpha_b +
    n_b))`` times each swapped label's ratio of confusion entries (a symmetric proposal).
    ``offsets``/``order``: each item's annotations. ``n`` kept up to date. Returns the moves
    accepted."""
    n_classes = alpha.size
    accepted = 0
    for i in range(offsets.size - 1):
        a = min(int(u_pair[i, 0] * n_classes), n_classes - 1)
        b = min(int(u_pair[i, 1] * (n_classes - 1)), n_classes - 2)
        if b >= a:
            b += 1
        na, nb = n[i, a], n[i, b]
        log_ratio = (math.lgamma(alpha[a] + nb) + math.lgamma(alpha[b] + na)
                     - math.lgamma(alpha[a] + na) - math.lgamma(alpha[b] + nb))
        for k in range(offsets[i], offsets[i + 1]):
            r = order[k]
            c = t[r]
            if c == a or c == b:
                other = b if c == a else a
                log_ratio += (math.log(max(theta[annotator[r], other, label[r]], 1e-300))
                              - math.log(max(theta[annotator[r], c, label[r]], 1e-300)))
        if math.log(u_accept[i]) < log_ratio:
            for k in range(offsets[i], offsets[i + 1]):
                r = order[k]
                if t[r] == a:
                    t[r] = b
                elif t[r] == b:
                    t[r] = a
            n[i, a], n[i, b] = nb, na
            accepted += 1
    return accepted


@numba.njit(nogil=True, cache=True)
def unanimous_moves(offsets, order, annotator, label, t, n, theta, alpha, u
                    ):  # pragma: no cover - compiled
    """Step 3c: per item whose intended classes all agree, a Gibbs draw of their common
    class among the ``C`` unanimous assignments, ``P(all = c) ∝ Gamma(alpha_c + m) /
    Gamma(alpha_c) prod_r theta_{j_r}[c, x_r]`` (``m`` the item's annotations, ``u
    (item,)`` the uniforms); an item whose classes disagree is left as it is. The unanimous
    assignments are the same set from each of them, so the draw is a Gibbs step on the
    posterior restricted to it, and leaves the posterior invariant. ``n`` kept up to date.
    Returns the items whose class moved."""
    n_classes = alpha.size
    log_w = np.empty(n_classes)
    moved = 0
    for i in range(offsets.size - 1):
        m = offsets[i + 1] - offsets[i]
        current = t[order[offsets[i]]] if m > 0 else -1
        if m == 0 or n[i, current] != m:
            continue
        for c in range(n_classes):
            log_w[c] = math.lgamma(alpha[c] + m) - math.lgamma(alpha[c])
        for k in range(offsets[i], offsets[i + 1]):
            r = order[k]
            for c in range(n_classes):
                log_w[c] += math.log(max(theta[annotator[r], c, label[r]], 1e-300))
        top = log_w.max()
        total = 0.0
        for c in range(n_classes):
            log_w[c] = math.exp(log_w[c] - top)
            total += log_w[c]
        target, chosen = u[i] * total, n_classes - 1
        for c in range(n_classes):
            target -= log_w[c]
            if target < 0:
                chosen = c
                break
        if chosen != current:
            for k in range(offsets[i], offsets[i + 1]):
                t[order[k]] = chosen
            n[i, current], n[i, chosen] = 0, m
            moved += 1
    return moved


@numba.njit(nogil=True, cache=True)
def collapsed_log_density(x, log_mu, theta, annotator, label, start, counts, successor, offset,
                          weight, shape, rate):  # pragma: no cover - compiled
    """``log p(log kappa = x | mu, theta, labels)`` up to a constant, the intended classes
    and every ``lambda_i`` summed out: the Gamma ``(shape, rate)`` prior of ``kappa`` with its
    log-scale Jacobian, ``shape x - rate e^x``, plus each item's ``log p(x_i | theta, e^x
    mu)`` (:func:`plausible.maths.dirichlet_mixture.item_forward`; the items' labels
    ``start[i]:start[i + 1]`` of ``annotator, label``; ``weight`` the pass's buffer)."""
    alpha = np.exp(x + log_mu)
    out = shape * x - rate * math.exp(x)
    for i in range(start.size - 1):
        lo, hi = start[i], start[i + 1]
        out += item_forward(weight, theta, alpha, annotator[lo:hi], label[lo:hi], hi - lo,
                            counts, successor, offset)
    return out


_collapsed_update = slice_update(collapsed_log_density)


@numba.njit(nogil=True, cache=True)
def urn_step(rng, log_kappa, log_mu, learned, theta, annotator, label, start, order, counts,
             successor, predecessor, offset, shape, rate, width, t, n
             ):  # pragma: no cover - compiled
    """Steps 2b and 3 of ``sampler="urn"`` (module): with ``learned``, a slice update of
    ``log kappa`` under :func:`collapsed_log_density` (``mu`` and ``theta`` held); then every
    item's intended classes drawn jointly from ``p(t_i | x_i, theta, alpha)``, ``alpha =
    exp(log kappa + log mu)``, by the urn's forward pass and backward sampling. ``annotator,
    label`` sorted by item (``start``), ``order`` their positions in ``t``; ``n`` rewritten.
    Returns the new ``log kappa`` and the intended classes that moved. An item whose labels
    no intended class can give (a confusion entry underflowed) keeps its classes."""
    weight = np.empty(offset[-1])
    if learned:
        args = (log_mu, theta, annotator, label, start, counts, successor, offset, weight,
                shape, rate)
        log_fx = collapsed_log_density(log_kappa, *args)
        log_kappa, _, _ = _collapsed_update(rng, log_kappa, log_fx, -np.inf, np.inf, width, 0,
                                            args)
    alpha = np.exp(log_kappa + log_mu)
    longest = 0
    for i in range(start.size - 1):
        longest = max(longest, start[i + 1] - start[i])
    u = np.empty(longest + 1)
    drawn = np.empty(longest, dtype=np.int64)
    changed = 0
    for i in range(start.size - 1):
        lo, hi = start[i], start[i + 1]
        m = hi - lo
        for k in range(m + 1):
            u[k] = rng.random()
        if item_forward(weight, theta, alpha, annotator[lo:hi], label[lo:hi], m, counts,
                        successor, offset) == -np.inf:
            continue
        item_backward(weight, theta, alpha, annotator[lo:hi], label[lo:hi], m, counts,
                      predecessor, offset, u, drawn)
        for c in range(alpha.size):
            n[i, c] = 0
        for k in range(m):
            r = order[lo + k]
            if t[r] != drawn[k]:
                changed += 1
            t[r] = drawn[k]
            n[i, drawn[k]] += 1
    return log_kappa, changed


@numba.njit(nogil=True, cache=True)
def _confusion_counts(annotator, t, label, n_annotators, n_classes):  # pragma: no cover
    """``counts (annotator, class, label_class)`` of (intended class, label) per annotator."""
    counts = np.zeros((n_annotators, n_classes, n_classes))
    for r in range(t.size):
        counts[annotator[r], t[r], label[r]] += 1.0
    return counts


def choose_sampler(labels_per_item: np.ndarray, n_classes: int, sampler: str | None) -> str:
    """``sampler`` checked, or (None) ``"urn"`` where its tables hold at most
    :data:`URN_STATES` count vectors and a forward pass takes at most :data:`URN_COST`
    products per annotation, else ``"single-site"``. ``"urn"`` asked for where the tables
    would not fit is refused in one line."""
    if sampler is not None and sampler not in SAMPLERS:
        raise ValueError(f"sampler must be one of {', '.join(map(repr, SAMPLERS))} or None, "
                         f"got {sampler!r}")
    if sampler == "single-site":
        return sampler
    longest = int(np.max(labels_per_item, initial=0))
    states = math.comb(longest + n_classes, n_classes)
    if sampler == "urn":
        if states > URN_STATES:
            raise ValueError(f"sampler='urn' needs {states:.1e} count vectors for an item with "
                             f"{longest} labels over {n_classes} classes, more than "
                             f"{URN_STATES:.0e}: use sampler='single-site'")
        return sampler
    cost = pass_cost(labels_per_item, n_classes)
    affordable = states <= URN_STATES and cost <= URN_COST * max(int(labels_per_item.sum()), 1)
    return "urn" if affordable else "single-site"


class AmbiguityState:
    """A chain's state: intended classes ``t``, per-item counts ``n``, the population's
    coordinates ``v`` (``log kappa, log g``; unused with a fixed population) and the
    confusion matrices ``theta`` of the last sweep."""

    def __init__(self, kernel, t, v):
        self.t = np.ascontiguousarray(t, dtype=np.int64)
        self.n = np.zeros((kernel.n_items, kernel.n_classes), dtype=np.int64)
        np.add.at(self.n, (kernel.item, self.t), 1)
        self.v = np.asarray(v, dtype=np.float64).copy()
        self.theta = np.empty((kernel.n_annotators, kernel.n_classes, kernel.n_classes))
        self.log_alpha = (np.log(kernel.fixed_alpha) if kernel.fixed_alpha is not None
                          else np.full(kernel.n_classes, np.nan))


class AmbiguityKernel(PyMCKernel):
    """The sweep of the module for the (already repeated) annotations ``item, annotator,
    label`` (int arrays, one entry per copy) of ``n_items`` items, ``n_annotators``
    annotators and ``n_classes`` classes; ``sampler``: ``"urn"``, ``"single-site"`` or None
    (:func:`choose_sampler`).

    ``beta (class, label_class)``: the confusion rows' Dirichlet concentration, or
    ``accuracy_prior = (a, b)``: one-coin annotators with ``acc_j ~ Beta(a, b)`` (exactly one
    of the two);
    ``concentration_prior`` Gamma ``(shape, rate)`` of ``kappa`` and ``base_prior (class,)``
    the Dirichlet of ``mu``; ``fixed_alpha (class,)``: hold ``alpha`` there instead of
    learning it (then neither ``concentration`` nor ``base_measure`` is recorded)."""

    name = "plausible.models.ambiguity.sampler"
    default_tune = DEFAULT_TUNE
    default_thin = 1

    def __init__(self, item, annotator, label, *, n_items: int, n_annotators: int,
                 n_classes: int, beta=None, accuracy_prior=None, concentration_prior=(1.0, 1.0),
                 base_prior=None, fixed_alpha=None, sampler=None, dtype=np.float32):
        self.item, self.annotator, self.label = (np.ascontiguousarray(a, dtype=np.int64)
                                                 for a in (item, annotator, label))
        self.n_items, self.n_annotators, self.n_classes = (int(n_items), int(n_annotators),
                                                           int(n_classes))
        C = self.n_classes
        if (beta is None) == (accuracy_prior is None):
            raise ValueError("give the confusion rows' beta or the one-coin accuracy_prior, "
                             "not both or neither")
        self.beta = None if beta is None else np.ascontiguousarray(
            beta, dtype=np.float64).reshape(C, C)
        self.accuracy_prior = (None if accuracy_prior is None
                               else tuple(float(v) for v in accuracy_prior))
        self.shape, self.rate = (float(x) for x in concentration_prior)
        self.base_prior = (np.ones(C) if base_prior is None
                           else np.asarray(base_prior, dtype=np.float64))
        self.fixed_alpha = (None if fixed_alpha is None
                            else np.asarray(fixed_alpha, dtype=np.float64).reshape(C))
        self.order = np.argsort(self.item, kind="stable")
        self.offsets = np.searchsorted(self.item[self.order], np.arange(self.n_items + 1))
        shares = np.zeros((self.n_items, C))
        np.add.at(shares, (self.item, self.label), 1.0)
        self.shares = shares / np.maximum(shares.sum(axis=1, keepdims=True), 1.0)
        learned = self.fixed_alpha is None
        self.variables = {
            **({"concentration": Variable((), ()),
                "base_measure": Variable(("class",), (C,))} if learned else {}),
            **({"confusion": Variable(("annotator", "class", "label_class"),
                                      (self.n_annotators, C, C))} if self.beta is not None
               else {"accuracy": Variable(("annotator",), (self.n_annotators,))}),
            "plausibility": Variable(("item", "class"), (self.n_items, C), dtype)}
        self.stats = {"classes_changed": Variable((), (), np.int64)}
        labels_per_item = np.diff(self.offsets)
        self.sampler = choose_sampler(labels_per_item, C, sampler)
        if self.sampler == "urn":
            self.counts, self.successor, self.urn_offset = compositions(
                C, int(labels_per_item.max(initial=0)))
            self.predecessor = predecessors(self.successor)
            self.sorted_annotator = self.annotator[self.order]
            self.sorted_label = self.label[self.order]

    @property
    def learned(self) -> bool:
        return self.fixed_alpha is None

    def _population_start(self, rng):
        C = self.n_classes
        v = np.log(np.concatenate([[C], np.full(C, 1.0 / C)]))
        return v + rng.uniform(-DISPERSION, DISPERSION, v.size)

    def start(self, rng):
        """``t_r`` from an even mix of its item's label shares and the uniform, the population
        jittered (module docstring)."""
        C = self.n_classes
        p = 0.5 * self.shares[self.item] + 0.5 / C
        u = rng.random(self.item.size)
        t = np.minimum((p.cumsum(axis=1) <= u[:, None]).sum(axis=1), C - 1)
        return AmbiguityState(self, t, self._population_start(rng))

    def load(self, values, rng):
        """A state from the model's free variables: ``t_r`` drawn from its conditional given
        ``plausibility`` and ``confusion`` (``P(t_r = c) ∝ lambda_{i_r c} theta_{j_r}[c,
        x_r]``), the population's coordinates from ``concentration`` and ``base_measure`` with
        the scale of the base measure's weights drawn from its prior ``Gamma(sum beta, 1)``."""
        lam = np.asarray(values["plausibility"], dtype=np.float64)
        theta = (np.asarray(values["confusion"], dtype=np.float64) if self.beta is not None
                 else OneCoin.confusion({"accuracy": np.asarray(values["accuracy"],
                                                                dtype=np.float64)},
                                        self.n_classes))
        weights = lam[self.item] * theta[self.annotator, :, self.label]
        cumulative = weights.cumsum(axis=1)
        u = rng.random(self.item.size) * cumulative[:, -1]
        t = np.minimum((cumulative <= u[:, None]).sum(axis=1), self.n_classes - 1)
        if self.learned:
            log_g = (np.log(np.asarray(values["base_measure"], dtype=np.float64))
                     + log_gamma_draw(rng, self.base_prior.sum()))
            v = np.concatenate([[np.log(float(values["concentration"]))], log_g])
        else:
            v = np.zeros(1 + self.n_classes)
        return AmbiguityState(self, t, v)

    def to_point(self, state, draw):
        return {name: draw[name] for name in self.variables}

    def _single_site(self, rng, state, alpha):
        """Step 3 of ``sampler="single-site"``: each intended class in turn, then per item
        the swap and the unanimous moves; returns the intended classes the first moved."""
        u = rng.random(self.item.size)
        changed = intended_sweep(self.item, self.annotator, self.label, state.t, state.n,
                                 state.theta, alpha, u)
        if self.n_classes > 1:
            u_pair, u_accept = rng.random((self.n_items, 2)), rng.random(self.n_items)
            swap_moves(self.offsets, self.order, self.annotator, self.label, state.t, state.n,
                       state.theta, alpha, u_pair, u_accept)
            unanimous_moves(self.offsets, self.order, self.annotator, self.label, state.t,
                            state.n, state.theta, alpha, rng.random(self.n_items))
        return changed

    def sweep(self, rng, state, out):
        """Steps 1–4 of the module docstring (4 at kept sweeps only)."""
        C = self.n_classes
        counts = _confusion_counts(self.annotator, state.t, self.label, self.n_annotators, C)
        if self.beta is not None:
            dense_draws(rng, (self.beta[None] + counts).reshape(-1, C),
                        state.theta.reshape(1, -1, C))
        else:
            right = np.trace(counts, axis1=1, axis2=2)
            a, b = self.accuracy_prior
            log_acc, _ = log_beta_draws(rng, a + right, b + counts.sum(axis=(1, 2)) - right)
            accuracy = np.exp(log_acc)
            state.theta[...] = OneCoin.confusion({"accuracy": accuracy}, C)
        if self.learned:
            summary = count_summary(state.n.astype(np.float64))
            state.log_alpha = draw_population(rng, state.v, summary, True, self.base_prior,
                                              self.shape, self.rate, WIDTH)
        if self.sampler == "urn":
            log_mu = state.log_alpha - state.v[0] if self.learned else state.log_alpha
            log_kappa, changed = urn_step(
                rng, state.v[0] if self.learned else 0.0, log_mu, self.learned, state.theta,
                self.sorted_annotator, self.sorted_label, self.offsets, self.order,
                self.counts, self.successor, self.predecessor, self.urn_offset, self.shape,
                self.rate, WIDTH, state.t, state.n)
            if self.learned:
                state.v[0] = log_kappa
                state.log_alpha = log_kappa + log_mu
            alpha = np.exp(state.log_alpha)
        else:
            alpha = np.exp(state.log_alpha)
            changed = self._single_site(rng, state, alpha)
        if out is not None:
            if "plausibility" in out:
                dense_draws(rng, alpha[None, :] + state.n, out["plausibility"][None])
            if "confusion" in out:
                out["confusion"][...] = state.theta
            if "accuracy" in out:
                out["accuracy"][...] = accuracy
            if self.learned:
                kappa = alpha.sum()
                if "concentration" in out:
                    out["concentration"][...] = kappa
                if "base_measure" in out:
                    out["base_measure"][...] = alpha / kappa
            if "classes_changed" in out:
                out["classes_changed"][...] = changed
        return state


__all__ = ["SAMPLERS", "URN_COST", "URN_STATES", "AmbiguityKernel", "choose_sampler",
           "collapsed_log_density", "intended_sweep", "swap_moves", "unanimous_moves",
           "urn_step"]
