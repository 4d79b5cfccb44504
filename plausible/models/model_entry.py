"""What a registry entry declares about one aggregation model (:class:`ModelEntry`): the
annotation format it reads, what its reliability and its plausibility mean, and what the
layers above the models need of it. Each model family's folder lists its entries in
``ENTRIES``; :mod:`plausible.models.registry` collects them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pymc as pm

from plausible.metrics.meaning import (ITEM_DISTRIBUTION, LABEL_MARGINALS, RANK_DISTRIBUTION,
                                       TRUE_CLASS_POSTERIOR)

FORMATS = ("votes", "rankings", "labels", "ratings", "label_sets", "comparisons")
"""Annotation formats, matching the containers ``Votes``, ``Rankings``, ``Labels``, ``Ratings``,
``LabelSets`` and ``Comparisons``."""

MEANINGS = {
    ITEM_DISTRIBUTION: "each item's distribution over the classes: annotators who genuinely "
                       "split on an item leave it split, however many of them there are",
    TRUE_CLASS_POSTERIOR: "the posterior probability that each class is the item's one true "
                          "class: disagreement is read as annotator error, so it concentrates "
                          "on one class as labels accumulate, even on ambiguous items",
    LABEL_MARGINALS: "per label, the posterior probability that the item carries it (multi-label "
                     "sets): one probability per label, so an item's row need not sum to one",
    RANK_DISTRIBUTION: "the posterior probability of each rank position for the item among all "
                       "the compared items (class 1: the best), from the draws of their worths",
}
"""What a model's plausibility is (:attr:`ModelEntry.plausibility`), in words: the seeds'
meaning (Stutz et al. 2023: a distribution over classes per item, ambiguity kept), the
latent-class models' (Dawid & Skene 1979 and after: one true class per item), the multi-label
model's marginals per label, or the comparison models' distribution over rank positions."""


@dataclass(frozen=True)
class ModelEntry:
    """One aggregation model.

    ``name`` (the registry key, e.g. ``"plackett-luce"``), ``build`` (its builder),
    ``data`` (one of :data:`FORMATS`), ``reliability`` (``"tempering"`` or
    ``"repetitions"``), ``item_independent`` (items conditionally independent given fixed
    hyper-parameters, so items can be sampled in shards), ``cluster_chain`` (the items share
    only the annotators' parameters, and the model's sweep splits into a global half and an
    item half: its one chain runs over shards of items on a cluster,
    :mod:`plausible.distributed.cluster_chain`), ``classes`` (``"any"`` or a
    restriction such as ``"binary"``), ``required`` (options the builder cannot default, e.g.
    the ratings threshold), a one-line ``summary``, ``candidate_width(data)`` (the candidate
    slots the model's candidate form needs, None without one) and ``shard_options(data,
    **options)`` (the options with whatever depends on all items fixed, for sharding),
    ``replicate(trace, data, draws=, seed=)`` (replicated annotations in the observed design,
    for the posterior predictive checks of label and ratings models),
    ``label_probabilities(trace, chain, draw, item, annotator)`` (``P(x = y | z = c)`` of a
    new label by each (item, annotator) pair at the given draws, ``(sample, pair, class,
    label_class)``: what :mod:`plausible.active` needs to say who should annotate),
    ``spammer(parameters)`` (from the draws of the model's per-annotator parameters, ``{name:
    (sample, annotator)}``, whether each annotator answers at random more often than not in
    each draw, bool ``(sample, annotator)``: what the report's spammer flags read; None for a
    model without random answers), ``annotator_parameters(posterior)`` (the per-annotator
    parameters the report shows, ``{name: (sample, annotator)}``; None: every per-annotator
    scalar of the posterior, :func:`~plausible.diagnostics.annotator_quality.annotator_scalars`),
    ``annotator_plot`` (which of them the report plots as intervals), ``annotator_note`` (what
    they mean, in a sentence of the report), ``confusion(posterior, annotators)`` (posterior
    mean confusion rows of these annotators, ``(annotator, class, label_class)``, headed by the
    population's where the model has one: the report's heatmaps), ``consensus(trace)`` (per
    item the consensus on the annotation scale with its interval, a table indexed by item:
    a column of the per-item table and a figure of the report), ``worth_draws(posterior)`` (the
    comparison models' draws of each item's log worth, ``(chain, draw, item)``: the rank summary
    and the next pairs read it), ``label_rates(posterior)`` (the multi-label models' draws of
    each annotator's sensitivity and specificity per label, two ``(chain, draw, annotator,
    class)`` arrays: the next label sets read them), ``predictive_check(trace, data, *, draws,
    seed)`` (the model's own posterior predictive check, where the format's generic one does
    not serve: comparisons, label sets), ``item_columns(trace, data)`` (columns the per-item
    table adds, indexed by item: the multi-label model's most probable pattern),
    ``label_set_draws(trace, data, *, draws, seed)`` (draws of the items' true label sets, bool
    ``(sample, item, class)``: what scores predicted sets), ``ordinal`` (the model reads the classes as ordered
    grades: the one fitted for labels declared ordinal, ``aggregate(..., ordinal=True)`` and
    ``--ordinal``, and whose predictive check counts how many grades an item's labels span)
    and ``plausibility``, what its plausibility means (a key of :data:`MEANINGS`; by default
    an item's distribution over classes for votes, rankings and ratings, the posterior of one
    true class for the latent-class label models).
    """

    name: str
    build: Callable[..., pm.Model]
    data: str
    reliability: str
    item_independent: bool
    summary: str
    classes: str = "any"
    required: tuple[str, ...] = field(default_factory=tuple)
    candidate_width: Callable | None = None
    shard_options: Callable | None = None
    replicate: Callable | None = None
    label_probabilities: Callable | None = None
    spammer: Callable | None = None
    annotator_parameters: Callable | None = None
    annotator_plot: tuple[str, ...] = ()
    annotator_note: str = ""
    confusion: Callable | None = None
    consensus: Callable | None = None
    worth_draws: Callable | None = None
    label_rates: Callable | None = None
    predictive_check: Callable | None = None
    item_columns: Callable | None = None
    label_set_draws: Callable | None = None
    cluster_chain: bool = False
    ordinal: bool = False
    plausibility: str = ""

    def __post_init__(self):
        if not self.plausibility:
            default = TRUE_CLASS_POSTERIOR if self.data == "labels" else ITEM_DISTRIBUTION
            object.__setattr__(self, "plausibility", default)
        if self.plausibility not in MEANINGS:
            raise ValueError(f"plausibility must be one of {list(MEANINGS)}, got "
                             f"{self.plausibility!r}")


def most_named(data) -> int:
    """The candidate slots of the models that store plausibilities in candidate form: the most
    classes any item was named (``candidate_width``)."""
    return int(data.n_named().max(initial=0))


def answers_at_random(parameters: dict) -> np.ndarray:
    """The spammer flag of the models with a rate of random answers per annotator (ordered
    probit, noisy Bradley–Terry): whether each annotator answers at random more often than not,
    ``e_j > 1/2``, per draw ``(sample, annotator)`` from ``parameters["spam"]``."""
    return parameters["spam"] > 0.5
