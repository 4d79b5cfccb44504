"""What to annotate next: each candidate's expected gain, a batch under a budget, and when
an item is settled.

A *candidate* is an item (models that pool annotations: votes, rankings) or an (item,
annotator) pair (annotator models, whose registry entry has ``label_probabilities``): who
should label what. Its gain comes from the draws
(:mod:`plausible.active.information`) on up to ``draws`` evenly thinned posterior draws:

* pooled models: the new annotation is a vote ``y ~ Categorical(lambda^s_i)``, the draw's
  plausibility (for a ranking model, the first choice of a new ranking: exactly the
  Plackett-Luce first-choice probability, a lower bound on a full ranking's information);
  with more than ``max_outcomes`` classes the outcomes are the item's ``max_outcomes`` most
  plausible classes and "another class" (merging outcomes can only lose information, so
  the gain is then a lower bound);
* annotator models: ``q^s(y) = sum_z pi^s_i(z) P^s_j(y | z)``, ``pi^s_i`` the draw's
  plausibility of item ``i`` and ``P^s_j`` annotator ``j``'s label probabilities in the draw.
  For a latent-class model the information is about the item's class ``z``; for an annotator
  model whose plausibility is the item's own distribution (``ambiguity-dawid-skene``) it is
  about that distribution's top class, as for the pooled models, the draws reweighted by
  ``q^s(y)``.

**Settled items and stopping.** An item is *settled* when its top-1 annotation certainty
(the posterior probability that its most plausible class is the top class, over all draws)
reaches ``threshold``; settled items get no more annotations. Stop when every item is
settled or no candidate gains ``min_gain`` bits: :func:`next_items` then returns no rows.

**A batch** gives each item at most one new annotation: items are conditionally independent
given the model's parameters, so the batch's information is close to the sum of its
candidates' and the greedy choice is the ``budget`` best candidates of distinct items.
Annotate, refit, ask again: a second annotation of the same item is worth less than the
first, which only a refit measures.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import xarray as xr

from plausible import models
from plausible.active.information import latent_class_information, top_class_information
from plausible.diagnostics.annotation_predictive import thinned_draws
from plausible.metrics.certainty import label_certainty
from plausible.metrics.options import get_options
from plausible.metrics.storage import CandidateStorage, storage_form

STRATEGIES = ("information", "certainty", "uncertainty", "random")
"""``information``: largest expected information gain first; ``certainty``: largest expected
gain in top-1 certainty; ``uncertainty``: lowest top-1 certainty first (uncertainty
sampling); ``random``: unsettled items at random. The last two pick the annotator at random
among an item's candidates."""

MAX_PAIRS = 2_000_000
"""Most (item, annotator) candidates scored without an explicit ``pairs`` table."""


def _reliability(trace) -> float:
    constant = trace["constant_data"] if "constant_data" in trace.children else None
    if constant is None or "reliability" not in constant:
        return 1.0
    return float(constant["reliability"].values)


def _plausibility_rows(trace, chain, draw, items) -> np.ndarray:
    """Dense plausibility float64 ``(sample, item, class)`` at the draws ``(chain, draw)``
    of the items ``items`` (positions), in either storage."""
    sample = {"chain": xr.DataArray(chain, dims="sample"), "draw": xr.DataArray(draw, dims="sample"),
              "item": np.asarray(items)}
    posterior = trace["posterior"]
    if storage_form(trace) == "dense":
        rows = posterior["plausibility"].isel(sample)
        return np.asarray(rows.transpose("sample", "item", "class").values, dtype=np.float64)
    storage = CandidateStorage.from_trace(trace)
    values = np.asarray(storage.values.isel(sample).transpose("sample", "item", "candidate").values)
    pooled = np.asarray(storage.pooled.isel(sample).transpose("sample", "item").values)
    return storage.densify(values, pooled, items).astype(np.float64)


def _step(per_candidate: int) -> int:
    """Candidates per block so a block holds about ``chunk_elements`` values."""
    return max(1, get_options()["chunk_elements"] // max(per_candidate, 1))


def _pooled_gain(trace, chain, draw, gamma, items, max_outcomes, K):
    S = chain.size
    out = np.empty((3, items.size))
    for start in range(0, items.size, _step(S * K)):
        block = slice(start, min(start + _step(S * K), items.size))
        p = _plausibility_rows(trace, chain, draw, items[block])
        target = p.argmax(axis=-1)
        if K > max_outcomes:  # the item's most plausible classes, the rest merged
            kept = np.argsort(-p.mean(axis=0), axis=-1, kind="stable")[:, :max_outcomes]
            q = np.take_along_axis(p, kept[None], axis=-1)
            q = np.concatenate([q, np.clip(1 - q.sum(-1, keepdims=True), 0, None)], axis=-1)
            where = (target[..., None] == kept[None]).argmax(axis=-1)
            target = np.where((target[..., None] == kept[None]).any(axis=-1), where, max_outcomes)
            n_targets = max_outcomes + 1
        else:
            q, n_targets = p, K
        out[:, block] = top_class_information(target, q, q if gamma == 1 else q**gamma, n_targets)
    return out


def _pair_gain(trace, entry, chain, draw, gamma, item, annotator, C):
    S = chain.size
    out = np.empty((3, item.size))
    step = _step(3 * S * C * C)
    for start in range(0, item.size, step):
        block = slice(start, min(start + step, item.size))
        unique, inverse = np.unique(item[block], return_inverse=True)
        pi = _plausibility_rows(trace, chain, draw, unique)[:, inverse]  # (S, P, C)
        rows = entry.label_probabilities(trace, chain, draw, item[block], annotator[block])
        if entry.plausibility == models.ITEM_DISTRIBUTION:  # about the top class of lambda
            q = np.einsum("spc,spcy->spy", pi, rows)  # the new label's probability per draw
            out[:, block] = top_class_information(pi.argmax(axis=-1), q,
                                                  q if gamma == 1 else q**gamma, C)
        else:
            out[:, block] = latent_class_information(pi, rows, gamma)
    return out


def candidate_pairs(data, pairs=None) -> tuple[np.ndarray, np.ndarray]:
    """``(item, annotator)`` positions of the candidate pairs of labels ``data``: the rows of
    ``pairs`` (a DataFrame with ``item`` and ``annotator`` columns of ids) or, by default,
    every pair without a label. ``ValueError`` naming an unknown item or annotator, or a pair
    that already has a label."""
    J = data.n_annotators
    observed = np.zeros(data.n_items * J, dtype=bool)
    observed[data.item * J + data.annotator] = True
    if pairs is None:
        if data.n_items * J - observed.sum() > MAX_PAIRS:
            raise ValueError(f"{data.n_items} items x {J} annotators is more than {MAX_PAIRS:,} "
                             "candidate pairs: pass pairs= (a DataFrame of item, annotator: who "
                             "can label what)")
        code = np.flatnonzero(~observed)
        return code // J, code % J
    if not isinstance(pairs, pd.DataFrame) or not {"item", "annotator"} <= set(pairs.columns):
        raise ValueError("pairs must be a DataFrame with columns 'item' and 'annotator'")
    item = pd.Index(data.items).get_indexer(pairs["item"].to_numpy())
    annotator = pd.Index(data.annotators).get_indexer(pairs["annotator"].to_numpy())
    for name, index, column in (("item", item, "item"), ("annotator", annotator, "annotator")):
        if (index < 0).any():
            k = int(np.argmax(index < 0))
            raise ValueError(f"pairs row {k}: {name} {pairs[column].iloc[k]!r} is not in the "
                             f"fitted data (the model knows nothing of it)")
    taken = observed[item * J + annotator]
    if taken.any():
        k = int(np.argmax(taken))
        raise ValueError(f"pairs row {k}: annotator {pairs['annotator'].iloc[k]!r} already "
                         f"labelled item {pairs['item'].iloc[k]!r}")
    return item.astype(np.int64), annotator.astype(np.int64)


def _annotator_model(model: str):
    entry = models.entry(model)
    if entry.data in ("votes", "rankings"):
        return entry, False
    if entry.label_probabilities is None:
        able = [e.name for e in models.registry.ENTRIES
                if e.data in ("votes", "rankings") or e.label_probabilities is not None]
        raise ValueError(f"model {model!r} has no predictive of a new annotation yet; "
                         f"plausible.active supports {', '.join(able)}")
    return entry, True


def expected_gain(trace, data, model: str, *, pairs=None, items=None, draws: int = 500,
                  max_outcomes: int = 32) -> pd.DataFrame:
    """Every candidate's expected gain from one more annotation, one row each: ``item``
    (and ``annotator`` for annotator models), ``information_gain`` (bits), ``certainty``
    (top-1 certainty now, on the thinned draws), ``expected_certainty`` and
    ``certainty_gain`` (their difference).

    ``trace``, ``data`` and ``model``: a fitted trace, the data it was fitted to and the
    model's registry name (an :class:`~plausible.Aggregation` holds all three). ``pairs``:
    candidate (item, annotator) pairs of an annotator model (default: every pair without a
    label); ``items``: item ids to score (default all).
    """
    entry, by_annotator = _annotator_model(model)
    draws, max_outcomes = int(draws), int(max_outcomes)
    if draws < 1 or max_outcomes < 2:
        raise ValueError("draws must be >= 1 and max_outcomes >= 2")
    chain, draw = thinned_draws(trace, draws)
    gamma = _reliability(trace)
    if by_annotator:
        item, annotator = candidate_pairs(data, pairs)
        if items is not None:
            keep = np.isin(item, _item_positions(data, items))
            item, annotator = item[keep], annotator[keep]
        gain = _pair_gain(trace, entry, chain, draw, gamma, item, annotator, data.n_classes)
        frame = pd.DataFrame({"item": data.items[item], "annotator": data.annotators[annotator]})
    else:
        item = (np.arange(data.n_items) if items is None else _item_positions(data, items))
        gain = _pooled_gain(trace, chain, draw, gamma, item, max_outcomes, data.n_classes)
        frame = pd.DataFrame({"item": data.items[item]})
    frame["information_gain"], frame["certainty"], frame["expected_certainty"] = gain
    frame["certainty_gain"] = frame["expected_certainty"] - frame["certainty"]
    frame.attrs.update(_draws_used(trace, chain.size))
    return frame


def _draws_used(trace, used: int | None = None) -> dict:
    """``{"draws": used, "of_draws": total}``: how many of the trace's draws an estimate
    read (fewer when thinned; None: all), for the frame's ``attrs``."""
    posterior = trace["posterior"]
    total = int(posterior.sizes["chain"] * posterior.sizes["draw"])
    return {"draws": total if used is None else int(used), "of_draws": total}


def _item_positions(data, items) -> np.ndarray:
    items = np.atleast_1d(np.asarray(items))
    position = pd.Index(data.items).get_indexer(items)
    if (position < 0).any():
        raise ValueError(f"item {items[int(np.argmax(position < 0))]!r} is not in the fitted data")
    return position.astype(np.int64)


def settled(trace, threshold: float = 0.95) -> pd.DataFrame:
    """Per item (index, the ids): ``top_class``, ``certainty_top1`` (share of all draws in
    which it is the most plausible class) and ``settled`` (``certainty_top1 >= threshold``)."""
    threshold = float(threshold)
    if not 0.0 < threshold <= 1.0:
        raise ValueError(f"threshold must lie in (0, 1], got {threshold}")
    shares = label_certainty(trace)
    top = shares.values.argmax(axis=1)
    certainty = shares.values[np.arange(top.size), top]
    return pd.DataFrame({"top_class": shares["class"].values[top], "certainty_top1": certainty,
                         "settled": certainty >= threshold},
                        index=pd.Index(shares["item"].values, name="item"))


def next_items(trace, data, model: str, budget: int, *, threshold: float | None = 0.95,
               strategy: str = "information", min_gain: float = 1e-3, pairs=None, items=None,
               draws: int = 500, seed: int | None = None) -> pd.DataFrame:
    """The next batch of at most ``budget`` annotations, one per item, best first: the rows
    of :func:`expected_gain` (``information`` and ``certainty`` strategies rank by
    ``information_gain`` / ``certainty_gain``; see :data:`STRATEGIES`), settled items
    (:func:`settled` at ``threshold``; None settles none) and candidates below ``min_gain``
    bits left out. ``pairs`` (annotator models) or ``items`` (item ids) restrict the
    candidates, e.g. to what an annotation pool still holds. An empty frame means stop: every
    item is settled or no annotation is worth ``min_gain``. The frame's ``attrs`` say how
    many of the trace's draws its gains and certainties read (``draws`` of ``of_draws``:
    ``draws`` thinned ones for the gains, so ``certainty`` there can differ from the
    aggregation's, which reads every draw, by their Monte Carlo error)."""
    status = settled(trace, 1.0 if threshold is None else threshold)

    def candidates() -> pd.DataFrame:
        _, by_annotator = _annotator_model(model)
        if by_annotator:
            item, annotator = candidate_pairs(data, pairs)
            return pd.DataFrame({"item": data.items[item], "annotator": data.annotators[annotator]})
        return pd.DataFrame({"item": status.index.to_numpy()})

    return plan_batch(trace, data, status, "certainty_top1", budget, threshold=threshold,
                      strategy=strategy, min_gain=min_gain, items=items, seed=seed,
                      gains=lambda open_items: expected_gain(trace, data, model, pairs=pairs,
                                                             items=open_items, draws=draws),
                      candidates=candidates)


def plan_batch(trace, data, status: pd.DataFrame, certainty: str, budget: int, *,
               threshold: float | None, strategy: str, min_gain: float, items, seed,
               gains, candidates) -> pd.DataFrame:
    """The batch of :func:`next_items` (and of the other formats' planners): of the items
    ``status`` (indexed by item id, with ``settled`` and the ``certainty`` column) left open
    (unsettled, unless ``threshold`` is None; among ``items`` when given), the candidates
    ranked by ``strategy`` and the ``budget`` best of distinct items. ``gains(open_items)``
    scores the candidates of those items (a frame with ``item``, ``information_gain`` and
    ``certainty_gain``); ``candidates()`` lists every candidate (``item``, and ``annotator``
    for annotator models) for the strategies that do not score them."""
    budget = int(budget)
    if budget < 1:
        raise ValueError(f"budget must be a positive number of annotations, got {budget}")
    if strategy not in STRATEGIES:
        raise ValueError(f"strategy must be one of {STRATEGIES}, got {strategy!r}")
    is_open = ~status["settled"].to_numpy() if threshold is not None else np.ones(len(status), bool)
    if items is not None:
        is_open &= np.isin(np.arange(len(status)), _item_positions(data, items))
    open_items = status.index[is_open].to_numpy()
    if strategy in ("information", "certainty"):
        scored = gains(open_items)
        scored = scored[scored["information_gain"] >= min_gain]
        key = "information_gain" if strategy == "information" else "certainty_gain"
        ranked = scored.sort_values(key, ascending=False, kind="stable")
    else:
        frame = candidates()
        frame = frame[frame["item"].isin(open_items)]
        rng = np.random.default_rng(seed)
        frame = frame.iloc[rng.permutation(len(frame))]  # random annotator per item, random order
        frame["certainty"] = status[certainty].reindex(frame["item"]).to_numpy()
        frame.attrs.update(_draws_used(trace))
        ranked = frame if strategy == "random" else frame.sort_values("certainty", kind="stable")
    batch = ranked.drop_duplicates("item").head(budget).reset_index(drop=True)
    batch.attrs.update(ranked.attrs)
    return batch


__all__ = ["MAX_PAIRS", "STRATEGIES", "candidate_pairs", "expected_gain", "next_items", "plan_batch",
           "settled"]
