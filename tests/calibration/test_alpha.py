"""alpha-calibration as a PyMC model (Mimori et al. 2021): the prior is the paper's penalty, the
order-1 metrics do not move, MAP agrees with NUTS, it stacks after temperature scaling."""

import numpy as np
import pytest
from scipy.special import softmax

from plausible.calibration import TemperatureScaling
from plausible.calibration.losses import (
    calibration_error,
    calibration_loss,
    epistemic_loss,
    expected_accuracy,
    expected_squared_loss,
)
from plausible.calibration.cpe import PointCPE
from plausible.calibration.disagreement import disagreement_loss
from plausible.calibration import alpha as ac

W_TRUE = np.array([0.8, -0.5, 0.0])
B_TRUE = np.log(3.0)


def simulate(n_items=300, n_classes=3, labels=5, seed=0):
    """Features x, CPEs q, and labels from Dir(alpha0(x) q) with log alpha0 = x w + b."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n_items, W_TRUE.size))
    q = rng.dirichlet(2 * np.ones(n_classes), size=n_items)
    alpha0 = np.exp(x @ W_TRUE + B_TRUE)
    pi = np.array([rng.dirichlet(a * p) for a, p in zip(alpha0, q)])
    counts = np.array([rng.multinomial(labels, p) for p in pi])
    return counts, q, x


@pytest.fixture(scope="module")
def data():
    return simulate()


@pytest.fixture(scope="module")
def map_fit(data):
    return ac.fit_alpha_map(*data, holdout=0.0)


def objective(theta, counts, q, x, lam):
    """The paper's objective (1/N) sum NLL + lam mean (log alpha0)^2, in numpy."""
    log_a0 = x @ theta[:-1] + theta[-1]
    nll = ac.dirichlet_multinomial_nll(counts, np.exp(log_a0)[:, None] * q)
    return nll.mean() + lam * (log_a0**2).mean()


def test_the_log_posterior_is_minus_n_times_the_penalised_objective(data):
    counts, q, x = data
    lam = 0.005
    model = ac.build(counts, q, x, lam=lam)
    logp = model.compile_logp(jacobian=False)
    factor = ac.prior_factor(x, lam)
    rng = np.random.default_rng(0)
    z1, z2 = rng.normal(size=(2, 4))
    diff_model = logp({"z": z1}) - logp({"z": z2})
    diff_objective = objective(factor @ z1, counts, q, x, lam) - objective(factor @ z2, counts, q, x, lam)
    assert diff_model == pytest.approx(-len(counts) * diff_objective, rel=1e-6)


def test_map_minimises_the_objective_and_finds_the_concentration(data, map_fit):
    counts, q, x = data
    theta = np.append(map_fit.w, map_fit.b)
    rng = np.random.default_rng(1)
    best = objective(theta, counts, q, x, 0.005)
    assert all(best <= objective(theta + 0.02 * rng.normal(size=4), counts, q, x, 0.005) for _ in range(20))
    assert map_fit.b == pytest.approx(B_TRUE, abs=0.4)
    assert map_fit.w[0] > 0.3 and map_fit.w[1] < -0.2 and abs(map_fit.w[2]) < 0.3
    assert map_fit.report.method == "MAP" and map_fit.report.n_holdout == 0


def test_alpha_calibration_leaves_order1_metrics_unchanged_and_shrinks_the_dpe(data, map_fit):
    counts, q, x = data
    calibrated = map_fit.predict(q, x)
    np.testing.assert_allclose(calibrated.cpe, q, atol=1e-12)
    for metric in (expected_accuracy, expected_squared_loss, epistemic_loss, calibration_loss):
        assert float(metric(counts, calibrated.cpe)) == pytest.approx(float(metric(counts, q)), abs=1e-12)
    assert float(calibration_error(calibration_loss(counts, calibrated.cpe))) == pytest.approx(
        float(calibration_error(calibration_loss(counts, q))), abs=1e-9
    )
    assert (calibrated.dpe <= PointCPE(q).dpe).all()
    np.testing.assert_allclose(calibrated.alpha0, np.exp(x @ map_fit.w + map_fit.b))
    # labels really come from Dir(alpha0 q): the calibrated DPE predicts disagreement better
    assert float(disagreement_loss(counts, calibrated)) < float(disagreement_loss(counts, PointCPE(q)))


@pytest.mark.slow
def test_map_and_nuts_agree_within_posterior_uncertainty(data, map_fit):
    counts, q, x = data
    posterior, trace = ac.fit_alpha_posterior(counts, q, x, draws=500, tune=500, chains=2, seed=3)
    assert set(trace.posterior.data_vars) >= {"z", "w", "b"}
    draws = posterior.theta_draws
    sd = draws.std(axis=0)
    theta_map = np.append(map_fit.w, map_fit.b)
    assert (np.abs(theta_map - draws.mean(axis=0)) < 2 * sd).all(), (theta_map, draws.mean(0), sd)
    # the alpha0 scale: mean log alpha0 over the items
    scale_draws = posterior.log_alpha0_draws(x).mean(axis=1)
    assert abs(map_fit.log_alpha0(x).mean() - scale_draws.mean()) < 2 * scale_draws.std()
    # the posterior predictive's DPE is the posterior-mean shrinkage
    shrink = (1 / (1 + np.exp(-posterior.log_alpha0_draws(x)))).mean(axis=0)
    np.testing.assert_allclose(posterior.predict(q, x).dpe, shrink * PointCPE(q).dpe)


def test_stacks_after_temperature_scaling():
    rng = np.random.default_rng(4)
    n, k = 400, 3  # 3 logits as features: the same graph as the other fits (one compilation)
    logits = rng.normal(size=(n, k)) * 3
    mu = softmax(logits / 2.0, axis=1)  # the raw CPE softmax(logits) is overconfident
    pi = np.array([rng.dirichlet(4.0 * p) for p in mu])
    counts = np.array([rng.multinomial(5, p) for p in pi])
    ts = TemperatureScaling().fit(logits, counts)
    q_ts = ts.predict(logits)
    fit = ac.fit_alpha_map(counts, q_ts, logits)
    assert (fit.report.n_fit, fit.report.n_holdout) == (320, 80)
    assert 0 <= fit.report.best_iter <= fit.report.n_iter
    stacked = fit.predict(q_ts, logits)
    np.testing.assert_allclose(stacked.cpe, q_ts, atol=1e-12)
    assert (stacked.dpe <= PointCPE(q_ts).dpe).all()
    assert float(disagreement_loss(counts, stacked)) < float(disagreement_loss(counts, PointCPE(q_ts)))


def test_global_alpha0_without_features():
    counts, q, _ = simulate(n_items=200, seed=5)
    fit = ac.fit_alpha_map(counts, q, None, holdout=0.0)
    assert fit.w.shape == (0,)
    assert fit.alpha0(n_items=3).shape == (3,)
    assert fit.predict(q).alpha0 == pytest.approx(np.exp(fit.b))


def test_alpha_calibration_errors(data):
    counts, q, x = data
    q0 = q.copy()
    q0[4] = [1.0, 0.0, 0.0]
    with pytest.raises(ValueError, match="cpe: item 4 has a zero probability"):
        ac.build(counts, q0, x)
    with pytest.raises(ValueError, match=r"features must be \(item, feature\) with 300 items"):
        ac.build(counts, q, x[:10])
    with pytest.raises(ValueError, match="lam must be finite and > 0"):
        ac.build(counts, q, x, lam=0.0)
    bad = counts.copy()
    bad[9] = 0
    with pytest.raises(ValueError, match="item 9 has no labels"):
        ac.fit_alpha_map(bad, q, x)
    with pytest.raises(ValueError, match="cpe: item 2 sums to"):
        ac.fit_alpha_map(counts, q * np.r_[1, 1, 0.5, np.ones(297)][:, None], x)
    with pytest.raises(ValueError, match="fitted by MAP"):
        ac.fit_alpha_map(counts, q, x).log_alpha0_draws(x)
