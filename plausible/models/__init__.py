"""Aggregation models: each ``build(data, ...)`` returns a ``pm.Model`` with dims
``item`` and ``class`` whose posterior holds ``plausibility (chain, draw, item, class)``.

Also here: the known-parameter label likelihoods of Su's model (:mod:`fallibility`), the
testing model with the classifier's prediction observed (:mod:`testing_model`) and logistic
regression trained on noisy labels (:mod:`noisy_logistic`)."""

from plausible.models import (
    alpha_calibration,
    annotator_beta,
    difficulty,
    dirichlet,
    fallibility,
    glad,
    irn,
    noisy_logistic,
    plackett_luce,
    plackett_luce_likelihood,
    plackett_luce_mle,
    prirn,
    ratings,
    su_difficulty,
    testing_model,
)

__all__ = [
    "alpha_calibration",
    "annotator_beta",
    "difficulty",
    "dirichlet",
    "fallibility",
    "glad",
    "irn",
    "noisy_logistic",
    "plackett_luce",
    "plackett_luce_likelihood",
    "plackett_luce_mle",
    "prirn",
    "ratings",
    "su_difficulty",
    "testing_model",
]
