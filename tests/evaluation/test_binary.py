"""Binary testing with noisy labels (Su 2024): every analytic posterior against brute-force
sampling of label vectors from the per-item posteriors (means and 95 % intervals)."""

import numpy as np
import pytest
from scipy import integrate

from plausible.data.su_simulation import simulate_su
from plausible.evaluation import binary as T
from plausible.evaluation.credible_regions import hdr_mask, mmse
from plausible.evaluation.ratio_normal import RatioNormal
from plausible.maths.fallibility import label_likelihood

M = 20000


@pytest.fixture(scope="module")
def main():
    s = simulate_su(1000, 5, prior=[0.8, 0.2], operating_point=(0.8, 0.3), difficulty=(1, 5),
                    fallibility=(0, 0.4), seed=1)
    L = label_likelihood(s.labels, s.difficulty, s.fallibility)
    result = T.algorithm_ratios(L, s.prior, s.prediction)
    samples = T.sampled_metrics(result.p1, s.prediction, M, seed=5)
    return s, L, result, T.uv_moments(result.p1, s.prediction), samples


def _quantiles_from_pdf(pdf, q, lo=0.0, hi=1.0, n=20001):
    x = np.linspace(lo, hi, n)
    cdf = integrate.cumulative_trapezoid(pdf(x), x, initial=0)
    return np.interp(np.asarray(q) * cdf[-1], cdf, x)


def test_uv_moments_match_sampling(main):
    s, _, r, m, _ = main
    y = T.sample_labels(r.p1, M, seed=2)
    u = (y & (s.prediction == 1)).sum(1) / 1000
    v = (y & (s.prediction == 0)).sum(1) / 1000
    assert abs(u.mean() - m.mu_u) < 4 * np.sqrt(m.var_u / M)
    assert abs(v.mean() - m.mu_v) < 4 * np.sqrt(m.var_v / M)
    np.testing.assert_allclose([u.var(), v.var()], [m.var_u, m.var_v], rtol=0.05)
    assert abs(np.corrcoef(u, v)[0, 1]) < 0.03


@pytest.mark.parametrize("metric", ["accuracy", "precision"])
def test_normal_posteriors_match_sampling(main, metric):
    _, _, _, m, samples = main
    dist = T.accuracy_posterior(m) if metric == "accuracy" else T.precision_posterior(m)
    x = samples[metric]
    sd = dist.std()
    assert abs(x.mean() - dist.mean()) < 0.05 * sd
    np.testing.assert_allclose(np.quantile(x, [0.025, 0.975]), dist.ppf([0.025, 0.975]),
                               atol=0.1 * sd)


@pytest.mark.parametrize("metric", ["recall", "p_fa", "f_beta"])
def test_ratio_posteriors_match_sampling(main, metric):
    _, _, _, m, samples = main
    dist = T.ratio_posterior(m, metric)
    x = samples[metric]
    mean, var, _ = dist.moments()
    assert abs(x.mean() - mean) < 0.05 * np.sqrt(var)
    np.testing.assert_allclose(x.std(), np.sqrt(var), rtol=0.05)
    np.testing.assert_allclose(np.quantile(x, [0.025, 0.975]),
                               _quantiles_from_pdf(dist.pdf, [0.025, 0.975]), atol=0.1 * np.sqrt(var))


def test_marsaglia_density_integrates_and_matches_histogram():
    rng = np.random.default_rng(0)
    # A wide case (b < 4: the approximation condition fails) and a narrow one.
    for mz, vz, mw, vw, c in [(0.3, 0.04, 0.5, 0.05, 0.03), (0.16, 1e-4, 0.2, 2e-4, 1e-4)]:
        d = RatioNormal(mz, vz, mw, vw, c)
        total = sum(integrate.quad(d.pdf, a, b, limit=400)[0]
                    for a, b in [(-np.inf, -50), (-50, 50), (50, np.inf)])
        assert abs(total - 1) < 1e-3
        zw = rng.multivariate_normal([mz, mw], [[vz, c], [c, vw]], 400000)
        ratio = zw[:, 0] / zw[:, 1]
        lo, hi = np.quantile(ratio, [0.05, 0.95])
        hist, edges = np.histogram(ratio, bins=40, range=(lo, hi))
        centers = 0.5 * (edges[1:] + edges[:-1])
        np.testing.assert_allclose(hist / (ratio.size * np.diff(edges)), d.pdf(centers), rtol=0.1)
    narrow = RatioNormal(0.16, 1e-4, 0.2, 2e-4, 1e-4)
    assert narrow.b > 4
    mean, var = narrow.approximate_moments()
    assert abs(mean - 0.8016) < 0.003  # paper's approximate mean: close but biased


def test_joint_densities_match_sampling(main):
    _, _, _, m, samples = main
    grid_a = np.linspace(0.2, 0.99, 300)
    for density, (kx, ky), (gx, gy) in [
        (T.precision_recall_density, ("precision", "recall"), (np.linspace(0.3, 0.55, 250), grid_a)),
        (T.operating_point_density, ("recall", "p_fa"), (grid_a, np.linspace(0.25, 0.34, 250))),
    ]:
        p = density(m, gx, gy)
        mass = p.sum() * (gx[1] - gx[0]) * (gy[1] - gy[0])
        assert abs(mass - 1) < 0.01
        mean = mmse(p, gx, gy)
        sx, sy = samples[kx], samples[ky]
        assert abs(mean[0] - sx.mean()) < 0.1 * sx.std()
        assert abs(mean[1] - sy.mean()) < 0.1 * sy.std()
        # The 95 % HDR holds about 95 % of the sampled pairs.
        inside = hdr_mask(p, gx, gy, mass=0.95)
        ix = np.clip(np.searchsorted(gx, sx), 0, gx.size - 1)
        iy = np.clip(np.searchsorted(gy, sy), 0, gy.size - 1)
        assert abs(inside[ix, iy].mean() - 0.95) < 0.015


def test_algorithm1_recovers_true_operating_point(main):
    s, L, r, m, _ = main
    assert r.converged and r.iterations <= 30
    truth = T.empirical_metrics(s.truth, s.prediction)
    summary = T.posterior_summary(m)
    for k, (mean, sd) in summary.items():
        assert abs(truth[k] - mean) < 2.5 * sd, k
    grid_d, grid_f = np.linspace(0.6, 0.99, 300), np.linspace(0.2, 0.4, 300)
    inside = hdr_mask(T.operating_point_density(m, grid_d, grid_f), grid_d, grid_f, mass=0.95)
    assert inside[np.searchsorted(grid_d, truth["recall"]), np.searchsorted(grid_f, truth["p_fa"])]


def test_algorithms_agree_and_baselines(main):
    s, L, r1, _, _ = main
    r2 = T.algorithm_sampling(L, s.prior, s.prediction, n_samples=2000, seed=0)
    np.testing.assert_allclose(r2.operating_point, r1.operating_point, atol=0.01)
    r3 = T.algorithm_labels(L, s.prior, s.prediction)
    assert r3.converged
    r0 = T.algorithm_ratios(L, s.prior, s.prediction, j_max=0)  # labels-only posterior
    assert r0.iterations == 0 and r0.operating_point == (0.5, 0.5)
    np.testing.assert_allclose(r0.p1, T.label_posterior(L, s.prior)[:, 1])
    approx = T.algorithm_ratios(L, s.prior, s.prediction, approximate=True)
    np.testing.assert_allclose(approx.operating_point, r1.operating_point, atol=0.01)
    fb = T.full_bayes(L, s.prior, s.prediction, grid=3, alpha=0.1)
    slow = []  # independent route: one label posterior per grid point
    for d in (0.1, 0.5, 0.9):
        for f in (0.1, 0.5, 0.9):
            p1 = T.label_posterior(L, s.prior, s.prediction, T.operating_point_confusion(d, f))[:, 1]
            mm = T.uv_moments(p1, s.prediction)
            slow.append(T.metrics_from_uv(mm.mu_u, mm.mu_v, mm.n1))
    for k in T.METRICS:
        assert fb[k] == pytest.approx(np.mean([x[k] for x in slow]), rel=1e-10)
    # Same seed, same result.
    assert T.algorithm_sampling(L, s.prior, s.prediction, n_samples=500, seed=3).metrics == \
        T.algorithm_sampling(L, s.prior, s.prediction, n_samples=500, seed=3).metrics


def test_label_posterior_and_bad_input():
    L = np.array([[0.2, 0.6], [0.9, 0.1]])
    post = T.label_posterior(L, [0.5, 0.5], [1, 0], T.operating_point_confusion(0.8, 0.3))
    expected = np.array([[0.2 * 0.3, 0.6 * 0.8], [0.9 * 0.7, 0.1 * 0.2]])
    np.testing.assert_allclose(post, expected / expected.sum(1, keepdims=True))
    with pytest.raises(ValueError, match="prediction of item 1 is 2"):
        T.label_posterior(L, [0.5, 0.5], [1, 2], np.eye(2))
    with pytest.raises(ValueError, match="prior must be non-negative"):
        T.label_posterior(L, [0.5, 0.7])
    with pytest.raises(ValueError, match="p_D must lie"):
        T.operating_point_confusion(1.1, 0.2)
    with pytest.raises(ValueError, match="likelihood must be"):
        T.label_posterior(np.ones(3), [0.5, 0.5])
    with pytest.raises(ValueError, match=r"p1\[0\] = 1.5"):
        T.uv_moments([1.5, 0.2], [0, 1])
    with pytest.warns(UserWarning, match="only 1 items with yhat = 1"):
        T.uv_moments(np.full(40, 0.3), np.r_[np.zeros(39, int), 1])


def test_posteriors_from_a_trace():
    import xarray as xr

    rng = np.random.default_rng(0)
    draws = rng.dirichlet([2, 1], size=(2, 50, 4))  # (chain, draw, item, class)
    trace = xr.DataTree.from_dict({"posterior": xr.Dataset(
        {"plausibility": (("chain", "draw", "item", "class"), draws)})})
    P = T.plausibility_posterior(trace)
    np.testing.assert_allclose(P, draws.mean(axis=(0, 1)))
    prior = np.array([0.7, 0.3])
    L = T.likelihood_from_posterior(P, prior)
    np.testing.assert_allclose(T.label_posterior(L, prior), P)


def test_the_old_name_plausible_testing_warns_and_is_plausible_evaluation():
    import importlib
    import sys

    for name in [m for m in sys.modules if m == "plausible.testing" or m.startswith("plausible.testing.")]:
        del sys.modules[name]
    with pytest.warns(DeprecationWarning, match="plausible.evaluation"):
        old = importlib.import_module("plausible.testing")
    import plausible.evaluation as evaluation
    from plausible.testing.binary import algorithm_ratios

    assert old.algorithm_ratios is evaluation.algorithm_ratios
    assert algorithm_ratios is evaluation.binary.algorithm_ratios
