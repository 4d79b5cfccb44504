"""Diagnostics that read traces: convergence (vectorised R-hat / ESS / MCSE estimators and the
per-variable report), leave-one-item-out cross-validation (:func:`loo`), posterior predictive
checks for votes, categorical annotations, rankings and numeric ratings, how often each
annotator's labels are right (:func:`annotator_quality`), paired comparisons of label accuracy
against known truth, and plausibilities scored against gold (:func:`proper_scores`,
:func:`reliability`).

This floor reads traces and data only; it runs no sampler (simulation-based calibration,
which does, is :func:`plausible.inference.simulation_based_calibration`).
"""

from plausible.diagnostics.annotation_predictive import (
    AnnotationPredictiveCheck,
    annotation_predictive_check,
)
from plausible.diagnostics.annotator_quality import annotator_quality
from plausible.diagnostics.chain_modes import chain_modes, permuted_chains
from plausible.diagnostics.convergence import ConvergenceReport, convergence_report
from plausible.diagnostics.estimators import (
    ConvergenceDiagnostics,
    convergence_diagnostics,
    ess_bulk,
    ess_tail,
    mcse_mean,
    rhat,
)
from plausible.diagnostics.label_accuracy import (
    accuracy_study,
    paired_differences,
    paired_label_test,
)
from plausible.diagnostics.gold import proper_scores, reliability
from plausible.diagnostics.leave_one_out import loo
from plausible.diagnostics.ranking_predictive import (
    RankingPredictiveCheck,
    ranking_predictive_check,
)
from plausible.diagnostics.rating_predictive import RatingPredictiveCheck, rating_predictive_check
from plausible.diagnostics.vote_predictive import (VotePredictiveCheck, replicated_vote_check,
                                                   vote_predictive_check)

__all__ = [
    "AnnotationPredictiveCheck",
    "ConvergenceDiagnostics",
    "ConvergenceReport",
    "RankingPredictiveCheck",
    "RatingPredictiveCheck",
    "VotePredictiveCheck",
    "accuracy_study",
    "annotation_predictive_check",
    "annotator_quality",
    "chain_modes",
    "permuted_chains",
    "convergence_diagnostics",
    "convergence_report",
    "loo",
    "ess_bulk",
    "ess_tail",
    "mcse_mean",
    "paired_differences",
    "paired_label_test",
    "proper_scores",
    "rating_predictive_check",
    "ranking_predictive_check",
    "reliability",
    "rhat",
    "replicated_vote_check",
    "vote_predictive_check",
]
