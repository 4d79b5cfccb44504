"""Replaying annotation allocation on a real annotation pool.

Every item of a real data set holds a *pool* of annotations (CIFAR-10H: an image's ~51
votes; RTE: a sentence pair's 10 labels, each by a known worker). A replay starts from one
annotation per item, drawn at random from its pool, and then, round after round, fits the
model to what is revealed, asks a strategy (:data:`plausible.active.STRATEGIES`) for a
batch and reveals the chosen annotations from the pool: the next vote in the item's random
order for pooled models, the chosen worker's real label for annotator models. After every
fit it records how many annotations were spent and the share of items whose most plausible
class equals ``reference`` (the full-pool posterior's) and, where given, ``gold``.

:func:`savings` reads the curves: the annotations a strategy needs to reach an accuracy
against those random allocation needs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from plausible import models
from plausible.active.allocation import next_items, settled
from plausible.data import Labels, Votes
from plausible.inference import sample


@dataclass
class VotePool:
    """The votes of ``counts`` ``(item, class)`` in a random order per item; ``revealed``
    ``(item,)`` how many of them are revealed."""

    sequence: np.ndarray  # (item, max votes) class indices, -1 padding
    revealed: np.ndarray
    items: np.ndarray
    classes: np.ndarray

    @classmethod
    def shuffled(cls, votes: Votes, rng: np.random.Generator, start: int = 1) -> VotePool:
        counts = np.asarray(votes.counts)
        width = int(counts.sum(axis=1).max())
        sequence = np.full((counts.shape[0], width), -1, dtype=np.int64)
        for i, row in enumerate(counts):  # once per replay, not in the loop over rounds
            order = rng.permutation(np.repeat(np.arange(row.size), row))
            sequence[i, :order.size] = order
        revealed = np.minimum(start, (sequence >= 0).sum(axis=1))
        return cls(sequence, revealed, np.asarray(votes.items), np.asarray(votes.classes))

    def data(self) -> Votes:
        shown = np.arange(self.sequence.shape[1]) < self.revealed[:, None]
        counts = np.zeros((self.items.size, self.classes.size), dtype=np.int64)
        rows, slots = np.nonzero(shown)
        np.add.at(counts, (rows, self.sequence[rows, slots]), 1)
        return Votes(counts, self.items, self.classes)

    def spent(self) -> int:
        return int(self.revealed.sum())

    def candidates(self) -> dict:
        left = self.revealed < (self.sequence >= 0).sum(axis=1)
        return {"items": self.items[left]}

    def reveal(self, batch: pd.DataFrame) -> None:
        position = pd.Index(self.items).get_indexer(batch["item"].to_numpy())
        self.revealed[position] += 1


@dataclass
class LabelPool:
    """Every label of ``labels``; ``shown`` ``(annotation,)`` whether it is revealed."""

    labels: Labels
    shown: np.ndarray

    @classmethod
    def shuffled(cls, labels: Labels, rng: np.random.Generator, start: int = 1) -> LabelPool:
        order = rng.permutation(labels.n_annotations)
        rank = np.empty_like(order)
        first = np.zeros(labels.n_annotations, dtype=bool)
        by_item = order[np.argsort(labels.item[order], kind="stable")]  # random order per item
        position = np.arange(by_item.size) - np.searchsorted(labels.item[by_item],
                                                            labels.item[by_item])
        rank[by_item] = position
        first[rank < start] = True
        return cls(labels, first)

    def data(self) -> Labels:
        keep = self.shown
        return Labels(self.labels.item[keep], self.labels.annotator[keep], self.labels.label[keep],
                      self.labels.items, self.labels.annotators, self.labels.classes)

    def spent(self) -> int:
        return int(self.shown.sum())

    def candidates(self) -> dict:
        hidden = ~self.shown
        return {"pairs": pd.DataFrame({
            "item": self.labels.items[self.labels.item[hidden]],
            "annotator": self.labels.annotators[self.labels.annotator[hidden]]})}

    def reveal(self, batch: pd.DataFrame) -> None:
        code = pd.Index(self.labels.items).get_indexer(batch["item"]) * self.labels.n_annotators \
            + pd.Index(self.labels.annotators).get_indexer(batch["annotator"])
        pool = self.labels.item * self.labels.n_annotators + self.labels.annotator
        self.shown |= np.isin(pool, code)


def _fit(data, model: str, seed: int, draws: int, chains: int):
    """The trace of ``model`` (registry name, default options) fitted to ``data``."""
    return sample(models.entry(model).build(data), draws=draws, chains=chains, seed=seed,
                  progressbar=False, check_convergence=False)


def replay(annotations, model: str, strategy: str, *, reference, gold=None, batch: int = 100,
           rounds: int = 10, threshold: float | None = 0.95, seed: int = 0, draws: int = 500,
           chains: int = 2) -> pd.DataFrame:
    """One replay (see the module docstring), one row per fit: ``round``, ``annotations``
    (revealed so far), ``agreement`` (share of items whose most plausible class is the
    ``reference`` class, a Series indexed by item) and ``accuracy`` (against ``gold``, a
    Series, when given). ``annotations``: the whole pool, Votes or Labels; the model (its
    defaults) is fitted with ``draws`` x ``chains``; the strategy's ``threshold`` settles
    items (None: never; random allocation never settles)."""
    rng = np.random.default_rng(seed)
    pool = (VotePool if isinstance(annotations, Votes) else LabelPool).shuffled(annotations, rng)
    rows = []
    for step in range(rounds + 1):
        data = pool.data()
        trace = _fit(data, model, int(rng.integers(2**31)), draws, chains)
        top = settled(trace, 1.0)["top_class"]
        row = {"round": step, "annotations": pool.spent(),
               "agreement": float((top == reference.reindex(top.index)).mean())}
        if gold is not None:
            row["accuracy"] = float((top == gold.reindex(top.index)).mean())
        rows.append(row)
        if step == rounds:
            break
        chosen = next_items(trace, data, model, batch, strategy=strategy,
                            threshold=None if strategy == "random" else threshold,
                            seed=int(rng.integers(2**31)), draws=draws, **pool.candidates())
        if chosen.empty:
            break
        pool.reveal(chosen)
    return pd.DataFrame(rows)


def savings(curves: pd.DataFrame, metric: str, level: float, baseline: str = "random") -> pd.Series:
    """Annotations each strategy needs to reach ``level`` of ``metric`` on its mean curve
    (``curves``: the rows of several replays with a ``strategy`` column; linear between
    rounds, NaN if never reached), and ``saved_vs_<baseline>``: the share of the baseline's
    annotations beyond the first round that the strategy saves."""
    mean = curves.groupby(["strategy", "round"])[["annotations", metric]].mean()
    needed = {}
    for strategy, curve in mean.groupby(level="strategy"):
        x, y = curve["annotations"].to_numpy(), curve[metric].to_numpy()
        reached = np.flatnonzero(y >= level)
        if reached.size == 0:
            needed[strategy] = np.nan
        elif reached[0] == 0:
            needed[strategy] = x[0]
        else:
            k = reached[0]
            needed[strategy] = x[k - 1] + (level - y[k - 1]) / (y[k] - y[k - 1]) * (x[k] - x[k - 1])
    out = pd.Series(needed, name=f"annotations to {metric} {level:.3f}")
    start = mean["annotations"].groupby(level="strategy").first()
    out = pd.concat([out, ((out[baseline] - out) / (out[baseline] - start)).rename(
        f"saved_vs_{baseline}")], axis=1)
    return out


__all__ = ["LabelPool", "VotePool", "replay", "savings"]
