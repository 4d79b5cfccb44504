"""Gibbs sampler of the ordered-probit annotator model
(:func:`plausible.models.ordered_probit.build`), with Albert & Chib's (1993) augmentation.

Grades ``c = 0..K-1`` (the classes in their order); item ``i`` has a true grade ``z_i ~
Categorical(pi)``; annotator ``j`` answers at random (a uniform grade) with probability
``e_j``, and otherwise perceives the grade as ``y = z_i + b_j + u``, ``u ~ N(0, s_j^2)``, and
reports the grade ``x`` whose interval ``(tau_{x-1}, tau_x]`` holds ``y``, with the
thresholds halfway between grades, ``tau_c = c + 1/2`` (``tau_{-1} = -inf``, ``tau_{K-1} =
inf``). Priors: ``pi ~ Dirichlet(1)``, ``b_j ~ N(0, bias_scale^2)``, ``s_j^2 ~
InvGamma(noise_shape, noise_rate)``, ``e_j ~ Beta(spam_prior)``. A whole-number reliability
``gamma`` repeats every label ``gamma`` times (each copy with its own indicator and ``y``).

Each sweep draws, exactly and vectorised over labels and annotators,

0. each copy's indicator ``r_k`` (random answer) given ``z, b, s, e``: ``P(r_k) = (e_j / K)
   / (e_j / K + (1 - e_j) P(x_k | z, b_j, s_j))``, then ``e_j | r ~ Beta(spam_prior + (#r,
   #not r))``;
1. ``y_k | z, b, s ~ N(z_{i_k} + b_{j_k}, s_{j_k}^2)`` truncated to ``(tau_{x_k - 1},
   tau_{x_k}]``, for the earnest copies (``r_k`` false);
2. ``b_j | y, z, s ~ N(m_j, 1 / P_j)``, ``P_j = 1 / bias_scale^2 + n_j / s_j^2``, ``m_j =
   sum_k (y_k - z_{i_k}) / (s_j^2 P_j)`` over annotator ``j``'s ``n_j`` earnest copies;
3. ``s_j^2 | y, z, b ~ InvGamma(noise_shape + n_j / 2, noise_rate + sum (y_k - z_{i_k} -
   b_j)^2 / 2)``;
3b. :data:`MOVES` rounds of slice updates (Neal 2003) of every ``b_j``, every ``log s_j``
   and every ``logit e_j`` given ``z``, with the indicators and perceptions integrated out
   (each label's probability ``e_j / K + (1 - e_j) P(x | z, b_j, s_j)``), the annotators in
   lockstep: given the perceptions, ``b_j`` and ``s_j`` are pinned within a fraction of
   their posterior spread (rounding to grades loses most of what a label says about a small
   bias), so steps 2-3 alone move them slowly (bulk ESS about 1 in 40 sweeps on 40 items);
   these updates leave the same posterior invariant and cross it in a few sweeps;
3c. an independence Metropolis–Hastings move of every ``(log s_j, logit e_j)`` jointly, given
   ``z`` and ``b_j`` with the indicators and perceptions integrated out, from a proposal
   built each sweep on a grid (:meth:`OrderedProbitKernel._grid_moves`): the full
   conditional of an annotator who gives only the end grades has two modes, small noise with
   random answers for the far grade, and noise so large that every perception falls past an
   end grade with none, joined only through values of low density, which the one-coordinate
   updates of 3b do not cross (chains of a real crowd settled in either);
4. ``pi | z ~ Dirichlet(1 + m)``, ``m_c`` the items of grade ``c``;
4b. a slice update of one shift of every bias at once, ``b_j + d``, on the posterior with
   the grades summed out (:meth:`OrderedProbitKernel._shift`): the annotators' biases and
   the items' grades move together along it, which the steps given the grades cross
   slowly;
5. ``z_i | b, s, e, pi ~ softmax_c(log pi_c + gamma L_ic)``, ``L_ic = sum_{k in i} log P(x_k |
   c, b_{j_k}, s_{j_k}, e_{j_k})``, the label's probability with ``r`` and ``y`` integrated
   out.

Each step that integrates a variable out (3b, 4b, 5) is followed by a draw of that variable
before any step conditions on it (a partially collapsed Gibbs sampler, van Dyk & Park 2008):
steps 5, 0 and 1 draw ``(z, r, y)`` as one block. The plausibility a kept sweep records is
step 5's ``P(z_i = c | b, s, e, pi, x)`` (Rao–Blackwellised), at the parameters the sweep
records.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from plausible.data.labels import Labels
from plausible.inference.kernel import Variable
from plausible.inference.lockstep_slice import slice_updates
from plausible.inference.memory import MemoryBudgetError, format_bytes, memory_budget
from plausible.maths.categorical import categorical_draws
from plausible.maths.known_classes import known_log_mask
from plausible.maths.logspace import log_dirichlet_draws, logsumexp_last
from plausible.maths.normal_intervals import log_interval_probability, truncated_normal_draws

DEFAULT_TUNE = 200
"""Warm-up sweeps: from the labels' median grades the chain settles within tens of sweeps."""
SCATTERED = 0.2
"""Share of items each chain starts at a random grade (dispersion between chains)."""
MOVES = 1
"""Rounds of step 3b per sweep."""
BIAS_WIDTH = 0.5
LOG_NOISE_WIDTH = 0.5
LOGIT_SPAM_WIDTH = 1.0
"""Slice widths of step 3b (grades; log grades; log-odds): about the spread of a bias, log
noise or log-odds of random answers given tens of labels; stepping out widens them where the
data say less."""
LOG_NOISE_EDGES = np.linspace(np.log(0.05), np.log(50.0), 25)
LOGIT_SPAM_EDGES = np.linspace(-9.0, 3.0, 13)
"""Cells of step 3c's proposal (log grades; log-odds): noise from a twentieth of a grade, below
which an annotator is never off, to fifty, where perceptions fall only past the end grades;
random answers from about one in 8000 to 95 %. A state outside them is left to step 3b (its
proposal density is zero there, so the move is never accepted from it)."""


def thresholds(n_grades: int) -> tuple[np.ndarray, np.ndarray]:
    """``(lower, upper)`` ends of each grade's interval, ``(grade,)``: ``(c - 1/2, c + 1/2]``
    with the outer ends infinite."""
    lower = np.arange(n_grades) - 0.5
    upper = np.arange(n_grades) + 0.5
    lower[0], upper[-1] = -np.inf, np.inf
    return lower, upper


def label_table(bias: np.ndarray, noise: np.ndarray, n_grades: int,
                spam: np.ndarray | None = None) -> np.ndarray:
    """``log P(x = y | z = c, b_j, s_j, e_j)``, ``(annotator, grade c, label y)``: ``log(e_j /
    K + (1 - e_j) P(tau_{y-1} < c + b_j + s_j u <= tau_y))``, the earnest interval
    probability mixed with a random answer at rate ``spam`` (``e``; unmixed when None). A
    label's probability depends on its annotator, the grade and the label only, so a sweep
    evaluates ``J K^2`` normal intervals, not one per label and grade."""
    lower, upper = thresholds(n_grades)
    loc = np.arange(n_grades)[None, :, None] + bias[:, None, None]
    table = log_interval_probability(lower[None, None, :], upper[None, None, :], loc,
                                     noise[:, None, None])
    if spam is None:
        return table
    spam = np.asarray(spam, dtype=np.float64)[:, None, None]
    return np.logaddexp(np.log(spam) - np.log(n_grades), np.log1p(-spam) + table)


def label_counts(labels: Labels):
    """``(item, annotator * K + label)`` sparse counts of each item's labels by annotator and
    label, so that ``L = counts @ table`` with the table arranged ``(annotator * K + label,
    grade)`` (:func:`grade_log_likelihoods`)."""
    K = labels.n_classes
    return sp.csr_matrix((np.ones(labels.n_annotations),
                          (labels.item, labels.annotator * K + labels.label)),
                         shape=(labels.n_items, labels.n_annotators * K))


def grade_log_likelihoods(counts, table: np.ndarray) -> np.ndarray:
    """``L_ic = sum_{k in i} log P(x_k | z_i = c, b_{j_k}, s_{j_k})``, ``(item, grade)``, from
    :func:`label_counts` and :func:`label_table`."""
    J, K, _ = table.shape
    return counts @ table.transpose(0, 2, 1).reshape(J * K, K)


def median_grades(labels: Labels) -> np.ndarray:
    """Each item's median label (the lower median), int ``(item,)``."""
    order = np.lexsort((labels.label, labels.item))
    counts = np.bincount(labels.item, minlength=labels.n_items)
    first = np.cumsum(counts) - counts
    return labels.label[order][first + (counts - 1) // 2]


def per_annotator(values: np.ndarray, annotator: np.ndarray, n_annotators: int) -> np.ndarray:
    """``values (point, cell)`` summed over each annotator's cells, ``(point, annotator)``."""
    points = values.shape[0]
    index = (np.arange(points)[:, None] * n_annotators + annotator).ravel()
    return np.bincount(index, values.ravel(), minlength=points * n_annotators).reshape(
        points, n_annotators)


class OrderedProbitKernel:
    """The sweep of the module for ``labels``. State: ``(z (item,), b (annotator,), s^2
    (annotator,), e (annotator,))``; ``gamma`` a whole number."""

    name = "plausible.inference.ordered_probit_sampler"
    default_tune = DEFAULT_TUNE
    default_thin = 1
    stats = {}

    def __init__(self, labels: Labels, *, bias_scale: float, noise_shape: float,
                 noise_rate: float, spam_prior: tuple[float, float], gamma: int,
                 dtype=np.float32):
        self.labels = labels
        self.bias_scale, self.noise_shape, self.noise_rate = bias_scale, noise_shape, noise_rate
        self.spam_prior = tuple(float(v) for v in spam_prior)
        self.gamma = int(gamma)
        self.moves, self.grid, self.shift = MOVES, True, True  # steps 3b, 3c and 4b (off: the
        # conjugate steps alone)
        J, K = labels.n_annotators, labels.n_classes
        grid_points = (LOG_NOISE_EDGES.size - 1) * (LOGIT_SPAM_EDGES.size - 1)
        working = 8 * (4 * J * K * K + 4 * labels.n_items * K + 8 * self.gamma *
                       labels.n_annotations
                       + 2 * grid_points * min(J * K * K, labels.n_annotations))  # step 3c
        if working > memory_budget():
            raise MemoryBudgetError(
                f"ordered probit's sweep needs about {format_bytes(working)} of working memory "
                f"({J} annotators x {K}^2 grade pairs), more than the budget "
                f"({format_bytes(memory_budget())}): bin the {K} grades into fewer, or model the "
                "scores as ratings (censored-normal-inverse-gamma with a resolution)")
        self.counts = label_counts(labels)
        self.lower, self.upper = (end[labels.label] for end in thresholds(labels.n_classes))
        self.log_uniform = -np.log(labels.n_classes)
        self.mask = known_log_mask(labels.known, labels.n_items, labels.n_classes)
        self.n_labels = self.gamma * np.bincount(labels.annotator, minlength=labels.n_annotators)
        self.variables = {"class_prior": Variable(("class",), (K,)),
                          "bias": Variable(("annotator",), (J,)),
                          "noise": Variable(("annotator",), (J,)),
                          "spam": Variable(("annotator",), (J,)),
                          "plausibility": Variable(("item", "class"), (labels.n_items, K), dtype)}

    def grade_probabilities(self, log_pi, bias, noise, spam) -> np.ndarray:
        """Step 5's ``P(z_i = c | b, s, e, pi, x)``, ``(item, grade)`` (one-hot for an item
        of known grade)."""
        table = label_table(bias, noise, self.labels.n_classes, spam)
        p = log_pi[None, :] + self.mask + self.gamma * grade_log_likelihoods(self.counts,
                                                                             table)
        p = np.exp(p - p.max(axis=1, keepdims=True))
        return p / p.sum(axis=1, keepdims=True)

    def _cells(self, z) -> tuple:
        """The labels counted by annotator, their item's grade ``z`` and label, only where the
        count is not zero: ``(annotator, grade, label, count)``, each ``(cell,)`` (an
        annotator's full conditional given ``z`` reads the labels through these counts)."""
        labels, K = self.labels, self.labels.n_classes
        counts = np.bincount((labels.annotator * K + z[labels.item]) * K + labels.label,
                             minlength=labels.n_annotators * K * K)
        flat = np.flatnonzero(counts)
        annotator, rest = np.divmod(flat, K * K)
        return (annotator, *np.divmod(rest, K), counts[flat].astype(np.float64))

    def _annotator_log_likelihoods(self, cells, bias, noise, spam,
                                   active=None) -> np.ndarray:
        """``gamma sum_{k in j} log P(x_k | z_{i_k}, b_j, s_j, e_j)`` per annotator at each
        row of ``bias``, ``noise`` and ``spam`` (broadcast to ``(point, annotator)``),
        ``(point, annotator)``: the labels' likelihood with the indicators and perceptions
        integrated out, from :meth:`_cells`; only the annotators ``active`` at some point
        (bool ``(point, annotator)``; all when None), zero for the others."""
        annotator, grade, label, count = cells
        bias, noise, spam = np.broadcast_arrays(bias, noise, spam)
        if active is not None:
            keep = active.any(axis=0)[annotator]
            annotator, grade, label, count = (v[keep] for v in cells)
        K = self.labels.n_classes
        lower, upper = thresholds(K)
        earnest = log_interval_probability(lower[label], upper[label],
                                           grade + bias[:, annotator], noise[:, annotator])
        rate = spam[:, annotator]
        table = np.logaddexp(np.log(rate) - np.log(K), np.log1p(-rate) + earnest)
        return self.gamma * per_annotator(count * table, annotator, bias.shape[1])

    def _marginal_moves(self, rng, z, bias, variance, spam):
        """Step 3b: a slice update of every ``b_j``, then of every ``log s_j``, then of every
        ``logit e_j``, each on its full conditional given ``z`` with the indicators and
        perceptions integrated out, the annotators in lockstep
        (:func:`plausible.inference.lockstep_slice.slice_updates`; fixed widths, unlimited
        stepping out)."""
        noise = np.sqrt(variance)
        cells = self._cells(z)
        likelihood = self._annotator_log_likelihoods

        def bias_density(points, active):
            return (likelihood(cells, points, noise[None], spam[None], active)
                    - 0.5 * points ** 2 / self.bias_scale ** 2)

        bias, _ = slice_updates(rng, bias, bias_density(bias[None], None)[0],
                                np.full(bias.size, BIAS_WIDTH), bias_density)
        a, r = self.noise_shape, self.noise_rate

        def log_noise_density(points, active):  # InvGamma(a, r) on s^2 in log s: -2a log s - r/s^2
            return (likelihood(cells, bias[None], np.exp(points), spam[None], active)
                    - 2.0 * a * points - r * np.exp(-2.0 * points))

        log_noise, _ = slice_updates(rng, np.log(noise),
                                     log_noise_density(np.log(noise)[None], None)[0],
                                     np.full(bias.size, LOG_NOISE_WIDTH), log_noise_density)
        noise = np.exp(log_noise)
        a, b = self.spam_prior

        def logit_spam_density(points, active):  # Beta(a, b) in log-odds: a log e + b log(1 - e)
            rate = 1.0 / (1.0 + np.exp(-points))
            return (likelihood(cells, bias[None], noise[None], rate, active)
                    + a * np.log(rate) + b * np.log1p(-rate))

        logit = np.log(spam) - np.log1p(-spam)
        logit, _ = slice_updates(rng, logit, logit_spam_density(logit[None], None)[0],
                                 np.full(bias.size, LOGIT_SPAM_WIDTH), logit_spam_density)
        return bias, noise ** 2, 1.0 / (1.0 + np.exp(-logit))

    def _grid_moves(self, rng, z, bias, variance, spam):
        """Step 3c: for every annotator at once, an independence Metropolis–Hastings move of
        ``(log s_j, logit e_j)`` given ``z`` and ``b_j``. The proposal picks a cell of the
        :data:`LOG_NOISE_EDGES` x :data:`LOGIT_SPAM_EDGES` grid with probability proportional
        to the full conditional at its centre, then a point uniformly in it; the move is
        accepted with probability ``min(1, f(x') q(x) / (f(x) q(x')))``, ``f`` the full
        conditional of step 3b (labels' likelihood with ``r`` and ``y`` integrated out, the
        priors in these coordinates) and ``q`` the proposal's density, zero off the grid."""
        K, J = self.labels.n_classes, self.labels.n_annotators
        cells = self._cells(z)
        annotator, grade, label, count = cells
        noise_edges, spam_edges = LOG_NOISE_EDGES, LOGIT_SPAM_EDGES
        log_noise = 0.5 * (noise_edges[1:] + noise_edges[:-1])  # cell centres
        logit_spam = 0.5 * (spam_edges[1:] + spam_edges[:-1])
        lower, upper = thresholds(K)
        earnest = np.exp(log_interval_probability(  # (noise, cell)
            lower[label], upper[label], grade + bias[annotator],
            np.exp(log_noise)[:, None]))
        rate = 1.0 / (1.0 + np.exp(-logit_spam))[:, None, None]
        mixed = count * np.log(rate / K + (1.0 - rate) * earnest)  # (spam, noise, cell)
        grid = self.gamma * per_annotator(mixed.reshape(-1, annotator.size), annotator, J)
        grid += self._log_prior(np.tile(log_noise, logit_spam.size)[:, None],
                                np.repeat(logit_spam, log_noise.size)[:, None])
        log_q = grid - grid.max(axis=0)
        log_q -= np.log(np.exp(log_q).sum(axis=0))
        cell = categorical_draws(rng, np.exp(log_q.T))
        spam_cell, noise_cell = np.divmod(cell, log_noise.size)
        log_area = np.log(np.diff(noise_edges)[0] * np.diff(spam_edges)[0])
        proposed_noise = noise_edges[noise_cell] + np.diff(noise_edges)[0] * rng.random(J)
        proposed_logit = spam_edges[spam_cell] + np.diff(spam_edges)[0] * rng.random(J)
        current_noise = 0.5 * np.log(variance)
        current_logit = np.log(spam) - np.log1p(-spam)
        points_noise = np.stack([current_noise, proposed_noise])
        points_logit = np.stack([current_logit, proposed_logit])
        target = (self._annotator_log_likelihoods(cells, bias[None], np.exp(points_noise),
                                                  1.0 / (1.0 + np.exp(-points_logit)))
                  + self._log_prior(points_noise, points_logit))

        def log_proposal(log_s, logit):
            i = np.searchsorted(noise_edges, log_s, side="right") - 1
            k = np.searchsorted(spam_edges, logit, side="right") - 1
            inside = (i >= 0) & (i < log_noise.size) & (k >= 0) & (k < logit_spam.size)
            flat = np.where(inside, k * log_noise.size + i, 0)
            return np.where(inside, log_q[flat, np.arange(J)] - log_area, -np.inf)

        with np.errstate(invalid="ignore"):
            log_ratio = (target[1] - target[0] + log_proposal(current_noise, current_logit)
                         - log_proposal(proposed_noise, proposed_logit))
        accept = np.log(rng.random(J)) < log_ratio  # never from off the grid (nan, -inf)
        variance = np.where(accept, np.exp(2.0 * proposed_noise), variance)
        spam = np.where(accept, 1.0 / (1.0 + np.exp(-proposed_logit)), spam)
        return variance, spam

    def _log_prior(self, log_noise, logit_spam):
        """Log prior density of ``(log s, logit e)``: ``InvGamma(a, r)`` on ``s^2`` and
        ``Beta(a', b')`` on ``e``, each with its Jacobian (step 3b's coordinates)."""
        a, r = self.noise_shape, self.noise_rate
        a_spam, b_spam = self.spam_prior
        return (-2.0 * a * log_noise - r * np.exp(-2.0 * log_noise)
                - a_spam * np.logaddexp(0.0, -logit_spam) - b_spam * np.logaddexp(0.0, logit_spam))

    def _shift(self, rng, log_pi, bias, noise, spam):
        """Step 4b: a slice update of a shift ``d`` of every bias at once, ``b_j + d``, on the
        posterior with the grades summed out, ``sum_i log sum_c pi_c exp(gamma L_ic) + sum_j
        log N(b_j + d | 0, bias_scale^2)`` (the grades are drawn afresh in step 5): the
        direction in which the annotators' biases and the items' grades move together, which
        steps 1-3b, each given the grades, cross slowly."""

        J, K = self.labels.n_annotators, self.labels.n_classes

        def density(points, active):  # points (m, 1): every shift's table in one product
            shifted = bias[None, :] + points  # (m, annotator)
            m = shifted.shape[0]
            table = label_table(shifted.ravel(), np.tile(noise, m), K,
                                np.tile(spam, m)).reshape(m, J, K, K)
            L = self.counts @ table.transpose(1, 3, 0, 2).reshape(J * K, m * K)
            L = np.asarray(L).reshape(-1, m, K)  # (item, point, grade)
            per_item = logsumexp_last(log_pi + self.mask[:, None, :]
                                      + self.gamma * L)[..., 0]  # (item, point)
            return (per_item.sum(axis=0)
                    - 0.5 * (shifted ** 2).sum(axis=1) / self.bias_scale ** 2)[:, None]

        zero = np.zeros(1)
        shift, _ = slice_updates(rng, zero, density(zero[None], None)[0],
                                 np.full(1, BIAS_WIDTH), density)
        return bias + shift[0]

    def start(self, rng):
        """The labels' median grades, a fifth of the items at random grades (known grades
        kept); no bias, noise
        at the prior's mode, random answers at the prior's mean."""
        z = median_grades(self.labels)
        scattered = rng.random(z.size) < SCATTERED
        z[scattered] = rng.integers(0, self.labels.n_classes, int(scattered.sum()))
        if self.labels.known is not None:
            z = np.where(self.labels.known >= 0, self.labels.known, z)
        J = self.labels.n_annotators
        a, b = self.spam_prior
        return (z, np.zeros(J), np.full(J, self.noise_rate / (self.noise_shape + 1)),
                np.full(J, a / (a + b)))

    def load(self, values, rng):
        """``z | b, s, e, pi`` (the grades are summed out of the PyMC model), drawn exactly."""
        bias, variance, spam = values["bias"], values["noise_variance"], values["spam"]
        with np.errstate(divide="ignore"):
            p = self.grade_probabilities(np.log(values["class_prior"]), bias, np.sqrt(variance),
                                         spam)
        return categorical_draws(rng, p), bias, variance, spam

    def to_point(self, state, draw):
        """The model's free variables after a sweep that recorded ``draw``."""
        return {"class_prior": draw["class_prior"], "bias": draw["bias"], "spam": draw["spam"],
                "noise_variance": np.asarray(draw["noise"], dtype=np.float64) ** 2}

    def sweep(self, rng, state, out):
        """Steps 0-5 of the module."""
        z, bias, variance, spam = state
        labels, gamma, K = self.labels, self.gamma, self.labels.n_classes
        J, j = labels.n_annotators, labels.annotator
        grade = z[labels.item]
        shape = (gamma, labels.n_annotations)
        # 0: which copies are random answers, and the rates
        earnest = label_table(bias, np.sqrt(variance), K)[j, grade, labels.label]
        log_odds = np.log(spam[j]) + self.log_uniform - np.log1p(-spam[j]) - earnest
        kept = rng.random(shape) >= 1.0 / (1.0 + np.exp(-log_odds))  # earnest copies
        n_kept = np.bincount(j, kept.sum(axis=0), minlength=J)
        a, b = self.spam_prior
        spam = rng.beta(a + self.n_labels - n_kept, b + n_kept)
        # 1-3: perceptions of the earnest copies, then bias and noise
        grade = grade.astype(np.float64)
        y = truncated_normal_draws(rng, np.broadcast_to(self.lower, shape), self.upper,
                                   grade + bias[j], np.sqrt(variance)[j])
        residual = np.where(kept, y - grade, 0.0).sum(axis=0)
        precision = 1.0 / self.bias_scale ** 2 + n_kept / variance
        mean = np.bincount(j, residual, minlength=J) / variance / precision
        bias = mean + rng.standard_normal(J) / np.sqrt(precision)
        squares = np.where(kept, (y - grade - bias[j]) ** 2, 0.0).sum(axis=0)
        rate = self.noise_rate + 0.5 * np.bincount(j, squares, minlength=J)
        variance = rate / rng.gamma(self.noise_shape + 0.5 * n_kept)
        for _ in range(self.moves):
            bias, variance, spam = self._marginal_moves(rng, z, bias, variance, spam)
        if self.grid:
            variance, spam = self._grid_moves(rng, z, bias, variance, spam)
        log_pi = log_dirichlet_draws(rng, 1.0 + np.bincount(z, minlength=K))
        noise = np.sqrt(variance)
        if self.shift:
            bias = self._shift(rng, log_pi, bias, noise, spam)
        p = self.grade_probabilities(log_pi, bias, noise, spam)
        z = categorical_draws(rng, p)
        if out is not None:
            out["class_prior"][...] = np.exp(log_pi)
            out["bias"][...] = bias
            out["noise"][...] = noise
            out["spam"][...] = spam
            if "plausibility" in out:
                out["plausibility"][...] = p
        return z, bias, variance, spam


__all__ = ["OrderedProbitKernel", "grade_log_likelihoods", "label_counts", "label_table",
           "median_grades", "thresholds"]
