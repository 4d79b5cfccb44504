"""Aggregation models: each ``build(data, ...)`` returns a ``pm.Model`` with dims
``item`` and ``class`` whose posterior holds ``plausibility (chain, draw, item, class)``."""

from plausible.models import (
    alpha_calibration,
    annotator_beta,
    dirichlet,
    irn,
    plackett_luce,
    plackett_luce_likelihood,
    plackett_luce_mle,
    prirn,
    ratings,
)

__all__ = [
    "alpha_calibration",
    "annotator_beta",
    "dirichlet",
    "irn",
    "plackett_luce",
    "plackett_luce_likelihood",
    "plackett_luce_mle",
    "prirn",
    "ratings",
]
