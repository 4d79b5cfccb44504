"""What a plausibility means, carried with its draws so that a metric can check it.

Two families of models give plausibilities of the same shape ``(item, class)`` that mean
different things:

* an **item distribution** (the seeds' meaning; Stutz et al. 2023): each item's distribution
  over classes, which stays split where annotators genuinely split;
* a **true-class posterior** (Dawid & Skene 1979 and the latent-class models after it): the
  posterior probability that each class is the item's one true class, which concentrates on
  one class as labels accumulate.

The uncertainty-adjusted metrics score a classifier against each draw's top classes, reading
the draw as an item's distribution. A true-class posterior's draw is not a distribution of
that kind: its top class is the most probable true class given the draw's parameters, so
scoring against it counts the most probable class as certain. Those metrics therefore warn
(:class:`PlausibilityMeaningWarning`) when the draws say they are a true-class posterior (or
multi-label marginals). :class:`plausible.Aggregation` records the meaning in the trace:
``attrs["plausibility_meaning"]`` of the posterior group and of a stored plausibility.
"""

from __future__ import annotations

import warnings

import xarray as xr

ATTR = "plausibility_meaning"
ITEM_DISTRIBUTION = "item distribution"
TRUE_CLASS_POSTERIOR = "true-class posterior"
LABEL_MARGINALS = "label marginals"
RANK_DISTRIBUTION = "rank distribution"


class PlausibilityMeaningWarning(UserWarning):
    """A metric was given plausibilities of another meaning than the one it assumes."""


def meaning_of(obj) -> str | None:
    """The recorded meaning of plausibility draws (:data:`ATTR`), None when unrecorded.

    Read from a DataArray's attrs; a Dataset's or its ``plausibility``'s; a DataTree's, its
    ``posterior`` group's or that group's ``plausibility``'s."""
    sources = [obj]
    if isinstance(obj, xr.DataTree) and "posterior" in obj.children:
        sources.append(obj["posterior"])
    for source in list(sources):
        if isinstance(source, (xr.Dataset, xr.DataTree)) and "plausibility" in source.data_vars:
            sources.append(source["plausibility"])
    for source in sources:
        meaning = getattr(source, "attrs", {}).get(ATTR)
        if meaning is not None:
            return str(meaning)
    return None


def expect_item_distribution(meaning: str | None, metric: str) -> None:
    """Warn when ``metric``, which reads each draw as an item's distribution over classes, is
    given a true-class posterior or multi-label marginals; say what to use instead."""
    if meaning == TRUE_CLASS_POSTERIOR:
        warnings.warn(
            f"{metric} reads each draw as an item's distribution over classes, but these "
            "plausibilities are the posterior of each item's one true class: a draw's top class "
            "is the most probable true class, not a draw of it, so the metric scores it as "
            "certain. The probability that the true class is in a prediction set is "
            "pl.metrics.ua_coverage(trace, sets) (sets e.g. pl.metrics.top_k_sets(scores, k) "
            "for the expected top-k accuracy).", PlausibilityMeaningWarning, stacklevel=3)
    elif meaning == LABEL_MARGINALS:
        warnings.warn(
            f"{metric} reads each draw as an item's distribution over classes, but these "
            "plausibilities are multi-label marginals (one probability per label); use "
            "plausible.metrics.multi_label.", PlausibilityMeaningWarning, stacklevel=3)


__all__ = ["ATTR", "ITEM_DISTRIBUTION", "LABEL_MARGINALS", "RANK_DISTRIBUTION",
           "TRUE_CLASS_POSTERIOR", "PlausibilityMeaningWarning", "expect_item_distribution",
           "meaning_of"]
