"""MMSE, MAP and HDR on grids (plausible.evaluation.credible_regions) and the per-labeler baselines."""

import numpy as np
import pytest
from scipy import stats

from plausible.data.su_simulation import simulate_su
from plausible.evaluation.credible_regions import (
    hdr_interval, hdr_mask, hdr_samples, histogram_density, map_estimate, mmse,
)
from plausible.evaluation.labeler_baselines import labeler_summary, vardi_zhang_median
from plausible.evaluation.binary import empirical_metrics


def test_normal_1d_and_2d():
    x = np.linspace(-6, 8, 4001)
    p = stats.norm(1, 1.5).pdf(x)
    assert mmse(p, x)[0] == pytest.approx(1, abs=1e-6)
    assert map_estimate(p, x)[0] == pytest.approx(1, abs=0.005)
    lo, hi = hdr_interval(p, x)
    np.testing.assert_allclose([lo, hi], stats.norm(1, 1.5).ppf([0.025, 0.975]), atol=0.005)
    # 2-D independent normals: the 95 % HDR is a disc of radius sqrt(chi2_2(0.95)).
    g = np.linspace(-4, 4, 401)
    P = np.outer(stats.norm.pdf(g), stats.norm.pdf(g))
    inside = hdr_mask(P, g, g)
    assert P[inside].sum() / P.sum() == pytest.approx(0.95, abs=0.002)
    r2 = g[:, None] ** 2 + g[None, :] ** 2
    assert np.abs(np.sqrt(r2[inside].max()) - np.sqrt(stats.chi2(2).ppf(0.95))) < 0.03
    s = np.random.default_rng(0).normal(size=200000)
    np.testing.assert_allclose(hdr_samples(s), [-1.96, 1.96], atol=0.03)
    with pytest.raises(ValueError, match="does not match the grid"):
        mmse(P, g)
    with pytest.raises(ValueError, match="mass must lie"):
        hdr_mask(p, x, mass=1.2)


def test_histogram_density_2d():
    rng = np.random.default_rng(2)
    xy = rng.multivariate_normal([0.8, 0.3], [[1e-4, 3e-5], [3e-5, 4e-5]], 100000)
    density, gx, gy = histogram_density(xy[:, 0], xy[:, 1], bins=60)
    np.testing.assert_allclose(mmse(density, gx, gy), [0.8, 0.3], atol=2e-4)
    inside = hdr_mask(density, gx, gy)
    assert density[inside].sum() / density.sum() == pytest.approx(0.95, abs=0.01)


def test_vardi_zhang_median():
    pts = np.array([[0.0, 0], [1, 0], [0, 1], [1, 1], [10, 10]])
    m = vardi_zhang_median(pts)
    objective = lambda c: np.linalg.norm(pts - c, axis=1).sum()  # noqa: E731
    rng = np.random.default_rng(1)
    assert all(objective(m) <= objective(m + 1e-3 * d) for d in rng.normal(size=(50, 2)))
    # A data point that is the median (the case Weiszfeld mishandles).
    star = np.array([[0.0, 0], [1, 0], [-1, 0], [0, 1], [0, -1]])
    np.testing.assert_allclose(vardi_zhang_median(star), [0, 0], atol=1e-8)


def test_per_labeler_baselines():
    s = simulate_su(2000, 5, prior=[0.8, 0.2], operating_point=(0.8, 0.3), seed=4,
                    fallibility=(0, 0.01), difficulty=(1, 200))
    summary = labeler_summary(s.labels, s.prediction)
    truth = empirical_metrics(s.truth, s.prediction)
    # Nearly perfect labelers: each labeler's metrics are near the truth.
    assert abs(summary["median"]["recall"] - truth["recall"]) < 0.05
    assert summary["each"]["accuracy"].shape == (5,)
    assert summary["joint_median"]["operating_point"].shape == (2,)
