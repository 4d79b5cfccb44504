"""Vectorised R-hat / bulk, tail and mean ESS / MCSE against ArviZ's element-by-element estimators."""

import zlib

import arviz as az
import numpy as np
import pytest
import xarray as xr

from plausible.diagnostics import estimators
from plausible.diagnostics.convergence import convergence_report, rhat_text
from plausible.diagnostics.estimators import (
    convergence_diagnostics,
    ess_bulk,
    ess_mean,
    ess_tail,
    mcse_mean,
    rhat,
)

RTOL = 1e-12  # the agreement the estimators' docstring promises


def ar1(rng, n_chain, n_draw, n_elements, phi):
    noise = rng.normal(size=(n_chain, n_draw, n_elements))
    x = np.empty_like(noise)
    x[:, 0] = noise[:, 0] / np.sqrt(1 - phi**2)
    for t in range(1, n_draw):
        x[:, t] = phi * x[:, t - 1] + noise[:, t]
    return x


def make_case(name):
    rng = np.random.default_rng(zlib.crc32(name.encode()))  # str hash() changes per process
    if name == "iid normal":
        return rng.normal(size=(4, 500, 6))
    if name == "ar1 strong, odd draws":  # long initial positive sequence: FFT path
        return ar1(rng, 4, 501, 5, 0.95)
    if name == "ar1 moderate":
        return ar1(rng, 4, 400, 5, 0.6)
    if name == "ar1 antithetic":  # tau below the 1 / log10(n) floor
        return ar1(rng, 4, 300, 5, -0.7)
    if name == "random walk":
        return np.cumsum(rng.normal(size=(3, 300, 4)), axis=1)
    if name == "shifted chain means":
        return rng.normal(size=(4, 400, 5)) + np.array([0.0, 0.2, 0.5, 2.0])[:, None, None]
    if name == "heavy tails":
        return rng.standard_cauchy(size=(3, 300, 5))
    if name == "0/1 indicators":
        return (rng.random(size=(4, 200, 5)) < np.linspace(0.02, 0.5, 5)).astype(float)
    if name == "discrete counts":
        return rng.poisson(2.0, size=(4, 150, 5)).astype(float)
    if name == "integer dtype":
        return rng.integers(0, 4, size=(2, 120, 4))
    if name == "float32":
        return ar1(rng, 4, 300, 5, 0.5).astype(np.float32)
    if name == "constant and nan elements":
        x = rng.normal(size=(4, 200, 6))
        x[:, :, 1] = 0.25  # never moves
        x[2, 17, 2] = np.nan  # one NaN draw
        x[:, :, 3] = np.nan  # NaN everywhere
        x[:, :, 4] = np.where(np.arange(200) < 100, 1.0, 2.0)  # constant within split chains
        return x
    if name == "one chain":
        return ar1(rng, 1, 400, 5, 0.3)
    if name == "two chains":
        return rng.normal(size=(2, 100, 5))
    if name == "four draws":
        return rng.normal(size=(3, 4, 5))
    if name == "five draws":
        return rng.normal(size=(3, 5, 5))
    if name == "eight draws":
        return ar1(rng, 2, 8, 5, 0.9)
    if name == "three draws":  # too short: NaN everywhere
        return rng.normal(size=(4, 3, 5))
    raise KeyError(name)


CASES = [
    "iid normal",
    "ar1 strong, odd draws",
    "ar1 moderate",
    "ar1 antithetic",
    "random walk",
    "shifted chain means",
    "heavy tails",
    "0/1 indicators",
    "discrete counts",
    "integer dtype",
    "float32",
    "constant and nan elements",
    "one chain",
    "two chains",
    "four draws",
    "five draws",
    "eight draws",
    "three draws",
]


def datatree(**variables):
    data_vars = {}
    for name, values in variables.items():
        dims = ("chain", "draw") + tuple(f"{name}_dim_{i}" for i in range(values.ndim - 2))
        data_vars[name] = (dims, values)
    return xr.DataTree.from_dict({"posterior": xr.Dataset(data_vars)})


def arviz_reference(values, prob=None):
    tree = datatree(x=values)
    kwargs = {} if prob is None else {"prob": prob}
    return (
        np.asarray(az.rhat(tree)["x"]),
        np.asarray(az.ess(tree, method="bulk")["x"]),
        np.asarray(az.ess(tree, method="tail", **kwargs)["x"]),
    )


def arviz_mcse_mean(values):
    return np.asarray(az.mcse(datatree(x=values), method="mean")["x"])


def arviz_ess_mean(values):
    return np.asarray(az.ess(datatree(x=values), method="mean")["x"])


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("case", CASES)
def test_matches_arviz_element_by_element(case):
    values = make_case(case)
    ref_rhat, ref_bulk, ref_tail = arviz_reference(values)
    # the three public functions and the combined pass
    np.testing.assert_allclose(rhat(values), ref_rhat, rtol=RTOL, atol=0)
    np.testing.assert_allclose(ess_bulk(values), ref_bulk, rtol=RTOL, atol=0)
    np.testing.assert_allclose(ess_tail(values), ref_tail, rtol=RTOL, atol=0)
    both = convergence_diagnostics(values)
    np.testing.assert_allclose(both.rhat, ref_rhat, rtol=RTOL, atol=0)
    np.testing.assert_allclose(both.ess_bulk, ref_bulk, rtol=RTOL, atol=0)
    np.testing.assert_allclose(both.ess_tail, ref_tail, rtol=RTOL, atol=0)
    np.testing.assert_allclose(mcse_mean(values), arviz_mcse_mean(values), rtol=RTOL, atol=0)
    np.testing.assert_allclose(ess_mean(values), arviz_ess_mean(values), rtol=RTOL, atol=0)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_nan_and_constant_rules():
    values = make_case("constant and nan elements")
    diag = convergence_diagnostics(values)
    assert np.isnan(diag.rhat[1]) and diag.ess_bulk[1] == diag.ess_tail[1] == 4 * 200
    for element in (2, 3):  # any NaN draw makes every diagnostic NaN
        assert np.isnan([diag.rhat[element], diag.ess_bulk[element], diag.ess_tail[element]]).all()
    assert np.isfinite(diag.rhat[[0, 5]]).all()
    assert np.isnan(rhat(make_case("one chain"))).all()
    assert np.isfinite(ess_bulk(make_case("one chain"))).all()
    short = convergence_diagnostics(make_case("three draws"))
    assert all(np.isnan(values).all() for values in short)


def test_multidimensional_elements_match_arviz():
    rng = np.random.default_rng(3)
    values = ar1(rng, 4, 250, 12, 0.4).reshape(4, 250, 3, 4)
    ref_rhat, ref_bulk, ref_tail = arviz_reference(values)
    diag = convergence_diagnostics(values)
    assert diag.rhat.shape == diag.ess_bulk.shape == diag.ess_tail.shape == (3, 4)
    np.testing.assert_allclose(diag.rhat, ref_rhat, rtol=RTOL)
    np.testing.assert_allclose(diag.ess_bulk, ref_bulk, rtol=RTOL)
    np.testing.assert_allclose(diag.ess_tail, ref_tail, rtol=RTOL)


def test_scalar_variable():
    values = np.random.default_rng(4).normal(size=(4, 300))
    ref_rhat, ref_bulk, ref_tail = arviz_reference(values)
    diag = convergence_diagnostics(values)
    assert diag.rhat.shape == ()
    np.testing.assert_allclose(diag.rhat, ref_rhat, rtol=RTOL)
    np.testing.assert_allclose(diag.ess_bulk, ref_bulk, rtol=RTOL)
    np.testing.assert_allclose(diag.ess_tail, ref_tail, rtol=RTOL)


@pytest.mark.parametrize("prob", [0.95, 0.8, 0.1])
def test_tail_probability_matches_arviz(prob):
    values = ar1(np.random.default_rng(5), 4, 300, 4, 0.5)
    _, _, ref_tail = arviz_reference(values, prob=prob)
    np.testing.assert_allclose(ess_tail(values, prob=prob), ref_tail, rtol=RTOL)


def test_default_tail_probability_follows_arviz_rcparams():
    values = ar1(np.random.default_rng(6), 4, 300, 4, 0.5)
    assert az.rcParams["stats.ci_prob"] == 0.89
    np.testing.assert_array_equal(ess_tail(values), ess_tail(values, prob=0.89))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("case", ["ar1 strong, odd draws", "constant and nan elements", "float32"])
def test_chunking_and_threads_give_identical_results(case):
    values = make_case(case)
    reference = convergence_diagnostics(values, chunk_size=values[0, 0].size, workers=1)
    for chunk_size, workers in [(1, 1), (2, 1), (4, 1), (1, 3), (2, 2), (None, None)]:
        diag = convergence_diagnostics(values, chunk_size=chunk_size, workers=workers)
        for got, expected in zip(diag, reference, strict=True):
            np.testing.assert_array_equal(got, expected)


def test_non_contiguous_input_gives_identical_results():
    values = ar1(np.random.default_rng(7), 3, 201, 12, 0.7).reshape(3, 201, 3, 4)
    reference = convergence_diagnostics(values, chunk_size=5)
    for layout in (np.asfortranarray(values), np.swapaxes(np.swapaxes(values, 2, 3).copy(), 2, 3)):
        diag = convergence_diagnostics(layout, chunk_size=5)
        for got, expected in zip(diag, reference, strict=True):
            np.testing.assert_array_equal(got, expected)


def test_direct_lags_agree_with_fft_autocovariance(monkeypatch):
    rng = np.random.default_rng(8)
    values = np.concatenate(
        [rng.normal(size=(4, 400, 20)), ar1(rng, 4, 400, 20, 0.8), ar1(rng, 4, 400, 20, -0.5)],
        axis=2,
    )
    staged = convergence_diagnostics(values)
    monkeypatch.setattr(estimators, "_LAG_STAGES", ())  # FFT for every element
    fft_only = convergence_diagnostics(values)
    for got, expected in zip(staged, fft_only, strict=True):
        np.testing.assert_allclose(got, expected, rtol=1e-12)


def test_input_validation():
    with pytest.raises(ValueError, match="chain, draw"):
        rhat(np.zeros(10))
    with pytest.raises(ValueError, match="chunk_size"):
        ess_bulk(np.zeros((2, 10, 3)), chunk_size=0)
    with pytest.raises(ValueError, match="workers"):
        ess_tail(np.zeros((2, 10, 3)), workers=0)
    empty = convergence_diagnostics(np.zeros((2, 10, 0)))
    assert empty.rhat.shape == (0,)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_report_matches_arviz_worst_cases():
    rng = np.random.default_rng(9)
    plausibility = rng.dirichlet(np.ones(3), size=(4, 300, 7))
    plausibility[..., 0, :] = [1.0, 0.0, 0.0]  # an item that never moves
    walk = np.cumsum(rng.normal(size=(4, 300)), axis=1) * 0.05
    tree = datatree(plausibility=plausibility, walk=walk)
    report = convergence_report(tree)
    ref_rhat = az.rhat(tree)
    ref_bulk = az.ess(tree, method="bulk")
    ref_tail = az.ess(tree, method="tail")
    for name in ("plausibility", "walk"):
        row = report.table.loc[name]
        np.testing.assert_allclose(row.max_rhat, np.nanmax(ref_rhat[name]), rtol=RTOL)
        np.testing.assert_allclose(row.min_ess_bulk, np.nanmin(ref_bulk[name]), rtol=RTOL)
        np.testing.assert_allclose(row.min_ess_tail, np.nanmin(ref_tail[name]), rtol=RTOL)
    assert report.table.loc["plausibility", "status"] == "converged"
    assert report.table.loc["walk", "status"] == "not converged" and not report.ok
    assert "walk: max R-hat" in report.text
    assert list(convergence_report(tree, var_names="walk").table.index) == ["walk"]


def test_rhat_prints_on_the_side_of_the_threshold_it_is_on():
    assert rhat_text(1.0104, 1.01) == "1.0104"  # not "1.010" beside "R-hat <= 1.01"
    assert rhat_text(1.01, 1.01) == "1.010"
    assert rhat_text(1.0100001, 1.01) == "1.0100001"
    assert rhat_text(1.25, 1.01) == "1.250"


def test_a_failing_variable_names_its_worst_element_and_its_ess_per_second():
    rng = np.random.default_rng(3)
    values = rng.normal(size=(4, 200, 3))
    values[:, :, 2] += np.arange(4)[:, None]  # chains disagree on the third element only
    posterior = xr.Dataset({"theta": (("chain", "draw", "item"), values)},
                           coords={"item": ["a", "b", "c"]}, attrs={"sampling_seconds": 2.0})
    report = convergence_report(xr.DataTree.from_dict({"posterior": posterior}))
    assert report.table.loc["theta", "worst"] == "item='c'"
    bulk = report.table.loc["theta", "min_ess_bulk"]
    assert f"at item='c', min bulk ESS {bulk:.0f} ({bulk / 2.0:.3g} per second)" in report.text
