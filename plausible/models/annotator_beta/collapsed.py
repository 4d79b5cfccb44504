"""Collapsed Gibbs sweep for Carpenter's (2008) annotator-beta model: the prevalence and every
annotator's accuracies integrated out of the class draws.

Model and notation as :mod:`plausible.models.annotator_beta.gibbs`: classes ``c_i`` in
{0, 1}, prevalence ``q ~ Beta(a_q, b_q)``, accuracy blocks ``b`` (specificity covers class 0,
sensitivity class 1, a symmetric accuracy both) whose entry ``e = index[b, j]`` is annotator
``j``'s, ``theta_be ~ Beta(alpha_b, beta_b)``. A label of class ``c`` *agrees* when it equals
``c``; the entry it counts for is ``e = index[b(c), j]``.

**The class sweep.** With ``q`` and every ``theta`` integrated out under their Beta priors,
item ``i``'s class given every other item's is a product of Beta–binomial predictive terms
(the collapsed scheme of Griffiths & Steyvers 2004, here for Carpenter's model)::

    P(c_i = c | c_-i, hyper, x)  ∝  (a_c + n_c)  prod_{k in item i}  pred_k(c),
    pred_k(c) = prod_{r < gamma} (prior_k + A_k + r) / (alpha_b + beta_b + N_be + r),

with ``a_1 = a_q``, ``a_0 = b_q``, ``n_c`` the other items in class ``c``, and for label ``k``
under class ``c``: ``A_k`` the copies of agreeing (or, for a disagreeing label, disagreeing)
labels already counted for its entry ``e`` of block ``b = b(c)``, ``prior_k = alpha_b`` (agree)
or ``beta_b`` (disagree), ``N_be`` all copies counted for the entry. The reliability ``gamma``
(a whole number) repeats every label ``gamma`` times. The item's labels are taken in their
stored order, each one's copies counted before the next one's term, so labels that share an
entry (an annotator who labelled the item twice, the pooled accuracy) are exact too. One sweep
draws every item's class in turn, the counts updated in place: a chain on the classes alone,
which does not couple an annotator with few labels to the classes of their items the way
data augmentation does (classes given accuracies, accuracies given classes).

**The hyper-parameters** (hierarchical and symmetric variants) of group ``g`` are then drawn
given the classes with the accuracies integrated out too: their priors are uniform on their
support (:mod:`plausible.inference.step_methods.slice_hyper`), so their conditional is the Beta–binomial
marginal of the group's copy counts,

    log p(m_g, u_g | c, x) = sum_e [log B(m s + A_e, (1 - m) s + D_e) - log B(m s, (1 - m) s)]
                             + const,   s = u^-2,

(``A_e``, ``D_e``: entry ``e``'s agreeing and disagreeing copies), updated by an exact slice
scan (Neal 2003), each term computed once per distinct ``(A_e, D_e)`` (few: most workers have a
handful of labels). Conditioning on the accuracies instead, as the data-augmentation sweep
does, couples the population to the draws of workers whose labels barely inform them.

**The recorded draw.** The chain is on the classes and the hyper-parameters ``h``: the class
sweep leaves ``p(c | h, x)`` invariant and the scan ``p(h | c, x)``. After a step's sweeps,
``q`` and the accuracies are drawn from their exact Beta conditionals given ``(c, h)``, so every
recorded ``(q, theta, h)`` is a draw of the joint posterior and the trace keeps them (the
plausibilities are Rao-Blackwellised from them as in the data-augmentation sweep).

The classes are a chain's state between PyMC steps (:class:`AnnotatorBetaCollapsedGibbs`);
when the step meets a point it did not write (a chain's start, another step's move), it draws
them from their exact conditional given that point's ``q`` and ``theta`` first (data
augmentation), which leaves the posterior invariant too.

Cost: one sweep is O(labels · gamma), against the data-augmentation sweep's O(labels of the
distinct item patterns); it pays where workers have few labels each.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from plausible.models.annotator_beta.gibbs import AnnotatorBetaGibbs
from plausible.models.annotator_beta.kernel import NO_HYPER, SYMMETRIC, logit_beta_draw
from plausible.inference.step_methods.univariate_slice import slice_update
from plausible.maths.logspace import log_sigmoid


@numba.njit(cache=True, nogil=True)
def _shift(c, start, stop, annotator, label, index, block_of, counts, step):  # pragma: no cover
    """Labels ``start..stop`` counted under class ``c``, ``step`` copies each (negative:
    removed): ``counts[b, e, 0]`` agreeing, ``counts[b, e, 1]`` disagreeing copies."""
    b = block_of[c]
    for k in range(start, stop):
        counts[b, index[b, annotator[k]], 0 if label[k] == c else 1] += step


@numba.njit(cache=True, nogil=True)
def _log_predictive(c, start, stop, annotator, label, index, block_of, counts, priors, gamma):
    """``log prod_k pred_k(c)`` of labels ``start..stop`` (module docstring); ``counts`` are
    left as they were."""
    b = block_of[c]
    prior_total = priors[b, 0] + priors[b, 1]
    out = 0.0
    for k in range(start, stop):
        e = index[b, annotator[k]]
        side = 0 if label[k] == c else 1
        own = priors[b, side] + counts[b, e, side]
        total = prior_total + counts[b, e, 0] + counts[b, e, 1]
        for r in range(gamma):
            out += math.log(own + r) - math.log(total + r)
        counts[b, e, side] += gamma
    _shift(c, start, stop, annotator, label, index, block_of, counts, -gamma)
    return out


@numba.njit(cache=True, nogil=True)
def _log_odds_apart(start, stop, annotator, label, index, block_of, counts, priors, gamma):
    """``log prod_k pred_k(1) / pred_k(0)`` of labels ``start..stop`` that count for distinct
    entries under each class (so no label's copies change another's term): one log a label."""
    b0, b1 = block_of[0], block_of[1]
    total_0, total_1 = priors[b0, 0] + priors[b0, 1], priors[b1, 0] + priors[b1, 1]
    out = 0.0
    for k in range(start, stop):
        e0, e1 = index[b0, annotator[k]], index[b1, annotator[k]]
        side_0, side_1 = label[k], 1 - label[k]  # label 0 agrees with class 0
        own_0 = priors[b0, side_0] + counts[b0, e0, side_0]
        own_1 = priors[b1, side_1] + counts[b1, e1, side_1]
        all_0 = total_0 + counts[b0, e0, 0] + counts[b0, e0, 1]
        all_1 = total_1 + counts[b1, e1, 0] + counts[b1, e1, 1]
        for r in range(gamma):
            out += math.log(((own_1 + r) * (all_0 + r)) / ((own_0 + r) * (all_1 + r)))
    return out


def shared_entries(offsets, annotator, index, block_of) -> np.ndarray:
    """bool ``(item,)``: whether two of the item's labels count for one entry under some class
    (an annotator who labelled it twice, the pooled accuracy): only those items need the
    sequential terms of :func:`_log_predictive`."""
    n_items = offsets.size - 1
    item = np.repeat(np.arange(n_items), np.diff(offsets))
    shared = np.zeros(n_items, dtype=bool)
    for b in np.unique(block_of):
        pairs = item * (index.shape[1] + 1) + index[b, annotator]
        unique, counts = np.unique(pairs, return_counts=True)
        shared[unique[counts > 1] // (index.shape[1] + 1)] = True
    return shared


@numba.njit(cache=True, nogil=True)
def count_classes(c, offsets, annotator, label, index, block_of, gamma, n_entries):
    """``(counts (B, S, 2), class_counts (2,))`` of the classes ``c``: every label's ``gamma``
    copies counted for its entry, and the items in each class."""
    counts = np.zeros((index.shape[0], n_entries, 2))
    class_counts = np.zeros(2)
    for i in range(c.size):
        _shift(c[i], offsets[i], offsets[i + 1], annotator, label, index, block_of, counts, gamma)
        class_counts[c[i]] += 1
    return counts, class_counts


@numba.njit(cache=True, nogil=True)
def class_sweep(rng, c, fixed, shared, offsets, annotator, label, index, block_of, counts,
                class_counts, priors, a_q, b_q, gamma):
    """Every item's class in turn from ``P(c_i | c_-i, hyper, x)`` (module docstring), in place
    on ``c``, ``counts`` and ``class_counts``; items with ``fixed[i] >= 0`` (known) keep it;
    ``shared`` (:func:`shared_entries`) marks the items whose terms are taken in sequence."""
    for i in range(c.size):
        if fixed[i] >= 0:
            continue
        start, stop = offsets[i], offsets[i + 1]
        _shift(c[i], start, stop, annotator, label, index, block_of, counts, -gamma)
        class_counts[c[i]] -= 1
        log_odds = math.log(a_q + class_counts[1]) - math.log(b_q + class_counts[0])
        if shared[i]:
            log_odds += (
                _log_predictive(1, start, stop, annotator, label, index, block_of, counts, priors,
                                gamma)
                - _log_predictive(0, start, stop, annotator, label, index, block_of, counts,
                                  priors, gamma))
        else:
            log_odds += _log_odds_apart(start, stop, annotator, label, index, block_of, counts,
                                        priors, gamma)
        new = 1 if rng.random() < math.exp(log_sigmoid(log_odds)) else 0
        c[i] = new
        _shift(new, start, stop, annotator, label, index, block_of, counts, gamma)
        class_counts[new] += 1


@numba.njit(cache=True, nogil=True)
def count_pairs(counts, g, n_entries):  # pragma: no cover - compiled
    """The distinct ``(agree, disagree)`` copy counts of block ``g``'s first ``n_entries``
    entries and how many entries hold each, ``(agree (P,), disagree (P,), multiplicity (P,))``
    (entries without labels left out: their terms are 0)."""
    agree = counts[g, :n_entries, 0]
    disagree = counts[g, :n_entries, 1]
    width = np.int64(disagree.max()) + 1 if n_entries > 0 else 1
    order = np.argsort(agree.astype(np.int64) * width + disagree.astype(np.int64))
    out_a, out_d, out_m = np.empty(n_entries), np.empty(n_entries), np.empty(n_entries)
    n = 0
    for position in range(n_entries):
        e = order[position]
        if agree[e] + disagree[e] == 0:
            continue
        if n > 0 and out_a[n - 1] == agree[e] and out_d[n - 1] == disagree[e]:
            out_m[n - 1] += 1
            continue
        out_a[n], out_d[n], out_m[n] = agree[e], disagree[e], 1.0
        n += 1
    return out_a[:n], out_d[:n], out_m[:n]


@numba.njit(cache=True, nogil=True)
def group_marginal_log_density(mean, inv_sqrt, agree, disagree, multiplicity):  # pragma: no cover
    """``sum_e log B(m s + A_e, (1 - m) s + D_e) - log B(m s, (1 - m) s)``, ``s = u^-2``: the
    log-likelihood of a group's hyper-parameters with its accuracies integrated out, from its
    entries' distinct copy counts (:func:`count_pairs`)."""
    s = inv_sqrt**-2
    a, b = mean * s, (1.0 - mean) * s
    base = math.lgamma(s) - math.lgamma(a) - math.lgamma(b)
    out = 0.0
    for p in range(agree.size):
        out += multiplicity[p] * (base + math.lgamma(a + agree[p]) + math.lgamma(b + disagree[p])
                                  - math.lgamma(s + agree[p] + disagree[p]))
    return out


@numba.njit(cache=True, nogil=True)
def _marginal_density(x, coordinate, other, agree, disagree, multiplicity):  # pragma: no cover
    if coordinate == 0:
        return group_marginal_log_density(x, other, agree, disagree, multiplicity)
    return group_marginal_log_density(other, x, agree, disagree, multiplicity)


# Neal's (2003) slice update of a group's mean (coordinate 0) or inverse-sqrt scale (1) on the
# marginal density: ``_slice_marginal(rng, x, log_fx, lower, upper, width, 0, (coordinate,
# other, agree, disagree, multiplicity)) -> (x', log f(x'), evaluations)``.
_slice_marginal = slice_update(_marginal_density)


@numba.njit(cache=True, nogil=True)
def hyper_scan(rng, means, inv_sqrt, counts, size, coupling, u_max):  # pragma: no cover
    """One slice scan ``m_0, u_0, m_1, u_1, ...`` of the group hyper-parameters given the
    classes' copy counts, the accuracies integrated out (in place on ``means``, ``inv_sqrt``).
    The priors are uniform on the support (as for
    :func:`plausible.models.annotator_beta.kernel.hyper_scan`, which conditions on the
    accuracies instead), so the conditional is :func:`group_marginal_log_density` there."""
    for g in range(means.size):
        agree, disagree, multiplicity = count_pairs(counts, g, size[g])
        lower = 0.5 if coupling == SYMMETRIC else 1.0 - means[1 - g]
        log_f = group_marginal_log_density(means[g], inv_sqrt[g], agree, disagree, multiplicity)
        means[g], log_f, _ = _slice_marginal(rng, means[g], log_f, lower, 1.0, 0.5 * (1.0 - lower),
                                             0, (0, inv_sqrt[g], agree, disagree, multiplicity))
        inv_sqrt[g], log_f, _ = _slice_marginal(rng, inv_sqrt[g], log_f, 0.0, u_max, 0.25 * u_max,
                                                0, (1, means[g], agree, disagree, multiplicity))


@numba.njit(cache=True, nogil=True)
def _hyper_priors(means, inv_sqrt, coupling, priors):  # pragma: no cover - compiled
    """``priors[b] = (m_b s_b, (1 - m_b) s_b)`` from the hyper-parameters (fixed priors kept)."""
    if coupling != NO_HYPER:
        for b in range(means.size):
            s = inv_sqrt[b] ** -2
            priors[b, 0] = means[b] * s
            priors[b, 1] = (1.0 - means[b]) * s


@numba.njit(cache=True, nogil=True)
def sweeps(rng, n_sweeps, c, fixed, shared, offsets, annotator, label, counts, class_counts, z,
           means, inv_sqrt, fixed_priors, coupling, u_max, index, size, block_of, a_q, b_q, gamma):
    """``n_sweeps`` collapsed sweeps (the classes, then the hyper-parameters given them), then
    the accuracies and the prevalence given both, in place on ``c``, the counts, ``z``
    (accuracy log-odds, padded ``(B, S)``), ``means`` and ``inv_sqrt``; returns ``logit q``."""
    priors = fixed_priors.copy()
    for _ in range(n_sweeps):
        _hyper_priors(means, inv_sqrt, coupling, priors)
        class_sweep(rng, c, fixed, shared, offsets, annotator, label, index, block_of, counts,
                    class_counts, priors, a_q, b_q, gamma)
        if coupling != NO_HYPER:
            hyper_scan(rng, means, inv_sqrt, counts, size, coupling, u_max)
    _hyper_priors(means, inv_sqrt, coupling, priors)
    for b in range(size.size):
        for e in range(size[b]):
            z[b, e] = logit_beta_draw(rng, priors[b, 0] + counts[b, e, 0],
                                      priors[b, 1] + counts[b, e, 1])
    return logit_beta_draw(rng, a_q + class_counts[1], b_q + class_counts[0])


def check_whole_reliability(reliability) -> None:
    """``ValueError`` unless ``reliability`` is a whole number ``>= 1`` (the collapsed sweep
    repeats every label that many times)."""
    if not (float(reliability) == round(float(reliability)) and reliability >= 1):
        raise ValueError(f"the collapsed sweep repeats every label: reliability must be a "
                         f"whole number >= 1, got {reliability}; use sampler='joint' to temper")


class AnnotatorBetaCollapsedGibbs(AnnotatorBetaGibbs):
    """The collapsed sweep (module docstring) as a PyMC step over the same variables as
    :class:`~plausible.models.annotator_beta.gibbs.AnnotatorBetaGibbs`.

    Parameters, beyond that step's: ``labels``, the model's
    :class:`~plausible.data.labels.Labels` (each item's labels, its known class); the
    ``reliability`` must be a whole number ``>= 1`` (every label repeated).

    Stats: ``annotator_beta_gibbs_positive_items``, the number of items in class 1 after the
    last sweep.
    """

    def __init__(self, vars, patterns, blocks, labels, reliability=1, **kwargs):
        check_whole_reliability(reliability)
        super().__init__(vars, patterns, blocks, reliability=reliability, **kwargs)
        order = np.argsort(labels.item, kind="stable")
        self.offsets = np.concatenate(
            [[0], np.cumsum(np.bincount(labels.item, minlength=labels.n_items))]).astype(np.int64)
        self.annotator = np.asarray(labels.annotator, dtype=np.int64)[order]
        self.label = np.asarray(labels.label, dtype=np.int64)[order]
        self.fixed = (np.full(labels.n_items, -1, dtype=np.int64) if labels.known is None
                      else np.asarray(labels.known, dtype=np.int64))
        self.block_of = np.array([self.spec_block, self.sens_block], dtype=np.int64)
        self.shared = shared_entries(self.offsets, self.annotator, self.index, self.block_of)
        self.whole_gamma = int(round(self.gamma))
        self._state = None

    def setup_chain(self, *args, **kwargs):
        """PyMC's per-chain setup (the chain's generator), forgetting the previous chain's
        classes: the new chain draws its own from its first point."""
        self._state = None
        return super().setup_chain(*args, **kwargs)

    def _written(self, point) -> bool:
        """Whether ``point``'s prevalence and accuracies are the ones this step last wrote."""
        return self._state is not None and all(
            np.array_equal(point[name], value) for name, value in self._state[1].items())

    def _load(self, point) -> np.ndarray:
        """Classes ``(item,)`` drawn from ``p(c | q, theta, x)`` at ``point`` (known: kept)."""
        p1 = self.class_probability(point)[self.patterns.item_pattern]
        c = (self.rng.random(p1.size) < p1).astype(np.int64)
        return np.where(self.fixed >= 0, self.fixed, c)

    def step(self, point):
        """PyMC's step method: ``sweeps`` collapsed sweeps from ``point`` (see the class)."""
        if self._written(point):
            c, _, counts, class_counts = self._state
        else:
            c = self._load(point)
            counts, class_counts = count_classes(c, self.offsets, self.annotator, self.label,
                                                 self.index, self.block_of, self.whole_gamma,
                                                 int(self.sizes.max()))
        new_point = dict(point)
        z = self._accuracy_logits(point)
        means, inv_sqrt, u_max = self._hyper_values(point)
        zq = sweeps(self.rng, self.sweeps, c, self.fixed, self.shared, self.offsets,
                    self.annotator, self.label, counts, class_counts, z, means, inv_sqrt,
                    self.fixed_priors, self.coupling, u_max, self.index, self.sizes,
                    self.block_of, *self.prevalence_prior, self.whole_gamma)
        new_point[self.vars[0].name] = np.asarray(zq)
        self._write_accuracies(new_point, z)
        if self.hyper is not None:
            new_point.update(self.hyper.write(means, inv_sqrt))
        written = {v.name: new_point[v.name] for v in self.vars[: 1 + len(self.blocks)]}
        self._state = (c, written, counts, class_counts)
        return new_point, [{"annotator_beta_gibbs_positive_items": int(class_counts[1])}]


__all__ = ["AnnotatorBetaCollapsedGibbs", "check_whole_reliability", "class_sweep",
           "count_classes", "shared_entries", "sweeps"]
