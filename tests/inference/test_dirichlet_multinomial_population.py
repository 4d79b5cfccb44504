"""The Dirichlet-multinomial population's slice target and its count summary
(:mod:`plausible.inference.step_methods.dirichlet_multinomial_population`)."""

import numpy as np
from scipy import stats
from scipy.special import gammaln

from plausible.inference.step_methods import dirichlet_multinomial_population as population


def test_density_is_the_rows_integrated_out_with_the_priors():
    """The slice target, coordinate by coordinate, against the rows' Dirichlet-multinomial
    ``B(alpha + m) / B(alpha)`` summed row by row (``alpha = kappa g / sum g``) with the Gamma
    priors of ``kappa`` and ``g`` on the log scale: equal up to one constant, so the count
    summary (repeated rows and values, a row without counts, real tempered counts) loses
    nothing."""
    rng = np.random.default_rng(4)
    C, shape, rate = 3, 2.0, 0.1
    beta = np.array([4.0, 1.0, 1.0])
    counts = 1.5 * rng.integers(0, 4, size=(40, C)).astype(float)  # tempered, many repeats
    counts[2] = 0.0  # a row without counts contributes nothing
    summary = population.count_summary(counts)
    assert summary[0].shape[1] == 3  # three distinct positive values per class, not 40 rows

    def direct(v):
        kappa, g = np.exp(v[0]), np.exp(v[1:])
        alpha = kappa * g / g.sum()
        rows = sum(gammaln(alpha + m).sum() - gammaln(alpha).sum() + gammaln(kappa)
                   - gammaln(kappa + m.sum()) for m in counts)
        return (rows + stats.gamma.logpdf(kappa, shape, scale=1 / rate) + v[0]
                + (stats.gamma.logpdf(g, beta) + v[1:]).sum())

    v = rng.normal(size=C + 1)
    differences = []
    for k in range(C + 1):
        for x in (-1.0, 0.3, 2.0):
            moved = v.copy()
            moved[k] = x
            differences.append(population.population_log_density(x, k, v, *summary, beta,
                                                                  shape, rate) - direct(moved))
    assert np.ptp(differences) < 1e-9


def test_summary_of_rows_without_counts():
    """No rows, or rows of zeros only, leave a summary whose density is the priors'."""
    for counts in (np.zeros((0, 2)), np.zeros((3, 2))):
        values, weights, totals, total_weights = population.count_summary(counts)
        assert weights.sum() == 0 and total_weights.sum() == 0


def test_fixed_base_moves_only_the_concentration():
    """With the base measure fixed only ``log kappa`` moves, and ``log alpha`` is ``log kappa +
    log base``."""
    rng = np.random.default_rng(0)
    counts = rng.integers(0, 5, size=(30, 4)).astype(float)
    v = np.concatenate([[0.0], np.log(np.full(4, 0.25))])
    log_alpha = population.draw_population(rng, v, population.count_summary(counts), False, np.ones(4), 1.0, 0.25, 1.0)
    np.testing.assert_allclose(v[1:], np.log(0.25))
    np.testing.assert_allclose(log_alpha, v[0] + np.log(0.25))
