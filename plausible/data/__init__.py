"""Annotation containers, loaders of the public data sets, and simulators.

Containers are frozen dataclasses over numpy arrays that validate on construction and
raise ``ValueError`` naming the offending item and annotator/reader:
:class:`Votes` (item x class counts), :class:`Rankings` (partial rankings with ties),
:class:`Labels` (long categorical labels), :class:`Ratings` (long numeric scores),
:class:`LabelSets` (multi-label sets per item and annotator), :class:`Comparisons` (pairwise
comparisons of items).
Simulators return the data with the truth behind them (Su's testing setting, GLAD, ratings,
classifiers of graded quality for the dermatology case study). Readers of annotation tools'
exports (Label Studio, Mechanical Turk, Toloka, Prodigy, SageMaker Ground Truth) give the
containers with the tools' ids and class names (:mod:`plausible.data.tool_exports`).
A classifier's predictions for a run's items, from a file or in memory, are read and
checked by :func:`read_predictions` (:mod:`plausible.data.predictions`).
"""

from plausible.data.datasets import (
    CIFAR10_CLASSES,
    RISK_LEVELS,
    Dermatology,
    Mimori2021,
    Snow2008,
    data_home,
    load_caries,
    load_cifar10h,
    load_dermatology,
    load_mimori2021,
    load_snow2008,
)
from plausible.data.classifier_simulators import simulate_classifier, simulate_classifiers
from plausible.data.comparisons import Comparisons
from plausible.data.glad_simulation import GLADSimulation, simulate_glad, simulate_glad_labels
from plausible.data.label_set_simulation import simulate_label_sets
from plausible.data.label_sets import LabelSets
from plausible.data.labels import Labels
from plausible.data.predictions import Predictions, read_predictions
from plausible.data.rankings import NO_READER, UNRANKED, Rankings
from plausible.data.ratings import RatingSummary, Ratings
from plausible.data.ratings_simulators import (
    AVASimulation,
    NIGSimulation,
    ToxicitySimulation,
    histogram_summary,
    simulate_ava,
    simulate_nig,
    simulate_toxicity,
)
from plausible.data.su_simulation import SuSimulation, simulate_su
from plausible.data.tool_exports import (
    read_export,
    read_label_studio,
    read_mturk,
    read_prodigy,
    read_sagemaker,
    read_toloka,
)
from plausible.data.toy import TOY_CLASSES, ToyData, simulate_toy, toy_examples, toy_posterior
from plausible.data.votes import Votes

__all__ = [
    "AVASimulation",
    "GLADSimulation",
    "SuSimulation",
    "simulate_classifier",
    "simulate_classifiers",
    "simulate_glad",
    "simulate_glad_labels",
    "simulate_label_sets",
    "simulate_su",
    "NIGSimulation",
    "ToxicitySimulation",
    "histogram_summary",
    "simulate_ava",
    "simulate_nig",
    "simulate_toxicity",
    "CIFAR10_CLASSES",
    "NO_READER",
    "RISK_LEVELS",
    "TOY_CLASSES",
    "UNRANKED",
    "Comparisons",
    "Dermatology",
    "LabelSets",
    "Labels",
    "Mimori2021",
    "Predictions",
    "Rankings",
    "RatingSummary",
    "Ratings",
    "Snow2008",
    "ToyData",
    "Votes",
    "data_home",
    "load_caries",
    "load_cifar10h",
    "load_dermatology",
    "load_mimori2021",
    "load_snow2008",
    "read_export",
    "read_label_studio",
    "read_mturk",
    "read_predictions",
    "read_prodigy",
    "read_sagemaker",
    "read_toloka",
    "simulate_toy",
    "toy_examples",
    "toy_posterior",
]
