"""Gibbs sampler of the multi-label latent-class model (:func:`plausible.models.multi_label.build`)
and the likelihood both share.

Notation: items ``i``, labels ``k = 1..K``, mixture components ``m = 1..M``, annotators ``j``;
response ``r`` is annotator ``j_r``'s 0/1 vector ``x_r (K,)`` for item ``i_r``. Parameters
``theta = (pi (M,), phi (M, K), se (J, K), sp (J, K))``; latent ``m_i`` (the item's
component) and ``y_ik`` (its true labels). Reliability ``gamma`` multiplies every response's
log-likelihood.

**Label log-likelihoods** (:func:`label_log_likelihoods`), ``(item, K)``::

    L1_ik = sum_{r: i_r = i} x_rk log se_{j_r k} + (1 - x_rk) log(1 - se_{j_r k})
    L0_ik = sum_{r: i_r = i} x_rk log(1 - sp_{j_r k}) + (1 - x_rk) log sp_{j_r k}

Given ``m_i`` the labels are independent, so ``y`` sums out label by label
(:func:`component_terms`)::

    T_imk = log(phi_mk e^{gamma L1_ik} + (1 - phi_mk) e^{gamma L0_ik})
    log p(x_i | theta) = logsumexp_m(log pi_m + sum_k T_imk)            (item_log_likelihoods)

**One sweep** is a two-block Gibbs sampler (data augmentation, Tanner & Wong 1987), every
draw exact and vectorised over items, labels, components and annotators:

1. ``theta | m, y`` — four independent conjugate blocks:
   ``pi ~ Dirichlet(alpha + n_m)``, ``n_m = #{i: m_i = m}``;
   ``phi_mk ~ Beta(a_phi + s_mk, b_phi + n_m - s_mk)``, ``s_mk = #{i: m_i = m, y_ik = 1}``;
   ``se_jk ~ Beta(a_se + gamma TP_jk, b_se + gamma FN_jk)``,
   ``sp_jk ~ Beta(a_sp + gamma TN_jk, b_sp + gamma FP_jk)`` with ``TP_jk = sum_{r of j} y_{i_r
   k} x_rk`` and so on (the tempered Bernoulli likelihood stays conjugate for any real
   ``gamma > 0``). Beta and Dirichlet draws are taken in log space from Gamma draws, so a
   log-probability never underflows to ``-inf``.
2. ``(m, y) | theta`` jointly: ``m_i ~ softmax_m(log pi_m + sum_k T_imk)`` with ``y`` summed
   out (:func:`component_posterior`), then ``y_ik | m_i ~ Bernoulli(q_{i m_i k})``,
   ``q_imk = phi_mk e^{gamma L1_ik - T_imk}`` (:func:`label_posterior`).

Drawing ``m`` with ``y`` summed out, rather than ``m | y`` and ``y | m`` in turn, removes the
slowest coupling of the plain Gibbs sampler (an item's component is pinned by its current
labels and its labels by its component).

**Recorded** at the ``theta`` of step 1: the Rao–Blackwellised plausibility ``P(y_ik = 1 |
theta, x) = sum_m w_im q_imk`` (``w`` of step 2; both ``y`` and ``m`` summed out, the same
deterministic as the PyMC graph's), ``label_prevalence_k = sum_m pi_m phi_mk``, ``se``, ``sp``,
and ``pi``, ``phi`` with the components sorted by decreasing ``pi`` (below).

**Label switching.** The posterior is invariant under permuting the components (``pi``, the
rows of ``phi`` and ``m`` together). The sorted ``(pi, phi)`` is a function of the
unordered set of components, so its draws are comparable across chains (an ordering
constraint imposed after sampling, Stephens 2000), though components with close weights can
swap places in it. Everything else recorded is invariant: the plausibilities, ``se``, ``sp``
and the label prevalences are what convergence is judged on. A second symmetry, a label's
truth flipped with ``(se_jk, sp_jk) -> (1 - sp_jk, 1 - se_jk)`` and ``phi_mk -> 1 - phi_mk``,
is broken by priors on ``se`` and ``sp`` above one half and by the start at each label's
majority.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from plausible.inference.kernel import PyMCKernel, Variable
from plausible.maths.categorical import categorical_draws
from plausible.maths.logspace import log_beta_draws, log_dirichlet_draws, logsumexp_last

DEFAULT_TUNE = 200
"""Warm-up sweeps: from the majority start the labels settle within tens of sweeps; the
components separate within about a hundred on a few hundred items."""
SCATTERED = 0.05
"""Share of ``y`` each chain starts flipped at random (dispersion between chains)."""


class Design:
    """What every sweep reads of the label sets: ``x`` float64 ``(response, K)``, the
    responses' items and annotators, and the sparse sums ``by_item (item, response)`` and
    ``by_annotator (annotator, response)``."""

    def __init__(self, data):
        self.n_items, self.n_annotators, self.n_classes = (data.n_items, data.n_annotators,
                                                           data.n_classes)
        self.item, self.annotator = data.item, data.annotator
        self.x = data.sets.astype(np.float64)
        ones = np.ones(data.n_responses)
        responses = np.arange(data.n_responses)
        self.by_item = sp.csr_matrix((ones, (data.item, responses)),
                                     shape=(data.n_items, data.n_responses))
        self.by_annotator = sp.csr_matrix((ones, (data.annotator, responses)),
                                          shape=(data.n_annotators, data.n_responses))


def label_log_likelihoods(design: Design, log_se, log1m_se, log_sp, log1m_sp):
    """``(L1, L0)``, each float64 ``(..., item, K)`` (module docstring), from the annotators'
    ``log se``, ``log(1 - se)``, ``log sp``, ``log(1 - sp)``, each ``(..., annotator, K)``
    (leading dims: a block of posterior draws)."""
    j, x = design.annotator, design.x
    R, K = x.shape

    def summed(absent, present):  # sum over each item's responses of the 0/1 cases' logs
        per = absent[..., j, :] + x * (present[..., j, :] - absent[..., j, :])
        lead = per.shape[:-2]
        flat = np.moveaxis(per.reshape(-1, R, K), 0, 1).reshape(R, -1)
        total = np.asarray(design.by_item @ flat).reshape(design.n_items, -1, K)
        return np.moveaxis(total, 0, 1).reshape(*lead, design.n_items, K)

    return summed(log1m_se, log_se), summed(log_sp, log1m_sp)


def component_terms(log_phi, log1m_phi, gamma, L1, L0):
    """``(T, A1)``: ``T_imk = logaddexp(log phi_mk + gamma L1_ik, log(1 - phi_mk) + gamma
    L0_ik)`` and ``A1_imk = log phi_mk + gamma L1_ik``, float64 ``(..., item, M, K)`` from
    ``log phi (..., M, K)`` and ``L1, L0 (..., item, K)``."""
    A1 = log_phi[..., None, :, :] + gamma * L1[..., :, None, :]
    return np.logaddexp(A1, log1m_phi[..., None, :, :] + gamma * L0[..., :, None, :]), A1


def item_log_likelihoods(log_pi, T) -> np.ndarray:
    """``log p(x_i | theta) = logsumexp_m(log pi_m + sum_k T_imk)``, ``(..., item)`` from
    ``log pi (..., M)``."""
    return logsumexp_last(log_pi[..., None, :] + T.sum(axis=-1))[..., 0]


def component_posterior(log_pi, T) -> np.ndarray:
    """``w_im = P(m_i = m | theta, x)`` with ``y`` summed out, ``(..., item, M)``."""
    joint = log_pi[..., None, :] + T.sum(axis=-1)
    return np.exp(joint - logsumexp_last(joint))


def label_posterior(T, A1) -> np.ndarray:
    """``q_imk = P(y_ik = 1 | m_i = m, theta, x)``, ``(..., item, M, K)``."""
    return np.exp(A1 - T)


class MultiLabelKernel(PyMCKernel):
    """The sweep of the module for label sets ``data`` (a
    :class:`~plausible.data.label_sets.LabelSets`) with ``components`` mixture components.
    State: ``(m (item,) int, y (item, K) bool)``. Priors: ``alpha`` (Dirichlet concentration of
    ``pi``, one number), ``(a, b)`` pairs of the Beta priors of ``phi``, ``se``, ``sp``."""

    name = "plausible.models.multi_label.sampler"
    default_tune = DEFAULT_TUNE
    default_thin = 1
    stats = {}

    def __init__(self, data, *, components: int, alpha: float, rate_prior, sensitivity_prior,
                 specificity_prior, gamma: float, dtype=np.float32):
        self.design = Design(data)
        self.M, self.gamma, self.alpha = int(components), float(gamma), float(alpha)
        self.rate_prior, self.sensitivity_prior, self.specificity_prior = (
            tuple(float(v) for v in p) for p in (rate_prior, sensitivity_prior,
                                                 specificity_prior))
        I, J, K, M = data.n_items, data.n_annotators, data.n_classes, self.M
        self.variables = {"component_prior": Variable(("component",), (M,)),
                          "label_rate": Variable(("component", "class"), (M, K)),
                          "label_prevalence": Variable(("class",), (K,)),
                          "sensitivity": Variable(("annotator", "class"), (J, K)),
                          "specificity": Variable(("annotator", "class"), (J, K)),
                          "plausibility": Variable(("item", "class"), (I, K), dtype)}

    def majority(self) -> np.ndarray:
        """Each item's labels carried by more than half its responses, bool ``(item, K)``."""
        d = self.design
        counts = np.asarray(d.by_item @ d.x)
        n = np.asarray(d.by_item.sum(axis=1))
        return counts > 0.5 * n

    def draw_parameters(self, rng, m, y):
        """Step 1: ``theta | m, y``, as logs: ``(log pi (M,), log phi, log(1 - phi) (M, K),
        log se, log(1 - se), log sp, log(1 - sp) (J, K))``."""
        d, M, K = self.design, self.M, self.design.n_classes
        n = np.bincount(m, minlength=M).astype(np.float64)
        s = np.bincount((m[:, None] * K + np.arange(K))[y], minlength=M * K).reshape(M, K)
        log_pi = log_dirichlet_draws(rng, self.alpha + n)
        a, b = self.rate_prior
        log_phi, log1m_phi = log_beta_draws(rng, a + s, b + n[:, None] - s)
        yr = y[d.item].astype(np.float64)
        tp = np.asarray(d.by_annotator @ (yr * d.x))
        positives = np.asarray(d.by_annotator @ yr)
        fp = np.asarray(d.by_annotator @ d.x) - tp
        negatives = np.asarray(d.by_annotator.sum(axis=1)) - positives
        g = self.gamma
        a, b = self.sensitivity_prior
        log_se, log1m_se = log_beta_draws(rng, a + g * tp, b + g * (positives - tp))
        a, b = self.specificity_prior
        log_sp, log1m_sp = log_beta_draws(rng, a + g * (negatives - fp), b + g * fp)
        return log_pi, log_phi, log1m_phi, log_se, log1m_se, log_sp, log1m_sp

    def posteriors(self, log_pi, log_phi, log1m_phi, log_se, log1m_se, log_sp, log1m_sp):
        """``(w (item, M), q (item, M, K))`` of step 2 at ``theta`` (given as logs)."""
        L1, L0 = label_log_likelihoods(self.design, log_se, log1m_se, log_sp, log1m_sp)
        T, A1 = component_terms(log_phi, log1m_phi, self.gamma, L1, L0)
        return component_posterior(log_pi, T), label_posterior(T, A1)

    def draw_latent(self, rng, w, q):
        """Step 2's draws: ``m_i ~ Categorical(w_i)``, then ``y_ik ~ Bernoulli(q_{i m_i k})``."""
        m = categorical_draws(rng, w)
        y = rng.random((q.shape[0], q.shape[2])) < q[np.arange(m.size), m]
        return m, y

    def start(self, rng):
        """Each label at its majority, a twentieth flipped at random; the items whose labels
        form one of the ``M`` most frequent sets start in that set's component, the others
        in a random one."""
        y = self.majority() ^ (rng.random((self.design.n_items, self.design.n_classes))
                               < SCATTERED)
        _, pattern, counts = np.unique(y, axis=0, return_inverse=True, return_counts=True)
        rank = np.empty(counts.size, dtype=np.int64)
        rank[np.argsort(-counts, kind="stable")] = np.arange(counts.size)
        m = rank[pattern.ravel()]
        far = m >= self.M
        m[far] = rng.integers(0, self.M, int(far.sum()))
        return m, y

    def load(self, values, rng):
        """``(m, y) | theta`` drawn exactly (the PyMC model sums both out)."""
        with np.errstate(divide="ignore"):
            logs = [np.log(values["component_prior"])]
            for name in ("label_rate", "sensitivity", "specificity"):
                v = np.asarray(values[name], dtype=np.float64)
                logs += [np.log(v), np.log1p(-v)]
        log_pi, log_phi, log1m_phi, log_se, log1m_se, log_sp, log1m_sp = logs
        w, q = self.posteriors(log_pi, log_phi, log1m_phi, log_se, log1m_se, log_sp, log1m_sp)
        return self.draw_latent(rng, w, q)

    def to_point(self, state, draw):
        """The model's free variables after the sweep that recorded ``draw``."""
        return {name: draw[name] for name in ("component_prior", "label_rate", "sensitivity",
                                              "specificity")}

    def sweep(self, rng, state, out):
        """Steps 1 and 2 of the module; records at step 1's ``theta``."""
        m, y = state
        logs = self.draw_parameters(rng, m, y)
        w, q = self.posteriors(*logs)
        if out is not None:
            log_pi, log_phi, _, log_se, _, log_sp, _ = logs
            pi, phi = np.exp(log_pi), np.exp(log_phi)
            order = np.argsort(-pi, kind="stable")
            out["component_prior"][...] = pi[order]
            out["label_rate"][...] = phi[order]
            out["label_prevalence"][...] = pi @ phi
            out["sensitivity"][...] = np.exp(log_se)
            out["specificity"][...] = np.exp(log_sp)
            if "plausibility" in out:
                out["plausibility"][...] = np.einsum("im,imk->ik", w, q)
        return self.draw_latent(rng, w, q)


__all__ = ["Design", "MultiLabelKernel", "component_posterior", "component_terms",
           "item_log_likelihoods", "label_log_likelihoods", "label_posterior"]
