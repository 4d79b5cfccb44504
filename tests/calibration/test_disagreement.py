"""Order-r metrics (Mimori et al. 2021) and predictive distributions over CPEs (§4), checked against
brute-force enumeration and simulation."""

from itertools import combinations

import numpy as np
import pytest

from plausible.calibration.losses import calibration_error
from plausible.calibration.bins import binned_calibration
from plausible.calibration.cpe import DirichletCPE, EnsembleCPE, PointCPE
from plausible.calibration.disagreement import (
    compositions,
    disagreement,
    disagreement_calibration_error,
    disagreement_calibration_loss,
    disagreement_loss,
    disagreement_table,
    u_statistic,
)

K = 3


def histograms(n_items=25, max_labels=6, seed=0):
    rng = np.random.default_rng(seed)
    n = rng.integers(1, max_labels + 1, size=n_items)
    return np.array([rng.multinomial(k, rng.dirichlet(np.ones(K))) for k in n])


def brute_u(counts, r, kernel):
    """Average of kernel(histogram of the r labels) over every r-subset of the labels."""
    labels = np.repeat(np.arange(counts.size), counts)
    if labels.size < r:
        return np.nan
    return np.mean([kernel(np.bincount(list(s), minlength=counts.size)) for s in combinations(labels, r)])


def test_compositions_enumerate_every_histogram_once():
    m = compositions(3, 4)
    assert m.shape == (20, 4) and (m.sum(1) == 3).all() and len({tuple(row) for row in m}) == 20


@pytest.mark.parametrize("r", [1, 2, 3])
def test_u_statistics_match_brute_force(r):
    counts = histograms()
    not_all_equal = lambda m: float(m.max() < m.sum())  # noqa: E731
    n_distinct = lambda m: float((m > 0).sum())  # noqa: E731
    expected = np.array([brute_u(c, r, not_all_equal) for c in counts])
    u = disagreement(counts, r)
    np.testing.assert_allclose(u.values, expected, atol=1e-12)
    assert u.attrs["n_excluded"] == (counts.sum(1) < r).sum() and u.dims == ("item",)
    generic = u_statistic(counts, r, kernel=lambda m: (m > 0).sum(axis=1))
    np.testing.assert_allclose(generic.values, [brute_u(c, r, n_distinct) for c in counts], atol=1e-12)


def test_gini_simpson_closed_form_and_exclusion():
    counts = np.array([[2, 1, 1], [1, 0, 0], [3, 0, 0]])
    u = disagreement(counts).values
    assert u[0] == pytest.approx(1 - 2 / 12) and np.isnan(u[1]) and u[2] == 0


def test_l2_is_unbiased_for_the_brier_score_on_fresh_label_pairs():
    rng = np.random.default_rng(1)
    mu = rng.dirichlet(np.ones(K), size=40)
    phi = rng.uniform(0, 1, size=40)
    d = 1 - (mu**2).sum(1)  # P(two labels disagree)
    target = ((phi - d) ** 2 + d * (1 - d)).mean()
    estimates = [
        float(disagreement_loss(np.array([rng.multinomial(3, p) for p in mu]), phi)) for _ in range(400)
    ]
    assert abs(np.mean(estimates) - target) < 2.5 * np.std(estimates, ddof=1) / np.sqrt(400)


def test_order_r_losses_exclude_items_with_too_few_labels():
    counts = histograms(seed=2)
    phi = np.full(len(counts), 0.3)
    keep = counts.sum(1) >= 2
    u = disagreement(counts[keep]).values
    l2 = disagreement_loss(counts, phi)
    assert float(l2) == pytest.approx(((0.3 - u) ** 2 + u * (1 - u)).mean())  # not scored 0
    assert l2.attrs == {"estimator": "unbiased", "n_items": keep.sum(), "n_excluded": (~keep).sum(), "r": 2}
    cl2 = disagreement_calibration_loss(counts, phi)
    assert float(cl2) == pytest.approx(binned_calibration(u, phi[keep])["cl_debiased"].sum())
    assert cl2.attrs["n_excluded"] == (~keep).sum()
    ce2 = disagreement_calibration_error(counts, phi)
    assert ce2.name == "CE2" and float(ce2) == pytest.approx(calibration_error(float(cl2)))
    table = disagreement_table(counts, phi)
    assert table["count"].sum() == keep.sum() and table.attrs["n_excluded"] == (~keep).sum()
    with pytest.raises(ValueError, match="need items with >= 7 labels"):
        disagreement_loss(counts, phi, r=7)


def test_bad_dpes_name_the_item():
    counts = np.array([[1, 1, 0], [2, 0, 0]])
    with pytest.raises(ValueError, match=r"dpe: item 1: value 1.5 is not a probability"):
        disagreement_loss(counts, [0.2, 1.5])
    with pytest.raises(ValueError, match=r"dpe has 3 items but the label histogram has 2"):
        disagreement_loss(counts, [0.2, 0.1, 0.3])
    with pytest.raises(ValueError, match="binary kernels"):
        disagreement_loss(counts, [0.2, 0.1], kernel=lambda m: (m > 0).sum(1))


# -- predictive distributions over CPEs -----------------------------------------------
def test_dirichlet_predictive_keeps_the_cpe_and_shrinks_the_dpe():
    rng = np.random.default_rng(3)
    q = rng.dirichlet(np.ones(K), size=10)
    a0 = rng.uniform(0.5, 20, size=10)
    pred = DirichletCPE.from_cpe(q, a0)
    np.testing.assert_allclose(pred.cpe, q)
    np.testing.assert_allclose(pred.dpe, a0 / (a0 + 1) * PointCPE(q).dpe)
    np.testing.assert_allclose(pred.kernel_expectation(2), pred.dpe)
    # Monte Carlo: DPE = E[1 - sum pi^2] under Dir(alpha)
    draws = rng.dirichlet(pred.alpha[0], size=200_000)
    assert pred.dpe[0] == pytest.approx((1 - (draws**2).sum(1)).mean(), abs=3e-3)
    # posterior after new labels: (alpha + n') / (alpha0 + n')
    new = rng.multinomial(4, [0.2, 0.3, 0.5], size=10)
    np.testing.assert_allclose(pred.posterior(new).cpe, (pred.alpha + new) / (a0 + 4)[:, None])


@pytest.mark.parametrize("r", [2, 3])
def test_kernel_expectations_of_the_three_families_match_enumeration(r):
    rng = np.random.default_rng(4)
    q = rng.dirichlet(np.ones(K), size=6)
    members = rng.dirichlet(np.ones(K), size=(6, 4))
    not_all_equal = lambda m: (m.max(1) < r).astype(float)  # noqa: E731
    for pred in (PointCPE(q), DirichletCPE.from_cpe(q, 3.0), EnsembleCPE(members)):
        np.testing.assert_allclose(pred.kernel_expectation(r), pred.kernel_expectation(r, not_all_equal))
    np.testing.assert_allclose(PointCPE(q).dpe, 1 - (q**2).sum(1))
    ens = EnsembleCPE(members)
    np.testing.assert_allclose(ens.cpe, members.mean(1))
    np.testing.assert_allclose(ens.dpe, 1 - (members**2).sum(2).mean(1))


def test_ensemble_posterior_uses_the_product_likelihood():
    members = np.array([[[0.7, 0.2, 0.1], [0.1, 0.2, 0.7], [1 / 3, 1 / 3, 1 / 3]]])
    new = np.array([[2, 0, 1]])
    like = np.prod(members[0] ** new[0], axis=1)  # prod_k q_k^(n'_k)
    post = EnsembleCPE(members).posterior(new)
    np.testing.assert_allclose(post.weights[0], like / like.sum())
    np.testing.assert_allclose(post.cpe[0], (like / like.sum()) @ members[0])
    # many labels: the product underflows in linear space, not in log space
    many = np.array([[600, 0, 300]])
    weights = EnsembleCPE(members).posterior(many).weights[0]
    assert np.isfinite(weights).all() and weights[0] == pytest.approx(1.0)
    # a member with q_k = 0 for an observed class gets weight 0
    zero = np.array([[[1.0, 0.0, 0.0], [0.5, 0.5, 0.0]]])
    np.testing.assert_allclose(EnsembleCPE(zero).posterior([[1, 1, 0]]).weights, [[0.0, 1.0]])
    with pytest.raises(ValueError, match=r"item 0: every member gives probability 0"):
        EnsembleCPE(zero).posterior([[0, 0, 1]])


def test_predictives_validate_their_inputs():
    with pytest.raises(ValueError, match=r"point CPE: item 1 sums to 0.8"):
        PointCPE([[0.5, 0.5], [0.4, 0.4]])
    with pytest.raises(ValueError, match=r"item 0 has a zero probability"):
        DirichletCPE.from_cpe([[1.0, 0.0]], 2.0)
    with pytest.raises(ValueError, match=r"alpha0: item 1: -1.0 is not finite and > 0"):
        DirichletCPE.from_cpe([[0.5, 0.5], [0.5, 0.5]], [1.0, -1.0])
    with pytest.raises(ValueError, match=r"new label counts: item 1 has a negative count"):
        DirichletCPE.from_cpe([[0.5, 0.5], [0.5, 0.5]], 1.0).posterior([[1, 0], [-1, 2]])
    with pytest.raises(ValueError, match=r"new label counts have shape \(1, 2\), expected \(2, 2\)"):
        PointCPE([[0.5, 0.5], [0.5, 0.5]]).posterior([[1, 0]])
