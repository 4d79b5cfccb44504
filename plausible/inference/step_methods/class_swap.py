"""A Metropolis move that relabels two classes in every item at once: the move that takes a
chain of the Dawid–Skene family out of a relabelled mode.

Single-site class updates, joint or collapsed, move one item at a time. When the annotators
fall into groups that contradict each other (either group may be the right one, with the
others answering against the truth), the posterior of the classes has a mode for each
reading, and the configurations between them, half the items read one way and half the
other, are improbable: a chain stays in the mode it settles in for thousands of sweeps, and
its plausibilities are confidently wrong for the other mode's share of the posterior.

The move (Frühwirth-Schnatter 2001's random permutation of the labels, with a Metropolis
test since the priors are not symmetric; Celeux et al. 2000; here on the classes with
every annotator parameter integrated out) proposes a transposition
``tau = (a b)`` drawn uniformly among the pairs of classes that no known item holds and sets
``z' = tau(z)`` for every item: a symmetric proposal, accepted with probability ``min(1,
p(z' | x) / p(z | x))``, where ``p(z | x)`` is the classes' posterior with ``pi ~
Dirichlet(a)`` and the annotator parameters integrated out (the hierarchical model's given
its current population). Only rows ``a`` and ``b`` of every annotator's counts ``n_j[c, x]``
(labels ``x`` on items of class ``c``) and the class counts ``m_c`` trade places, so

    log p(z' | x) - log p(z | x) = lnG(a_a + m_b) + lnG(a_b + m_a) - lnG(a_a + m_a)
                                   - lnG(a_b + m_b) + member term,

the member term (each member's ``swap_log_ratio``: :func:`rows_log_ratio`,
:func:`accuracy_log_ratio`) summed over annotators, computed from the counts in
``O(annotators x classes)``. The collapsed sweep leaves ``p(z | x)`` invariant and so
does the move. In the joint scan the move acts on the classes just before the annotator
parameters are drawn afresh given them, which makes the pair (move, parameter draw) leave
the joint posterior invariant: it reads no parameter, and the draw that follows replaces
them all.

Under the default priors (diagonal-heavy confusion rows, annotators who are mostly right)
a relabelled mode carries little mass and the move is seldom accepted; it costs one pass
over the annotators' rows every :data:`EVERY` sweeps. It is part of the sweep of full
Dawid–Skene, one-coin and hierarchical Dawid–Skene
(:mod:`plausible.models.dawid_skene.sampler`; MACE's parameter draw reads its previous
competences, so the argument above does not hold there, and it has no move).
"""

from __future__ import annotations

import math

import numba
import numpy as np


EVERY = 10
"""The move is proposed every ``EVERY``-th sweep (a fixed cycle of kernels that each leave the
posterior invariant). On a real crowd it costs 10-25 % of a sweep (``lgamma`` on most of every
annotator's two rows), and a relabelled mode with real mass is left within a few proposals,
so proposing it every sweep would slow every chain for a move it seldom needs."""


def swappable_classes(n_classes: int, fixed: np.ndarray) -> np.ndarray:
    """The classes no known item holds (``fixed[i] >= 0``: item ``i``'s known class): a
    swap of two of them leaves every known item's class in place."""
    held = np.zeros(n_classes, dtype=bool)
    held[fixed[fixed >= 0]] = True
    return np.flatnonzero(~held)


@numba.njit(cache=True, nogil=True)
def rows_log_ratio(beta, counts, a, b, gamma):  # pragma: no cover - compiled
    """The member term of full Dawid–Skene with confusion prior ``beta (class,
    label_class)``: every annotator's rows ``a`` and ``b`` exchanged, each still under its
    own class's prior row, from the sweep's ``counts (part, annotator * C + label, class)``
    (``n_j[c, x]`` summed over the parts):

        sum_j sum_x [lnG(beta_ax + g n_jbx) + lnG(beta_bx + g n_jax) - lnG(beta_ax + g n_jax)
                     - lnG(beta_bx + g n_jbx)] - (the same of the row sums B_c, N_j[c]).

    Entries equal in both rows add nothing and are skipped, so a sparse crowd costs a pass
    over its counts."""
    n_parts, n_codes, n_classes = counts.shape
    sum_a, sum_b = beta[a].sum(), beta[b].sum()
    total = 0.0
    for j in range(n_codes // n_classes):
        row_a = row_b = 0
        for x in range(n_classes):
            na = nb = 0
            for p in range(n_parts):
                na += counts[p, j * n_classes + x, a]
                nb += counts[p, j * n_classes + x, b]
            row_a += na
            row_b += nb
            if na != nb:
                total += (math.lgamma(beta[a, x] + gamma * nb)
                          + math.lgamma(beta[b, x] + gamma * na)
                          - math.lgamma(beta[a, x] + gamma * na)
                          - math.lgamma(beta[b, x] + gamma * nb))
        if row_a != row_b:
            total -= (math.lgamma(sum_a + gamma * row_b) + math.lgamma(sum_b + gamma * row_a)
                      - math.lgamma(sum_a + gamma * row_a) - math.lgamma(sum_b + gamma * row_b))
    return total


@numba.njit(cache=True, nogil=True)
def accuracy_log_ratio(alpha, beta, counts, a, b, gamma):  # pragma: no cover - compiled
    """The member term of one-coin with accuracy prior ``Beta(alpha, beta)``: annotator
    ``j``'s right labels become ``R_j - n_j[a, a] - n_j[b, b] + n_j[a, b] + n_j[b, a]`` of the
    same total ``T_j``, each wrong one worth ``1 / (C - 1)`` (``counts`` as in
    :func:`rows_log_ratio`)."""
    n_parts, n_codes, n_classes = counts.shape
    log_wrong = math.log(n_classes - 1)
    total = 0.0
    for j in range(n_codes // n_classes):
        base = j * n_classes
        moved = 0
        for p in range(n_parts):
            moved += (counts[p, base + b, a] + counts[p, base + a, b]
                      - counts[p, base + a, a] - counts[p, base + b, b])
        if moved != 0:  # only then are the annotator's right and labelled counts read
            right = labelled = 0
            for p in range(n_parts):
                for x in range(n_classes):
                    right += counts[p, base + x, x]
                    for c in range(n_classes):
                        labelled += counts[p, base + x, c]
            r, s = right + moved, right
            total += (math.lgamma(alpha + gamma * r) - math.lgamma(alpha + gamma * s)
                      + math.lgamma(beta + gamma * (labelled - r))
                      - math.lgamma(beta + gamma * (labelled - s))
                      + gamma * (r - s) * log_wrong)
    return total


@numba.njit(cache=True, nogil=True)
def class_prior_log_ratio(concentration, class_counts, a, b):  # pragma: no cover - compiled
    """The class prior's term: ``m_a`` and ``m_b`` (``class_counts (part, class)`` summed
    over the parts) exchanged under ``Dirichlet(concentration)``."""
    m_a = m_b = 0
    for p in range(class_counts.shape[0]):
        m_a += class_counts[p, a]
        m_b += class_counts[p, b]
    alpha_a, alpha_b = concentration[a], concentration[b]
    return (math.lgamma(alpha_a + m_b) + math.lgamma(alpha_b + m_a)
            - math.lgamma(alpha_a + m_a) - math.lgamma(alpha_b + m_b))


def propose(u: np.ndarray, classes: np.ndarray) -> tuple[int, int]:
    """A uniform pair of distinct classes among ``classes`` from two uniforms ``u``."""
    k = classes.size
    first, second = int(u[0] * k), int(u[1] * (k - 1))
    return int(classes[first]), int(classes[second + (second >= first)])


def accept(u: float, log_ratio: float) -> bool:
    """Metropolis: accept with probability ``min(1, exp(log_ratio))``, from a uniform
    ``u``."""
    return log_ratio >= 0 or math.log(u) < log_ratio


def relabel(z: np.ndarray, a: int, b: int) -> None:
    """``z <- tau(z)`` in place for the transposition ``(a b)``."""
    in_a, in_b = z == a, z == b
    z[in_a], z[in_b] = b, a


__all__ = ["EVERY", "accept", "accuracy_log_ratio", "class_prior_log_ratio", "propose", "relabel",
           "rows_log_ratio", "swappable_classes"]
