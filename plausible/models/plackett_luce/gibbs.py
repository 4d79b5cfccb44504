"""Exact Gibbs sampler for Bayesian Plackett–Luce with ties and unranked classes (Stutz et al. 2023).

Caron & Doucet data augmentation: reader ``r`` sees class ``k`` arrive at
``tau_{r,k} ~ Exp(lambda_k)`` and ranks in order of arrival. Given worths ``lambda`` one sweep
does, for every (repeated) reader independently,

1. **order within tied blocks.** For a block ``b`` with after-mass ``Zbar`` the order
   ``(a_1, ..., a_s)`` has conditional probability ``prod_j lambda_{a_j} / (Zbar +
   sum_{i >= j} lambda_{a_i}) / (prod_{k in b} lambda_k R(b))``. With ``A`` the members not
   yet arrived, ``R(A) = sum_{a in A} R(A \\ {a}) / (Zbar + sum_A lambda)`` splits on the
   element that arrives first, so ``P(next = a | A) = R(A \\ {a}) / sum_{a'} R(A \\ {a'})``:
   walk down the subset lattice from ``b`` to the empty set (log space, Gumbel-max choice).
2. **arrival times.** Along the completed order ``rho_1..rho_m`` the gaps are
   ``Delta_j ~ Exp(sum of lambda not yet arrived)`` (every later ranked class plus every
   class the reader did not rank); ``tau_{rho_j} = Delta_1 + ... + Delta_j``, ``T_r = tau_{rho_m}``.
3. **conjugate update.** Exposure ``E_{r,k} = tau_{r,k}`` if ``r`` ranked ``k``, else ``T_r``
   (censored): ``lambda_k ~ Gamma(a + n_k, b + sum_r E_{r,k})``. Classes ranked by nobody
   for the item have ``E_{r,k} = T_r`` for every reader and ``n_k = 0``; their total, the
   *pooled mass*, is one ``Gamma((K - |S|) a, b + sum_r T_r)`` draw.
4. **total worth.** The likelihood sees only ``lambda / Lambda``; ``Lambda | pi, data ~
   Gamma(K a, b)``, so each item's worths are rescaled to a fresh total
   (:func:`rescale_log_shift`; plausibilities unchanged, much faster mixing).

The augmentation runs in a compiled kernel (:func:`augment`); :func:`augment_reference` is
the vectorised numpy version whose within-block order sampler is checked by enumeration.
The candidate sampler runs the whole sweep (plus Metropolis moves) in one compiled kernel,
:func:`plausible.models.plackett_luce.kernel.sweep_kernel`, checked against this module's
numpy route in ``tests/inference/test_plackett_luce_kernel.py``.

Everything runs in the candidate space of
:class:`~plausible.maths.plackett_luce.PLLayout`
(per item the ranked-by-someone classes plus the pooled mass), vectorised over items,
readers and blocks (grouped by size); reliability ``gamma`` (integer repetitions) is a layout
whose readers appear ``gamma`` times, each copy with its own augmentation.
"""

from __future__ import annotations

import numpy as np
from pymc.logprob.transforms import LogTransform
from pymc.model import modelcontext
from pymc.step_methods.compound import BlockedStep
from pymc.util import get_value_vars_from_user_vars

from plausible.maths.logspace import log_gamma_draws
from plausible.models.plackett_luce.kernel import augment_kernel
from plausible.maths.plackett_luce import (
    PLLayout,
    lattice,
    lattice_log_r,
    logsumexp,
)


def sample_block_orders(log_members: np.ndarray, log_zbar: np.ndarray, rng) -> np.ndarray:
    """Arrival order of the members of tied blocks of one size ``s``, from its exact
    conditional.

    ``log_members`` ``(n, s)`` log-worths, ``log_zbar`` ``(n,)`` log after-mass. Returns int64
    ``(n, s)``: ``order[:, j]`` is the member position arriving ``j``-th.
    """
    n, size = log_members.shape
    lat = lattice(size)
    levels = lattice_log_r(log_members, log_zbar, size)
    table = np.empty((n, 1 << size))
    for masks, values in zip(lat.masks, levels):
        table[:, masks] = values
    bits = 1 << np.arange(size)
    rows = np.arange(n)[:, None]
    remaining = np.full(n, (1 << size) - 1)
    order = np.empty((n, size), dtype=np.int64)
    for j in range(size):
        present = (remaining[:, None] & bits) != 0
        logits = np.where(present, table[rows, remaining[:, None] ^ bits], -np.inf)
        choice = np.argmax(logits + rng.gumbel(size=(n, size)), axis=1)
        order[:, j] = choice
        remaining = remaining ^ bits[choice]
    return order


def augment_reference(lay: PLLayout, log_cand: np.ndarray, log_pool: np.ndarray, rng):
    """Steps 1–2 and the exposures of step 3, vectorised numpy (the reference for the
    compiled :func:`augment`).

    ``log_cand`` ``(item, C)``, ``log_pool`` ``(item,)`` (``-inf`` when nothing is pooled).
    Returns ``exposure`` ``(item, C)`` = ``sum_r E_{r,k}`` per candidate and ``pool_exposure``
    ``(item,)`` = ``sum_r T_r``.
    """
    n_items, width = lay.candidate_class.shape
    block_item = lay.reader_item[lay.block_reader]
    # after-mass in linear space, scaled per item by its largest worth (exact up to
    # underflow of masses below 1e-300 of the item's largest worth)
    top = np.maximum(log_cand.max(axis=1), log_pool)
    scaled = np.exp(log_cand - top[:, None])
    zbar_scaled = np.exp(log_pool - top)[block_item] + np.einsum(
        "bc,bc->b", scaled[block_item], lay.after
    )
    with np.errstate(divide="ignore"):
        log_zbar = np.log(zbar_scaled) + top[block_item]
    zbar = np.exp(log_zbar)
    cand = np.exp(log_cand)
    n_blocks = lay.block_reader.size
    block_total = np.empty(n_blocks)
    within = np.empty(lay.entry_item.size)
    for group in lay.groups:
        item = block_item[group.block]
        log_members = log_cand[item[:, None], group.member]
        if group.size == 1:
            order = np.zeros((group.block.size, 1), dtype=np.int64)
        else:
            order = sample_block_orders(log_members, log_zbar[group.block], rng)
        rows = np.arange(group.block.size)[:, None]
        ordered = cand[item[:, None], group.member[rows, order]]
        suffix = np.cumsum(ordered[:, ::-1], axis=1)[:, ::-1]
        rates = zbar[group.block][:, None] + suffix
        gaps = rng.standard_exponential(size=ordered.shape) / rates
        cumulative = np.cumsum(gaps, axis=1)
        block_total[group.block] = cumulative[:, -1]
        within[group.entry[rows, order]] = cumulative
    # arrival of each block's first member: sum of the reader's earlier blocks
    totals = np.add.reduceat(block_total, lay.block_first_of_reader)  # T_r
    running = np.cumsum(block_total) - block_total
    block_start = running - running[lay.block_first_of_reader][lay.block_reader]
    tau = block_start[lay.entry_block] + within
    exposure = np.bincount(
        lay.entry_item * width + lay.entry_candidate, weights=tau, minlength=n_items * width
    ).reshape(n_items, width)
    exposure += np.add.reduceat(totals[:, None] * (lay.rank == -1), lay.reader_start, axis=0)
    pool_exposure = np.add.reduceat(totals, lay.reader_start)
    return exposure, pool_exposure


def augment(lay: PLLayout, log_cand: np.ndarray, log_pool: np.ndarray, rng, gamma: int = 1):
    """Steps 1–2 and the exposures of step 3 with the compiled kernel
    (:func:`plausible.models.plackett_luce.kernel.augment_kernel`), every reader of ``lay``
    counted ``gamma`` times (each copy augmented independently); with ``gamma = 1`` the same
    contract as :func:`augment_reference`. Draws from ``rng`` (a ``numpy.random.Generator``)."""
    exposure = np.empty(lay.candidate_class.shape)
    pool_exposure = np.empty(lay.n_items)
    augment_kernel(
        rng, np.r_[lay.reader_start, lay.n_readers_total], int(gamma), lay.block_offsets,
        lay.entry_offsets, lay.entry_candidate, lay.rank, lay.n_candidates,
        np.ascontiguousarray(log_cand), np.ascontiguousarray(log_pool), exposure, pool_exposure,
    )
    return exposure, pool_exposure


def draw_worths(lay: PLLayout, exposure, pool_exposure, shape: float, rate: float, rng):
    """Step 3: ``log lambda`` of the candidates ``(item, C)`` (``-inf`` on padding) and
    ``log`` pooled mass ``(item,)`` (``-inf`` where nothing is pooled)."""
    valid = lay.candidate_class >= 0
    log_cand = log_gamma_draws(rng, shape + lay.ranked_count.astype(float))
    log_cand = log_cand - np.log(rate + exposure)
    log_cand = np.where(valid, log_cand, -np.inf)
    pooled = lay.n_pooled > 0
    log_pool = log_gamma_draws(rng, np.where(pooled, lay.n_pooled, 1) * shape)
    log_pool = np.where(pooled, log_pool - np.log(rate + pool_exposure), -np.inf)
    return log_cand, log_pool


def rescale_log_shift(log_total: np.ndarray, n_classes: int, shape: float, rate: float, rng):
    """Per-item shift of the log-worths that redraws their total from its conditional.

    The likelihood depends on ``lambda`` only through ``pi = lambda / Lambda``; under i.i.d.
    ``Gamma(a, b)`` worths ``Lambda = sum_k lambda_k ~ Gamma(K a, b)`` is independent of
    ``pi``, so ``Lambda | pi, data ~ Gamma(K a, b)``: an exact Gibbs move that leaves the
    plausibilities unchanged and removes the slow random walk of the scale (Caron & Doucet
    2012). ``log_total`` ``(item,)``; returns ``log Lambda' - log_total``.
    """
    new = log_gamma_draws(rng, np.full(log_total.shape, n_classes * shape)) - np.log(rate)
    return new - log_total


def gibbs_sweep(lay: PLLayout, log_cand, log_pool, shape: float, rate: float, rng):
    """One full sweep in candidate space: augmentation, conjugate worths, then the exact
    redraw of each item's total worth (:func:`rescale_log_shift`):
    ``(log_cand, log_pool) -> (log_cand', log_pool')``."""
    exposure, pool_exposure = augment(lay, log_cand, log_pool, rng)
    log_cand, log_pool = draw_worths(lay, exposure, pool_exposure, shape, rate, rng)
    log_total = np.logaddexp(logsumexp(log_cand, axis=1), log_pool)
    shift = rescale_log_shift(log_total, lay.n_classes, shape, rate, rng)
    return log_cand + shift[:, None], log_pool + shift


class PlackettLuceGibbs(BlockedStep):
    """Exact Gibbs step for dense worths ``lambda (item, K) ~ Gamma(shape, rate)`` under the
    PL likelihood of a :class:`PLLayout` (readers repeated ``gamma`` times).

    Reads and writes the value variable ``<worth>_log__`` (PyMC's log transform). Each class
    ranked by nobody for an item gets its own ``Gamma(shape, rate + sum_r T_r)`` draw (they
    are conditionally i.i.d.), so the dense state is exact; the augmentation only needs
    their sum. The step ends with the total-worth redraw (step 4).
    """

    name = "plackett_luce_gibbs"
    stats_dtypes_shapes = {}

    def __init__(self, vars, layout: PLLayout, shape: float, rate: float, model=None,
                 rng=None, blocked=True):
        model = modelcontext(model)
        value_vars = get_value_vars_from_user_vars(vars, model)
        if len(value_vars) != 1:
            raise ValueError("PlackettLuceGibbs updates exactly one worth variable")
        [value_var] = value_vars
        rv = model.values_to_rvs[value_var]
        if not isinstance(model.rvs_to_transforms.get(rv), LogTransform):
            raise ValueError(f"PlackettLuceGibbs needs {rv.name!r} on PyMC's log transform")
        self.vars = [value_var]
        self.layout = layout
        self.shape = float(shape)
        self.rate = float(rate)
        self.rng = np.random.default_rng(rng)
        self._slot = np.maximum(layout.candidate_class, 0)
        self._valid = layout.candidate_class >= 0
        self._pooled = layout.pooled_mask

    def step(self, point):
        """PyMC's step method: the new point from ``point``, the worths drawn by one exact Gibbs
        step (see the class)."""
        lay = self.layout
        log_worth = point[self.vars[0].name]
        rows = np.arange(lay.n_items)[:, None]
        log_cand = np.where(self._valid, log_worth[rows, self._slot], -np.inf)
        # -inf where nothing is pooled
        log_pool = logsumexp(np.where(self._pooled, log_worth, -np.inf), axis=1)
        exposure, pool_exposure = augment(lay, log_cand, log_pool, self.rng)
        new_cand, _ = draw_worths(lay, exposure, pool_exposure, self.shape, self.rate, self.rng)
        value = log_gamma_draws(self.rng, np.full(log_worth.shape, self.shape))
        value -= np.log(self.rate + pool_exposure)[:, None]
        value[rows.repeat(lay.max_candidates, 1)[self._valid], self._slot[self._valid]] = (
            new_cand[self._valid]
        )
        value += rescale_log_shift(
            logsumexp(value, axis=1), lay.n_classes, self.shape, self.rate, self.rng
        )[:, None]
        new_point = dict(point)
        new_point[self.vars[0].name] = value
        return new_point, [{}]
