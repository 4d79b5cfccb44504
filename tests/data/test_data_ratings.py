import numpy as np
import pandas as pd
import pytest

from plausible.data import Ratings

FRAME = pd.DataFrame({
    "item": ["s1", "s1", "s1", "s2", "s2"],
    "annotator": ["a", "b", "c", "a", "c"],
    "score": [10, 20, 60, -5, 5],
})


def test_from_frame_and_per_item():
    ratings = Ratings.from_frame(FRAME, scale=(-100, 100))
    assert ratings.score.dtype == np.float64
    assert (ratings.n_items, ratings.n_annotators, ratings.n_ratings) == (2, 3, 5)
    assert ratings.scale == (-100.0, 100.0)
    count, mean, sum_sq_dev = ratings.per_item()
    np.testing.assert_array_equal(count, [3, 2])
    np.testing.assert_allclose(mean, [30.0, 0.0])
    np.testing.assert_allclose(sum_sq_dev, [20.0**2 + 10.0**2 + 30.0**2, 50.0])


@pytest.mark.parametrize(
    ("score", "match"),
    [
        ([10, 20, np.nan, -5, 5], r"item 's1', annotator 'c': score nan is not finite"),
        ([10, 20, 60, np.inf, 5], r"item 's2', annotator 'a': score inf is not finite"),
        ([10, "abc", 60, -5, 5], r"item 's1', annotator 'b': score 'abc' is not a number"),
        ([10, 20, 60, -5, 500], r"item 's2', annotator 'c': score 500.0 outside the scale \[-100, 100\]"),
    ],
)
def test_bad_scores_name_item_and_annotator(score, match):
    with pytest.raises(ValueError, match=match):
        Ratings.from_frame(FRAME.assign(score=score), scale=(-100, 100))


def test_unknown_annotator_and_missing_items():
    with pytest.raises(ValueError, match=r"item 's1': unknown annotator 'c'"):
        Ratings.from_frame(FRAME, annotators=["a", "b"])
    with pytest.raises(ValueError, match=r"item 's3' has no ratings"):
        Ratings.from_frame(FRAME, items=["s1", "s2", "s3"])
    with pytest.raises(ValueError, match=r"item 's2' has 2 ratings \(min_ratings=3\)"):
        Ratings.from_frame(FRAME, min_ratings=3)
    with pytest.raises(ValueError, match=r"row 1: missing 'annotator' \(item='s1'\)"):
        Ratings.from_frame(FRAME.assign(annotator=["a", None, "c", "a", "c"]))
