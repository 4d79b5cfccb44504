"""The Dawid–Skene family's Gibbs scan over shards of items (:mod:`plausible.inference.
sharded_chain`): the chain a cluster runs for Dawid–Skene, one-coin, MACE, hierarchical
Dawid–Skene and annotator-beta.

The joint scan of :mod:`plausible.models.dawid_skene.sampler` splits into a global half
and an item half that meet only through count tensors:

1. **driver** (:class:`DawidSkeneHalf`): given the summed counts ``n[j C + x, c]``
   (annotator ``j``'s label ``x`` on items of class ``c``) and ``m_c`` (items of class
   ``c``), the member's annotator parameters (:mod:`plausible.models.dawid_skene.members`,
   exact) and ``pi ~ Dirichlet(a + m)``, from the chain's generator; they go to every shard
   as the table ``T[j C + x, c] = log theta_j[c, x]`` and ``log pi``;
2. **shards** (:class:`DawidSkeneShard`): every item's class ``z_i ~ softmax(log pi + gamma
   L[i])`` from the shard's own generator, then the shard's counts, returned to the driver.

This is a different Markov chain from the one-process sampler's (which draws every item's
uniform from its chain's generator), with the same stationary distribution.
"""

from __future__ import annotations

import numpy as np

from plausible.models.dawid_skene import kernel as kernel_code
from plausible.models.dawid_skene.sampler import DEFAULT_TUNE
from plausible.inference.kernel import Variable
from plausible.distributed.sharded_chain import GlobalHalf, ItemShard


def warm_classes(z: np.ndarray, init: dict | None) -> np.ndarray:
    """``z`` with the classes of a warm start's ``init["final_class"]`` where they are known
    (>= 0)."""
    if init is not None:
        known = init["final_class"] >= 0
        z[known] = init["final_class"][known]
    return z


class DawidSkeneShard(ItemShard):
    """A block of items of a Dawid–Skene-family chain (:class:`~plausible.inference.
    sharded_chain.ItemShard`): per chain the classes, and the counts ``(annotator * C +
    label, class)`` and class counts ``(class,)`` that follow them. ``gamma``: the
    reliability."""

    def __init__(self, labels, index: int, gamma: float, dtype=np.float32):
        super().__init__(labels, index, dtype)
        self.gamma = float(gamma)

    def _start(self, rng, init):
        """Each item's class drawn from its label shares, or warm from ``init``."""
        return warm_classes(self.design.label_share_classes(rng), init), {}

    def _restart(self, chain) -> None:
        design, C = self.design, self.design.n_classes
        counts = np.zeros((design.n_annotators * C, C), dtype=np.int64)
        class_counts = np.zeros(C, dtype=np.int64)
        kernel_code.count_labels(design.offsets, design.code, chain.z, counts, class_counts, 0,
                                 design.n_items)
        chain.derived.update(counts=counts, class_counts=class_counts)

    def _sweep(self, chain, message, store, keep) -> int:
        """The classes given ``message = (table (annotator * C + label, class), log_pi
        (class,))``."""
        table, log_pi = message
        design, derived = self.design, chain.derived
        u = chain.rng.random(design.n_items)
        return kernel_code.class_sweep(design.offsets, design.code, table, log_pi, self.gamma,
                                       u, chain.z, design.fixed, derived["counts"],
                                       derived["class_counts"],
                                       store, 0, design.n_items)

    def _statistics(self, chain) -> tuple:
        return chain.derived["counts"].copy(), chain.derived["class_counts"].copy()


class DawidSkeneHalf(GlobalHalf):
    """The driver's half for ``member`` (:mod:`plausible.models.dawid_skene.members`, or
    :class:`~plausible.models.annotator_beta.member.AnnotatorBeta`) with class
    concentration ``a`` and reliability ``gamma``. State: ``(member state, table, log pi)``;
    message: ``(table, log pi)``."""

    default_tune = DEFAULT_TUNE

    def __init__(self, member, a, gamma: float):
        self.member, self.a = member, np.asarray(a, dtype=np.float64)
        self.reliability = float(gamma)
        self.shard = (DawidSkeneShard, {"gamma": self.reliability})

    def variables(self, n_annotators: int, n_classes: int) -> dict:
        stored = self.member.stored(n_annotators, n_classes)
        return {"class_prior": Variable(("class",), (n_classes,)),
                **{name: Variable(dims, shape) for name, (dims, shape) in stored.items()}}

    def start(self, n_annotators: int, n_classes: int, init=None) -> tuple:
        """The member's start (a warm start's classes draw the first parameters)."""
        return (self.member.start(n_annotators, n_classes),
                np.zeros((n_annotators * n_classes, n_classes)), np.zeros(n_classes))

    def draw(self, rng, statistics, state, ask=None, warm_up=False) -> tuple:
        """The member's parameters given the counts, then ``pi ~ Dirichlet(a + m)``."""
        counts, class_counts = statistics
        member_state, table, log_pi = state
        member_state = self.member.draw(rng, counts[None], self.reliability, table,
                                        member_state)
        kernel_code.draw_class_prior(rng, class_counts[None], self.a, log_pi, np.empty(0))
        return member_state, table, log_pi

    def message(self, state) -> tuple:
        return state[1], state[2]

    def values(self, state) -> dict:
        member_state, table, log_pi = state
        pi = np.exp(log_pi)
        values = {"class_prior": pi, **self.member.values(table, member_state)}
        if hasattr(self.member, "from_class_prior"):  # a member that names the prior
            values.update(self.member.from_class_prior(pi))
        return values


__all__ = ["DawidSkeneHalf", "DawidSkeneShard", "warm_classes"]
