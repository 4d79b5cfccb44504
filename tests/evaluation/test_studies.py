"""Seeded studies of the acceptance criteria of testing with noisy labels (Su 2024) (:mod:`plausible.evaluation.studies`).

Binary: on the main example over 20 seeds, Algorithm 1's mean absolute error on p_D (recall)
against the metrics of the true labels is below Algorithm 3's and the per-labeler mean's.

Multi-class (C = 4, N = 2000, the notebook's confusion matrix; Su 2024 gives none): pooled
coverage of the 95 % count intervals over 20 seeds x 16 cells = 320 cells. Tolerance:
``3 sqrt(0.95 x 0.05 x deff / 320)`` around 0.95. Cells of one seed are not independent
(each row of the count matrix sums to its group size, and all cells share the estimated
confusion matrix), so the binomial variance is inflated by a design effect ``deff``; the
measured one is 1.06 under exact (oracle) posteriors over 200 seeds and 1.2 for Algorithm 4,
and ``deff = 1.5`` is taken to be safe: tolerance 0.045, i.e. a 3-sigma band [0.905, 0.995].
The oracle test (posteriors under the true confusion matrix) checks the band itself. The joint
Gibbs posterior of the classes and the confusion matrix
(:func:`plausible.evaluation.confusion_gibbs.confusion_gibbs`, uniform Dirichlet rows) meets
it: that is the route to the acceptance criterion (0.959 of 320 cells; 0.960 of 3200 cells over
200 seeds, where ``mean -+ 1.96 sd`` of the same draws covers 0.948: the integer quantile
intervals hold at least 95 % of the draws and lean slightly conservative). Algorithm 4, the
paper's algorithm, misses it (strict xfail, kept as the record of a finding): its intervals
condition on the estimated confusion matrix and leave out that estimate's uncertainty.
"""

import numpy as np
import pytest

from plausible.evaluation.binary import METRICS
from plausible.evaluation.studies import (
    binary_mae,
    binary_seed_study,
    coverage_rate,
    multiclass_coverage_study,
)

SEEDS = range(20)
NOMINAL = 0.95
DESIGN_EFFECT = 1.5


def coverage_tolerance(cells: int) -> float:
    """Three standard errors of a pooled coverage rate at the nominal 0.95 (see the module)."""
    return 3 * np.sqrt(NOMINAL * (1 - NOMINAL) * DESIGN_EFFECT / cells)


def test_binary_study_layout():
    study = binary_seed_study([3], methods=("alg1_ratios", "labeler_median"))
    assert len(study) == 2 * len(METRICS)
    assert list(study.columns) == ["seed", "method", "metric", "estimate", "ideal", "error"]
    # The ideal metrics are the method-independent truth.
    ideal = study.pivot(index="metric", columns="method", values="ideal")
    np.testing.assert_array_equal(ideal["alg1_ratios"], ideal["labeler_median"])
    np.testing.assert_allclose(study["error"], study["estimate"] - study["ideal"])
    again = binary_seed_study([3], methods=("alg1_ratios", "labeler_median"))
    assert study.equals(again)
    with pytest.raises(ValueError, match="unknown methods"):
        binary_seed_study([0], methods=("alg9",))


def test_algorithm_1_beats_label_estimation_and_labeler_mean_on_recall():
    study = binary_seed_study(SEEDS, methods=("alg1_ratios", "alg3_labels", "labeler_mean"))
    mae = binary_mae(study)
    assert list(mae.columns) == list(METRICS)
    recall = mae["recall"]
    assert recall["alg1_ratios"] < recall["alg3_labels"]
    assert recall["alg1_ratios"] < recall["labeler_mean"]


def test_oracle_count_intervals_have_nominal_coverage():
    """With the true confusion matrix the label posteriors are exact, so the normal count
    intervals must cover at the nominal rate: this checks the intervals and the tolerance."""
    study = multiclass_coverage_study(SEEDS, method="oracle")
    rate = coverage_rate(study)
    assert rate["cells"] == 320 and rate["seeds"] == 20
    assert abs(rate["rate"] - NOMINAL) <= coverage_tolerance(rate["cells"])
    with pytest.raises(ValueError, match="unknown method"):
        multiclass_coverage_study([0], method="alg9")


def test_gibbs_count_intervals_have_nominal_coverage():
    """The multi-class acceptance criterion of testing with noisy labels (Su 2024): the central 95 % intervals of the joint
    Gibbs posterior (classes and confusion matrix) cover the true counts at the nominal rate."""
    study = multiclass_coverage_study(SEEDS, method="gibbs")
    rate = coverage_rate(study)
    assert rate["cells"] == 320 and rate["seeds"] == 20
    assert abs(rate["rate"] - NOMINAL) <= coverage_tolerance(rate["cells"])
    assert study["lower"].eq(study["lower"].round()).all()  # integer quantiles of the counts


@pytest.mark.slow
@pytest.mark.xfail(strict=True, reason=(
    "Algorithm 4 (the paper's) plugs in its estimate of K and ignores its uncertainty: the "
    "intervals are about 20 % too narrow (sd of (count - mean) / sd is 1.2) and cover 0.897 "
    "of 320 cells (0.944 with the true K on the same seeds; 0.882 of 1600 cells over 100 "
    "seeds); the joint Gibbs posterior over K meets the criterion instead "
    "(test_gibbs_count_intervals_have_nominal_coverage)"))
def test_algorithm_4_count_intervals_have_nominal_coverage():
    study = multiclass_coverage_study(SEEDS, method="alg4")
    rate = coverage_rate(study)
    assert rate["cells"] == 320
    assert abs(rate["rate"] - NOMINAL) <= coverage_tolerance(rate["cells"])
