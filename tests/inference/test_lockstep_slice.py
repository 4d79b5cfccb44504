"""The lockstep slice update leaves every coordinate's own conditional invariant, whatever the
width, on an unbounded and on a bounded support."""

import numpy as np
from scipy import stats

from plausible.inference.step_methods.lockstep_slice import slice_updates


def test_lockstep_updates_draw_each_coordinate_from_its_own_density():
    # unbounded: N(0, 1) and N(5, 0.1^2) coordinates with widths from far too narrow to far
    # too wide; their standardised draws pooled
    means = np.array([0.0, 0.0, 0.0, 5.0, 5.0, 5.0])
    sds = np.array([1.0, 1.0, 1.0, 0.1, 0.1, 0.1])
    width = np.array([0.3, 1.0, 10.0, 0.01, 0.3, 10.0])
    rng = np.random.default_rng(0)

    def log_density(points, active):
        return stats.norm.logpdf(points, means, sds)

    x = means + 3 * sds
    draws = []
    for _ in range(5_000):
        x, _ = slice_updates(rng, x, log_density(x[None], None)[0], width, log_density)
        draws.append(x)
    standardised = ((np.array(draws[500::5]) - means) / sds).ravel()
    assert stats.kstest(standardised, "norm").pvalue > 1e-3

    beta = stats.beta(2, 5)

    def bounded(points, active):
        assert ((points[active] > 0) & (points[active] < 1)).all()  # asked inside only
        return beta.logpdf(points)

    y = np.full(3, 0.5)
    draws = []
    for _ in range(5_000):
        y, _ = slice_updates(rng, y, beta.logpdf(y), np.full(3, 0.25), bounded, 0.0, 1.0)
        draws.append(y)
    draws = np.array(draws[500:])
    for k in range(3):  # three independent coordinates of the same density
        assert stats.kstest(draws[::5, k], beta.cdf).pvalue > 1e-3, k
    np.testing.assert_allclose(draws.mean(axis=0), beta.mean(), atol=0.01)
