"""Post-hoc calibrators of class probability estimates fitted on label histograms (spec 04 §5).

:class:`TemperatureScaling`, :class:`VectorScaling`, :class:`MatrixScaling` map logits to
calibrated CPEs (multinomial NLL on histograms, optional L2 / ODIR, 80 / 20 early stopping).
alpha-calibration, which turns a CPE into a Dirichlet predictive and stacks on these, is a
PyMC model: :mod:`plausible.models.alpha_calibration`.
"""

from plausible.calibrators.early_stopping import EarlyStopping, holdout_split
from plausible.calibrators.logit_scaling import (
    FitReport,
    LogitScaling,
    MatrixScaling,
    TemperatureScaling,
    VectorScaling,
    histogram_nll,
)

__all__ = [
    "EarlyStopping",
    "FitReport",
    "LogitScaling",
    "MatrixScaling",
    "TemperatureScaling",
    "VectorScaling",
    "histogram_nll",
    "holdout_split",
]
