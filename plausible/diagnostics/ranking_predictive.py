"""Posterior predictive checks for partial rankings under a Plackett–Luce posterior.

For a thinned posterior draw ``lambda^(m)`` every observed reader of item ``i`` is replicated:
a full PL order is drawn (Gumbel-max: sort ``log lambda_ik + G_k``), its first ``m_r`` classes
are kept and cut into the reader's observed block sizes. PL does not model how many classes
a reader names nor how it ties them, so the replicates copy that *shape* of each observed
reader; the block-size distribution is therefore a data summary here
(:attr:`RankingPredictiveCheck.block_sizes`), not a test. Test quantities, on observed and
replicated data alike:

* ``pair_top_agreement``: over items with >= 2 readers, the mean over reader pairs of
  ``[first blocks share a class]``;
* ``first_block_has_irn_top1``: over readers, the fraction whose first block contains the
  item's IRN top-1 class (reference IRN weights ``1 / block``, computed on the same — observed
  or replicated — data; ties to the lowest class index);
* ``mean_distinct_first_choices``: mean over items of the number of distinct classes in the
  union of the readers' first blocks.

Posterior predictive mid p-values ``P(T_rep > T_obs) + P(T_rep = T_obs) / 2``; per item the
same for the item's pair agreement. Works on a dense trace (``posterior.plausibility``) or
on a candidate trace (:mod:`plausible.metrics.storage`), item chunk by item chunk, so
``(draws, items, K)`` is never held whole.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import xarray as xr

from plausible.diagnostics.predictive_statistics import StatisticsSummary, mid_p_value
from plausible.metrics.storage import to_dense

STATISTICS = ("pair_top_agreement", "first_block_has_irn_top1", "mean_distinct_first_choices")


def _dense_chunk(trace, items: np.ndarray, samples: np.ndarray) -> np.ndarray:
    """``(sample, item, K)`` plausibilities of the selected items and stacked samples."""
    post = trace["posterior"]
    if "plausibility" in post:
        values = post["plausibility"].values[:, :, items]
    else:
        values = to_dense(trace, items).values
    values = values.reshape((-1,) + values.shape[2:])[samples]
    return values.astype(np.float64)


def _reader_shapes(rankings, items: np.ndarray):
    """For the readers of ``items``: owner (position in ``items``), observed classes by
    position ``(R, M)`` (-1 pad) and block of each position ``(R, M)`` (-1 pad)."""
    keep = np.isin(rankings.item, items)
    item, reader, label, block = (a[keep] for a in
                                  (rankings.item, rankings.reader, rankings.label, rankings.block))
    local = np.searchsorted(items, item)
    n_readers = rankings.n_readers[items]
    offsets = np.cumsum(n_readers) - n_readers
    flat = offsets[local] + reader
    n_total = int(n_readers.sum())
    counts = np.bincount(flat, minlength=n_total)
    width = int(counts.max(initial=1))
    position = np.arange(flat.size) - (np.cumsum(counts) - counts)[flat]
    labels = np.full((n_total, width), -1)
    blocks = np.full((n_total, width), -1)
    labels[flat, position] = label
    blocks[flat, position] = block
    owner = np.repeat(np.arange(items.size), n_readers)
    return owner, labels, blocks


def _statistics(labels, blocks, owner, n_items, n_classes):
    """Per-sample statistics of rankings ``labels`` ``(S, R, M)`` (block map ``(R, M)``).
    Returns dataset sums/counts (to pool over chunks) and per-item pair agreement."""
    n_samples, n_readers, _ = labels.shape
    first = (blocks == 0)[None] & (labels >= 0)
    member = np.zeros((n_samples, n_readers, n_classes + 1), dtype=bool)
    s_idx, r_idx, m_idx = np.nonzero(np.broadcast_to(first, labels.shape))
    member[s_idx, r_idx, labels[s_idx, r_idx, m_idx]] = True
    member = member[..., :n_classes]
    # reader pairs within items
    r1, r2 = np.triu_indices(n_readers, 1)
    same = owner[r1] == owner[r2]
    r1, r2 = r1[same], r2[same]
    agree = (member[:, r1] & member[:, r2]).any(axis=-1)  # (S, P)
    pairs_per_item = np.bincount(owner[r1], minlength=n_items)
    agree_per_item = np.stack([np.bincount(owner[r1], weights=a, minlength=n_items) for a in agree])
    # IRN top-1 per item
    weight = np.where(blocks >= 0, 1.0 / (np.maximum(blocks, 0) + 1.0), 0.0)
    scores = np.zeros((n_samples, n_items, n_classes + 1))
    code = np.where(labels >= 0, labels, n_classes)
    s_all = np.broadcast_to(np.arange(n_samples)[:, None, None], labels.shape)
    np.add.at(scores, (s_all, np.broadcast_to(owner[None, :, None], labels.shape), code),
              np.broadcast_to(weight, labels.shape))
    top1 = scores[..., :n_classes].argmax(axis=-1)  # (S, items)
    has_top = member[np.arange(n_samples)[:, None], np.arange(n_readers)[None], top1[:, owner]]
    union = np.zeros((n_samples, n_items, n_classes), dtype=bool)
    for r in range(n_readers):
        union[:, owner[r]] |= member[:, r]
    return {
        "agree_sum": agree.sum(axis=1), "n_pairs": r1.size,
        "has_top_sum": has_top.sum(axis=1), "n_readers": n_readers,
        "distinct_sum": union.sum(axis=-1).sum(axis=1), "n_items": n_items,
        "agree_per_item": agree_per_item, "pairs_per_item": pairs_per_item,
    }


@dataclass(frozen=True)
class RankingPredictiveCheck(StatisticsSummary):
    """Observed vs replicated statistics, per-item p-values of pair agreement and the
    observed block-size distribution."""

    replicated_statistics: pd.DataFrame
    observed_statistics: pd.Series
    item_p_values: xr.DataArray
    block_sizes: pd.Series


def ranking_predictive_check(trace, rankings, *, draws: int = 200, seed: int | None = None,
                             chunk_items: int = 64) -> RankingPredictiveCheck:
    """Replicate every reader from ``draws`` evenly thinned posterior draws of a PL trace
    (dense or candidate) of ``rankings`` and compare the statistics of the module docstring."""
    rng = np.random.default_rng(seed)
    post = trace["posterior"]
    name = "plausibility" if "plausibility" in post else "pooled_mass"
    n_total = post[name].sizes["chain"] * post[name].sizes["draw"]
    samples = np.unique(np.linspace(0, n_total - 1, min(draws, n_total)).astype(int))
    n_items, n_classes = rankings.n_items, rankings.n_classes
    totals = {key: 0.0 for key in ("agree_rep", "agree_obs", "top_rep", "top_obs",
                                   "dist_rep", "dist_obs", "pairs", "readers")}
    item_p = np.full(n_items, np.nan)
    for start in range(0, n_items, chunk_items):
        items = np.arange(start, min(start + chunk_items, n_items))
        owner, labels, blocks = _reader_shapes(rankings, items)
        probs = _dense_chunk(trace, items, samples)  # (S, n, K)
        with np.errstate(divide="ignore"):
            keys = np.log(probs)[:, owner] + rng.gumbel(size=(samples.size, owner.size, n_classes))
        width = labels.shape[1]
        part = np.argpartition(-keys, width - 1, axis=-1)[..., :width]
        order = np.argsort(-np.take_along_axis(keys, part, axis=-1), axis=-1, kind="stable")
        replicated = np.take_along_axis(part, order, axis=-1)
        replicated = np.where(blocks[None] >= 0, replicated, -1)
        rep = _statistics(replicated, blocks, owner, items.size, n_classes)
        obs = _statistics(labels[None], blocks, owner, items.size, n_classes)
        totals["agree_rep"] = totals["agree_rep"] + rep["agree_sum"]
        totals["agree_obs"] += float(obs["agree_sum"][0])
        totals["top_rep"] = totals["top_rep"] + rep["has_top_sum"]
        totals["top_obs"] += float(obs["has_top_sum"][0])
        totals["dist_rep"] = totals["dist_rep"] + rep["distinct_sum"]
        totals["dist_obs"] += float(obs["distinct_sum"][0])
        totals["pairs"] += rep["n_pairs"]
        totals["readers"] += rep["n_readers"]
        has_pairs = rep["pairs_per_item"] > 0
        p = mid_p_value(rep["agree_per_item"], obs["agree_per_item"][0][None])
        item_p[items[has_pairs]] = p[has_pairs]
    pairs = max(totals["pairs"], 1)
    replicated_stats = pd.DataFrame({
        "pair_top_agreement": totals["agree_rep"] / pairs,
        "first_block_has_irn_top1": totals["top_rep"] / totals["readers"],
        "mean_distinct_first_choices": totals["dist_rep"] / n_items,
    })
    observed_stats = pd.Series({
        "pair_top_agreement": totals["agree_obs"] / pairs,
        "first_block_has_irn_top1": totals["top_obs"] / totals["readers"],
        "mean_distinct_first_choices": totals["dist_obs"] / n_items,
    })
    key = rankings.flat_reader * (int(rankings.block.max(initial=0)) + 1) + rankings.block
    _, sizes = np.unique(key, return_counts=True)
    block_sizes = pd.Series(np.bincount(sizes)[1:], index=np.arange(1, sizes.max() + 1),
                            name="n_blocks")
    return RankingPredictiveCheck(
        replicated_statistics=replicated_stats, observed_statistics=observed_stats,
        item_p_values=xr.DataArray(item_p, dims="item", coords={"item": rankings.items},
                                   name="pair_agreement_p_value"),
        block_sizes=block_sizes,
    )
