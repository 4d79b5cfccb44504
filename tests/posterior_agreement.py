"""Two samplers of one model agree: the test helper of the independent checks."""

import numpy as np

import plausible as pl


def assert_same_posterior(first, second, names):
    """Posterior means of ``names`` agree within 4.5 combined Monte Carlo standard errors
    (taken in float64: a float32 sum of 8000 plausibilities near 1 is off by more than that).
    An element with the same mean in both has no error to compare (its MCSE is undefined when
    it is constant in every draw, a plausibility of exactly 1, say)."""
    for name in names:
        a, b = (t.posterior[name].transpose("chain", "draw", ...).values.astype(np.float64)
                for t in (first, second))
        se = np.hypot(pl.diagnostics.mcse_mean(a), pl.diagnostics.mcse_mean(b))
        difference = np.abs(a.mean((0, 1)) - b.mean((0, 1)))
        z = np.where(difference == 0, 0.0, difference / np.maximum(se, 1e-12))
        assert z.max() < 4.5, name
