"""Diagnostics: convergence gates, posterior predictive checks, simulation-based calibration,
paired comparisons of label accuracy against known truth."""

from plausible.diagnostics.annotation_predictive import (
    AnnotationPredictiveCheck,
    annotation_predictive_check,
)
from plausible.diagnostics.convergence import ConvergenceReport, convergence_report
from plausible.diagnostics.label_accuracy import (
    accuracy_study,
    paired_differences,
    paired_label_test,
)
from plausible.diagnostics.ranking_predictive import ranking_predictive_check
from plausible.diagnostics.sbc import SBCResult, simulation_based_calibration
from plausible.diagnostics.vote_predictive import VotePredictiveCheck, vote_predictive_check

__all__ = [
    "AnnotationPredictiveCheck",
    "annotation_predictive_check",
    "ConvergenceReport",
    "SBCResult",
    "accuracy_study",
    "paired_differences",
    "paired_label_test",
    "VotePredictiveCheck",
    "convergence_report",
    "ranking_predictive_check",
    "simulation_based_calibration",
    "vote_predictive_check",
]
