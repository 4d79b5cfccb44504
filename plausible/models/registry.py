"""The registry of aggregation models: which annotation format each accepts, what its
reliability means, and its builder.

Every aggregation builder is ``build(data, *, reliability=..., **options) -> pm.Model`` whose
posterior holds ``plausibility (item, class)``; the front door, the command line and the
sharded runner look models up here by name instead of importing builders themselves.

Reliability ``gamma`` always multiplies the annotations' log-likelihood (given the latent
truth where the model has one): ``gamma -> 0`` ignores the annotators, ``gamma = 1`` is the
plain model, larger values trust them more and raise certainty. A model whose exact sampler
repeats annotations needs a whole number (``"repetitions"``); the others take any real
``gamma > 0`` (``"tempering"``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import pandas as pd
import pymc as pm

from plausible.models import (ambiguity, annotator_beta, bradley_terry, dawid_skene, dirichlet,
                              easy_hard, glad, multi_label, ordered_probit, plackett_luce, prirn,
                              ratings, ratings_censored, su_difficulty)
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
    hyper-parameters, so items can be sampled in shards), ``classes`` (``"any"`` or a
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
    model without random answers), ``ordinal`` (the model reads the classes as ordered
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
    ordinal: bool = False
    plausibility: str = ""

    def __post_init__(self):
        if not self.plausibility:
            default = TRUE_CLASS_POSTERIOR if self.data == "labels" else ITEM_DISTRIBUTION
            object.__setattr__(self, "plausibility", default)
        if self.plausibility not in MEANINGS:
            raise ValueError(f"plausibility must be one of {list(MEANINGS)}, got "
                             f"{self.plausibility!r}")


def _most_named(data) -> int:
    return int(data.n_named().max(initial=0))


ENTRIES = (
    ModelEntry("dirichlet", dirichlet.build, "votes", "tempering", True,
               "Dirichlet(gamma * votes + alpha) plausibilities, exact conjugate draws",
               candidate_width=_most_named),
    ModelEntry("hierarchical-dirichlet", dirichlet.build_hierarchical, "votes", "tempering",
               False, "Dirichlet plausibilities with a concentration learned from all items: "
               "slice for the concentration (items integrated out) + exact draws (compiled)"),
    ModelEntry("prirn", prirn.build, "rankings", "tempering", True,
               "probabilistic inverse rank normalisation: Dirichlet(gamma * IRN + alpha)",
               candidate_width=_most_named),
    ModelEntry("plackett-luce", plackett_luce.build, "rankings", "repetitions", True,
               "Bayesian Plackett-Luce with ties, exact Gibbs (real reliability: gibbs=False)",
               candidate_width=_most_named),
    ModelEntry("annotator-beta", annotator_beta.build, "labels", "tempering", False,
               "Carpenter's hierarchical Beta sensitivities and specificities, exact Gibbs",
               classes="binary", replicate=annotator_beta.replicate_labels,
               label_probabilities=annotator_beta.label_probabilities),
    ModelEntry("dawid-skene", dawid_skene.build, "labels", "tempering", False,
               "Bayesian Dawid-Skene: a confusion matrix per annotator, exact Gibbs (compiled)",
               replicate=dawid_skene.replicate_labels,
               label_probabilities=dawid_skene.label_probabilities),
    ModelEntry("hierarchical-dawid-skene", dawid_skene.build_hierarchical, "labels",
               "tempering", False,
               "Dawid-Skene with confusion rows shrunk to a population matrix: collapsed "
               "class sweeps, slice for the population, exact rows (compiled)", replicate=dawid_skene.replicate_labels,
               label_probabilities=dawid_skene.label_probabilities),
    ModelEntry("learned-prior-dawid-skene", dawid_skene.build_learned_prior, "labels",
               "tempering", False, "Dawid-Skene whose confusion prior (how often a typical "
               "annotator is right, how much its own labels weigh) is learned from the crowd: "
               "collapsed class sweeps, slice for the prior, exact rows (compiled)",
               replicate=dawid_skene.replicate_labels,
               label_probabilities=dawid_skene.label_probabilities),
    ModelEntry("one-coin", dawid_skene.build_one_coin, "labels", "tempering", False,
               "one accuracy per annotator, wrong labels uniform (Dawid-Skene family), exact "
               "Gibbs (compiled)", replicate=dawid_skene.replicate_labels,
               label_probabilities=dawid_skene.label_probabilities),
    ModelEntry("mace", dawid_skene.build_mace, "labels", "repetitions", False,
               "MACE: each annotator truthful or spamming from its own strategy, exact Gibbs "
               "(compiled; real reliability: gibbs=False)", replicate=dawid_skene.replicate_labels,
               label_probabilities=dawid_skene.label_probabilities,
               spammer=dawid_skene.mace_spammer),
    ModelEntry("ambiguity-dawid-skene", ambiguity.build, "labels", "repetitions", False,
               "each item's own distribution over the classes (its ambiguity) read through "
               "each annotator's Dawid-Skene confusion matrix, exact Gibbs (compiled; real "
               "reliability: gibbs=False)",
               label_probabilities=dawid_skene.label_probabilities,
               replicate=ambiguity.replicate_labels, plausibility=ITEM_DISTRIBUTION),
    ModelEntry("ambiguity-one-coin", ambiguity.build_one_coin, "labels", "repetitions", False,
               "each item's own distribution over the classes (its ambiguity) read through "
               "one accuracy per annotator, exact Gibbs (compiled; real reliability: "
               "gibbs=False)", label_probabilities=dawid_skene.label_probabilities,
               replicate=ambiguity.replicate_labels, plausibility=ITEM_DISTRIBUTION),
    ModelEntry("easy-hard", easy_hard.build, "labels", "tempering", False,
               "latent classes with an easy and a hard subclass each: errors correlated "
               "through the item, exact Gibbs", replicate=easy_hard.replicate_labels),
    ModelEntry("ordered-probit", ordered_probit.build, "labels", "tempering", False,
               "ordinal grades: each annotator's bias and noise around the item's true grade "
               "(ordered probit) and rate of random answers, compiled slice-within-Gibbs with "
               "the perceptions integrated out", replicate=ordered_probit.replicate_labels,
               label_probabilities=ordered_probit.label_probabilities,
               spammer=ordered_probit.spammer, ordinal=True),
    ModelEntry("glad", glad.build, "labels", "tempering", False,
               "GLAD: annotator ability x item difficulty, Gibbs classes + slice parameters",
               replicate=glad.replicate_labels,
               label_probabilities=glad.label_probabilities),
    ModelEntry("su-difficulty", su_difficulty.build, "labels", "tempering", False,
               "Su's item difficulty x annotator fallibility, Gibbs classes + slice parameters",
               replicate=su_difficulty.replicate_labels,
               label_probabilities=su_difficulty.label_probabilities),
    ModelEntry("multi-label", multi_label.build, "label_sets", "tempering", False,
               "multi-label sets: a Bernoulli mixture over the items' true label sets with "
               "per-annotator, per-label sensitivity and specificity, exact Gibbs",
               plausibility=LABEL_MARGINALS),
    ModelEntry("bradley-terry", bradley_terry.build, "comparisons", "repetitions", False,
               "Bayesian Bradley-Terry: a Gamma worth per item, exact Gibbs with Caron & "
               "Doucet's augmentation; plausibility over rank positions",
               plausibility=RANK_DISTRIBUTION),
    ModelEntry("noisy-bradley-terry", bradley_terry.build_noisy, "comparisons", "repetitions",
               False, "Bradley-Terry with each annotator answering at random at their own rate "
               "(a spammer), exact Gibbs with the random answers augmented",
               plausibility=RANK_DISTRIBUTION),
    ModelEntry("normal-inverse-gamma", ratings.build, "ratings", "tempering", True,
               "Normal-Inverse-Gamma ratings thresholded into two classes, exact NIG draws",
               required=("threshold",), shard_options=ratings.shard_options,
               replicate=ratings.replicate_ratings),
    ModelEntry("censored-normal-inverse-gamma", ratings_censored.build, "ratings", "repetitions",
               False, "NIG ratings censored at the scale's ends (and recorded to a "
               "resolution), learned hyper-parameters: Gibbs with data augmentation",
               required=("threshold",), replicate=ratings_censored.replicate_ratings),
)
_BY_NAME = {entry.name: entry for entry in ENTRIES}

DEFAULT_MODELS = {"votes": "dirichlet", "rankings": "prirn", "labels": "learned-prior-dawid-skene",
                  "labels (binary)": "learned-prior-dawid-skene",
                  "ratings": "normal-inverse-gamma", "label_sets": "multi-label",
                  "comparisons": "noisy-bradley-terry"}
"""The model :func:`plausible.aggregate` fits when none is named, by the data's format. For
labels it answers "which class is this item": Dawid–Skene with its confusion prior learned
from the crowd, the label model that came closest to the better of EM Dawid–Skene and majority vote
on every crowd with gold of ``benchmarks/crowd_panel.py`` while its chains mix (the docs'
crowd panel page says why it wins). ``"auto"`` (the choice among :data:`AUTO_CANDIDATES` by
PSIS-LOO) is asked for by name: LOO rewards predicting the labels, which on real crowds is
not naming the true class."""
AUTO_CANDIDATES = {
    "labels": ("glad", "hierarchical-dawid-skene", "ambiguity-dawid-skene"),
    "labels (binary)": ("annotator-beta", "dawid-skene", "ambiguity-dawid-skene"),
}
"""The models ``model="auto"`` (:func:`plausible.aggregate`) fits and chooses among by PSIS-LOO, in
order of preference (the first is chosen when LOO can rank none), then stacks with the converged
candidates of the chosen one's meaning. Multi-class labels: GLAD (an ability per annotator, a
difficulty per item), hierarchical Dawid–Skene (confusion matrices shrunk to a population's) and
each item's own distribution over the classes read through Dawid–Skene confusion matrices, so
the data decide whether disagreement is annotator error or item ambiguity. The set is the one
with the smallest mean and worst gap in Brier score to the best single model, among the sets
that hold the ambiguity model, in the simulation study ``benchmarks/study_auto_candidates.py``
(real-crowd structure with and without ambiguous items; its docstring has the numbers); with
stacking, GLAD and hierarchical Dawid–Skene combine, and over 10 simulated crowds and Snow's
three tasks the result's mean gaps to the best of the seven single label models are 0.003 in
accuracy and 0.002 in Brier score (worst 0.01 and 0.02). Binary labels: Carpenter's hierarchical
sensitivities and specificities, Dawid–Skene and the ambiguity model (not studied on binary
simulations)."""


def entry(name: str) -> ModelEntry:
    """The :class:`ModelEntry` registered as ``name``; ``ValueError`` listing the names
    otherwise."""
    try:
        return _BY_NAME[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown model {name!r}; available: {', '.join(_BY_NAME)}") from None


def ordinal_model(data: str) -> str:
    """The name of the model for ordered grades in the format ``data`` (the entry that
    declares ``ordinal``); ``ValueError`` when the format has none."""
    names = [e.name for e in ENTRIES if e.ordinal and e.data == data]
    if not names:
        raise ValueError(f"no model reads {data} as ordered grades; ordered grades are labels")
    return names[0]


def get(name: str) -> Callable[..., pm.Model]:
    """The builder of the model registered as ``name``."""
    return entry(name).build


def available(data: str | None = None) -> pd.DataFrame:
    """Every registered aggregation model (those accepting ``data``, one of :data:`FORMATS`,
    when given), one row each: ``data``, ``classes``, ``reliability``,
    ``item_independent``, ``required``, ``plausibility`` (what it means, :data:`MEANINGS`)
    and ``summary``, indexed by ``model``."""
    if data is not None and data not in FORMATS:
        raise ValueError(f"data must be one of {FORMATS}, got {data!r}")
    rows = [
        {"model": e.name, "data": e.data, "classes": e.classes, "reliability": e.reliability,
         "item_independent": e.item_independent, "required": ", ".join(e.required),
         "plausibility": e.plausibility, "summary": e.summary}
        for e in ENTRIES if data is None or e.data == data
    ]
    return pd.DataFrame(rows).set_index("model")
