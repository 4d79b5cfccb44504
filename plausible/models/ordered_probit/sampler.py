"""Gibbs sampler of the ordered-probit annotator model
(:func:`plausible.models.ordered_probit.build`), with every perception and random-answer
indicator integrated out.

Grades ``c = 0..K-1`` (the classes in their order); item ``i`` has a true grade ``z_i ~
Categorical(pi)``; annotator ``j`` answers at random (a uniform grade) with probability
``e_j``, and otherwise perceives the grade as ``y = z_i + b_j + u``, ``u ~ N(0, s_j^2)``, and
reports the grade ``x`` whose interval ``(x - 1/2, x + 1/2]`` holds ``y`` (the end grades
take the tails). Priors: ``pi ~ Dirichlet(alpha)`` (``class_concentration``), ``b_j ~ N(0,
bias_scale^2)``, ``s_j^2 ~ InvGamma(noise_shape, noise_rate)``, ``e_j ~ Beta(spam_prior)``.
A reliability ``gamma > 0`` raises every label's likelihood to the power ``gamma``.

With ``y`` and the indicator integrated out a label has probability ``P(x | c, b_j, s_j, e_j)
= e_j / K + (1 - e_j) P(c + b_j + s_j u in (x - 1/2, x + 1/2])``, and given the grades an
annotator's labels enter only through their counts by (label, grade): at most ``K^2`` terms
(:mod:`plausible.models.ordered_probit.kernel`, compiled). Each sweep draws

1. :data:`MOVES` rounds of slice updates (Neal 2003) of every annotator's ``b_j``,
   ``log s_j`` and ``logit e_j``, each on its full conditional given ``z``, then one along
   each of :data:`DIRECTIONS` in ``(b, log s, logit e)``: exact, and unlike Albert & Chib's
   (1993) augmented conjugate steps (which this sampler once made first) not pinned by the
   perceptions, within which a small bias or noise moves a fraction of its posterior spread
   a sweep. More noise and fewer random answers explain the same off-grade labels, so the
   two lie along a ridge that one-coordinate updates cross slowly; the updates along it and
   across it raise the worst effective sample size per sweep by half on a real graded crowd;
2. for each annotator with probability :data:`GRID_SHARE`, an independence
   Metropolis–Hastings move of ``(log s_j, logit e_j)`` jointly, given ``z`` and ``b_j``,
   from a proposal built on a grid (:func:`~plausible.models.ordered_probit.kernel.
   grid_move`): the full conditional of an annotator who gives only the end grades has two
   modes, small noise with random answers for the far grade, and noise so large that every
   perception falls past an end grade with none, joined only through values of low density,
   which the one-coordinate updates do not cross (chains of a real crowd settled in
   either);
3. ``pi | z ~ Dirichlet(alpha + m)``, ``m_c`` the items of grade ``c``;
4. a slice update of one shift of every bias at once, ``b_j + d``, on the posterior with
   the grades summed out (:func:`~plausible.models.ordered_probit.kernel.shift_move`):
   the annotators' biases and the items' grades move together along it, which the steps
   given the grades cross slowly;
5. ``z_i | b, s, e, pi ~ softmax_c(log pi_c + gamma L_ic)``, ``L_ic = sum_{k in i} log P(x_k |
   c, b_{j_k}, s_{j_k}, e_{j_k})``
   (:func:`plausible.models.dawid_skene.kernel.class_sweep`, the annotators' tables read
   as confusion matrices).

Step 4 integrates the grades out and step 5 draws them afresh before anything conditions on
them again (a partially collapsed Gibbs sampler, van Dyk & Park 2008). The plausibility a
kept sweep records is step 5's ``P(z_i = c | b, s, e, pi, x)`` (Rao–Blackwellised), at the
parameters the sweep records.
"""

from __future__ import annotations

import numpy as np

from plausible.data.labels import Labels
from plausible.models.dawid_skene import kernel as kernel_code
from plausible.models.ordered_probit import kernel as compiled
from plausible.models.dawid_skene.sampler import Design
from plausible.inference.kernel import PyMCKernel, Variable
from plausible.inference.memory import MemoryBudgetError, format_bytes, memory_budget
from plausible.maths.categorical import categorical_draws
from plausible.maths.logspace import log_dirichlet_draws

DEFAULT_TUNE = 100
"""Warm-up sweeps: from the labels' median grades the chain settles within tens of sweeps
(the run's convergence report judges the draws kept after them)."""
SCATTERED = 0.2
"""Share of items each chain starts at a random grade (dispersion between chains)."""
MOVES = 1
"""Rounds of step 1 per sweep."""
BIAS_WIDTH = 0.5
LOG_NOISE_WIDTH = 0.5
LOGIT_SPAM_WIDTH = 1.0
WIDTHS = np.array([BIAS_WIDTH, LOG_NOISE_WIDTH, LOGIT_SPAM_WIDTH])
"""Slice widths of step 1 (grades; log grades; log-odds): about the spread of a bias, log
noise or log-odds of random answers given tens of labels; stepping out widens them where the
data say less."""
DIRECTIONS = np.array([[0.0, LOG_NOISE_WIDTH, -LOGIT_SPAM_WIDTH],
                       [0.0, LOG_NOISE_WIDTH, LOGIT_SPAM_WIDTH]])
"""The lines of step 1's joint slice updates (slice width 1 along each), in ``(b, log s,
logit e)``: more noise with fewer random answers (the ridge), and both more."""
SHIFT_WIDTH = 3.0
"""Step 4's slice width in units of ``bias_scale / sqrt(annotators)``, the prior's spread of
the biases' mean, which bounds the shift's posterior spread (the data only narrow it)."""
GRID_SHARE = 0.2
"""Each sweep makes step 2 for each annotator with this probability (a random mixture of
kernels that each leave the posterior invariant does too): it is there to cross between
modes, which a move every few sweeps does, at a fifth of its cost."""
LOG_NOISE_EDGES = np.linspace(np.log(0.05), np.log(50.0), 25)
LOGIT_SPAM_EDGES = np.linspace(-9.0, 3.0, 13)
"""Cells of step 2's proposal (log grades; log-odds): noise from a twentieth of a grade, below
which an annotator is never off, to fifty, where perceptions fall only past the end grades;
random answers from about one in 8000 to 95 %. A state outside them is left to step 1 (its
proposal density is zero there, so the move is never accepted from it)."""


def thresholds(n_grades: int) -> tuple[np.ndarray, np.ndarray]:
    """``(lower, upper)`` ends of each grade's interval, ``(grade,)``: ``(c - 1/2, c + 1/2]``
    with the outer ends infinite."""
    lower = np.arange(n_grades) - 0.5
    upper = np.arange(n_grades) + 0.5
    lower[0], upper[-1] = -np.inf, np.inf
    return lower, upper


def median_grades(labels: Labels) -> np.ndarray:
    """Each item's median label (the lower median), int ``(item,)``."""
    order = np.lexsort((labels.label, labels.item))
    counts = np.bincount(labels.item, minlength=labels.n_items)
    first = np.cumsum(counts) - counts
    return labels.label[order][first + (counts - 1) // 2]


class OrderedProbitKernel(PyMCKernel):
    """The sweep of the module for ``labels``. State: ``(z (item,), b (annotator,), log s
    (annotator,), logit e (annotator,))``. The labels are read in the Dawid–Skene kernel's
    layout (:class:`plausible.models.dawid_skene.sampler.Design`)."""

    name = "plausible.models.ordered_probit.sampler"
    default_tune = DEFAULT_TUNE
    default_thin = 1
    stats = {}

    def __init__(self, labels: Labels, *, bias_scale: float, noise_shape: float,
                 noise_rate: float, spam_prior: tuple[float, float], gamma: float,
                 class_concentration: float = 1.0, dtype=np.float32):
        self.labels = labels
        self.bias_scale, self.noise_shape, self.noise_rate = bias_scale, noise_shape, noise_rate
        self.spam_prior = tuple(float(v) for v in spam_prior)
        self.gamma, self.class_concentration = float(gamma), float(class_concentration)
        self.moves, self.grid, self.shift = MOVES, True, True  # steps 1, 2 and 4
        self.directions = DIRECTIONS
        J, K = labels.n_annotators, labels.n_classes
        working = 8 * (4 * J * K * K + 4 * labels.n_items * K + 2 * labels.n_annotations)
        if working > memory_budget():
            raise MemoryBudgetError(
                f"ordered probit's sweep needs about {format_bytes(working)} of working memory "
                f"({J} annotators x {K}^2 grade pairs), more than the budget "
                f"({format_bytes(memory_budget())}): bin the {K} grades into fewer, or model the "
                "scores as ratings (censored-normal-inverse-gamma with a resolution)")
        self.design = Design(labels)
        self.prior = np.array([bias_scale, noise_shape, noise_rate, *self.spam_prior])
        self.shift_width = SHIFT_WIDTH * bias_scale / np.sqrt(J)
        self.variables = {"class_prior": Variable(("class",), (K,)),
                          "bias": Variable(("annotator",), (J,)),
                          "noise": Variable(("annotator",), (J,)),
                          "spam": Variable(("annotator",), (J,)),
                          "plausibility": Variable(("item", "class"), (labels.n_items, K), dtype)}

    def counts(self, z) -> tuple[np.ndarray, np.ndarray]:
        """``(counts (annotator * label, grade), class_counts (grade,))`` of the labels under
        the grades ``z``: what the annotators' moves read (int64)."""
        K, design = self.labels.n_classes, self.design
        counts = np.zeros((self.labels.n_annotators * K, K), dtype=np.int64)
        class_counts = np.zeros(K, dtype=np.int64)
        kernel_code.count_labels(design.offsets, design.code, z, counts, class_counts, 0,
                                 design.n_items)
        return counts, class_counts

    def table(self, bias, log_noise, logit_spam) -> np.ndarray:
        """``log P(x | c, b_j, s_j, e_j)`` ``(annotator * label, grade)``."""
        K = self.labels.n_classes
        table = np.empty((self.labels.n_annotators * K, K))
        compiled.fill_table(bias, np.exp(log_noise), logit_spam, K, table)
        return table

    def annotator_moves(self, rng, counts, bias, log_noise, logit_spam, *, moves, grid):
        """Steps 1 (``moves`` rounds) and 2 (for the annotators where ``grid``, bool
        ``(annotator,)``) given the grades' ``counts`` (:meth:`counts`); returns the new
        ``(bias, log_noise, logit_spam)``."""
        bias, log_noise, logit_spam = (np.array(v, dtype=np.float64)
                                       for v in (bias, log_noise, logit_spam))
        compiled.annotator_moves(rng, bias, log_noise, logit_spam, counts, self.gamma,
                                 self.prior, WIDTHS, moves, self.directions, LOG_NOISE_EDGES,
                                 LOGIT_SPAM_EDGES, grid)
        return bias, log_noise, logit_spam

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
        return (z, np.zeros(J), np.full(J, 0.5 * np.log(self.noise_rate / (self.noise_shape
                                                                             + 1))),
                np.full(J, np.log(a / b)))

    def load(self, values, rng):
        """``z | b, s, e, pi`` (the grades are summed out of the PyMC model), drawn exactly."""
        bias, spam = values["bias"], values["spam"]
        log_noise = 0.5 * np.log(values["noise_variance"])
        with np.errstate(divide="ignore"):
            logit = np.log(spam) - np.log1p(-spam)
            log_pi = np.log(values["class_prior"])
        design = self.design
        p = np.empty((design.n_items, self.labels.n_classes))
        kernel_code.class_posteriors(design.offsets, design.code,
                                     self.table(bias, log_noise, logit), log_pi, self.gamma, p)
        z = np.where(design.fixed >= 0, design.fixed, categorical_draws(rng, p))
        return z, bias, log_noise, logit

    def to_point(self, state, draw):
        """The model's free variables after a sweep that recorded ``draw``."""
        return {"class_prior": draw["class_prior"], "bias": draw["bias"], "spam": draw["spam"],
                "noise_variance": np.asarray(draw["noise"], dtype=np.float64) ** 2}

    def sweep(self, rng, state, out):
        """Steps 1-5 of the module."""
        z, bias, log_noise, logit = state
        J, K, design = self.labels.n_annotators, self.labels.n_classes, self.design
        counts, class_counts = self.counts(z)
        grid = rng.random(J) < GRID_SHARE if self.grid else np.zeros(J, dtype=bool)
        bias, log_noise, logit = self.annotator_moves(rng, counts, bias, log_noise, logit,
                                                      moves=self.moves, grid=grid)
        log_pi = log_dirichlet_draws(rng, self.class_concentration + class_counts)
        noise = np.exp(log_noise)
        if self.shift:
            bias = bias + compiled.shift_move(rng, bias, noise, logit, log_pi, design.offsets,
                                              design.code, design.fixed, self.gamma,
                                              self.prior, self.shift_width)
        table = self.table(bias, log_noise, logit)
        stored = (out["plausibility"] if out is not None and "plausibility" in out
                  else np.empty((0, K), dtype=np.float32))
        z = z.copy()
        kernel_code.class_sweep(design.offsets, design.code, table, log_pi, self.gamma,
                                rng.random(design.n_items), z, design.fixed, counts,
                                class_counts, stored, 0, design.n_items)
        if out is not None:
            out["class_prior"][...] = np.exp(log_pi)
            out["bias"][...] = bias
            out["noise"][...] = noise
            out["spam"][...] = 1.0 / (1.0 + np.exp(-logit))
        return z, bias, log_noise, logit


__all__ = ["OrderedProbitKernel", "median_grades", "thresholds"]
