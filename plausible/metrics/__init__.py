"""Metrics computed from posterior plausibility draws (spec 01, section 4).

Every metric reads only a ``plausibility`` DataArray (dims: sample dims such as
``("chain", "draw")``, ``"item"``, ``"class"``), from a trace via
:func:`as_plausibility` or from a point estimate via :func:`point_estimate`, and streams
over the draws in bounded chunks (:func:`set_options`).

>>> import plausible.metrics as pm_metrics
>>> acc = pm_metrics.ua_topk_accuracy(trace, scores, k=3)    # doctest: +SKIP
>>> pm_metrics.summarize(acc)                                 # doctest: +SKIP

Testing a classifier against noisy labels (spec 03) lives in its own modules:
:mod:`testing` (binary metrics, Algorithms 1-3, Full Bayes), :mod:`testing_multiclass`
(Algorithm 4), :mod:`testing_study` (the seeded acceptance studies), :mod:`ratio_normal`,
:mod:`credible_regions`, :mod:`labeler_baselines` and :mod:`mutual_information`.
"""

from plausible.metrics.accuracy import ua_average_overlap, ua_overlap, ua_set_accuracy, ua_topk_accuracy
from plausible.metrics import (
    candidates,
    credible_regions,
    labeler_baselines,
    mutual_information,
    ratio_normal,
    testing,
    testing_multiclass,
    testing_study,
)
from plausible.metrics.agreement import leave_one_out_agreement
from plausible.metrics.calibration import (
    calibration_error,
    calibration_loss,
    calibration_table,
    dispersion_loss,
    epistemic_loss,
    expected_accuracy,
    expected_squared_loss,
    irreducible_loss,
)
from plausible.metrics.calibration_inputs import LabelHistogram, label_histogram
from plausible.metrics.calibration_plots import calibration_dispersion_map, dpe_reliability_diagram
from plausible.metrics.calibration_study import debiasing_study, summarize_study
from plausible.metrics.calibration_summary import calibration_summary
from plausible.metrics.cpe import DirichletCPE, EnsembleCPE, PointCPE
from plausible.metrics.certainty import annotation_certainty, expected_group, group_certainty, label_certainty
from plausible.metrics.disagreement import (
    disagreement,
    disagreement_calibration_error,
    disagreement_calibration_loss,
    disagreement_loss,
    disagreement_table,
    u_statistic,
)
from plausible.metrics.options import get_options, set_options
from plausible.metrics.plausibility import as_plausibility, point_estimate, sample_dims
from plausible.metrics.predictions import top_k_sets
from plausible.metrics.ranking import top_classes
from plausible.metrics.ranking_overlap import average_overlap, scores_to_blocks
from plausible.metrics.summary import histogram, summarize

__all__ = [
    "candidates",
    "credible_regions",
    "labeler_baselines",
    "mutual_information",
    "ratio_normal",
    "testing",
    "testing_multiclass",
    "testing_study",
    "DirichletCPE",
    "EnsembleCPE",
    "LabelHistogram",
    "PointCPE",
    "calibration_dispersion_map",
    "calibration_error",
    "calibration_loss",
    "calibration_summary",
    "calibration_table",
    "debiasing_study",
    "disagreement",
    "disagreement_calibration_error",
    "disagreement_calibration_loss",
    "disagreement_loss",
    "disagreement_table",
    "dispersion_loss",
    "dpe_reliability_diagram",
    "epistemic_loss",
    "expected_accuracy",
    "expected_squared_loss",
    "irreducible_loss",
    "label_histogram",
    "summarize_study",
    "u_statistic",
    "annotation_certainty",
    "as_plausibility",
    "average_overlap",
    "expected_group",
    "get_options",
    "group_certainty",
    "histogram",
    "label_certainty",
    "leave_one_out_agreement",
    "point_estimate",
    "sample_dims",
    "scores_to_blocks",
    "set_options",
    "summarize",
    "top_classes",
    "top_k_sets",
    "ua_average_overlap",
    "ua_overlap",
    "ua_set_accuracy",
    "ua_topk_accuracy",
]
