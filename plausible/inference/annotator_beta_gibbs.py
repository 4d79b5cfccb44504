"""Exact Gibbs sweep for binary annotator-accuracy models (Carpenter 2008 and its variants).

Model (spec 02 §1), annotation ``k`` is label ``x_k`` in {0, 1} of item ``i_k`` by annotator
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

Given ``c``, ``q`` and the accuracies are independent, so 2-3 is one exact block draw from
``p(q, a | c, x, hyper)``; the classes are then discarded (not stored). The sweep's kernel
``K(theta -> theta') = sum_c p(c | theta, x) p(theta' | c, x)`` leaves the marginal posterior
``p(theta | x)`` invariant (data augmentation, Tanner & Wong 1987), i.e. the target of the
model whose likelihood has ``c`` summed out — the model of
:mod:`plausible.models.annotator_beta`, on which NUTS can run too. The Beta prior parameters
are pytensor expressions of the model's other variables (hyper-parameters moved by NUTS),
compiled once into a function of the point and read at their current values every step.

**Item patterns.** Given the parameters, items with the same multiset of (annotator, label)
pairs have the same class conditional, so the data are compressed once to unique patterns
``u`` with ``w_u`` items each (:func:`item_patterns`; 32 patterns for the 3869 dentistry
patients) and step 1 draws the *number* of positive items per pattern,
``n1_u ~ Binomial(w_u, p_u)`` — exactly the distribution of the sum of the items' Bernoulli
draws, and all steps 2-3 need (their counts are sums over items). Cost per sweep: O(labels
of the distinct patterns), not O(labels).

Beta draws are made as ``logit(theta) = log G_a - log G_b`` with ``G ~ Gamma`` on the log
scale (:func:`log_gamma_draws`), finite even for tiny shapes, and written straight to the
``*_logodds__`` value variables.
"""

from dataclasses import dataclass

import numpy as np
from pymc.logprob.transforms import LogOddsTransform
from pymc.model import modelcontext
from pymc.step_methods.compound import BlockedStep
from pymc.util import get_value_vars_from_user_vars
from scipy import sparse

from plausible.inference.dirichlet_gibbs import log_gamma_draws


def logit_beta_draws(rng: np.random.Generator, a, b) -> np.ndarray:
    """``logit(theta)`` for ``theta ~ Beta(a, b)`` elementwise (broadcast shapes), finite."""
    a, b = np.broadcast_arrays(np.asarray(a, dtype=float), np.asarray(b, dtype=float))
    return log_gamma_draws(rng, np.array(a)) - log_gamma_draws(rng, np.array(b))


def log_sigmoid(z):
    """``log(1 / (1 + exp(-z)))`` without overflow."""
    return -np.logaddexp(0.0, -z)


@dataclass(frozen=True)
class AccuracyBlock:
    """How one accuracy variable enters the likelihood.

    ``covers``: the true classes it is the accuracy for — ``(0,)`` specificity, ``(1,)``
    sensitivity, ``(0, 1)`` symmetric accuracy. ``annotator_index``: int ``(annotator,)``
    index of each annotator's entry in the variable (``arange(J)`` per annotator,
    zeros for one pooled value). ``prior``: pytensor ``(alpha, beta)`` of its Beta prior.
    """

    covers: tuple
    annotator_index: np.ndarray
    prior: tuple


@dataclass(frozen=True)
class ItemPatterns:
    """Items grouped by identical multisets of (annotator, label) pairs.

    ``item_pattern``: int ``(item,)`` pattern of each item; ``weight``: int ``(pattern,)``
    number of items with the pattern; ``item``, ``annotator``, ``label``: the long labels of
    one representative item per pattern, ``item`` holding the pattern index.
    """

    item_pattern: np.ndarray
    weight: np.ndarray
    item: np.ndarray
    annotator: np.ndarray
    label: np.ndarray

    @property
    def n_patterns(self) -> int:
        return self.weight.size


def item_patterns(item, annotator, label, n_items, n_annotators, n_classes=2) -> ItemPatterns:
    """Group items by their multiset of (annotator, label) pairs (vectorised).

    Each item is hashed as a sum of random 64-bit keys of its (annotator, label) cells
    (wrapping arithmetic), items are grouped by hash, and the grouping is verified exactly
    on the sparse count rows; on a (never observed) hash collision every item is its own
    pattern.
    """
    item, annotator, label = (np.asarray(a, dtype=np.int64) for a in (item, annotator, label))
    cells = annotator * n_classes + label
    n_cells = n_annotators * n_classes
    keys = np.random.default_rng(20080617).integers(1, 2**63, size=n_cells, dtype=np.uint64)
    hashes = np.zeros(n_items, dtype=np.uint64)
    np.add.at(hashes, item, keys[cells])
    _, first, inverse = np.unique(hashes, return_index=True, return_inverse=True)
    counts = sparse.csr_matrix((np.ones(item.size), (item, cells)), shape=(n_items, n_cells))
    if (counts - counts[first[inverse]]).count_nonzero():
        first, inverse = np.arange(n_items), np.arange(n_items)
    representative = np.zeros(n_items, dtype=bool)
    representative[first] = True
    keep = representative[item]
    return ItemPatterns(
        item_pattern=inverse.astype(np.int64),
        weight=np.bincount(inverse, minlength=first.size).astype(np.int64),
        item=inverse[item[keep]].astype(np.int64),
        annotator=annotator[keep],
        label=label[keep],
    )


def class_log_likelihoods(item, annotator, label, n_items, log_sens, log1m_sens, log_spec, log1m_spec):
    """``(L0, L1)``, each ``(item,)``: ``L_c,i = sum_{k: i_k = i} log P(x_k | c_i = c)``.

    ``log_sens`` etc. are per-annotator ``(annotator,)`` logs of sensitivity ``a1``,
    ``1 - a1``, specificity ``a0``, ``1 - a0``.
    """
    positive = label == 1
    l1 = np.where(positive, log_sens[annotator], log1m_sens[annotator])
    l0 = np.where(positive, log1m_spec[annotator], log_spec[annotator])
    return (np.bincount(item, weights=l0, minlength=n_items),
            np.bincount(item, weights=l1, minlength=n_items))


def class_probability(logit_q, L0, L1):
    """``P(c_i = 1 | q, a, x) = sigmoid(logit q + L1_i - L0_i)``, ``(item,)``."""
    return np.exp(log_sigmoid(logit_q + L1 - L0))


class AnnotatorBetaGibbs(BlockedStep):
    """Data-augmentation Gibbs sweep over prevalence and annotator accuracies (see module).

    Parameters
    ----------
    vars : list
        ``[prevalence, *accuracy variables]``, all Beta-distributed on PyMC's default
        log-odds transform (value variables ``<name>_logodds__``).
    patterns : ItemPatterns
        The binary labels (labels in {0, 1}) grouped by item pattern (:func:`item_patterns`).
    blocks : list of :class:`AccuracyBlock`
        One per accuracy variable, in the order of ``vars[1:]``; exactly one block covers
        each class, i.e. gives every annotator a sensitivity and a specificity.
    prevalence_prior : tuple of pytensor expressions or floats
        ``(a_q, b_q)`` of the prevalence's Beta prior.
    sweeps : int
        Sweeps per call, all with the hyper-parameters at their current values: each sweep
        leaves the conditional posterior invariant, so repeating it is exact and, being
        cheap next to a NUTS step on the hyper-parameters, buys mixing of ``q`` and the
        accuracies (the data augmentation is slow when classes are uncertain).

    Stats: ``annotator_beta_gibbs_positive_items``, the number of items drawn in class 1.
    """

    name = "annotator_beta_gibbs"
    stats_dtypes_shapes = {"annotator_beta_gibbs_positive_items": (np.int64, [])}

    def __init__(self, vars, patterns, blocks, prevalence_prior=(1.0, 1.0), sweeps=1,
                 model=None, rng=None, blocked=True):
        model = modelcontext(model)
        value_vars = get_value_vars_from_user_vars(vars, model)
        if len(value_vars) != 1 + len(blocks):
            raise ValueError("vars must be [prevalence, *one accuracy variable per block]")
        for value_var in value_vars:
            rv = model.values_to_rvs[value_var]
            if not isinstance(model.rvs_to_transforms.get(rv), LogOddsTransform):
                raise ValueError(f"AnnotatorBetaGibbs needs {rv.name!r} on the log-odds transform")
        if not np.isin(patterns.label, (0, 1)).all():
            raise ValueError("AnnotatorBetaGibbs needs binary labels in {0, 1}")
        self.patterns = patterns
        if int(sweeps) < 1:
            raise ValueError(f"sweeps must be >= 1, got {sweeps}")
        self.sweeps = int(sweeps)
        self.n_items = int(patterns.weight.sum())
        self.n_annotators = int(max(len(b.annotator_index) for b in blocks))
        self.blocks = list(blocks)
        self.shapes = [model.initial_point()[v.name].shape for v in value_vars]
        sens = [n for n, b in enumerate(self.blocks) if 1 in b.covers]
        spec = [n for n, b in enumerate(self.blocks) if 0 in b.covers]
        if len(sens) != 1 or len(spec) != 1:
            raise ValueError("exactly one block must cover each class")
        self.sens_block, self.spec_block = sens[0], spec[0]
        priors = [*prevalence_prior] + [p for block in self.blocks for p in block.prior]
        symbolic = [p for p in priors if hasattr(p, "type")]
        fn = None
        if symbolic:
            fn = model.compile_fn(model.replace_rvs_by_values(symbolic), inputs=model.value_vars,
                                  on_unused_input="ignore", point_fn=True)

        def prior_values(point):
            values = iter(fn(point)) if fn is not None else iter(())
            return [np.asarray(next(values)) if hasattr(p, "type") else np.float64(p) for p in priors]

        self._prior_values = prior_values
        self.vars = list(value_vars)
        self.rng = np.random.default_rng(rng)

    def _per_annotator(self, point, position):
        """Logit of an accuracy block's value for every annotator, ``(annotator,)``."""
        z = np.asarray(point[self.vars[1 + position].name], dtype=float)
        return np.broadcast_to(z, self.shapes[1 + position]).reshape(-1)[
            self.blocks[position].annotator_index]

    def class_probability(self, point):
        """``P(c = 1 | q, a, x)`` of an item of each pattern at ``point``, ``(pattern,)``."""
        z_sens = self._per_annotator(point, self.sens_block)
        z_spec = self._per_annotator(point, self.spec_block)
        pat = self.patterns
        L0, L1 = class_log_likelihoods(
            pat.item, pat.annotator, pat.label, pat.n_patterns,
            log_sigmoid(z_sens), log_sigmoid(-z_sens), log_sigmoid(z_spec), log_sigmoid(-z_spec))
        return class_probability(float(point[self.vars[0].name]), L0, L1)

    def draw_classes(self, point):
        """Step 1: number of class-1 items per pattern, ``Binomial(w_u, p_u)``, int ``(pattern,)``."""
        return self.rng.binomial(self.patterns.weight, self.class_probability(point))

    def draw_parameters(self, point, positives, priors=None):
        """Steps 2-3: new log-odds values ``{name: array}`` of prevalence and accuracies given
        ``positives`` (class-1 items per pattern) and the hyper-parameters at ``point``
        (or their Beta prior parameters ``priors``, as :meth:`_prior_values` gives them)."""
        if priors is None:
            priors = self._prior_values(point)
        pat = self.patterns
        positives = np.asarray(positives)
        n1 = int(positives.sum())
        values = {self.vars[0].name: np.asarray(logit_beta_draws(
            self.rng, priors[0] + n1, priors[1] + self.n_items - n1), dtype=float)}
        J = self.n_annotators
        cell = pat.annotator * 2 + pat.label
        in1 = positives[pat.item].astype(float)
        in0 = pat.weight[pat.item] - in1
        table = np.stack([np.bincount(cell, weights=in0, minlength=2 * J).reshape(J, 2),
                          np.bincount(cell, weights=in1, minlength=2 * J).reshape(J, 2)], axis=1)
        for position, block in enumerate(self.blocks):  # table[j, c, x]
            agree = sum(table[:, k, k] for k in block.covers)
            disagree = sum(table[:, k, 1 - k] for k in block.covers)
            size = int(np.prod(self.shapes[1 + position]))
            agree = np.bincount(block.annotator_index, weights=agree, minlength=size)
            disagree = np.bincount(block.annotator_index, weights=disagree, minlength=size)
            alpha, beta = priors[2 + 2 * position], priors[3 + 2 * position]
            z = logit_beta_draws(self.rng, alpha + agree, beta + disagree)
            values[self.vars[1 + position].name] = z.reshape(self.shapes[1 + position])
        return values

    def step(self, point):
        new_point = dict(point)
        priors = self._prior_values(point)  # the hyper-parameters do not change here
        for _ in range(self.sweeps):
            positives = self.draw_classes(new_point)
            new_point.update(self.draw_parameters(new_point, positives, priors))
        return new_point, [{"annotator_beta_gibbs_positive_items": int(positives.sum())}]
