"""Gibbs sampler of the easy/hard latent class model
(:func:`plausible.models.easy_hard.build`).

Every item has a latent state ``s_i`` (its class ``c`` and whether it is *easy* or *hard*,
``S = 2C`` states, state ``2c`` easy and ``2c + 1`` hard) with prior weights ``w ~
Dirichlet(1, ..., 1)``; annotator ``j`` labels an item in state ``s`` with ``x ~ theta_j[s]``:
every annotator shares the easy rows, ``theta_j[2c] = eta_c ~ Dirichlet(beta_2c)``, and has
hard rows of its own, ``theta_j[2c + 1] ~ Dirichlet(beta_2c+1)``; labels enter with
reliability ``gamma``. Each sweep draws, exactly and vectorised over items and annotators,

1. ``eta_c | states ~ Dirichlet(beta_2c + gamma sum_j n_j[2c])`` and ``theta_j[2c + 1] |
   states ~ Dirichlet(beta_2c+1 + gamma n_j[2c + 1])`` (``n_j[s, x]`` annotator ``j``'s labels
   ``x`` on items in state ``s``), and ``w | states ~ Dirichlet(1 + m)`` (``m_s`` the items in
   state ``s``);
2. ``s_i | theta, w`` from ``p_is ∝ w_s exp(gamma L_is)``, ``L_is = sum_{k: i_k = i} log
   theta_{j_k}[s, x_k]`` (one sparse product of the item's label counts per annotator and
   label with ``log theta``).

Items with the same labels from the same annotators (the same pattern ``u``,
:mod:`plausible.data.item_patterns`) have the same ``p_us``, and step 1 needs the states only
through their counts, so step 2 draws the number of items of each pattern in each state,
``m_u ~ Multinomial(w_u, p_u)`` (``w_u`` items of pattern ``u``), exactly the law of the sum
of the items' draws: a sweep costs O(labels of the distinct patterns), 32 patterns for the
3869 dentistry patients.

A kept draw stores ``w``, ``theta`` and the plausibilities ``lambda_ic = p_i,2c + p_i,2c+1``
(the class probabilities given that draw's parameters, Rao–Blackwellised over the state).
Chains start from the majority's classes, easy where the item's labels agree and hard
otherwise, a fifth of the items moved to random states per chain (dispersion).
:class:`EasyHardKernel` is the sweep's kernel (:mod:`plausible.inference.kernel`), run by the
driver or by PyMC (where the states are summed out of the model, so each PyMC step first
draws their counts from their exact conditional).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from plausible.data.item_patterns import ItemPatterns, item_patterns
from plausible.data.labels import Labels
from plausible.inference.kernel import PyMCKernel, Variable
from plausible.maths.known_classes import known_log_mask
from plausible.maths.logspace import log_dirichlet_draws

DEFAULT_TUNE = 300
"""Warm-up sweeps: the states settle within tens of sweeps from the majority's start."""
DEFAULT_THIN = 8
"""Sweeps per kept draw: how the agreeing items split between a class's easy and hard
subclass is weakly identified and moves slowly (bulk ESS about 1 in 25 sweeps on the
dentistry data)."""
SCATTERED = 0.2
"""Share of items each chain starts in a random state."""


def start_states(labels: Labels) -> np.ndarray:
    """``(item,)``: state ``2 c`` (easy) for the majority class ``c`` where every label agrees
    with it, ``2 c + 1`` (hard) otherwise."""
    C = labels.n_classes
    counts = np.bincount(labels.item * C + labels.label, minlength=labels.n_items * C)
    counts = counts.reshape(labels.n_items, C)
    majority = counts.argmax(axis=1)
    unanimous = counts.max(axis=1) == counts.sum(axis=1)
    return 2 * majority + (~unanimous)


class EasyHardKernel(PyMCKernel):
    """The sweep of the module for ``labels`` with ``prior beta (state, label_class)`` at
    reliability ``gamma``. State: ``m (pattern, state)``, the items of each pattern in each
    state."""

    name = "plausible.models.easy_hard.sampler"
    default_tune = DEFAULT_TUNE
    default_thin = DEFAULT_THIN
    stats = {}

    def __init__(self, labels: Labels, prior: np.ndarray, gamma: float, dtype=np.float32):
        self.labels = labels
        self.prior = np.asarray(prior, dtype=np.float64)
        self.gamma = float(gamma)
        J, S, C = labels.n_annotators, self.prior.shape[0], labels.n_classes
        self.patterns = item_patterns(labels.item, labels.annotator, labels.label,
                                      labels.n_items, J, C, known=labels.known)
        self.mask = np.repeat(known_log_mask(self.patterns.known, self.patterns.n_patterns, C),
                              2, axis=1)  # (pattern, state): a known class's two states only
        self.counts = pattern_counts(self.patterns, J, C)
        self.counts_t = self.counts.T.tocsr()  # (annotator * C + label, pattern)
        self.variables = {
            "subclass_prior": Variable(("subclass",), (S,)),
            "confusion": Variable(("annotator", "subclass", "label_class"), (J, S, C)),
            "plausibility": Variable(("item", "class"), (labels.n_items, C), dtype)}

    def _pattern_states(self, states: np.ndarray) -> np.ndarray:
        U, S = self.patterns.n_patterns, self.prior.shape[0]
        return np.bincount(self.patterns.item_pattern * S + states,
                           minlength=U * S).reshape(U, S)

    def start(self, rng):
        """The majority's states (:func:`start_states`), a fifth of the items scattered; an item
        of known class in its hard state."""
        states = start_states(self.labels)
        scattered = rng.random(self.labels.n_items) < SCATTERED
        states[scattered] = rng.integers(0, self.prior.shape[0], int(scattered.sum()))
        known = self.labels.known
        if known is not None:  # a known class's hard state
            states = np.where(known >= 0, 2 * known + 1, states)
        return self._pattern_states(states)

    def _state_probabilities(self, log_w, log_theta):
        J, S, C = log_theta.shape
        L = self.counts @ log_theta.transpose(0, 2, 1).reshape(J * C, S)  # (pattern, state)
        p = log_w + self.mask + self.gamma * L
        p = np.exp(p - p.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        return p

    def load(self, values, rng):
        """``m | w, theta``: the states summed out of the PyMC model, drawn exactly."""
        C = self.labels.n_classes
        easy, hard = values["easy_confusion"], values["hard_confusion"]
        J = hard.shape[0]
        theta = np.stack([np.broadcast_to(easy, (J, C, C)), hard], axis=2).reshape(J, 2 * C, C)
        with np.errstate(divide="ignore"):
            p = self._state_probabilities(np.log(values["subclass_prior"]), np.log(theta))
        return rng.multinomial(self.patterns.weight, p)

    def to_point(self, m, draw):
        theta = draw["confusion"]
        return {"subclass_prior": draw["subclass_prior"], "easy_confusion": theta[0, 0::2],
                "hard_confusion": theta[:, 1::2]}

    def sweep(self, rng, m, out):
        """Step 1 (``theta``, ``w`` given the states' counts), then step 2 (the states'
        counts per pattern)."""
        J, S, C = self.labels.n_annotators, self.prior.shape[0], self.labels.n_classes
        prior, gamma = self.prior, self.gamma
        n = (self.counts_t @ m).reshape(J, C, S).transpose(0, 2, 1)  # (annotator, state, label)
        log_theta = np.empty((J, S, C))
        log_theta[:, 0::2] = log_dirichlet_draws(rng, prior[0::2] + gamma * n[:, 0::2].sum(0))
        log_theta[:, 1::2] = log_dirichlet_draws(rng, prior[1::2] + gamma * n[:, 1::2])
        log_w = log_dirichlet_draws(rng, 1.0 + m.sum(axis=0))
        p = self._state_probabilities(log_w, log_theta)
        m = rng.multinomial(self.patterns.weight, p)
        if out is not None:
            out["subclass_prior"][...] = np.exp(log_w)
            out["confusion"][...] = np.exp(log_theta)
            U = self.patterns.n_patterns
            out["plausibility"][...] = p.reshape(U, C, 2).sum(axis=2)[self.patterns.item_pattern]
        return m


def pattern_counts(patterns: ItemPatterns, n_annotators: int, n_classes: int) -> sp.csr_matrix:
    """``(pattern, annotator * C + label)``: how many times each annotator gave each label to
    an item of each pattern, so that ``L_us = sum_k log theta_{j_k}[s, x_k]`` is one sparse
    product with ``log theta`` arranged ``(annotator * C + label, state)``."""
    return sp.csr_matrix((np.ones(patterns.item.size),
                          (patterns.item, patterns.annotator * n_classes + patterns.label)),
                         shape=(patterns.n_patterns, n_annotators * n_classes))


def incidence_matrix(labels: Labels) -> sp.csr_matrix:
    """``(item, annotation)`` 0/1: which item each label is on."""
    return sp.csr_matrix((np.ones(labels.n_annotations), (labels.item,
                                                          np.arange(labels.n_annotations))),
                         shape=(labels.n_items, labels.n_annotations))


def subclass_names(classes) -> list[str]:
    """``"<class> easy"``, ``"<class> hard"`` for every class, in state order."""
    return [f"{c} {kind}" for c in classes for kind in ("easy", "hard")]


__all__ = ["EasyHardKernel", "incidence_matrix", "pattern_counts", "start_states", "subclass_names"]
