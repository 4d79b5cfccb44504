"""Leave-one-reader-out agreement on hand-worked examples and against exact fractions."""

from fractions import Fraction
from types import SimpleNamespace

import numpy as np
import pytest

from plausible.metrics import leave_one_out_agreement


def stand_in_rankings(selectors, n_classes, items=None):
    """The flat fields of plausible.data.Rankings, built from nested selectors lists."""
    rows = [
        (i, r, c, b)
        for i, case in enumerate(selectors)
        for r, reader in enumerate(case)
        for b, block in enumerate(reader)
        for c in block
    ]
    item, reader, label, block = (np.array(col, dtype=np.int64) for col in zip(*rows))
    order = np.lexsort((label, block, reader, item))
    n_readers = np.array([len(case) for case in selectors], dtype=np.int64)
    return SimpleNamespace(
        item=item[order], reader=reader[order], label=label[order], block=block[order],
        n_readers=n_readers,
        items=np.arange(len(selectors)) if items is None else np.asarray(items),
        classes=np.arange(n_classes),
        n_items=len(selectors), n_classes=n_classes, max_readers=int(n_readers.max()),
    )


SELECTORS = [
    # item 0, three readers (worked below)
    [[[0], [1, 2]], [[1], [0]], [[2]]],
    # item 1, a single reader: NaN
    [[[3]]],
    # item 2, two readers
    [[[0, 1]], [[1], [3]]],
]
# item 0, IRN per reader: r0 {0: 1, 1: 1/2, 2: 1/2}, r1 {1: 1, 0: 1/2}, r2 {2: 1}
#   leave r0 out: r1 + r2 = {0: 1/2, 1: 1, 2: 1} -> top {1, 2} (tie kept); r0 named 1 -> 1
#   leave r1 out: r0 + r2 = {0: 1, 1: 1/2, 2: 3/2} -> top {2}; r1 named {0, 1} -> 0
#   leave r2 out: r0 + r1 = {0: 3/2, 1: 3/2, 2: 1/2} -> top {0, 1}; r2 named {2} -> 0
# item 2: leave r0 out: r1 = {1: 1, 3: 1/2} -> {1} in {0, 1} -> 1
#         leave r1 out: r0 = {0: 1, 1: 1} -> {0, 1}, r1 named 1 -> 1
EXPECTED = np.array([[1.0, 0.0, 0.0], [np.nan, np.nan, np.nan], [1.0, 1.0, np.nan]])


def test_three_reader_example_by_hand():
    agreement = leave_one_out_agreement(stand_in_rankings(SELECTORS, 4, items=["a", "b", "c"]))
    assert agreement.dims == ("item", "reader")
    assert agreement["item"].values.tolist() == ["a", "b", "c"]
    np.testing.assert_array_equal(agreement.values, EXPECTED)
    np.testing.assert_allclose(agreement.mean("reader").values, [1 / 3, np.nan, 1.0])


def _agreement_with_fractions(selectors, n_classes):
    """Loop over items and readers with exact rational IRN scores."""
    max_readers = max(len(case) for case in selectors)
    out = np.full((len(selectors), max_readers), np.nan)
    for i, case in enumerate(selectors):
        if len(case) < 2:
            continue
        for r, left_out in enumerate(case):
            score = [Fraction(0)] * n_classes
            for other in case[:r] + case[r + 1 :]:
                for b, block in enumerate(other):
                    for c in block:
                        score[c] += Fraction(1, b + 1)
            best = max(score)
            top = {c for c in range(n_classes) if score[c] == best and best > 0}
            named = {c for block in left_out for c in block}
            out[i, r] = float(bool(top & named))
    return out


def _random_selectors(rng, n_items, n_classes):
    selectors = []
    for _ in range(n_items):
        case = []
        for _ in range(rng.integers(1, 6)):
            named = rng.permutation(n_classes)[: rng.integers(1, n_classes + 1)]
            cuts = np.sort(rng.choice(np.arange(1, len(named)), size=rng.integers(0, len(named)), replace=False))
            case.append([block.tolist() for block in np.split(named, cuts)])
        selectors.append(case)
    return selectors


def test_random_rankings_match_exact_fractions():
    rng = np.random.default_rng(2)
    selectors = _random_selectors(rng, 60, 6)
    got = leave_one_out_agreement(stand_in_rankings(selectors, 6)).values
    np.testing.assert_array_equal(got, _agreement_with_fractions(selectors, 6))


def test_with_plausible_data_rankings():
    data = pytest.importorskip("plausible.data")
    rankings_type = getattr(data, "Rankings", None)
    if rankings_type is None:
        pytest.skip("plausible.data.Rankings not available")
    rankings = rankings_type.from_selectors(SELECTORS, classes=4)
    np.testing.assert_array_equal(leave_one_out_agreement(rankings).values, EXPECTED)
