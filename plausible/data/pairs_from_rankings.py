"""Partial rankings with ties read as pairwise comparisons (the "pairwise" or rank-breaking
reading of a differential diagnosis).

A reader who ranks the blocks ``b_1 > b_2 > ... > b_{L-1}`` of one case gives one comparison
for every pair of conditions it put in different blocks, the condition of the earlier block
winning: ``{a} > {b, c}`` gives ``a`` over ``b`` and ``a`` over ``c``; conditions tied in one
block give none (a tie is no preference, and :class:`~plausible.data.comparisons.Comparisons`
has no tie outcome). The compared items are ``(case, condition)`` pairs, ids
``"<case>|<condition>"``: a condition's worth is the case's own (a Bradley–Terry model of them,
Bradley & Terry 1952, is a separate worth per case and condition, as Plackett–Luce has one
per case and class), and two cases are never compared with each other.

**Conditions a reader did not name give no comparison.** The Plackett–Luce likelihood of
:mod:`plausible.models.plackett_luce` (Luce 1959; with ties, Stutz et al. 2023) does put the
unnamed conditions in an implicit last block: the first block is chosen from *all* ``K``
conditions, so a named condition is, under that model, preferred to every unnamed one. The
pairwise reading here leaves those preferences out, for two reasons. (i) Most of them are
about conditions that no reader of the case names (about 415 of the 419 per case in the
dermatology data): as items they would only ever lose, about 800,000 of them, whereas
Plackett–Luce never separates them (they enter its likelihood only through their pooled
total, :mod:`plausible.metrics.storage`), so the pairwise reading has no counterpart for
them. (ii) Not naming a condition is a different act from ranking it below: a differential
lists what the reader considers, and an omitted condition was not weighed against the named
ones, so "``a`` over unnamed ``c``" is not a judgement the reader made in the sense in which
"``a`` over named ``b``" is. Only the explicit block order is read; the information
Plackett–Luce draws from the cut between named and unnamed conditions (and from rankings with
a single block, which give no pair at all) is what the pairwise reading gives up.

The comparisons of one ranking are not independent observations (the ``L - 1`` block
boundaries of one ranking produce up to ``n (n - 1) / 2`` pairs), so a Bradley–Terry
likelihood over them is a composite (pairwise) likelihood in the sense of Lindsay (1988,
"Composite likelihood methods", Contemporary Mathematics 80): it has the right score
equations but over-counts a long ranking's information, and its pointwise terms are not
those of a likelihood of the rankings. Its log-likelihood therefore cannot be put next to
Plackett–Luce's per-case log-likelihood in a PSIS-LOO comparison (Vehtari, Gelman & Gabry
2017, "Practical Bayesian model evaluation using leave-one-out cross-validation and WAIC",
Statistics and Computing 27); ``notebooks/dermatology_pairwise.ipynb`` compares the two on
held-out readers instead.

References: Luce (1959), *Individual Choice Behavior*; Bradley & Terry (1952), "Rank analysis
of incomplete block designs. I. The method of paired comparisons", Biometrika 39; Lindsay
(1988); Vehtari et al. (2017).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from plausible.data.comparisons import Comparisons
from plausible.data.rankings import Rankings

SEPARATOR = "|"
"""Between the case id and the condition name in an item id ``"<case>|<condition>"``."""


def pair_item_ids(rankings: Rankings, item, label) -> np.ndarray:
    """Item ids ``"<case>|<condition>"``, object ``(n,)``, of the (case, condition) pairs given
    as case indices ``item (n,)`` and class ids ``label (n,)`` into ``rankings``: the ids
    :func:`comparisons_from_rankings` gives its items, so that a (case, condition) found
    elsewhere (a held-out reader's ranking, say) can be looked up among them."""
    item, label = np.asarray(item, dtype=np.int64), np.asarray(label, dtype=np.int64)
    cases = rankings.items.astype(str)[item]
    conditions = rankings.classes.astype(str)[label]
    return np.char.add(np.char.add(cases, SEPARATOR), conditions).astype(object)


def ranking_pairs(rankings: Rankings) -> tuple[np.ndarray, np.ndarray]:
    """Every pair of entries of one reader in different blocks: ``(winner, loser)``, int64
    ``(pair,)`` indices into the rankings' entries (``rankings.item``, ``.label``, ...), the
    winner in the earlier block; ordered by reader, then by the winner's and the loser's
    entry. Pairs in one block (ties) are left out.

    Vectorised: entries are sorted by (item, reader, block, label), so each entry is paired
    with the later entries of its reader, ``(end_of_reader - entry - 1)`` of them, and those
    in a later block are kept."""
    n = rankings.n_entries
    flat = rankings.flat_reader
    if n == 0:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty
    # end (exclusive) of each entry's reader run
    ends = np.r_[np.flatnonzero(flat[1:] != flat[:-1]) + 1, n]
    run_end = ends[np.searchsorted(ends, np.arange(n), side="right")]
    later = run_end - np.arange(n) - 1
    first = np.repeat(np.arange(n), later)
    # position of each pair within its first entry's run of partners: 0, 1, ..., later - 1
    starts = np.cumsum(later) - later
    second = first + 1 + (np.arange(first.size) - np.repeat(starts, later))
    keep = rankings.block[first] < rankings.block[second]
    return first[keep], second[keep]


def comparisons_from_rankings(rankings: Rankings) -> Comparisons:
    """The rankings read as pairwise comparisons (module docstring).

    One comparison per reader and pair of conditions the reader put in different blocks
    (``sum_r sum_{l < m} |b_l^r| |b_m^r|`` in all); the earlier block's condition wins. Items:
    the ``(case, condition)`` pairs that appear in at least one comparison (a condition only
    ever tied, or a case whose readers each name one block, gives none), ids
    ``"<case>|<condition>"`` (:func:`pair_item_ids`), ordered by case and then class id.
    ``left`` is the pair's condition with the smaller class id and ``winner_is_left`` says
    whether it won (so no side is always the winner: a model with a position bias would
    otherwise read the ranking order as one). Annotators: the readers' ids when the
    rankings carry them (``rankings.readers``; every reader, in order of first appearance),
    otherwise the reader's index within its case (``0..max_readers-1``; reader ``r`` of two
    cases is then not the same person, only the same slot).
    """
    winner, loser = ranking_pairs(rankings)
    item, label = rankings.item, rankings.label
    case = item[winner]
    left = np.minimum(label[winner], label[loser])
    right = np.maximum(label[winner], label[loser])
    winner_is_left = label[winner] == left
    # compared (case, condition) keys, sorted by case then class id
    keys = np.unique(np.concatenate([case * rankings.n_classes + left,
                                     case * rankings.n_classes + right]))
    left_index = np.searchsorted(keys, case * rankings.n_classes + left)
    right_index = np.searchsorted(keys, case * rankings.n_classes + right)
    ids = pair_item_ids(rankings, keys // rankings.n_classes, keys % rankings.n_classes)
    if rankings.readers is not None:
        codes, annotators = pd.factorize(pd.Series(rankings.readers, dtype=object))
        annotator = codes[winner].astype(np.int64)
        annotators = np.asarray(annotators, dtype=object)
    else:
        annotators = np.arange(rankings.max_readers)
        annotator = rankings.reader[winner]
    return Comparisons(left_index, right_index, annotator, winner_is_left, ids, annotators)


__all__ = ["SEPARATOR", "comparisons_from_rankings", "pair_item_ids", "ranking_pairs"]
