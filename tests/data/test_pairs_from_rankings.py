import numpy as np
import pandas as pd

from plausible.data import Rankings
from plausible.data.pairs_from_rankings import (comparisons_from_rankings, pair_item_ids,
                                                ranking_pairs)

CLASSES = ["acne", "eczema", "melanoma", "psoriasis", "rosacea"]
# case "a": reader 0 ranks {melanoma} > {acne, psoriasis} > {eczema}; reader 1 ranks
#           {eczema} > {acne}; reader 2 ranks {acne, rosacea} (one block: no pair)
# case "b": reader 0 ranks {psoriasis} > {melanoma}
SELECTORS = [[[[2], [0, 3], [1]], [[1], [0]], [[0, 4]]], [[[3], [2]]]]


def frame_sorted(table):
    return table.sort_values(["worker", "label", "left", "right"], ignore_index=True)


def frame(comparisons):
    return frame_sorted(comparisons.to_frame())


def test_hand_example_exact_comparisons():
    rankings = Rankings.from_selectors(SELECTORS, classes=CLASSES, items=["a", "b"])
    comparisons = comparisons_from_rankings(rankings)
    # a tie ({acne, psoriasis}; {acne, rosacea}) gives no pair and rosacea, only ever tied,
    # is no item; the two cases' melanomas are different items
    np.testing.assert_array_equal(comparisons.items, ["a|acne", "a|eczema", "a|melanoma",
                                                      "a|psoriasis", "b|melanoma", "b|psoriasis"])
    np.testing.assert_array_equal(comparisons.annotators, [0, 1, 2])  # reader index per case
    expected = pd.DataFrame(
        [(0, "a|acne", "a|melanoma", "a|melanoma"), (0, "a|melanoma", "a|psoriasis", "a|melanoma"),
         (0, "a|eczema", "a|melanoma", "a|melanoma"), (0, "a|acne", "a|eczema", "a|acne"),
         (0, "a|eczema", "a|psoriasis", "a|psoriasis"),
         (0, "b|melanoma", "b|psoriasis", "b|psoriasis"),
         (1, "a|acne", "a|eczema", "a|eczema")],
        columns=["worker", "left", "right", "label"])
    pd.testing.assert_frame_equal(frame(comparisons), frame_sorted(expected))
    # left is the smaller class id, so the winner is not always on one side
    assert comparisons.winner_is_left.any() and not comparisons.winner_is_left.all()


def test_count_is_pairs_across_blocks():
    rng = np.random.default_rng(0)
    selectors = []
    for _ in range(30):
        case = []
        for _ in range(rng.integers(1, 5)):
            named = rng.choice(8, size=rng.integers(1, 7), replace=False)
            cuts = np.sort(rng.choice(np.arange(1, named.size), size=rng.integers(0, named.size),
                                      replace=False)) if named.size > 1 else []
            case.append([b.tolist() for b in np.split(named, cuts)])
        selectors.append(case)
    rankings = Rankings.from_selectors(selectors, classes=8)
    winner, loser = ranking_pairs(rankings)
    expected = sum(sum(len(b) * len(c) for i, b in enumerate(r) for c in r[i + 1:])
                   for case in selectors for r in case)
    assert winner.size == expected
    assert np.all(rankings.flat_reader[winner] == rankings.flat_reader[loser])
    assert np.all(rankings.block[winner] < rankings.block[loser])
    comparisons = comparisons_from_rankings(rankings)
    assert comparisons.n_comparisons == expected
    winners = pair_item_ids(rankings, rankings.item[winner], rankings.label[winner])
    np.testing.assert_array_equal(comparisons.items[comparisons.winner], winners)


def test_reader_ids_are_the_workers():
    frame_ = pd.DataFrame({"item": ["a", "a", "a", "a", "b", "b"],
                           "reader": ["ann", "ann", "bob", "bob", "cy", "cy"],
                           "label": ["acne", "eczema", "eczema", "acne", "acne", "eczema"],
                           "rank": [1, 2, 1, 1, 1, 2]})
    comparisons = comparisons_from_rankings(Rankings.from_long(frame_))
    table = comparisons.to_frame()
    np.testing.assert_array_equal(comparisons.annotators, ["ann", "bob", "cy"])  # bob: a tie
    assert table.values.tolist() == [["ann", "a|acne", "a|eczema", "a|acne"],
                                     ["cy", "b|acne", "b|eczema", "b|acne"]]


def test_ties_only_give_no_comparison():
    comparisons = comparisons_from_rankings(Rankings.from_selectors([[[[0, 1]], [[1]]]], classes=2))
    assert comparisons.n_comparisons == comparisons.n_items == 0
