"""Compiled (numba) pieces of the annotator Beta Gibbs sweep.

The sweep of :class:`~plausible.models.annotator_beta.gibbs.AnnotatorBetaGibbs` is a few
dozen tiny array operations on the distinct item patterns (32 for the dentistry data), so in
numpy its cost is interpreter overhead. These kernels do the same exact draws in compiled
loops, drawing from the step's ``numpy.random.Generator`` (seeded runs stay reproducible).
The step's methods call the same kernels one at a time (checked against enumeration and
closed forms in the tests) and :func:`sweeps` chains them.

Shapes: ``K`` labels of the representative items (``pat_item``, ``pat_ann``, ``pat_label``),
``U`` patterns (``weight``), ``J`` annotators, ``B`` accuracy blocks; accuracy log-odds are
stored padded in ``z (B, S)``, block ``b`` using ``z[b, :size[b]]``; annotator ``j`` reads
``z[b, index[b, j]]``; ``covers (B, 2)`` flags the classes a block is the accuracy for.
Hyper coupling codes: 0 none (fixed priors ``prior (B, 2)``), 1 half-square (blocks
specificity, sensitivity; ``m_0 + m_1 > 1``), 2 symmetric (one block, ``m > 1/2``).
"""

import math

import numba
import numpy as np

from plausible.inference.step_methods.univariate_slice import slice_update
from plausible.maths.logspace import log_gamma_draw, log_sigmoid

NO_HYPER, HALF_SQUARE, SYMMETRIC = 0, 1, 2


@numba.njit(cache=True)
def logit_beta_draw(rng, a, b):
    """``logit(theta)``, ``theta ~ Beta(a, b)``."""
    return log_gamma_draw(rng, a) - log_gamma_draw(rng, b)


@numba.njit(cache=True)
def class_log_odds(zq, z, index, sens_block, spec_block, pat_item, pat_ann, pat_label, n_patterns,
                   gamma, shift):
    """``logit q + gamma (L1_u - L0_u) + shift_u`` per pattern, ``(U,)``: the log odds of class
    1 of its items, the labels' log-likelihood tempered by the reliability ``gamma``; ``shift``
    ``(U,)``: ``+-inf`` for patterns of known class (:attr:`ItemPatterns.log_odds_shift`). Each annotator's
    two log-likelihood ratios are computed once, so the loop over labels only adds."""
    n_annotators = index.shape[1]
    ratio = np.empty((n_annotators, 2))  # log P(x | c = 1) - log P(x | c = 0), by label x
    for j in range(n_annotators):
        zs = z[sens_block, index[sens_block, j]]
        zp = z[spec_block, index[spec_block, j]]
        ratio[j, 1] = log_sigmoid(zs) - log_sigmoid(-zp)  # log a1 - log(1 - a0)
        ratio[j, 0] = log_sigmoid(-zs) - log_sigmoid(zp)  # log(1 - a1) - log a0
    evidence = np.zeros(n_patterns)
    for k in range(pat_item.size):
        evidence[pat_item[k]] += ratio[pat_ann[k], pat_label[k]]
    return zq + gamma * evidence + shift


@numba.njit(cache=True)
def draw_positives(rng, log_odds, weight):
    """Class-1 items per pattern, ``Binomial(w_u, sigmoid(log_odds_u))``, int ``(U,)``."""
    out = np.empty(weight.size, dtype=np.int64)
    for u in range(weight.size):
        out[u] = rng.binomial(weight[u], math.exp(log_sigmoid(log_odds[u])))
    return out


@numba.njit(cache=True)
def draw_parameters(rng, positives, weight, pat_item, pat_ann, pat_label, n_annotators,
                    a_q, b_q, priors, covers, index, size, z, gamma):
    """Prevalence and accuracies given the class counts: returns ``logit q``, writes ``z``.

    ``q ~ Beta(a_q + n1, b_q + I - n1)``; block ``b``, entry ``e``:
    ``Beta(alpha_b + gamma agree_e, beta_b + gamma disagree_e)`` (the labels' likelihood
    tempered by the reliability ``gamma``), ``priors (B, 2)`` = ``(alpha_b, beta_b)``.
    """
    n1 = positives.sum()
    zq = logit_beta_draw(rng, a_q + n1, b_q + weight.sum() - n1)
    table = np.zeros((n_annotators, 2, 2))  # table[j, c, x]
    for k in range(pat_item.size):
        u = pat_item[k]
        table[pat_ann[k], 1, pat_label[k]] += positives[u]
        table[pat_ann[k], 0, pat_label[k]] += weight[u] - positives[u]
    for b in range(size.size):
        agree = np.zeros(size[b])
        disagree = np.zeros(size[b])
        for j in range(n_annotators):
            e = index[b, j]
            for c in range(2):
                if covers[b, c]:
                    agree[e] += table[j, c, c]
                    disagree[e] += table[j, c, 1 - c]
        for e in range(size[b]):
            z[b, e] = logit_beta_draw(rng, priors[b, 0] + gamma * agree[e],
                                      priors[b, 1] + gamma * disagree[e])
    return zq


@numba.njit(cache=True)
def beta_group_log_density(mean, inv_sqrt, n, s1, s0):
    """``sum_j log Beta(theta_j | m s, (1 - m) s)``, ``s = u^-2``, from ``n = J``,
    ``s1 = sum log theta``, ``s0 = sum log(1 - theta)``."""
    s = inv_sqrt**-2
    a, b = mean * s, (1.0 - mean) * s
    return n * (math.lgamma(s) - math.lgamma(a) - math.lgamma(b)) + (a - 1.0) * s1 + (b - 1.0) * s0


@numba.njit(cache=True)
def _group_density(x, coordinate, other, n, s1, s0):
    if coordinate == 0:
        return beta_group_log_density(x, other, n, s1, s0)
    return beta_group_log_density(other, x, n, s1, s0)


# Neal's (2003) slice update of the group mean (coordinate 0, scale ``other``) or inverse-sqrt
# scale (1, mean ``other``), stepping out without limit: ``_slice_group(rng, x, log_fx, lower,
# upper, width, 0, (coordinate, other, n, s1, s0)) -> (x', log f(x'), evaluations)``.
_slice_group = slice_update(_group_density)


@numba.njit(cache=True)
def hyper_scan(rng, means, inv_sqrt, z, size, coupling, u_max):
    """One slice scan ``m_0, u_0, m_1, u_1, ...`` of the group hyper-parameters given the
    accuracies ``z`` (in place on ``means``, ``inv_sqrt``); see
    :mod:`plausible.inference.step_methods.slice_hyper` for the conditional."""
    for g in range(means.size):
        s1 = 0.0
        s0 = 0.0
        for e in range(size[g]):
            s1 += log_sigmoid(z[g, e])
            s0 += log_sigmoid(-z[g, e])
        n = size[g]
        lower = 0.5 if coupling == SYMMETRIC else 1.0 - means[1 - g]
        log_f = beta_group_log_density(means[g], inv_sqrt[g], n, s1, s0)
        means[g], log_f, _ = _slice_group(rng, means[g], log_f, lower, 1.0, 0.5 * (1.0 - lower), 0,
                                          (0, inv_sqrt[g], n, s1, s0))
        inv_sqrt[g], log_f, _ = _slice_group(rng, inv_sqrt[g], log_f, 0.0, u_max, 0.25 * u_max, 0,
                                             (1, means[g], n, s1, s0))


@numba.njit(cache=True)
def sweeps(rng, n_sweeps, zq, z, means, inv_sqrt, fixed_priors, coupling, u_max, covers, index, size,
           sens_block, spec_block, pat_item, pat_ann, pat_label, weight, a_q, b_q, gamma, shift):
    """``n_sweeps`` full sweeps (classes, prevalence, accuracies, hyper-parameters), in place
    on ``z``, ``means``, ``inv_sqrt``; returns ``(logit q, positive items of the last sweep)``."""
    n_annotators = index.shape[1]
    priors = fixed_priors.copy()
    n1 = 0
    for _ in range(n_sweeps):
        if coupling != NO_HYPER:
            for b in range(size.size):
                s = inv_sqrt[b] ** -2
                priors[b, 0] = means[b] * s
                priors[b, 1] = (1.0 - means[b]) * s
        log_odds = class_log_odds(zq, z, index, sens_block, spec_block, pat_item, pat_ann, pat_label,
                                  weight.size, gamma, shift)
        positives = draw_positives(rng, log_odds, weight)
        n1 = positives.sum()
        zq = draw_parameters(rng, positives, weight, pat_item, pat_ann, pat_label, n_annotators,
                             a_q, b_q, priors, covers, index, size, z, gamma)
        if coupling != NO_HYPER:
            hyper_scan(rng, means, inv_sqrt, z, size, coupling, u_max)
    return zq, n1
