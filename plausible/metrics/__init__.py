"""Metrics computed from posterior plausibility draws (Stutz et al. 2023).

Every metric reads only plausibility draws (dims: sample dims such as ``("chain", "draw")``,
``"item"``, ``"class"``): a trace in either storage of :mod:`plausible.metrics.storage`
(dense, or candidate form for many classes), a DataArray, a point estimate wrapped by
:func:`point_estimate`, or the top classes of :func:`top_classes` (computed once, they serve
every rank-based metric of a sweep). They stream over the draws in bounded blocks
(:func:`set_options`) and never know which model produced the draws. A trace whose draws are
computed when read carries the posterior mean and top-1 shares accumulated while sampling
(:func:`accumulated`), which the posterior mean and the label certainty read instead, and
the moments of each half-chain, which give its split R-hat (:func:`split_rhat`).

>>> import plausible as pl
>>> acc = pl.metrics.ua_topk_accuracy(trace, scores, k=3)    # doctest: +SKIP
>>> pl.metrics.summarize(acc)                                 # doctest: +SKIP

Multi-label sets have one probability per label, not a distribution over classes; their
metrics are :mod:`plausible.metrics.multi_label`. A comparison model's ranks are summarised
from its worths' draws by :mod:`plausible.metrics.worth_ranks`.

Calibration under disagreement (Mimori et al. 2021) is :mod:`plausible.calibration`; testing a
classifier against noisy labels (Su 2024) is :mod:`plausible.evaluation`.
"""

from plausible.metrics import meaning, multi_label, worth_ranks
from plausible.metrics.accumulated import Accumulator, accumulated, split_rhat
from plausible.metrics.accuracy import (ua_average_overlap, ua_coverage, ua_overlap, ua_set_accuracy,
                                        ua_topk_accuracy)
from plausible.metrics.agreement import leave_one_out_agreement
from plausible.metrics.certainty import annotation_certainty, expected_group, group_certainty, label_certainty
from plausible.metrics.draws import as_draws
from plausible.metrics.meaning import PlausibilityMeaningWarning
from plausible.metrics.options import get_options, set_options
from plausible.metrics.plausibility import as_plausibility, point_estimate, posterior_mean, sample_dims
from plausible.metrics.predictions import top_k_sets
from plausible.metrics.ranking import top_classes
from plausible.metrics.ranking_overlap import average_overlap, scores_to_blocks, ua_ranking_overlap
from plausible.metrics.storage import storage_form, to_dense
from plausible.metrics.summary import histogram, summarize

__all__ = [
    "Accumulator",
    "PlausibilityMeaningWarning",
    "accumulated",
    "annotation_certainty",
    "as_draws",
    "as_plausibility",
    "average_overlap",
    "expected_group",
    "get_options",
    "group_certainty",
    "histogram",
    "label_certainty",
    "leave_one_out_agreement",
    "meaning",
    "multi_label",
    "point_estimate",
    "posterior_mean",
    "sample_dims",
    "scores_to_blocks",
    "set_options",
    "split_rhat",
    "storage_form",
    "summarize",
    "to_dense",
    "top_classes",
    "top_k_sets",
    "ua_average_overlap",
    "ua_coverage",
    "ua_overlap",
    "ua_ranking_overlap",
    "ua_set_accuracy",
    "ua_topk_accuracy",
    "worth_ranks",
]
