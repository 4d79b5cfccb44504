"""Closed-form Dirichlet moments and a Monte Carlo check of exact draws against them."""

import numpy as np


def dirichlet_moments(concentration):
    total = concentration.sum(axis=-1, keepdims=True)
    mean = concentration / total
    return mean, mean * (1 - mean) / (total + 1)


def beta_central_fourth_moment(a, b):
    """``E[(X - EX)^4]`` of ``Beta(a, b)`` from the raw moments ``prod_j (a + j) / (a + b + j)``."""
    raw = [np.ones_like(a)]
    for j in range(4):
        raw.append(raw[-1] * (a + j) / (a + b + j))
    m = raw[1]
    return raw[4] - 4 * m * raw[3] + 6 * m**2 * raw[2] - 3 * m**4


def assert_matches_dirichlet(draws, concentration, z_max=4.5):
    """``draws (sample, ..., class)`` are independent draws of ``Dirichlet(concentration)``.

    Mean and variance of every element within ``z_max`` Monte Carlo standard errors:
    ``sd / sqrt(n)`` for the mean and ``sqrt((m4 - var^2) / n)`` for the variance, with the
    exact fourth central moment of the Beta marginal (a sample ``m4`` underestimates it for
    the heavy-tailed marginals of tiny concentrations).
    """
    n = draws.shape[0]
    mean, var = dirichlet_moments(concentration)
    z_mean = (draws.mean(axis=0) - mean) / np.sqrt(var / n)
    total = concentration.sum(axis=-1, keepdims=True)
    m4 = beta_central_fourth_moment(concentration, total - concentration)
    z_var = (draws.var(axis=0, ddof=1) - var) / np.sqrt(np.maximum(m4 - var**2, 1e-300) / n)
    assert np.abs(z_mean).max() < z_max, np.abs(z_mean).max()
    assert np.abs(z_var).max() < z_max, np.abs(z_var).max()
    np.testing.assert_allclose(draws.sum(axis=-1), 1.0, atol=1e-12)
