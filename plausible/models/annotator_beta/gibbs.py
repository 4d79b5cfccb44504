"""Exact Gibbs sweep for binary annotator-accuracy models (Carpenter 2008 and its variants).

Model (Carpenter 2008), annotation ``k`` is label ``x_k`` in {0, 1} of item ``i_k`` by annotator
``j_k``; sensitivity ``a1_j = P(x = 1 | c = 1)``, specificity ``a0_j = P(x = 0 | c = 0)``::

    c_i ~ Bernoulli(q),   x_k | c ~ Bernoulli(c_{i_k} a1_{j_k} + (1 - c_{i_k}) (1 - a0_{j_k}))

One call of :meth:`AnnotatorBetaGibbs.step` is the data-augmentation sweep

1. ``c_i | q, a, x ~ Bernoulli(sigmoid(logit q + L1_i - L0_i))`` independently over items,
   with ``L_c,i = sum_{k: i_k = i} log P(x_k | c)`` (one ``np.bincount`` over annotations);
2. ``q | c ~ Beta(a_q + n1, b_q + I - n1)`` with ``n1 = sum_i c_i``;
3. every accuracy parameter ``theta ~ Beta(alpha + agreements, beta + disagreements)``, the
   counts taken over the annotations it governs on items currently in the class(es) it
   covers (``T[j, c, x]`` = number of labels ``x`` by annotator ``j`` on items in class ``c``,
   one ``np.bincount``): specificity uses ``T[j, 0, 0]`` / ``T[j, 0, 1]``, sensitivity
   ``T[j, 1, 1]`` / ``T[j, 1, 0]``, a symmetric accuracy both.

**Reliability** ``gamma`` raises the labels' likelihood given the classes to the power
``gamma``: step 1 uses ``gamma (L1_i - L0_i)`` and step 3 adds ``gamma`` times the counts,
both still exact conjugate draws for any real ``gamma > 0``; the marginal target is the
model whose per-item density is ``q e^(gamma L1_i) + (1 - q) e^(gamma L0_i)``.

Given ``c``, ``q`` and the accuracies are independent, so 2-3 is one exact block draw from
``p(q, a | c, x, hyper)``; the classes are then discarded (not stored). The sweep's kernel
``K(theta -> theta') = sum_c p(c | theta, x) p(theta' | c, x)`` leaves the marginal posterior
``p(theta | x)`` invariant (data augmentation, Tanner & Wong 1987), i.e. the target of the
model whose likelihood has ``c`` summed out — the model of
:mod:`plausible.models.annotator_beta`, on which NUTS can run too.

4. (hierarchical and symmetric variants) the group hyper-parameters ``(mean, scale)`` of the
   accuracies' Beta priors, whose full conditional depends only on the accuracies: one exact
   univariate slice scan (:mod:`plausible.inference.step_methods.slice_hyper`).

Steps 1-3 leave ``p(q, a | hyper, x)`` invariant and step 4 ``p(hyper | q, a, x) =
p(hyper | a)``, so the sweep is a Gibbs scan of the joint posterior: every free variable of
the model is covered by exact updates, no gradient step and no tuning are needed, and the
step runs ``sweeps`` sweeps per PyMC iteration.

**Item patterns.** Given the parameters, items with the same multiset of (annotator, label)
pairs have the same class conditional, so the data are compressed once to unique patterns
``u`` with ``w_u`` items each (:func:`~plausible.data.item_patterns.item_patterns`; 32 patterns for the 3869 dentistry
patients) and step 1 draws the *number* of positive items per pattern,
``n1_u ~ Binomial(w_u, p_u)`` — exactly the distribution of the sum of the items' Bernoulli
draws, and all steps 2-3 need (their counts are sums over items). Cost per sweep: O(labels
of the distinct patterns), not O(labels).

Beta draws are made as ``logit(theta) = log G_a - log G_b`` with ``G ~ Gamma`` on the log
scale, finite even for tiny shapes, and written straight to the ``*_logodds__`` value
variables. The draws run in compiled loops (:mod:`plausible.models.annotator_beta.kernel`,
numba) on the step's ``numpy.random.Generator``: ``sweeps`` sweeps per PyMC iteration cost
a few microseconds each, so PyMC's per-iteration overhead is amortised.
"""

from dataclasses import dataclass

import numpy as np
from pymc.logprob.transforms import LogOddsTransform
from pymc.model import modelcontext
from pymc.step_methods.compound import BlockedStep
from pymc.util import get_value_vars_from_user_vars
from scipy.special import expit

from plausible.models.annotator_beta import kernel
from plausible.inference.step_methods.slice_hyper import BetaHyperValues


@dataclass(frozen=True)
class AccuracyBlock:
    """How one accuracy variable enters the likelihood.

    ``covers``: the true classes it is the accuracy for — ``(0,)`` specificity, ``(1,)``
    sensitivity, ``(0, 1)`` symmetric accuracy. ``annotator_index``: int ``(annotator,)``
    index of each annotator's entry in the variable (``arange(J)`` per annotator,
    zeros for one pooled value). ``prior``: fixed ``(alpha, beta)`` of its Beta prior, or
    None when group hyper-parameters give it (``hyper`` of :class:`AnnotatorBetaGibbs`).
    """

    covers: tuple
    annotator_index: np.ndarray
    prior: tuple


class AnnotatorBetaGibbs(BlockedStep):
    """Data-augmentation Gibbs sweep over prevalence, annotator accuracies and (optionally)
    their group hyper-parameters (see module).

    Parameters
    ----------
    vars : list
        ``[prevalence, *accuracy variables, *hyper-parameters]``: prevalence and
        accuracies Beta-distributed on PyMC's default log-odds transform (value variables
        ``<name>_logodds__``), then, with ``hyper``, its ``means`` and ``scales``.
    patterns : ItemPatterns
        The binary labels (labels in {0, 1}) grouped by item pattern
        (:func:`~plausible.data.item_patterns.item_patterns`).
    blocks : list of :class:`AccuracyBlock`
        One per accuracy variable, in the order of ``vars[1:]``; exactly one block covers
        each class, i.e. gives every annotator a sensitivity and a specificity.
    hyper : :class:`~plausible.inference.step_methods.slice_hyper.BetaHyperSpec` or None
        The hyper-parameters giving the blocks' Beta priors (one group per block, same
        order), updated by an exact slice scan after the accuracies in every sweep; None:
        every block has a fixed ``prior``.
    prevalence_prior : tuple of float
        ``(a_q, b_q)`` of the prevalence's Beta prior.
    reliability : float
        ``gamma > 0``, the power of the labels' likelihood given the classes: the class log
        odds use ``gamma (L1 - L0)`` and the accuracies' Beta updates ``gamma`` times the
        agreement counts (both exact for any real ``gamma``).
    sweeps : int
        Sweeps per call (each leaves the posterior invariant, so repeating it is exact);
        more sweeps per recorded draw amortise PyMC's per-iteration cost.

    Stats: ``annotator_beta_gibbs_positive_items``, the number of items drawn in class 1.
    """

    name = "annotator_beta_gibbs"
    stats_dtypes_shapes = {"annotator_beta_gibbs_positive_items": (np.int64, [])}

    def __init__(self, vars, patterns, blocks, hyper=None, prevalence_prior=(1.0, 1.0), sweeps=1,
                 reliability=1.0, model=None, rng=None, blocked=True):
        model = modelcontext(model)
        value_vars = get_value_vars_from_user_vars(vars, model)
        n_hyper = 0 if hyper is None else 2 * len(hyper.means)
        if len(value_vars) != 1 + len(blocks) + n_hyper:
            raise ValueError("vars must be [prevalence, *one accuracy variable per block, *hyper]")
        for value_var in value_vars[: 1 + len(blocks)]:
            rv = model.values_to_rvs[value_var]
            if not isinstance(model.rvs_to_transforms.get(rv), LogOddsTransform):
                raise ValueError(f"AnnotatorBetaGibbs needs {rv.name!r} on the log-odds transform")
        if hyper is None and any(b.prior is None for b in blocks):
            raise ValueError("blocks without a fixed prior need hyper")
        if hyper is not None and len(hyper.means) != len(blocks):
            raise ValueError("hyper needs one group per accuracy block")
        if not np.isin(patterns.label, (0, 1)).all():
            raise ValueError("AnnotatorBetaGibbs needs binary labels in {0, 1}")
        self.patterns = patterns
        self.shift = patterns.log_odds_shift  # +-inf: the patterns of known class
        if int(sweeps) < 1:
            raise ValueError(f"sweeps must be >= 1, got {sweeps}")
        self.sweeps = int(sweeps)
        self.n_items = int(patterns.weight.sum())
        self.n_annotators = int(max(len(b.annotator_index) for b in blocks))
        self.blocks = list(blocks)
        self.shapes = [model.initial_point()[v.name].shape for v in value_vars[: 1 + len(blocks)]]
        sens = [n for n, b in enumerate(self.blocks) if 1 in b.covers]
        spec = [n for n, b in enumerate(self.blocks) if 0 in b.covers]
        if len(sens) != 1 or len(spec) != 1:
            raise ValueError("exactly one block must cover each class")
        self.sens_block, self.spec_block = sens[0], spec[0]
        self.prevalence_prior = tuple(float(p) for p in prevalence_prior)
        self.gamma = float(reliability)
        self.vars = list(value_vars)
        self.rng = np.random.default_rng(rng)
        self.hyper = None if hyper is None else BetaHyperValues(
            hyper, [v.name for v in value_vars[1 + len(blocks):]])
        # kernel layout (see annotator_beta_kernel)
        self.sizes = np.array([int(np.prod(shape)) for shape in self.shapes[1:]], dtype=np.int64)
        self.index = np.stack([np.asarray(b.annotator_index, dtype=np.int64) for b in self.blocks])
        self.covers = np.array([[c in b.covers for c in (0, 1)] for b in self.blocks])
        self.fixed_priors = np.array([b.prior if b.prior is not None else (1.0, 1.0) for b in self.blocks],
                                     dtype=float)
        self.coupling = {None: kernel.NO_HYPER, "half_square": kernel.HALF_SQUARE,
                         "symmetric": kernel.SYMMETRIC}[None if hyper is None else hyper.coupling]

    def _prior_values(self, point):
        """``[a_q, b_q, alpha_1, beta_1, ...]``: prevalence and block Beta prior parameters
        (from the hyper-parameters at ``point`` when they are sampled)."""
        if self.hyper is None:
            block_priors = [b.prior for b in self.blocks]
        else:
            block_priors = self.hyper.beta_priors(*self.hyper.read(point))
        return [*self.prevalence_prior, *(float(p) for prior in block_priors for p in prior)]

    def _accuracy_logits(self, point):
        """Padded accuracy log-odds ``(block, max size)`` of ``point`` (kernel layout)."""
        z = np.zeros((len(self.blocks), self.sizes.max()))
        for position, size in enumerate(self.sizes):
            z[position, :size] = np.asarray(point[self.vars[1 + position].name], dtype=float).ravel()
        return z

    def _hyper_values(self, point):
        """``(means, inv_sqrt, u_max)`` of the hyper-parameters at ``point`` (kernel layout;
        placeholders the kernels do not read when every block has a fixed prior)."""
        if self.hyper is None:
            return np.zeros(len(self.blocks)), np.ones(len(self.blocks)), 1.0
        means, inv_sqrt = (np.array(v) for v in self.hyper.read(point))
        return means, inv_sqrt, self.hyper.spec.max_inv_sqrt

    def _write_accuracies(self, new_point, z):
        for position, size in enumerate(self.sizes):
            new_point[self.vars[1 + position].name] = z[position, :size].reshape(self.shapes[1 + position])

    def class_probability(self, point):
        """``P(c = 1 | q, a, x)`` of an item of each pattern at ``point``, ``(pattern,)``."""
        pat = self.patterns
        log_odds = kernel.class_log_odds(
            float(point[self.vars[0].name]), self._accuracy_logits(point), self.index,
            self.sens_block, self.spec_block, pat.item, pat.annotator, pat.label, pat.n_patterns,
            self.gamma, self.shift)
        return expit(log_odds)

    def draw_classes(self, point):
        """Step 1: number of class-1 items per pattern, ``Binomial(w_u, p_u)``, int ``(pattern,)``."""
        pat = self.patterns
        log_odds = kernel.class_log_odds(
            float(point[self.vars[0].name]), self._accuracy_logits(point), self.index,
            self.sens_block, self.spec_block, pat.item, pat.annotator, pat.label, pat.n_patterns,
            self.gamma, self.shift)
        return kernel.draw_positives(self.rng, log_odds, pat.weight)

    def draw_parameters(self, point, positives):
        """Steps 2-3: new log-odds values ``{name: array}`` of prevalence and accuracies given
        ``positives`` (class-1 items per pattern) and the hyper-parameters at ``point``."""
        priors = np.array(self._prior_values(point))
        pat = self.patterns
        z = np.zeros((len(self.blocks), self.sizes.max()))
        zq = kernel.draw_parameters(
            self.rng, np.asarray(positives, dtype=np.int64), pat.weight, pat.item, pat.annotator,
            pat.label, self.n_annotators, priors[0], priors[1], priors[2:].reshape(-1, 2),
            self.covers, self.index, self.sizes, z, self.gamma)
        values = {self.vars[0].name: np.asarray(zq)}
        self._write_accuracies(values, z)
        return values

    def draw_hyper(self, point):
        """Step 4: slice scan of the hyper-parameters given the accuracies at ``point``;
        returns their new value variables ``{name: array}``."""
        means, inv_sqrt = (np.array(v) for v in self.hyper.read(point))
        kernel.hyper_scan(self.rng, means, inv_sqrt, self._accuracy_logits(point), self.sizes,
                          self.coupling, self.hyper.spec.max_inv_sqrt)
        return self.hyper.write(means, inv_sqrt)

    def step(self, point):
        """PyMC's step method: the new point from ``point``, its variables drawn by one sweep
        (see the class)."""
        new_point = dict(point)
        z = self._accuracy_logits(point)
        means, inv_sqrt, u_max = self._hyper_values(point)
        pat = self.patterns
        zq, n1 = kernel.sweeps(
            self.rng, self.sweeps, float(point[self.vars[0].name]), z, means, inv_sqrt,
            self.fixed_priors, self.coupling, u_max, self.covers, self.index, self.sizes,
            self.sens_block, self.spec_block, pat.item, pat.annotator, pat.label, pat.weight,
            *self.prevalence_prior, self.gamma, self.shift)
        new_point[self.vars[0].name] = np.asarray(zq)
        self._write_accuracies(new_point, z)
        if self.hyper is not None:
            new_point.update(self.hyper.write(means, inv_sqrt))
        return new_point, [{"annotator_beta_gibbs_positive_items": int(n1)}]
