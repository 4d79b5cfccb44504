"""Order-1 calibration metrics (Mimori et al. 2021): formulas against brute force, the debiasing
simulation, tables, the CE sign rule, exclusions and culprit-naming errors."""

import numpy as np
import pandas as pd
import pytest

from plausible.data import Votes
from plausible.calibration.losses import (
    calibration_error,
    calibration_loss,
    calibration_table,
    dispersion_loss,
    epistemic_loss,
    expected_accuracy,
    expected_squared_loss,
    irreducible_loss,
)
from plausible.calibration.bins import bin_edges, bin_index, binned_calibration
from plausible.calibration.inputs import check_cpe, label_histogram
from plausible.calibration.studies import debiasing_study, summarize_study
from plausible.calibration.summary import calibration_summary


def random_case(n_items=40, n_classes=3, max_labels=6, seed=0):
    rng = np.random.default_rng(seed)
    mu = rng.dirichlet(np.ones(n_classes), size=n_items)
    n = rng.integers(1, max_labels + 1, size=n_items)
    counts = np.array([rng.multinomial(k, p) for k, p in zip(n, mu)])
    q = rng.dirichlet(np.ones(n_classes) * 2, size=n_items)
    return counts, q, mu


# -- bins ----------------------------------------------------------------------------
def test_bins_are_equal_width_with_the_last_closed():
    np.testing.assert_allclose(bin_edges(15), np.arange(16) / 15)
    values = [0.0, 1 / 15 - 1e-12, 1 / 15, 0.5, 14 / 15, 1.0, -1e-9, 1 + 1e-9]
    np.testing.assert_array_equal(bin_index(values), [0, 0, 1, 7, 14, 14, 0, 14])


def test_binned_calibration_by_hand():
    # bin 0: targets (0, 1) for predictions (0.1, 0.2); bin 2: target 1, prediction 0.9
    table = binned_calibration([0.0, 1.0, 1.0], [0.1, 0.2, 0.9], n_bins=3)
    n = 3
    row0, row2 = table.iloc[0], table.iloc[2]
    assert row0["count"] == 2 and table.iloc[1]["count"] == 0 and row2["count"] == 1
    assert row0["cl_plugin"] == pytest.approx(2 / n * (0.5 - 0.15) ** 2)
    assert row0["cl_bias"] == pytest.approx(0.5 / n)  # sample variance of (0, 1), ddof 1
    assert row2["cl_plugin"] == pytest.approx(1 / n * 0.1**2)
    assert row2["cl_bias"] == 0  # one item: nothing to subtract
    residual = binned_calibration([0.0, 1.0, 1.0], [0.1, 0.2, 0.9], n_bins=3, within="residuals")
    assert residual.iloc[0]["cl_bias"] == pytest.approx(np.var([-0.1, 0.8], ddof=1) / n)


# -- formulas against brute force -----------------------------------------------------
def test_metrics_match_a_direct_loop():
    counts, q, _ = random_case()
    n = counts.sum(1)
    L = EL_plug = EL_unb = IL = 0.0
    used = 0
    for i in range(len(n)):
        m = counts[i] / n[i]
        L += ((q[i] - m) ** 2 + m * (1 - m)).sum() / len(n)
        EL_plug += ((q[i] - m) ** 2).sum() / len(n)
        if n[i] >= 2:
            used += 1
            EL_unb += ((q[i] - m) ** 2 - m * (1 - m) / (n[i] - 1)).sum()
            IL += 1 - (counts[i] * (counts[i] - 1)).sum() / (n[i] * (n[i] - 1))
    assert float(expected_squared_loss(counts, q)) == pytest.approx(L)
    assert float(epistemic_loss(counts, q, debiased=False)) == pytest.approx(EL_plug)
    el = epistemic_loss(counts, q)
    assert float(el) == pytest.approx(EL_unb / used)
    assert el.attrs["n_excluded"] == (n < 2).sum() > 0 and el.attrs["n_items"] == used
    il = irreducible_loss(counts)
    assert float(il) == pytest.approx(IL / used) and il.attrs["n_excluded"] == (n < 2).sum()
    # L = EL + IL holds exactly on the items both use
    keep = n >= 2
    assert float(expected_squared_loss(counts[keep], q[keep])) == pytest.approx(
        float(epistemic_loss(counts[keep], q[keep])) + float(irreducible_loss(counts[keep]))
    )


def test_class_wise_cl_sums_the_per_class_binned_losses():
    counts, q, _ = random_case(n_items=200, seed=1)
    muhat = counts / counts.sum(1, keepdims=True)
    for debiased, column in ((False, "cl_plugin"), (True, "cl_debiased")):
        per_class = sum(binned_calibration(muhat[:, k], q[:, k])[column].sum() for k in range(3))
        assert float(calibration_loss(counts, q, debiased=debiased)) == pytest.approx(per_class)


def test_expected_squared_loss_is_unbiased_for_the_single_label_brier_score():
    rng = np.random.default_rng(3)
    mu = rng.dirichlet(np.ones(3), size=30)
    q = rng.dirichlet(np.ones(3), size=30)
    target = (((q - mu) ** 2).sum(1) + (mu * (1 - mu)).sum(1)).mean()  # E_y sum_k (q_k - 1[y=k])^2
    estimates = [
        float(expected_squared_loss(np.array([rng.multinomial(3, p) for p in mu]), q)) for _ in range(400)
    ]
    assert abs(np.mean(estimates) - target) < 2.5 * np.std(estimates, ddof=1) / np.sqrt(400)


def test_weights_and_accuracy():
    counts = np.array([[2, 0], [1, 1], [0, 3]])
    q = np.array([[0.9, 0.1], [0.5, 0.5], [0.8, 0.2]])
    # accuracy: P(a fresh label = argmax q) = 1, 0.5 (tie -> class 0), 0
    assert float(expected_accuracy(counts, q)) == pytest.approx(0.5)
    w = np.array([1.0, 0.0, 0.0])
    assert float(expected_squared_loss(counts, q, weights=w)) == pytest.approx(0.1**2 * 2)
    with pytest.raises(ValueError, match="weights must sum to 1"):
        expected_squared_loss(counts, q, weights=[1.0, 1.0, 0.0])


# -- the debiasing study (acceptance) ----------------------------------------------------
def test_debiased_estimators_are_unbiased_and_plug_in_ones_are_not():
    """Perfect binary predictor q = mu: every true loss is 0. Over repetitions the
    debiased EL and CL are within 2 standard errors of 0; the plug-in ones are far off
    (EL by 1/(3n))."""
    study = debiasing_study(n_labels=(2, 5), n_items=(1000,), repetitions=100, seed=0)
    summary = summarize_study(study).set_index(["n_labels", "n_items", "estimate"])
    for (n, N, estimate), row in summary.iterrows():
        if estimate.endswith("debiased"):
            assert abs(row["z"]) <= 2, (n, N, estimate, row.to_dict())
        else:
            assert row["z"] > 5, (n, N, estimate, row.to_dict())
        if estimate == "el_plugin":
            assert row["mean"] == pytest.approx(1 / (3 * n), rel=0.1)


# -- tables, DL, CE -----------------------------------------------------------------
def test_calibration_table_decomposes_el():
    counts, q, _ = random_case(n_items=300, seed=2)
    table = calibration_table(counts, q)
    assert isinstance(table, pd.DataFrame) and len(table) == 3 * 15
    n_excluded = (counts.sum(1) < 2).sum()
    assert table.attrs == {"n_items": 300 - n_excluded, "n_excluded": n_excluded, "n_bins": 15}
    keep = counts.sum(1) >= 2
    assert table["count"].sum() == 3 * keep.sum()
    assert table["el_debiased"].sum() == pytest.approx(float(epistemic_loss(counts, q)))
    el_plugin = epistemic_loss(counts[keep], q[keep], debiased=False)
    assert table["el_plugin"].sum() == pytest.approx(float(el_plugin))
    assert table["cl_debiased"].sum() == pytest.approx(float(calibration_loss(counts[keep], q[keep])))
    np.testing.assert_allclose(table["dl_debiased"], table["el_debiased"] - table["cl_debiased"])
    dl = dispersion_loss(counts, q)
    assert float(dl) == pytest.approx(table["dl_debiased"].sum()) and dl.attrs["n_excluded"] == n_excluded
    # single-label items kept: the EL bias is not estimable, said by NaN
    assert calibration_table(counts, q, min_labels=1)["el_debiased"].isna().all()


def test_ce_keeps_the_sign_of_a_negative_debiased_cl():
    assert calibration_error(-0.04) == pytest.approx(-0.2)
    assert calibration_error(0.09) == pytest.approx(0.3)
    counts, q, _ = random_case(seed=4)
    cl = calibration_loss(counts, q)
    ce = calibration_error(cl)
    assert ce.name == "CE" and ce.attrs == cl.attrs
    assert float(ce) == pytest.approx(np.sign(float(cl)) * np.sqrt(abs(float(cl))))


def test_summary_row_and_nan_for_metrics_without_enough_labels():
    counts, q, _ = random_case(seed=5)
    row = calibration_summary(counts, q)
    assert row["CE"] == pytest.approx(calibration_error(row["CL"]))
    assert row["n_excluded_order1"] == row["n_excluded_order2"] == (counts.sum(1) < 2).sum()
    single = np.eye(3, dtype=int)[np.arange(40) % 3]
    row = calibration_summary(single, q)
    assert np.isnan(row[["EL", "DL", "IL", "L2", "CL2", "CE2"]].to_numpy(float)).all()
    assert np.isfinite(row[["L", "CL", "CE", "accuracy"]].to_numpy(float)).all()
    with pytest.raises(ValueError, match="needs items with >= 2 labels"):
        epistemic_loss(single, q)


# -- bad input ----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("counts", "match"),
    [
        ([[1, 0], [2, -1]], r"item 1, class 1: count -1 is negative"),
        ([[1, 0], [0, 0]], r"item 1 has no labels"),
        ([[1, 0], [2, 0.5]], r"item 1, class 1: count 0.5 is not an integer"),
        ([1, 2, 3], r"must be 2-D \(item, class\)"),
    ],
)
def test_bad_histograms_name_the_item(counts, match):
    with pytest.raises(ValueError, match=match):
        label_histogram(np.asarray(counts))


def test_bad_histograms_name_the_item_id():
    with pytest.raises(ValueError, match=r"item 'img7' has no labels"):
        label_histogram([[1, 1], [0, 0]], items=["img3", "img7"])
    with pytest.raises(ValueError, match=r"item 'b', class 'y': count -2 is negative"):
        Votes.from_counts([[1, 1], [1, -2]], items=["a", "b"], classes=["x", "y"])
    hist = label_histogram(Votes.from_counts([[1, 1]], items=["a"], classes=["x", "y"]))
    assert hist.items.tolist() == ["a"]


def test_bad_cpes_name_the_item():
    counts = label_histogram([[1, 1], [2, 0], [0, 3]], items=["a", "b", "c"])
    with pytest.raises(ValueError, match=r"cpe: item 'c' sums to 0\.9, not 1"):
        expected_squared_loss(counts, [[0.5, 0.5], [1.0, 0.0], [0.45, 0.45]])
    with pytest.raises(ValueError, match=r"cpe: item 'b', class 1: value -0\.1 is negative"):
        calibration_loss(counts, [[0.5, 0.5], [1.1, -0.1], [0.5, 0.5]])
    with pytest.raises(ValueError, match=r"cpe: item 'a', class 0: value nan is not finite"):
        epistemic_loss(counts, [[np.nan, 0.5], [1.0, 0.0], [0.5, 0.5]])
    with pytest.raises(ValueError, match=r"cpe has shape \(2, 2\) but the label histogram has shape \(3"):
        expected_squared_loss(counts, [[0.5, 0.5], [1.0, 0.0]])
    with pytest.raises(ValueError, match=r"cpe has shape \(3, 3\)"):
        expected_squared_loss(counts, np.full((3, 3), 1 / 3))
    assert check_cpe([[0.5, 0.5 + 1e-9]]).shape == (1, 2)  # within tolerance
