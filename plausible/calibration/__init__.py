"""Calibration of class probability estimates under annotator disagreement (Mimori et al. 2021,
Mimori et al. 2021).

Items carry several labels, summarised as label histograms; a classifier's class
probability estimate (CPE) and disagreement probability estimate (DPE) are scored against
them with debiased estimators, and recalibrated. The public face:

* inputs: :func:`label_histogram` (from counts or :class:`~plausible.data.Votes`),
  :class:`LabelHistogram`;
* order-1 metrics (about the CPE): :func:`expected_squared_loss`, :func:`epistemic_loss`,
  :func:`calibration_loss`, :func:`calibration_error`, :func:`dispersion_loss`,
  :func:`irreducible_loss`, :func:`expected_accuracy`, :func:`calibration_table`,
  :func:`binned_calibration`;
* order-r metrics (about disagreement): :func:`u_statistic`, :func:`disagreement`,
  :func:`disagreement_loss`, :func:`disagreement_calibration_loss`,
  :func:`disagreement_calibration_error`, :func:`disagreement_table`;
* all of one predictor in a row: :func:`calibration_summary`;
* predictive distributions over CPEs: :class:`PointCPE`, :class:`DirichletCPE`,
  :class:`EnsembleCPE`;
* calibrators: :class:`TemperatureScaling`, :class:`VectorScaling`, :class:`MatrixScaling`
  (logit scaling fitted on histograms) and alpha-calibration (a PyMC model turning a CPE into
  a Dirichlet predictive): :func:`fit_alpha_map`, :func:`fit_alpha_posterior`,
  :class:`AlphaCalibration`;
* the debiasing study of the paper: :func:`debiasing_study`, :func:`summarize_study`.

Figures: :func:`plausible.plots.dpe_reliability_diagram`,
:func:`plausible.plots.calibration_dispersion_map`.
"""

from plausible.calibration.alpha import AlphaCalibration, AlphaFitReport, fit_alpha_map, fit_alpha_posterior
from plausible.calibration.bins import binned_calibration
from plausible.calibration.cpe import DirichletCPE, EnsembleCPE, PointCPE
from plausible.calibration.disagreement import (
    disagreement,
    disagreement_calibration_error,
    disagreement_calibration_loss,
    disagreement_loss,
    disagreement_table,
    u_statistic,
)
from plausible.calibration.inputs import LabelHistogram, label_histogram
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
from plausible.calibration.scaling import FitReport, MatrixScaling, TemperatureScaling, VectorScaling
from plausible.calibration.studies import debiasing_study, summarize_study
from plausible.calibration.summary import calibration_summary

__all__ = [
    "AlphaCalibration",
    "AlphaFitReport",
    "DirichletCPE",
    "EnsembleCPE",
    "FitReport",
    "LabelHistogram",
    "MatrixScaling",
    "PointCPE",
    "TemperatureScaling",
    "VectorScaling",
    "binned_calibration",
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
    "epistemic_loss",
    "expected_accuracy",
    "expected_squared_loss",
    "fit_alpha_map",
    "fit_alpha_posterior",
    "irreducible_loss",
    "label_histogram",
    "summarize_study",
    "u_statistic",
]
