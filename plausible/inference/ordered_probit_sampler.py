"""Gibbs sampler of the ordered-probit annotator model
(:func:`plausible.models.ordered_probit.build`), with Albert & Chib's (1993) augmentation.

Grades ``c = 0..K-1`` (the classes in their order); item ``i`` has a true grade ``z_i ~
Categorical(pi)``; annotator ``j`` perceives it as ``y = z_i + b_j + e``, ``e ~ N(0, s_j^2)``,
and reports the grade ``x`` whose interval ``(tau_{x-1}, tau_x]`` holds ``y``, with the
thresholds halfway between grades, ``tau_c = c + 1/2`` (``tau_{-1} = -inf``, ``tau_{K-1} =
inf``). Priors: ``pi ~ Dirichlet(1)``, ``b_j ~ N(0, bias_scale^2)``, ``s_j^2 ~
InvGamma(noise_shape, noise_rate)``. A whole-number reliability ``gamma`` repeats every
label ``gamma`` times (each with its own ``y``).

Each sweep draws, exactly and vectorised over labels and annotators,

1. ``y_kr | z, b, s ~ N(z_{i_k} + b_{j_k}, s_{j_k}^2)`` truncated to ``(tau_{x_k - 1},
   tau_{x_k}]``, ``r = 1..gamma``;
2. ``b_j | y, z, s ~ N(m_j, 1 / P_j)``, ``P_j = 1 / bias_scale^2 + n_j / s_j^2``, ``m_j =
   sum_{k, r in j} (y_kr - z_{i_k}) / (s_j^2 P_j)``, ``n_j`` annotator ``j``'s labels times
   ``gamma``;
3. ``s_j^2 | y, z, b ~ InvGamma(noise_shape + n_j / 2, noise_rate + sum (y_kr - z_{i_k} -
   b_j)^2 / 2)``;
3b. :data:`MOVES` rounds of random-walk Metropolis on every ``b_j`` and then every ``log
   s_j`` given ``z``, with the perceptions integrated out (the labels' interval
   probabilities): given the perceptions, ``b_j`` and ``s_j`` are pinned within a fraction
   of their posterior spread, so steps 2-3 alone move them slowly (bulk ESS about 1 in 40
   sweeps on 40 items); these moves leave the same posterior invariant and cross it in a few
   sweeps (1 in 20 at two rounds);
4. ``pi | z ~ Dirichlet(1 + m)``, ``m_c`` the items of grade ``c``;
5. ``z_i | b, s, pi ~ softmax_c(log pi_c + gamma L_ic)``, ``L_ic = sum_{k in i} log P(x_k |
   c, b_{j_k}, s_{j_k})``, the interval probability of the label with ``y`` integrated out.

Steps 5 and 1 (of the next sweep) together draw ``(z, y)`` as one block, the grade with its
augmentation integrated out: the chain does not have to move a grade against latent values
drawn for the old one. The plausibility a kept sweep records is step 5's ``P(z_i = c | b, s,
pi, x)`` (Rao–Blackwellised), at the parameters the sweep records.
"""

from __future__ import annotations

import numpy as np

from plausible.data.labels import Labels
from plausible.inference.easy_hard_sampler import incidence_matrix
from plausible.inference.kernel import Variable
from plausible.maths.categorical import categorical_draws
from plausible.maths.logspace import log_dirichlet_draws
from plausible.maths.normal_intervals import log_interval_probability, truncated_normal_draws

DEFAULT_TUNE = 200
"""Warm-up sweeps: from the labels' median grades the chain settles within tens of sweeps."""
SCATTERED = 0.2
"""Share of items each chain starts at a random grade (dispersion between chains)."""
MOVES = 2
"""Rounds of step 3b per sweep."""
STEP = 1.5
"""Random-walk scale of step 3b, in posterior standard deviations."""


def thresholds(n_grades: int) -> tuple[np.ndarray, np.ndarray]:
    """``(lower, upper)`` ends of each grade's interval, ``(grade,)``: ``(c - 1/2, c + 1/2]``
    with the outer ends infinite."""
    lower = np.arange(n_grades) - 0.5
    upper = np.arange(n_grades) + 0.5
    lower[0], upper[-1] = -np.inf, np.inf
    return lower, upper


def grade_log_likelihoods(labels: Labels, bias: np.ndarray, noise: np.ndarray) -> np.ndarray:
    """``log P(x_k | z = c, b, s)`` of every label at every grade, ``(annotation, grade)``."""
    lower, upper = thresholds(labels.n_classes)
    loc = np.arange(labels.n_classes)[None, :] + bias[labels.annotator][:, None]
    return log_interval_probability(lower[labels.label][:, None], upper[labels.label][:, None],
                                    loc, noise[labels.annotator][:, None])


def median_grades(labels: Labels) -> np.ndarray:
    """Each item's median label (the lower median), int ``(item,)``."""
    order = np.lexsort((labels.label, labels.item))
    counts = np.bincount(labels.item, minlength=labels.n_items)
    first = np.cumsum(counts) - counts
    return labels.label[order][first + (counts - 1) // 2]


class OrderedProbitKernel:
    """The sweep of the module for ``labels``. State: ``(z (item,), b (annotator,), s^2
    (annotator,))``; ``gamma`` a whole number."""

    name = "plausible.inference.ordered_probit_sampler"
    default_tune = DEFAULT_TUNE
    default_thin = 1
    stats = {}

    def __init__(self, labels: Labels, *, bias_scale: float, noise_shape: float,
                 noise_rate: float, gamma: int, dtype=np.float32):
        self.labels = labels
        self.bias_scale, self.noise_shape, self.noise_rate = bias_scale, noise_shape, noise_rate
        self.gamma = int(gamma)
        self.moves = MOVES
        self.incidence = incidence_matrix(labels)
        self.lower, self.upper = (end[labels.label] for end in thresholds(labels.n_classes))
        self.n_labels = self.gamma * np.bincount(labels.annotator, minlength=labels.n_annotators)
        J, K = labels.n_annotators, labels.n_classes
        self.variables = {"class_prior": Variable(("class",), (K,)),
                          "bias": Variable(("annotator",), (J,)),
                          "noise": Variable(("annotator",), (J,)),
                          "plausibility": Variable(("item", "class"), (labels.n_items, K), dtype)}

    def grade_probabilities(self, log_pi, bias, noise) -> np.ndarray:
        """Step 5's ``P(z_i = c | b, s, pi, x)``, ``(item, grade)``."""
        L = self.incidence @ grade_log_likelihoods(self.labels, bias, noise)
        p = log_pi[None, :] + self.gamma * L
        p = np.exp(p - p.max(axis=1, keepdims=True))
        return p / p.sum(axis=1, keepdims=True)

    def _annotator_log_likelihoods(self, grade, bias, noise) -> np.ndarray:
        """``gamma sum_{k in j} log P(x_k | z_{i_k}, b_j, s_j)`` per annotator, ``(annotator,)``:
        the labels' likelihood with the perceptions integrated out."""
        j = self.labels.annotator
        terms = log_interval_probability(self.lower, self.upper, grade + bias[j], noise[j])
        return self.gamma * np.bincount(j, terms, minlength=self.labels.n_annotators)

    def _marginal_moves(self, rng, grade, bias, variance):
        """Step 3b: a random-walk Metropolis move of every ``b_j``, then of every ``log s_j``,
        each on its full conditional with the perceptions integrated out (annotators accept
        independently; the proposal scales are the posterior's, about ``s_j / sqrt(n_j)`` and
        ``1 / sqrt(2 n_j)``, fixed given the other parameter, so the moves are symmetric)."""
        J = self.labels.n_annotators
        noise = np.sqrt(variance)
        current = self._annotator_log_likelihoods(grade, bias, noise)
        proposal = bias + STEP * noise / np.sqrt(self.n_labels + 1.0) * rng.standard_normal(J)
        proposed = self._annotator_log_likelihoods(grade, proposal, noise)
        log_ratio = proposed - current - 0.5 * (proposal ** 2 - bias ** 2) / self.bias_scale ** 2
        accept = np.log(rng.random(J)) < log_ratio
        bias = np.where(accept, proposal, bias)
        current = np.where(accept, proposed, current)
        # log s: InvGamma(a, r) on s^2, times the Jacobian 2 s^2 of s^2 -> log s
        step = STEP / np.sqrt(2.0 * (self.n_labels + 1.0)) * rng.standard_normal(J)
        proposal = noise * np.exp(step)
        proposed = self._annotator_log_likelihoods(grade, bias, proposal)
        a, r = self.noise_shape, self.noise_rate
        log_prior = lambda s: -2.0 * a * np.log(s) - r / s ** 2  # noqa: E731 (incl. Jacobian)
        log_ratio = proposed - current + log_prior(proposal) - log_prior(noise)
        accept = np.log(rng.random(J)) < log_ratio
        return bias, np.where(accept, proposal, noise) ** 2

    def start(self, rng):
        """The labels' median grades, a fifth of the items at random grades; no bias, noise
        at the prior's mode."""
        z = median_grades(self.labels)
        scattered = rng.random(z.size) < SCATTERED
        z[scattered] = rng.integers(0, self.labels.n_classes, int(scattered.sum()))
        J = self.labels.n_annotators
        return z, np.zeros(J), np.full(J, self.noise_rate / (self.noise_shape + 1))

    def load(self, values, rng):
        """``z | b, s, pi`` (the grades are summed out of the PyMC model), drawn exactly."""
        bias, variance = values["bias"], values["noise_variance"]
        with np.errstate(divide="ignore"):
            p = self.grade_probabilities(np.log(values["class_prior"]), bias, np.sqrt(variance))
        return categorical_draws(rng, p), bias, variance

    def to_point(self, state, draw):
        return {"class_prior": draw["class_prior"], "bias": draw["bias"],
                "noise_variance": np.asarray(draw["noise"], dtype=np.float64) ** 2}

    def sweep(self, rng, state, out):
        """Steps 1-5 of the module."""
        z, bias, variance = state
        labels, gamma = self.labels, self.gamma
        J, j = labels.n_annotators, labels.annotator
        grade = z[labels.item].astype(np.float64)
        shape = (gamma, labels.n_annotations)
        y = truncated_normal_draws(rng, np.broadcast_to(self.lower, shape), self.upper,
                                   grade + bias[j], np.sqrt(variance)[j])
        residual = (y - grade).sum(axis=0)
        precision = 1.0 / self.bias_scale ** 2 + self.n_labels / variance
        mean = np.bincount(j, residual, minlength=J) / variance / precision
        bias = mean + rng.standard_normal(J) / np.sqrt(precision)
        squares = ((y - grade - bias[j]) ** 2).sum(axis=0)
        rate = self.noise_rate + 0.5 * np.bincount(j, squares, minlength=J)
        variance = rate / rng.gamma(self.noise_shape + 0.5 * self.n_labels)
        for _ in range(self.moves):
            bias, variance = self._marginal_moves(rng, grade, bias, variance)
        log_pi = log_dirichlet_draws(rng, 1.0 + np.bincount(z, minlength=labels.n_classes))
        noise = np.sqrt(variance)
        p = self.grade_probabilities(log_pi, bias, noise)
        z = categorical_draws(rng, p)
        if out is not None:
            out["class_prior"][...] = np.exp(log_pi)
            out["bias"][...] = bias
            out["noise"][...] = noise
            if "plausibility" in out:
                out["plausibility"][...] = p
        return z, bias, variance


__all__ = ["OrderedProbitKernel", "grade_log_likelihoods", "median_grades", "thresholds"]
