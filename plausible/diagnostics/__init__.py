"""Diagnostics: convergence gates, posterior predictive checks, simulation-based calibration."""

from plausible.diagnostics.convergence import ConvergenceReport, convergence_report

__all__ = ["ConvergenceReport", "convergence_report"]
