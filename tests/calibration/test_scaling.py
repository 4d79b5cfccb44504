"""Temperature, vector and matrix scaling fitted on label histograms (Mimori et al. 2021)."""

import numpy as np
import pytest
from scipy.optimize import approx_fprime
from scipy.special import softmax

from plausible.calibration import MatrixScaling, TemperatureScaling, VectorScaling
from plausible.calibration.early_stopping import EarlyStopping, holdout_split
from plausible.calibration.scaling import histogram_nll


def simulated(n_items=600, n_classes=4, temperature=2.5, labels=3, seed=0):
    """Logits whose true CPE is softmax(z / temperature); histograms of `labels` labels."""
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(n_items, n_classes)) * 3
    counts = np.array([rng.multinomial(labels, p) for p in softmax(z / temperature, axis=1)])
    return z, counts


@pytest.mark.parametrize(
    "calibrator",
    [TemperatureScaling(), VectorScaling(bias_l2=0.3), MatrixScaling(off_diagonal_l2=0.5, bias_l2=0.2)],
)
def test_analytic_gradients_match_finite_differences(calibrator):
    z, counts = simulated(n_items=50)
    rng = np.random.default_rng(1)
    theta = calibrator._initial(4) + 0.3 * rng.normal(size=calibrator._initial(4).size)
    counts = counts.astype(float)

    def loss(t):
        return calibrator._objective(t, z, counts, counts.sum())[0]

    grad = calibrator._objective(theta, z, counts, counts.sum())[1]
    np.testing.assert_allclose(grad, approx_fprime(theta, loss, 1e-7), atol=2e-5)


def test_temperature_scaling_recovers_the_temperature_and_keeps_the_argmax():
    z, counts = simulated(n_items=3000)
    ts = TemperatureScaling().fit(z, counts, holdout=0)
    assert ts.temperature_ == pytest.approx(2.5, rel=0.1)
    np.testing.assert_array_equal(ts.predict(z).argmax(1), z.argmax(1))
    assert np.allclose(ts.predict(z).sum(1), 1)
    assert ts.report_.holdout_nll != ts.report_.holdout_nll  # NaN: nothing held out
    # the fitted NLL is no worse than the identity's
    assert ts.report_.fit_nll <= histogram_nll(z, counts) + 1e-12


def test_vector_and_matrix_scaling_improve_the_held_out_nll():
    z, counts = simulated(n_items=2000, seed=2)
    for calibrator in (VectorScaling(), MatrixScaling(off_diagonal_l2=0.1)):
        calibrator.fit(z, counts)
        report = calibrator.report_
        assert (report.n_fit, report.n_holdout) == (1600, 400)
        _, stop = holdout_split(2000, 0.2, 0)
        assert report.holdout_nll == pytest.approx(histogram_nll(calibrator.transform(z[stop]), counts[stop]))
        assert report.holdout_nll < histogram_nll(z[stop], counts[stop])
        assert 0 <= report.best_iter <= report.n_iter


def test_odir_shrinks_the_off_diagonal():
    z, counts = simulated(n_items=400, seed=3)
    free = MatrixScaling().fit(z, counts, holdout=0)
    odir = MatrixScaling(off_diagonal_l2=1000.0, bias_l2=1000.0).fit(z, counts, holdout=0)
    off = ~np.eye(4, dtype=bool)
    assert np.abs(odir.W_[off]).max() < 0.1 * np.abs(free.W_[off]).max()
    assert np.abs(odir.b_).max() < np.abs(free.b_).max()


def test_identity_start_and_vector_parameters():
    z, counts = simulated(n_items=100)
    vs = VectorScaling()
    np.testing.assert_array_equal(vs._apply(vs._initial(4), z), z)
    ms = MatrixScaling()
    np.testing.assert_allclose(ms._apply(ms._initial(4), z), z)
    vs.fit(z, counts)
    np.testing.assert_allclose(vs.transform(z), z * vs.w_ + vs.b_)


def test_early_stopping_keeps_the_best_iterate_and_stops():
    losses = iter([5.0, 4.0, 3.0, 3.5, 3.6, 3.7])
    tracker = EarlyStopping(lambda x: next(losses), patience=2)
    tracker.start(np.array([0.0]))
    tracker(np.array([1.0]))
    tracker(np.array([2.0]))
    tracker(np.array([3.0]))
    with pytest.raises(StopIteration):
        tracker(np.array([4.0]))
    assert tracker.best_iter == 2 and tracker.best_x.tolist() == [2.0] and tracker.best_loss == 3.0


def test_holdout_split_is_reproducible_and_disjoint():
    fit, stop = holdout_split(10, 0.2, seed=5)
    assert len(stop) == 2 and len(fit) == 8 and not set(fit) & set(stop)
    np.testing.assert_array_equal(holdout_split(10, 0.2, seed=5)[1], stop)
    assert holdout_split(10, 0.0)[1].size == 0
    with pytest.raises(ValueError, match="holdout must be in"):
        holdout_split(10, 1.0)


def test_calibrator_errors():
    z, counts = simulated(n_items=20)
    with pytest.raises(ValueError, match="not fitted"):
        TemperatureScaling().predict(z)
    with pytest.raises(ValueError, match="logits have 19 items, the label histogram 20"):
        TemperatureScaling().fit(z[:19], counts)
    bad = z.copy()
    bad[7, 1] = np.inf
    with pytest.raises(ValueError, match=r"logits: item 7 has a non-finite value"):
        TemperatureScaling().fit(bad, counts)
    counts[3] = 0
    with pytest.raises(ValueError, match="item 3 has no labels"):
        VectorScaling().fit(z, counts)
    with pytest.raises(ValueError, match="logits have 3 classes, the calibrator 4"):
        TemperatureScaling().fit(z, simulated(n_items=20)[1]).predict(z[:, :3])
