"""Exact Plackett–Luce likelihood of partial rankings with ties (Stutz et al. 2023).

A reader ranks blocks ``b_1 > ... > b_{L-1}`` (classes inside a block tied); every class it
does not name forms the unranked last block ``b_L``, which contributes the factor 1:

    p(b | lambda) = prod_{l < L} ( prod_{k in b_l} lambda_k ) R_l(b_l)
    R_l(empty) = 1
    R_l(A)     = sum_{a in A} R_l(A \\ {a}) / (Zbar_l + sum_{a in A} lambda_a),   A subset of b_l
    Zbar_l     = sum of lambda over the classes after b_l (later blocks and the unranked ones)

(``R_l(A)`` sums, over the orders of ``A``, the product of the PL denominators; the element
removed first, ``a``, arrives first.) The cost is ``O(2^s s)`` per block of size ``s``.

Everything works in the **candidate space** of :class:`PLLayout`: per item the classes ranked
by some reader (``candidate``, at most ``C`` per item) plus one pooled mass for the other
``K - |S_i|`` classes, which only ever enter the likelihood through their sum. Ranked blocks
are grouped by size; a block of size ``s`` walks the subset lattice level by level (popcount
``k = 1..s``), vectorised over every block of that size, in log space (stable for worths that
differ by hundreds of orders of magnitude). One function, :func:`block_log_likelihood`, is
written against a tiny backend so the same code runs on numpy arrays and on pytensor tensors
(for NUTS on log-worths, with gradients).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import pytensor.tensor as pt

NEG = -1e30
"""Finite stand-in for ``log 0`` (keeps pytensor gradients finite)."""


# --------------------------------------------------------------------------------------------
# subset lattice


@dataclass(frozen=True)
class Lattice:
    """Subset lattice of ``{0..s-1}`` by level.

    ``masks[k]`` int64 ``(m_k,)``: the bit masks with ``k`` bits, ``k = 0..s``;
    ``members[k]`` int64 ``(m_k, k)``: the bits of each; ``preds[k]`` int64 ``(m_k, k)``:
    position in level ``k-1`` of ``mask ^ (1 << members[k][:, t])``.
    """

    size: int
    masks: tuple
    members: tuple
    preds: tuple


@lru_cache(maxsize=None)
def lattice(size: int) -> Lattice:
    """The (cached) subset lattice of a block of ``size`` elements."""
    all_masks = np.arange(1 << size)
    bits = (all_masks[:, None] >> np.arange(size)) & 1
    count = bits.sum(axis=1)
    position = np.zeros(1 << size, dtype=np.int64)
    masks, members, preds = [], [], []
    for k in range(size + 1):
        level = all_masks[count == k]
        position[level] = np.arange(level.size)
        member = np.array([np.flatnonzero(bits[m]) for m in level], dtype=np.int64).reshape(
            level.size, k
        )
        pred = position[level[:, None] ^ (1 << member)] if k else member
        masks.append(level)
        members.append(member)
        preds.append(pred)
    return Lattice(size, tuple(masks), tuple(members), tuple(preds))


# --------------------------------------------------------------------------------------------
# layout


@dataclass(frozen=True)
class BlockGroup:
    """All ranked blocks of one size ``s``.

    ``block`` int64 ``(n,)``: index into the layout's flat block arrays;
    ``entry`` int64 ``(n, s)``: flat entry index of each member (layout entry order);
    ``member`` int64 ``(n, s)``: candidate index of each member.
    """

    size: int
    block: np.ndarray
    entry: np.ndarray
    member: np.ndarray


@dataclass(frozen=True)
class PLLayout:
    """Static index arrays for PL computations on a :class:`~plausible.data.Rankings`.

    Readers are repeated ``repetitions`` times (copies adjacent, within their item).

    Candidates: ``candidate_class`` int64 ``(item, C)`` class of each candidate slot, ``-1`` on
    padding; ``n_candidates`` ``(item,)``; ``n_pooled = K - n_candidates``; ``ranked_count``
    ``(item, C)``: how many (repeated) readers rank the candidate (``n_k``).

    Readers (``R`` in all): ``reader_item`` ``(R,)``; ``reader_start`` ``(item,)`` first reader
    of each item; ``rank`` int64 ``(R, C)``: block of the candidate for the reader, ``-1`` if
    unranked by it, ``-2`` on padding.

    Blocks (``B``, sorted by reader then block): ``block_reader``, ``block_level`` ``(B,)``;
    ``block_first_of_reader`` ``(R,)``: first block of each reader.
    Entries (``E``, sorted by block): ``entry_item``, ``entry_candidate``, ``entry_block``.
    Offsets: ``block_offsets`` ``(R + 1,)`` first block of each reader, ``entry_offsets``
    ``(B + 1,)`` first entry of each block. ``after`` bool ``(B, C)``: see ``after_mask``.
    ``groups``: one :class:`BlockGroup` per block size present.
    """

    n_items: int
    n_classes: int
    repetitions: int
    candidate_class: np.ndarray
    n_candidates: np.ndarray
    n_pooled: np.ndarray
    ranked_count: np.ndarray
    reader_item: np.ndarray
    reader_start: np.ndarray
    rank: np.ndarray
    block_reader: np.ndarray
    block_level: np.ndarray
    block_first_of_reader: np.ndarray
    entry_item: np.ndarray
    entry_candidate: np.ndarray
    entry_block: np.ndarray
    groups: tuple
    after: np.ndarray
    block_offsets: np.ndarray
    entry_offsets: np.ndarray

    @property
    def n_readers_total(self) -> int:
        return self.reader_item.size

    @property
    def max_candidates(self) -> int:
        return self.candidate_class.shape[1]

    @property
    def after_mask(self) -> np.ndarray:
        """bool ``(B, C)``: candidate comes after the block for the block's reader
        (ranked in a later block, or unranked by that reader); the field ``after``."""
        return self.after

    @property
    def pooled_mask(self) -> np.ndarray:
        """bool ``(item, K)``: class ranked by no reader of the item."""
        mask = np.ones((self.n_items, self.n_classes), dtype=bool)
        rows, slots = np.nonzero(self.candidate_class >= 0)
        mask[rows, self.candidate_class[rows, slots]] = False
        return mask

    def to_candidates(self, worth: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Dense ``(..., item, K)`` array -> ``(..., item, C)`` candidate values (0 on
        padding) and ``(..., item)`` sums over the pooled classes."""
        slot = np.maximum(self.candidate_class, 0)
        cand = np.take_along_axis(
            worth, np.broadcast_to(slot, worth.shape[:-1] + slot.shape[-1:]), axis=-1
        )
        cand = np.where(self.candidate_class >= 0, cand, 0.0)
        pool = np.where(self.pooled_mask, worth, 0.0).sum(axis=-1)
        return cand, pool


def layout(rankings, repetitions: int = 1) -> PLLayout:
    """Build the :class:`PLLayout` of ``rankings`` with every reader repeated
    ``repetitions`` times."""
    if int(repetitions) != repetitions or repetitions < 1:
        raise ValueError(f"repetitions must be a positive integer, got {repetitions!r}")
    repetitions = int(repetitions)
    n_items, n_classes = rankings.n_items, rankings.n_classes
    item, reader, label, block = rankings.item, rankings.reader, rankings.label, rankings.block

    # candidates: sorted unique classes ranked per item
    pair = np.unique(item * n_classes + label)
    pair_item, pair_class = pair // n_classes, pair % n_classes
    n_candidates = np.bincount(pair_item, minlength=n_items)
    width = max(int(n_candidates.max(initial=0)), 1)
    slot_of_pair = np.arange(pair.size) - (np.cumsum(n_candidates) - n_candidates)[pair_item]
    candidate_class = np.full((n_items, width), -1, dtype=np.int64)
    candidate_class[pair_item, slot_of_pair] = pair_class
    entry_slot = slot_of_pair[np.searchsorted(pair, item * n_classes + label)]

    # repeated readers: copy c of reader r of item i is reader r * repetitions + c
    n_readers = rankings.n_readers * repetitions
    offsets = np.cumsum(n_readers) - n_readers
    copies = np.arange(repetitions)
    e_item = np.repeat(item, repetitions)
    e_reader = offsets[e_item] + (reader[:, None] * repetitions + copies).ravel()
    e_slot = np.repeat(entry_slot, repetitions)
    e_block = np.repeat(block, repetitions)
    order = np.lexsort((e_slot, e_block, e_reader))
    e_item, e_reader = e_item[order], e_reader[order]
    e_slot, e_block = e_slot[order], e_block[order]

    n_total = int(n_readers.sum())
    reader_item = np.repeat(np.arange(n_items), n_readers)
    rank = np.full((n_total, width), -2, dtype=np.int64)
    rank[np.arange(width) < n_candidates[reader_item][:, None]] = -1
    rank[e_reader, e_slot] = e_block
    ranked_count = np.zeros((n_items, width), dtype=np.int64)
    np.add.at(ranked_count, (e_item, e_slot), 1)

    new_block = np.r_[True, (e_reader[1:] != e_reader[:-1]) | (e_block[1:] != e_block[:-1])]
    starts = np.flatnonzero(new_block)
    entry_block = np.cumsum(new_block) - 1
    sizes = np.diff(np.r_[starts, e_item.size])
    block_reader, block_level = e_reader[starts], e_block[starts]
    block_first_of_reader = np.searchsorted(block_reader, np.arange(n_total))

    groups = []
    for size in np.unique(sizes):
        blocks = np.flatnonzero(sizes == size)
        entries = starts[blocks][:, None] + np.arange(size)
        groups.append(BlockGroup(int(size), blocks, entries, e_slot[entries]))

    return PLLayout(
        n_items=n_items,
        n_classes=n_classes,
        repetitions=repetitions,
        candidate_class=candidate_class,
        n_candidates=n_candidates,
        n_pooled=n_classes - n_candidates,
        ranked_count=ranked_count,
        reader_item=reader_item,
        reader_start=offsets,
        rank=rank,
        block_reader=block_reader,
        block_level=block_level,
        block_first_of_reader=block_first_of_reader,
        entry_item=e_item,
        entry_candidate=e_slot,
        entry_block=entry_block,
        groups=tuple(groups),
        after=(rank[block_reader] == -1) | (rank[block_reader] > block_level[:, None]),
        block_offsets=np.r_[block_first_of_reader, block_reader.size],
        entry_offsets=np.r_[starts, e_item.size],
    )


def logsumexp(x: np.ndarray, axis: int) -> np.ndarray:
    """numpy ``log sum exp`` along ``axis`` (``-inf`` for all ``-inf``); a lean version of
    scipy's, whose per-call overhead dominates the small arrays of a Gibbs sweep."""
    top = np.max(x, axis=axis, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore"):
        return np.log(np.sum(np.exp(x - top), axis=axis)) + np.squeeze(top, axis=axis)


# --------------------------------------------------------------------------------------------
# backends: the same lattice code on numpy and on pytensor


class _Numpy:
    @staticmethod
    def logsumexp(x, axis):
        return logsumexp(x, axis)

    logaddexp = staticmethod(np.logaddexp)
    where = staticmethod(np.where)
    concatenate = staticmethod(np.concatenate)

    @staticmethod
    def sum(x, axis):
        return x.sum(axis=axis)

    @staticmethod
    def zeros_like(x):
        return np.zeros(np.shape(x))


class _Pytensor:
    @staticmethod
    def logsumexp(x, axis):
        return pt.logsumexp(x, axis=axis)

    logaddexp = staticmethod(pt.logaddexp)
    where = staticmethod(pt.where)

    @staticmethod
    def concatenate(xs, axis):
        return pt.concatenate(xs, axis=axis)

    @staticmethod
    def sum(x, axis):
        return x.sum(axis=axis)

    zeros_like = staticmethod(pt.zeros_like)


def _backend(x):
    return _Numpy if isinstance(x, np.ndarray) else _Pytensor


def log_after_mass(lay: PLLayout, log_cand, log_pool):
    """``(B,)`` ``log Zbar`` of every ranked block: log-sum of the worths after the block
    (candidates in later blocks or unranked by the reader, plus the pooled mass)."""
    xp = _backend(log_cand)
    item = lay.reader_item[lay.block_reader]
    if xp is _Numpy:
        # linear sums scaled by each item's largest worth (fast; exact unless the after-mass
        # is below 1e-308 of that worth, where it becomes -inf)
        top = np.maximum(log_cand.max(axis=1), log_pool)
        top = np.where(np.isfinite(top), top, 0.0)
        scaled = np.exp(log_cand - top[:, None])
        total = np.exp(log_pool - top)[item] + np.einsum("bc,bc->b", scaled[item], lay.after)
        with np.errstate(divide="ignore"):
            return np.log(total) + top[item]
    terms = xp.where(lay.after_mask, log_cand[item], NEG)
    return xp.logsumexp(xp.concatenate([terms, log_pool[item][:, None]], axis=1), axis=1)


def lattice_log_r(log_members, log_zbar, size: int):
    """Log of ``R(A)`` on the whole subset lattice, level by level.

    ``log_members`` ``(n, s)`` log-worths of the block's members, ``log_zbar`` ``(n,)``.
    Returns a list over levels ``k = 0..s`` of ``(n, m_k)`` arrays ``log R`` (masks ordered as
    in :func:`lattice`).
    """
    xp = _backend(log_members)
    lat = lattice(size)
    levels = [xp.zeros_like(log_zbar[:, None])]
    for k in range(1, size + 1):
        log_sum = xp.logsumexp(log_members[:, lat.members[k]], axis=-1)  # (n, m_k)
        log_den = xp.logaddexp(log_zbar[:, None], log_sum)
        levels.append(xp.logsumexp(levels[-1][:, lat.preds[k]], axis=-1) - log_den)
    return levels


def block_log_likelihood(lay: PLLayout, log_cand, log_pool):
    """Per group of block size, ``(n,)`` log of ``prod_{k in b} lambda_k R(b)``.

    ``log_cand`` ``(item, C)`` log-worths of the candidates (values on padding slots are
    never read), ``log_pool`` ``(item,)`` log of the pooled mass (``NEG`` or ``-inf`` when
    nothing is pooled). numpy arrays or pytensor tensors. Returns a list aligned with
    ``lay.groups``.
    """
    xp = _backend(log_cand)
    log_zbar = log_after_mass(lay, log_cand, log_pool)
    out = []
    for group in lay.groups:
        item = lay.reader_item[lay.block_reader[group.block]]
        log_members = log_cand[item[:, None], group.member]
        levels = lattice_log_r(log_members, log_zbar[group.block], group.size)
        out.append(xp.sum(log_members, axis=1) + levels[-1][:, 0])
    return out


def reader_log_likelihood(lay: PLLayout, log_cand: np.ndarray, log_pool: np.ndarray):
    """numpy ``(R,)``: log-likelihood of every (repeated) reader's ranking.

    Worths enter only through ratios, so any per-item scale of ``log_cand``/``log_pool``
    gives the same result.
    """
    out = np.zeros(lay.n_readers_total)
    for group, values in zip(lay.groups, block_log_likelihood(lay, log_cand, log_pool)):
        np.add.at(out, lay.block_reader[group.block], values)
    return out


def log_likelihood(rankings, worth: np.ndarray, repetitions: int = 1) -> np.ndarray:
    """numpy: ``(..., item)`` log-likelihood ``sum_r log p(b^r | lambda_i)`` of the rankings of
    every item, for dense worths ``(..., item, K)`` (``lambda_k > 0``; leading dims are looped
    over). With ``repetitions``, each reader counts that many times."""
    lay = rankings if isinstance(rankings, PLLayout) else layout(rankings, repetitions)
    worth = np.asarray(worth, dtype=float)
    lead = worth.shape[:-2]
    flat = worth.reshape((-1,) + worth.shape[-2:])
    out = np.empty((flat.shape[0], lay.n_items))
    for j, w in enumerate(flat):
        cand, pool = lay.to_candidates(w)
        with np.errstate(divide="ignore"):
            log_cand, log_pool = np.log(cand), np.log(pool)
        per_reader = reader_log_likelihood(lay, log_cand, log_pool)
        out[j] = np.add.reduceat(per_reader, lay.reader_start) if per_reader.size else 0.0
    return out.reshape(lead + (lay.n_items,))


def log_likelihood_pt(lay: PLLayout, log_worth):
    """pytensor scalar: total log-likelihood for dense log-worths ``(item, K)`` (a pytensor
    tensor, e.g. NUTS's log-transformed Gamma values); differentiable."""
    slot = np.maximum(lay.candidate_class, 0)
    rows = np.arange(lay.n_items)[:, None]
    log_cand = pt.where(lay.candidate_class >= 0, log_worth[rows, slot], NEG)
    log_pool = pt.logsumexp(pt.where(lay.pooled_mask, log_worth, NEG), axis=1)
    # classes pooled only when any exist; otherwise the pool is a sentinel of mass ~0
    log_pool = pt.where(lay.n_pooled > 0, log_pool, NEG)
    total = 0.0
    for values in block_log_likelihood(lay, log_cand, log_pool):
        total = total + values.sum()
    return total
