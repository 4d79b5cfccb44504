"""ML point estimate of PL worths vs brute-force optimisation of the enumerated likelihood."""

import numpy as np
import scipy.optimize

from plausible.data.rankings import Rankings
from plausible.models.plackett_luce.mle import maximum_likelihood
from plackett_luce_cases import brute_force_likelihood

# every class is beaten and beats someone: an interior ML estimate exists
CASE = [[[0], [1], [2, 3]], [[1], [2], [0]], [[2, 3], [0, 1]], [[3], [0], [2]], [[0, 2], [1]]]


def test_matches_brute_force_optimisation():
    rankings = Rankings.from_selectors([CASE], classes=4)
    got = maximum_likelihood(rankings).values[0]

    def negative(x):
        worth = np.exp(np.r_[0.0, x])
        return -sum(np.log(brute_force_likelihood(blocks, worth)) for blocks in CASE)

    best = scipy.optimize.minimize(negative, np.zeros(3), method="Nelder-Mead",
                                   options={"xatol": 1e-10, "fatol": 1e-14, "maxiter": 20000})
    worth = np.exp(np.r_[0.0, best.x])
    np.testing.assert_allclose(got, worth / worth.sum(), atol=1e-5)


def test_unranked_classes_get_zero_and_items_are_separable():
    rankings = Rankings.from_selectors([CASE, [[[1], [0]], [[0], [1]]]], classes=6)
    got = maximum_likelihood(rankings).values
    np.testing.assert_allclose(got.sum(axis=1), 1.0)
    assert np.all(got[0, 4:] == 0) and np.all(got[1, 2:] == 0)
    np.testing.assert_allclose(got[1, :2], 0.5, atol=1e-6)
    alone = maximum_likelihood(Rankings.from_selectors([CASE], classes=6)).values[0]
    np.testing.assert_allclose(got[0], alone, atol=1e-6)
