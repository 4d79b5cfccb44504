"""Every container takes a subset of its items and has a content hash that is stable across
processes and changes with the data."""

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from plausible.data import Labels, Rankings, Ratings, Votes


def labels():
    frame = pd.DataFrame({"task": ["t3", "t1", "t3", "t2", "t1", "t2", "t4"],
                          "worker": ["w1", "w2", "w2", "w1", "w1", "w3", "w3"],
                          "label": ["cat", "dog", "dog", "cat", "cat", "bird", "dog"]})
    return Labels.from_frame(frame, item="task", annotator="worker")


def ratings():
    frame = pd.DataFrame({"item": ["a", "b", "a", "c", "b"], "annotator": [1, 1, 2, 2, 3],
                          "score": [0.5, 2.0, 1.5, 3.0, 2.5]})
    return Ratings.from_frame(frame, scale=(0, 5))


def rankings():
    selectors = [[[[0, 3], [2]], [[1]]], [[[2], [0]]], [[[4]], [[4, 1]], [[0]]]]
    return Rankings.from_selectors(selectors, classes=["a", "b", "c", "d", "e"], items=["x", "y", "z"])


def votes():
    return Votes.from_counts([[1, 0, 2], [0, 3, 0], [2, 2, 0], [0, 0, 1]],
                             items=["i0", "i1", "i2", "i3"], classes=["p", "q", "r"])


def rows(data):
    """One hashable row per annotation, in ids: what a subset must keep."""
    if isinstance(data, Votes):
        return sorted((i, c, int(n)) for i, row in zip(data.items, data.counts)
                      for c, n in zip(data.classes, row))
    if isinstance(data, Labels):
        return sorted(map(tuple, data.to_frame().to_numpy().tolist()))
    if isinstance(data, Ratings):
        return sorted(zip(data.items[data.item], data.annotators[data.annotator], data.score))
    return sorted(zip(data.items[data.item], data.reader, data.classes[data.label], data.block))


@pytest.mark.parametrize("make", [votes, labels, ratings, rankings])
def test_subset_keeps_exactly_the_selected_items(make):
    data = make()
    selection = [2, 0]
    part = data.subset(selection)
    assert list(part.items) == list(data.items[selection])
    wanted = [r for r in rows(data) if r[0] in set(data.items[selection])]
    assert rows(part) == wanted
    # a slice and a boolean mask select the same items as positions
    mask = np.zeros(data.n_items, dtype=bool)
    mask[[0, 2]] = True
    assert data.subset(mask).content_hash == data.subset(slice(0, 3, 2)).content_hash \
        == data.subset([0, 2]).content_hash
    # shards put back together hold every annotation once
    shards = [data.subset(slice(a, a + 2)) for a in range(0, data.n_items, 2)]
    assert sorted(r for s in shards for r in rows(s)) == rows(data)


@pytest.mark.parametrize("make", [votes, labels, ratings, rankings])
def test_subset_rejects_bad_selections(make):
    data = make()
    with pytest.raises(ValueError, match="out of range"):
        data.subset([data.n_items])
    with pytest.raises(ValueError, match="selected twice"):
        data.subset([1, 1])
    with pytest.raises(ValueError, match="boolean item selection"):
        data.subset(np.ones(data.n_items + 1, dtype=bool))


def test_content_hash_is_stable_across_processes_and_follows_the_data():
    makers = [votes, labels, ratings, rankings]
    code = (f"import sys; sys.path.insert(0, {str(__import__('pathlib').Path(__file__).parent)!r}); "
            f"import {__import__('pathlib').Path(__file__).stem} as t; "
            f"print(*(getattr(t, name)().content_hash for name in {[m.__name__ for m in makers]}))")
    other = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                           env={"PYTHONHASHSEED": "123"})
    assert other.stdout.split() == [make().content_hash for make in makers]
    for make in makers:
        data = make()
        assert data.subset(slice(0, data.n_items - 1)).content_hash != data.content_hash
        assert data.subset(slice(None, None, -1)).content_hash != data.content_hash  # order counts
    assert len({make().content_hash for make in makers}) == len(makers)
