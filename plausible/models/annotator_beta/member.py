"""Carpenter's annotator-beta model as a member of the Dawid–Skene family's scan over shards.

Given the items' classes, the binary model of :mod:`plausible.models.annotator_beta` (Carpenter
2008) depends on the labels only through the counts ``n_j[c, x]`` that the family's class
sweep keeps (annotator ``j``'s labels ``x`` on items of class ``c``), and its prevalence ``q``
is the family's class prior over two classes. So the chain over shards of
:mod:`plausible.distributed.shards.dawid_skene` runs it with this member in place of a
confusion matrix's (the classes drawn by the shards, ``[1 - q, q] ~ Dirichlet(b_q, a_q)`` by
the driver, which is ``q ~ Beta(a_q, b_q)`` updated by the class counts):

1. every accuracy entry ``e`` of block ``b`` (specificity covers class 0, sensitivity class
   1, a symmetric accuracy both), ``theta_e ~ Beta(alpha_b + gamma agree_e, beta_b + gamma
   disagree_e)``, where ``agree_e`` (``disagree_e``) counts the labels of the annotators
   reading entry ``e`` that equal (differ from) the class of their item, over the classes
   the block covers, and ``(alpha_b, beta_b)`` is the block's fixed prior or ``(m_b s_b,
   (1 - m_b) s_b)`` from its group hyper-parameters (``s_b = u_b^-2``);
2. the group hyper-parameters ``(m_b, u_b)`` by the exact slice scan of
   :func:`~plausible.models.annotator_beta.kernel.hyper_scan` given the new accuracies
   (with the model's coupling: ``m_0 + m_1 > 1``, or ``m > 1/2``, the constraint that picks
   the labelling in which annotators beat chance);
3. the table of the class sweep, ``T[2 j + x, c] = log P(x | c)``: ``log a0_j`` and ``log(1 -
   a0_j)`` under class 0, ``log(1 - a1_j)`` and ``log a1_j`` under class 1.

Steps 1-2 are the same conditionals as the one-process sweep
(:mod:`plausible.models.annotator_beta.gibbs`), in a scan that draws the classes and ``q``
in the other order; the stationary distribution is the model's posterior.

State: ``(z (block, max size), means (block,), inv_sqrt (block,))``, the accuracies'
log-odds in the kernel's padded layout and the hyper-parameters.
"""

from __future__ import annotations

import numpy as np

from plausible.models.annotator_beta import kernel
from plausible.models.dawid_skene.members import summed_counts, write_table
from plausible.maths.logspace import log_gamma_draws

START_ACCURACY = 0.8
"""Every accuracy's value before the first sweep (the one-process sampler's start too)."""


def _log_sigmoid(z):
    return -np.logaddexp(0.0, -z)


class AnnotatorBeta:
    """The member for accuracy blocks ``blocks``
    (:class:`~plausible.models.annotator_beta.gibbs.AccuracyBlock`, one per accuracy
    variable, named ``names``) and the group hyper-parameters ``hyper``
    (:class:`~plausible.inference.step_methods.slice_hyper.BetaHyperSpec`, or None for fixed priors)."""

    def __init__(self, blocks, names, hyper=None, pooled=None):
        self.names, self.hyper = tuple(names), hyper
        self.index = np.stack([np.asarray(b.annotator_index, dtype=np.int64) for b in blocks])
        self.sizes = self.index.max(axis=1) + 1
        self.pooled = tuple(pooled) if pooled is not None else (False,) * len(blocks)
        self.covers = np.array([[c in b.covers for c in (0, 1)] for b in blocks])
        self.fixed = np.array([b.prior if b.prior is not None else (1.0, 1.0) for b in blocks],
                              dtype=np.float64)
        self.coupling = {None: kernel.NO_HYPER, "half_square": kernel.HALF_SQUARE,
                         "symmetric": kernel.SYMMETRIC}[None if hyper is None else hyper.coupling]
        self.u_max = 1.0 if hyper is None else float(hyper.max_inv_sqrt)
        self.sens_block = int(np.flatnonzero(self.covers[:, 1])[0])
        self.spec_block = int(np.flatnonzero(self.covers[:, 0])[0])

    @classmethod
    def from_gibbs(cls, declaration, model) -> tuple[AnnotatorBeta, tuple, float]:
        """The member, class concentration and reliability of a model's declared
        :class:`~plausible.models.annotator_beta.gibbs.AnnotatorBetaGibbs` (its variables:
        prevalence, one accuracy variable per block, the hyper-parameters)."""
        kwargs, blocks = declaration.kwargs, declaration.kwargs["blocks"]
        names = [v.name for v in declaration.vars[1:1 + len(blocks)]]
        pooled = ["annotator" not in model.named_vars_to_dims.get(name, ()) for name in names]
        a_q, b_q = kwargs.get("prevalence_prior", (1.0, 1.0))
        return (cls(blocks, names, kwargs.get("hyper"), pooled), (float(b_q), float(a_q)),
                float(kwargs.get("reliability", 1.0)))

    def stored(self, n_annotators: int, n_classes: int) -> dict:
        shapes = {name: ((), ()) if self.pooled[b] else (("annotator",), (n_annotators,))
                  for b, name in enumerate(self.names)}
        if self.hyper is not None:
            shapes.update({name: ((), ()) for name in (*self.hyper.means, *self.hyper.scales,
                                                        *self._scale_names())})
        return {"prevalence": ((), ()), **shapes}

    def _scale_names(self) -> list[str]:
        """The groups' scales ``s = u^-2`` (the model's deterministics ``<group>_scale``)."""
        return [name.removesuffix("_inv_sqrt") for name in self.hyper.scales]

    def start(self, n_annotators: int, n_classes: int):
        if n_classes != 2:
            raise ValueError(f"annotator-beta reads binary labels, got {n_classes} classes")
        z = np.full((len(self.names), self.sizes.max()), np.log(START_ACCURACY / (1 - START_ACCURACY)))
        means = np.full(len(self.names), START_ACCURACY)
        return z, means, np.full(len(self.names), 0.5 * self.u_max)

    def draw(self, rng, counts, gamma, table, state):
        z, means, inv_sqrt = (np.array(s) for s in state)
        n = summed_counts(counts)  # (annotator, class, label)
        priors = self.fixed.copy()
        if self.coupling != kernel.NO_HYPER:
            scale = inv_sqrt**-2
            priors = np.stack([means * scale, (1.0 - means) * scale], axis=1)
        agree = n[:, [0, 1], [0, 1]] * self.covers[:, None, :]      # (block, annotator, class)
        disagree = n[:, [0, 1], [1, 0]] * self.covers[:, None, :]
        width = z.shape[1]
        codes = (np.arange(len(self.names))[:, None] * width + self.index).ravel()
        summed = [np.bincount(codes, weights=a.sum(axis=2).ravel(), minlength=z.size)
                  .reshape(z.shape) for a in (agree, disagree)]
        valid = np.arange(width)[None, :] < self.sizes[:, None]
        shapes = np.stack([priors[:, :1] + gamma * summed[0], priors[:, 1:] + gamma * summed[1]],
                          axis=-1)[valid]
        log_g = log_gamma_draws(rng, shapes)
        z[valid] = log_g[:, 0] - log_g[:, 1]
        if self.coupling != kernel.NO_HYPER:
            kernel.hyper_scan(rng, means, inv_sqrt, z, self.sizes, self.coupling, self.u_max)
        zs = z[self.sens_block, self.index[self.sens_block]]
        zp = z[self.spec_block, self.index[self.spec_block]]
        log_theta = np.stack([np.stack([_log_sigmoid(zp), _log_sigmoid(-zp)], 1),
                              np.stack([_log_sigmoid(-zs), _log_sigmoid(zs)], 1)], 1)
        write_table(log_theta, table)
        return z, means, inv_sqrt

    def from_class_prior(self, pi: np.ndarray) -> dict:
        """The stored values the class prior ``[1 - q, q]`` gives: ``prevalence = q``."""
        return {"prevalence": pi[..., 1]}

    def values(self, table, state) -> dict:
        z, means, inv_sqrt = state
        out = {name: 1.0 / (1.0 + np.exp(-(z[b, 0] if self.pooled[b] else z[b, self.index[b]])))
               for b, name in enumerate(self.names)}
        if self.hyper is not None:
            out.update(zip(self.hyper.means, means))
            out.update(zip(self.hyper.scales, inv_sqrt))
            out.update(zip(self._scale_names(), inv_sqrt**-2.0))
        return out

    def confusion(self, values: dict, n_classes: int) -> np.ndarray:
        """``(..., annotator, class, label_class)``: ``[[a0, 1 - a0], [1 - a1, a1]]``."""
        spec = np.asarray(values[self.names[self.spec_block]], dtype=np.float64)
        sens = np.asarray(values[self.names[self.sens_block]], dtype=np.float64)
        J = self.index.shape[1]
        if spec.ndim == 0 or self.pooled[self.spec_block]:
            spec = np.broadcast_to(spec[..., None], (*spec.shape, J))
        if sens.ndim == 0 or self.pooled[self.sens_block]:
            sens = np.broadcast_to(sens[..., None], (*sens.shape, J))
        return np.stack([np.stack([spec, 1 - spec], -1), np.stack([1 - sens, sens], -1)], -2)


__all__ = ["AnnotatorBeta", "START_ACCURACY"]
