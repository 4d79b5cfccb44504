"""GLAD and Su's model over shards of items (:mod:`plausible.distributed.sharded_chain`): the
annotators' parameters by slice updates on the driver, their densities summed over the
shards; the items' parameters and classes where the items are.

In both models (:mod:`plausible.inference.step_methods.difficulty_slice`) label ``k`` is its item's true
class with probability ``r_k = r(a_{j_k}, b_{i_k})`` (annotator parameter ``a_j``: GLAD's
ability ``alpha_j``, Su's fallibility ``phi_j``; item parameter ``b_i``: ``log beta_i``,
``delta_i``) and otherwise uniform over the other classes; ``gamma`` is the reliability (the
power of the labels' likelihood given the classes). Given the classes, each item's parameter
depends only on its own labels and the annotators' parameters, and each annotator's only on
its own labels and the items' parameters. A sweep:

1. **driver** (:class:`DifficultyHalf`): ``pi ~ Dirichlet(a + m)`` from the summed class
   counts; every annotator's parameter by Neal's slice update on its full conditional (the
   prior plus ``gamma`` times the sum over its labels of :mod:`plausible.inference.
   difficulty_slice`'s terms), all annotators in lockstep (:mod:`plausible.inference.
   lockstep_slice`): each round of the update sends the proposed values to the shards, which
   return each annotator's sum over their labels, summed over shards in shard order; GLAD's
   scale move (``alpha -> e^u alpha``, ``log beta -> log beta - u``, the direction only the
   priors identify; :func:`~plausible.inference.step_methods.difficulty_slice.scale_shift`, from ``sum_j
   alpha_j``, ``sum_j alpha_j^2`` and the shards' ``sum_i log beta_i``). It sends ``(a, u,
   log pi)``;
2. **shards** (:class:`DifficultyShard`): ``log beta_i -= u`` (GLAD); each item's parameter
   by a slice update given the annotators' and its class (GLAD's items in lockstep,
   :func:`~plausible.inference.step_methods.difficulty_slice.glad_item_sweep`); each item's class given
   its parameter, the annotators' and ``pi`` (:mod:`plausible.inference.step_methods.difficulty_classes`),
   a known item's kept at its class (the one-hot of :func:`~plausible.maths.known_classes.
   clamp_known`); they return the class counts, ``sum_i b_i`` and each annotator's sum over their labels at
   the values they were sent (the density the driver's next slice update starts from).

Every step is an exact conditional update of the model's posterior, stepping out without
limit. The items' slice widths are fixed (:data:`ITEM_WIDTH`); the annotators' start at the
prior's scale (``sd``; 0.25 for Su) and, during warm-up only, follow
:data:`WIDTH_PER_MOVE` times each annotator's mean move (fewer rounds: a width near the
conditional's scale needs few shrinkage steps); from the first kept sweep on they are fixed,
so the kept sweeps are an exact Markov chain. It is a different Markov chain from
the one-process scan (:class:`~plausible.inference.step_methods.difficulty_slice.DifficultySlice`, widths
tuned while warming up), with the same stationary distribution.

Starts: the classes from each item's label shares (the chain's own draw), the annotators at
``alpha = 1`` (GLAD: the orientation in which annotators beat chance) or their prior mean
(Su), the items at their prior mean.

(A Pólya–Gamma augmentation would make GLAD's abilities conjugate with one round trip a
sweep, but on crowds of accurate annotators ``alpha_j beta_i`` is large, the augmented
conditional far narrower than the ability's, and the chain crawled: a 300-item test left
abilities 30 % below their posterior means after 20,000 sweeps.)
"""

from __future__ import annotations

import numba
import numpy as np

from plausible.models.dawid_skene import kernel as kernel_code
from plausible.distributed.shards.dawid_skene import warm_classes
from plausible.inference.step_methods.difficulty_classes import class_evidence, su_class_evidence
from plausible.inference.step_methods.difficulty_slice import (
    COMPLEMENT,
    LabelGroups,
    block_sweep,
    glad_item_sweep,
    scale_shift,
)
from plausible.inference.kernel import Variable
from plausible.inference.step_methods.latent_class_gibbs import class_posterior, draw_classes
from plausible.inference.step_methods.lockstep_slice import slice_updates
from plausible.distributed.sharded_chain import GlobalHalf, ItemShard
from plausible.maths.known_classes import clamp_known

GLAD, SU = "glad", "su"
START_ABILITY = 1.0
"""GLAD's abilities at a chain's start."""
ITEM_WIDTH = {GLAD: 1.0, SU: 0.25}
"""Slice width of the item parameters (``log beta_i``; ``delta_i``), fixed."""
SU_ANNOTATOR_WIDTH = 0.25
"""Slice width of Su's fallibilities at the start (GLAD's abilities: their prior's sd)."""
WIDTH_PER_MOVE = 3.5
"""During warm-up an annotator's slice width is this many times its mean move."""
SCALE_WIDTH = 1.0
"""Slice width of GLAD's scale move."""
DEFAULT_TUNE = 100
"""Warm-up sweeps by default: the burn-in from the start (the slice widths are fixed)."""


@numba.njit(cache=True)
def annotator_sums(glad, points, active, offsets, w, n_classes, out):  # pragma: no cover
    """``out[r, j]``: annotator ``j``'s sum over its labels here of GLAD's ``log sigmoid(w_k
    t)`` (``glad``; ``t = points[r, j]``, the ability) or Su's ``log(1 + (C - 1) t w_k)`` for
    ``w_k > 0``, ``log(1 + t w_k)`` otherwise (``t = 1 - points[r, j]``), for the ``(r, j)``
    that are ``active``; ``offsets (annotator + 1,)`` groups the signed coefficients ``w``
    by annotator."""
    for r in range(points.shape[0]):
        for j in range(points.shape[1]):
            if not active[r, j]:
                continue
            total = 0.0
            if glad:
                t = points[r, j]
                for k in range(offsets[j], offsets[j + 1]):
                    y = w[k] * t
                    total += -np.log1p(np.exp(-y)) if y > 0 else y - np.log1p(np.exp(y))
            else:
                t = 1.0 - points[r, j]
                for k in range(offsets[j], offsets[j + 1]):
                    total += (np.log1p((n_classes - 1) * t * w[k]) if w[k] > 0
                              else np.log1p(t * w[k]))
            out[r, j] = total


class DifficultyShard(ItemShard):
    """A block of items of a GLAD or Su chain (:class:`~plausible.distributed.sharded_chain.
    ItemShard`): per chain the classes, the item parameters ``x`` (``log beta_i``;
    ``delta_i``) and the annotators' values last received; derived from them, the signed
    coefficients ``w_k = +-t(b_{i_k})`` of its labels grouped by annotator (``+`` for a label
    equal to its item's class; ``t = exp`` for GLAD, ``1 - delta`` for Su). ``link``:
    ``"glad"`` or ``"su"``; ``item_prior``: Normal ``(mean, sd)`` of ``log beta`` or Beta
    ``(a, b)`` of ``delta``; ``annotator_start``: the annotators' parameter at the start;
    ``gamma``: the reliability."""

    item_means = ("x",)

    def __init__(self, labels, index: int, link: str, item_prior, annotator_start: float,
                 gamma: float, dtype=np.float32):
        super().__init__(labels, index, dtype)
        self.link, self.gamma = link, float(gamma)
        self.prior = np.asarray(item_prior, dtype=np.float64)
        self.annotator_start = float(annotator_start)
        design = self.design
        C = design.n_classes
        self.annotator = (design.code // C).astype(np.int32)
        self.label = (design.code % C).astype(np.int32)
        item_of_label = np.repeat(np.arange(design.n_items), np.diff(design.offsets))
        self.by_annotator = LabelGroups.by(self.annotator, item_of_label, self.label,
                                           design.n_annotators)
        self.width = np.full(design.n_items, ITEM_WIDTH[link])

    def _start(self, rng, init):
        """Classes from the label shares, items at their prior mean, the annotators at their
        start; warm: from ``init`` where it has them (``final_class`` >= 0, ``x`` finite,
        ``annotator_x``)."""
        mean = self.prior[0] if self.link == GLAD else self.prior[0] / self.prior.sum()
        x = np.full(self.design.n_items, mean)
        annotator_x = np.full(self.design.n_annotators, self.annotator_start)
        if init is not None:
            x = np.where(np.isfinite(init["x"]), init["x"], x)
            annotator_x = np.array(init["annotator_x"], dtype=np.float64)
        z = warm_classes(self.design.label_share_classes(rng), init)
        return z, {"x": x, "annotator_x": annotator_x}

    def _restart(self, chain) -> None:
        """The signed coefficients of the chain's classes and item parameters."""
        groups = self.by_annotator
        x = chain.state["x"]
        item_factor = np.exp(x) if self.link == GLAD else 1.0 - x
        signs = np.where(groups.label == chain.z[groups.partner], 1.0, -1.0)
        chain.derived["w"] = signs * item_factor[groups.partner]

    def _sweep(self, chain, message, store, keep) -> int:
        """Given ``message = (annotator parameters (annotator,), u, log pi (class,))``."""
        annotator_x, shift, log_pi = message
        design, x = self.design, chain.state["x"]
        if self.link == GLAD:
            x -= shift
            glad_item_sweep(chain.rng, x, self.width, design.offsets, self.annotator,
                            self.label, annotator_x, chain.z, self.prior,
                            np.empty(self.label.size), np.zeros(x.size), 0, self.gamma)
            evidence = class_evidence(annotator_x, x, design.offsets, self.annotator,
                                      self.label, design.n_classes)
        else:
            block_sweep(chain.rng, x, self.width, COMPLEMENT, True, design.offsets,
                        self.annotator, self.label, 1.0 - annotator_x, chain.z, self.prior,
                        design.n_classes, np.empty(self.label.size), np.zeros(x.size), 0,
                        self.gamma)
            evidence = su_class_evidence(annotator_x, x, design.offsets, self.annotator,
                                         self.label, design.n_classes)
        posterior = clamp_known(class_posterior(log_pi, self.gamma * evidence), design.fixed)
        if store.shape[0]:
            store[...] = posterior
        z = draw_classes(chain.rng, posterior)
        changed = int(np.count_nonzero(z != chain.z))
        chain.z[...] = z
        chain.state["annotator_x"] = np.array(annotator_x, dtype=np.float64)
        self._restart(chain)
        return changed

    def annotator_log_likelihoods(self, key: int, points: np.ndarray,
                                  active: np.ndarray) -> tuple[np.ndarray]:
        """Chain ``key``'s sums over each annotator's labels here (:func:`annotator_sums`) at
        ``points`` ``(m, annotator)`` where ``active``, given the shard's classes and item
        parameters; ``(m, annotator)``, zero where not active."""
        return (self._sums(self.chains[key], np.asarray(points, dtype=np.float64),
                           np.asarray(active, dtype=bool)),)

    def _sums(self, chain, points, active) -> np.ndarray:
        out = np.zeros(points.shape)
        annotator_sums(self.link == GLAD, points, active, self.by_annotator.offsets,
                       chain.derived["w"], self.design.n_classes, out)
        return out

    def _statistics(self, chain) -> tuple:
        """The class counts, ``sum_i b_i`` and each annotator's sum at its last value."""
        state, J = chain.state, self.design.n_annotators
        sums = self._sums(chain, state["annotator_x"][None], np.ones((1, J), dtype=bool))
        return (np.bincount(chain.z, minlength=self.design.n_classes).astype(np.int64),
                np.array(state["x"].sum()), sums[0])


class DifficultyHalf(GlobalHalf):
    """The driver's half of GLAD (``link="glad"``: ``ability`` and the scale move) or Su's
    model (``"su"``: ``fallibility``), with the class prior (concentration ``a``), the
    annotator and item priors of the model and reliability ``gamma`` (module). State:
    ``(annotator parameters, u, log pi)``, which is also the message."""

    default_tune = DEFAULT_TUNE

    def __init__(self, link: str, a, annotator_prior, item_prior, gamma: float):
        if link not in (GLAD, SU):
            raise ValueError(f"link must be 'glad' or 'su', got {link!r}")
        self.link, self.a = link, np.asarray(a, dtype=np.float64)
        self.annotator_prior = np.asarray(annotator_prior, dtype=np.float64)
        self.item_prior = np.asarray(item_prior, dtype=np.float64)
        self.reliability = float(gamma)
        self.names = (("ability", "log_inverse_difficulty") if link == GLAD
                      else ("fallibility", "difficulty"))
        self.item_means = {f"{self.names[1]}_mean": "x"}
        self.shard = (DifficultyShard, {"link": link, "item_prior": self.item_prior,
                                        "annotator_start": self._annotator_start(),
                                        "gamma": self.reliability})

    def _annotator_start(self) -> float:
        return START_ABILITY if self.link == GLAD else \
            self.annotator_prior[0] / self.annotator_prior.sum()

    def variables(self, n_annotators: int, n_classes: int) -> dict:
        return {"class_prior": Variable(("class",), (n_classes,)),
                self.names[0]: Variable(("annotator",), (n_annotators,))}

    def start(self, n_annotators: int, n_classes: int, init=None) -> tuple:
        """The annotators at their start (warm: ``init["annotator_x"]``)."""
        width = self.annotator_prior[1] if self.link == GLAD else SU_ANNOTATOR_WIDTH
        annotator_x = (np.full(n_annotators, self._annotator_start()) if init is None
                       else np.array(init["annotator_x"], dtype=np.float64))
        return (annotator_x, np.array(0.0),
                np.zeros(n_classes), np.full(n_annotators, width), np.zeros(n_annotators),
                np.array(0))

    def _log_prior(self, x):
        p, q = self.annotator_prior
        if self.link == GLAD:
            return -0.5 * ((x - p) / q) ** 2
        with np.errstate(divide="ignore", invalid="ignore"):
            return (p - 1.0) * np.log(x) + (q - 1.0) * np.log1p(-x)

    def draw(self, rng, statistics, state, ask, warm_up=False) -> tuple:
        """``pi``, then every annotator's parameter by a lockstep slice update whose rounds
        ``ask`` the shards for the sums over their labels (``ask(method, *args)``: the summed
        results), then (GLAD) the scale move; in ``warm_up`` the widths follow the moves."""
        class_counts, x_total, log_likelihood = statistics
        annotator_x, _, log_pi, width, moves, n_moves = state
        kernel_code.draw_class_prior(rng, class_counts[None], self.a, log_pi, np.empty(0))
        gamma = self.reliability

        def log_density(points, active):
            sums, = ask("annotator_log_likelihoods", points, active)
            return self._log_prior(points) + gamma * sums

        glad = self.link == GLAD
        new, _ = slice_updates(rng, annotator_x, self._log_prior(annotator_x)
                               + gamma * log_likelihood, width, log_density,
                               *((-np.inf, np.inf) if glad else (0.0, 1.0)))
        if warm_up:
            moves = moves + np.abs(new - annotator_x)
            n_moves = n_moves + 1
            width = np.maximum(WIDTH_PER_MOVE * moves / n_moves, 1e-6)
        tuning = (width, moves, n_moves)
        if not glad:
            return new, np.array(0.0), log_pi, *tuning
        n_items = int(class_counts.sum())
        u, _ = scale_shift(rng, new.sum(), (new * new).sum(),
                           float(x_total) - n_items * self.item_prior[0], new.size, n_items,
                           self.annotator_prior, self.item_prior, SCALE_WIDTH, 0)
        return new * np.exp(u), np.array(u), log_pi, *tuning

    def message(self, state) -> tuple:
        return state[:3]

    def values(self, state) -> dict:
        return {"class_prior": np.exp(state[2]), self.names[0]: state[0]}


__all__ = ["DifficultyHalf", "DifficultyShard"]
