"""Paired comparisons of label accuracy (:mod:`plausible.diagnostics.label_accuracy`) and
the parametric bootstrap of GLAD labels on a fixed design (``simulate_glad_labels``)."""

from math import comb

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from scipy.special import expit

from plausible.data import Labels, simulate_glad, simulate_glad_labels
from plausible.diagnostics import accuracy_study, paired_differences, paired_label_test
from plausible.models.latent_class import majority_vote


def test_paired_label_test_is_mcnemars_exact_test():
    # 7 items only a gets right, 4 only b, 30 both, 9 neither
    a = np.array([True] * 7 + [False] * 4 + [True] * 30 + [False] * 9)
    b = np.array([False] * 7 + [True] * 4 + [True] * 30 + [False] * 9)
    result = paired_label_test(a, b)
    assert (result["n_discordant"], result["only_a"], result["only_b"], result["difference"]) == (11, 7, 4, -3)
    # two-sided exact binomial: 2 P(B <= 4), B ~ Binomial(11, 1/2)
    assert result["p_value"] == pytest.approx(2 * sum(comb(11, k) for k in range(5)) / 2**11, rel=1e-12)
    assert paired_label_test(b, a)["difference"] == 3
    assert paired_label_test(a, a) == {"n_discordant": 0, "only_a": 0, "only_b": 0,
                                       "difference": 0, "p_value": 1.0}


def test_paired_label_test_rejects_bad_input():
    with pytest.raises(ValueError, match="bool"):
        paired_label_test(np.array([1, 0]), np.array([True, False]))
    with pytest.raises(ValueError, match="shape"):
        paired_label_test(np.array([True]), np.array([True, False]))


def test_accuracy_study_counts_correct_labels_per_seed():
    current = {}

    def simulate(seed):
        sim = simulate_glad(40, 5, 3, seed=seed)
        current["truth"] = sim.truth
        return sim.labels, sim.truth

    aggregators = {
        "oracle": lambda labels: current["truth"],  # the truth of the data set just simulated
        "zero": lambda labels: np.zeros(labels.n_items, dtype=int),
        "majority": majority_vote,
    }
    study = accuracy_study(simulate, aggregators, [3, 4])
    assert list(study.columns) == ["oracle", "zero", "majority"] and list(study.index) == [3, 4]
    for seed in (3, 4):
        labels, truth = simulate(seed)
        assert study.loc[seed, "oracle"] == 40
        assert study.loc[seed, "zero"] == np.sum(truth == 0)
        assert study.loc[seed, "majority"] == np.sum(majority_vote(labels) == truth)
    with pytest.raises(ValueError, match="seed 3: aggregator 'short'"):
        accuracy_study(simulate, {"short": lambda labels: np.zeros(3, dtype=int)}, [3])


def test_paired_differences_summarise_the_replicates():
    study = pd.DataFrame({"em": [10, 10, 10], "bayes": [11, 12, 10], "worse": [9, 9, 9]},
                         index=pd.Index([0, 1, 2], name="seed"))
    table = paired_differences(study, "em")
    assert list(table.index) == ["bayes", "worse"]
    row = table.loc["bayes"]
    assert row["mean"] == pytest.approx(1.0) and row["se"] == pytest.approx(1 / np.sqrt(3))
    # t = mean / se = sqrt(3) on 2 degrees of freedom
    assert row["p_value"] == pytest.approx(2 * stats.t.sf(np.sqrt(3), df=2), rel=1e-10)
    assert (row["wins"], row["ties"], row["losses"]) == (2, 1, 0)
    worse = table.loc["worse"]
    assert worse["mean"] == -1 and worse["losses"] == 3 and np.isnan(worse["p_value"])  # no variation
    with pytest.raises(ValueError, match="baseline 'ds'"):
        paired_differences(study, "ds")


def test_simulate_glad_labels_keeps_the_design_and_follows_the_model():
    design = simulate_glad(3000, 6, 3, coverage=0.5, seed=5)
    labels = design.labels
    truth = (design.truth + 1) % 3  # other classes than the design's own truth
    ability = np.linspace(-0.5, 2.0, 6)
    log_beta = np.random.default_rng(0).normal(0.5, 1.0, 3000)
    sim = simulate_glad_labels(labels, truth, ability, log_beta, seed=1)
    for name in ("item", "annotator", "items", "annotators", "classes"):
        np.testing.assert_array_equal(getattr(sim, name), getattr(labels, name))
    np.testing.assert_array_equal(sim.label, simulate_glad_labels(labels, truth, ability, log_beta, seed=1).label)
    assert not np.array_equal(sim.label, simulate_glad_labels(labels, truth, ability, log_beta, seed=2).label)
    r = expit(ability[sim.annotator] * np.exp(log_beta[sim.item]))
    correct = sim.label == truth[sim.item]
    z = (correct.sum() - r.sum()) / np.sqrt((r * (1 - r)).sum())  # binomial z-score
    assert abs(z) < 4, z
    # a wrong label is uniform over the two other classes
    wrong = sim.label[~correct]
    up = (wrong - truth[sim.item][~correct]) % 3 == 1
    assert abs(up.sum() - wrong.size / 2) < 4 * np.sqrt(wrong.size / 4)


def test_simulate_glad_labels_rejects_bad_parameters():
    labels = simulate_glad(10, 3, 2, seed=0).labels
    good = (np.zeros(10, dtype=int), np.ones(3), np.ones(10))
    with pytest.raises(TypeError, match="Labels"):
        simulate_glad_labels(labels.to_frame(), *good)
    with pytest.raises(ValueError, match=r"ability must have shape \(3,\)"):
        simulate_glad_labels(labels, good[0], np.ones(4), good[2])
    with pytest.raises(ValueError, match="truth must be class indices"):
        simulate_glad_labels(labels, np.full(10, 2), *good[1:])
    with pytest.raises(ValueError, match="finite"):
        simulate_glad_labels(labels, good[0], np.array([1.0, np.nan, 1.0]), good[2])
    assert isinstance(simulate_glad_labels(labels, *good, seed=0), Labels)
