"""Log-space helpers of :mod:`plausible.maths.logspace` against scipy."""

import numpy as np
from scipy.special import logsumexp

from plausible.maths.logspace import logsumexp_last


def test_logsumexp_last_is_bit_identical_to_scipy_including_ties():
    """The samplers' seeded draws must not depend on which of the two is used."""
    rng = np.random.default_rng(0)
    for shape in [(4, 2), (5, 2, 2), (3, 10, 10), (1000, 3), (2, 419)]:
        values = np.log(rng.standard_gamma(rng.exponential(2.0, size=shape)) + 1e-300)
        values[..., 0] = np.where(rng.random(shape[:-1]) < 0.3, values[..., 1], values[..., 0])
        np.testing.assert_array_equal(logsumexp_last(values),
                                      logsumexp(values, axis=-1, keepdims=True))
