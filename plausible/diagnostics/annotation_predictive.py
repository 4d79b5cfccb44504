"""Posterior predictive checks for models of categorical annotations (long :class:`Labels`).

Model-agnostic: the input is the observed :class:`~plausible.data.labels.Labels` and an
int array ``replicated (sample, annotation)`` of labels replicated in the *same design*
(same item and annotator for every annotation slot), one row per posterior draw. A model
plugs in by providing such a replicator, which replicates from the evenly thinned draws of
:func:`thinned_draws` (:func:`plausible.models.annotator_beta.replicate_labels`,
:func:`plausible.models.glad.replicate_labels`,
:func:`plausible.models.su_difficulty.replicate_labels`).

Test quantities ``T``, computed on the observed and on every replicated label set:

* ``pattern``: number of items with each complete response pattern (complete designs only:
  every item labelled exactly once by every annotator; pattern digits are the class
  indices in annotator order, e.g. ``"10000"`` = only annotator 1 says class 1), for at
  most ``max_patterns`` patterns;
* ``votes``: number of items with ``v`` labels of the ``positive`` class, ``v = 0..max``;
* ``annotator_rate``: share of each annotator's labels in the ``positive`` class;
* ``agreement``: for each pair of annotators, the share of agreeing label pairs among all
  pairs of their labels on common items, ``sum_i sum_c n_ijc n_ij'c / sum_i n_ij n_ij'``
  (NaN for pairs without common items);
* ``grade_range`` (ordered classes only, ``ordinal=True``): number of items whose labels span
  ``r`` grades, ``max - min = r``, ``r = 0..C-1``: how far apart an item's labels lie, which a
  model of one true grade and rater noise must reproduce (items that raters split between the
  ends of the scale are ambiguity, not noise).

Each gets a posterior predictive interval (``interval`` mass, central) and the mid p-value
``P(T_rep > T_obs) + P(T_rep = T_obs) / 2`` (values near 0 or 1 flag misfit).
"""

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import sparse

from plausible.data.labels import Labels
from plausible.diagnostics.predictive_statistics import mid_p_value

STATISTICS = ("pattern", "votes", "annotator_rate", "agreement", "grade_range")


def thinned_draws(trace, draws: int) -> tuple[np.ndarray, np.ndarray]:
    """``(chain, draw)`` index arrays of up to ``draws`` evenly thinned posterior draws of a
    trace (or its ``posterior``): the draws a model's label replicator replicates from."""
    posterior = trace.posterior if hasattr(trace, "posterior") else trace
    n_chain, n_draw = posterior.sizes["chain"], posterior.sizes["draw"]
    flat = np.arange(n_chain * n_draw)
    flat = flat[:: max(1, flat.size // draws)][:draws]
    return np.divmod(flat, n_draw)


def _one_hot(index: np.ndarray, size: int) -> sparse.csr_matrix:
    """``(annotation, size)`` 0/1 matrix with a one in column ``index[k]`` of row ``k``."""
    return sparse.csr_matrix((np.ones(index.size), (np.arange(index.size), index)), shape=(index.size, size))


def _is_complete(labels: Labels) -> bool:
    per_pair = np.bincount(labels.item * labels.n_annotators + labels.annotator,
                           minlength=labels.n_items * labels.n_annotators)
    return bool((per_pair == 1).all())


class _Design:
    """Precomputed sparse maps from annotation slots to items / annotators / pairs."""

    def __init__(self, labels: Labels, positive: int, max_patterns: int, ordinal: bool = False):
        self.labels = labels
        self.positive = positive
        self.ordinal = ordinal
        self.item_order = np.argsort(labels.item, kind="stable")
        self.item_starts = np.searchsorted(labels.item[self.item_order], np.arange(labels.n_items))
        J, C = labels.n_annotators, labels.n_classes
        self.by_item = _one_hot(labels.item, labels.n_items)
        self.by_annotator = _one_hot(labels.annotator, J)
        self.by_pair = _one_hot(labels.item * J + labels.annotator, labels.n_items * J)
        self.n_per_annotator = np.asarray(self.by_annotator.sum(axis=0)).ravel()
        self.max_votes = int(np.bincount(labels.item, minlength=labels.n_items).max())
        self.complete = _is_complete(labels) and C**J <= max_patterns
        if self.complete:
            slot = np.empty((labels.n_items, J), dtype=np.int64)
            slot[labels.item, labels.annotator] = np.arange(labels.n_annotations)
            self.slot = slot
            self.weights = C ** np.arange(J - 1, -1, -1)
            self.n_patterns = C**J
            digits = np.array(list(np.ndindex(*(C,) * J)))
            self.pattern_names = ["".join(str(d) for d in row) if C <= 10 else "-".join(map(str, row))
                                  for row in digits]
        counts = self.by_pair.sum(axis=0).A.ravel().reshape(labels.n_items, J)
        self.pair_totals = counts.T @ counts  # (J, J): sum_i n_ij n_ij'
        self.pair_rows, self.pair_cols = np.triu_indices(J, k=1)

    def statistics(self, replicated: np.ndarray) -> dict[str, np.ndarray]:
        """Each statistic for every row of ``replicated`` ``(sample, annotation)``."""
        labels, S = self.labels, replicated.shape[0]
        out = {}
        if self.complete:
            codes = replicated[:, self.slot] @ self.weights  # (S, item)
            offsets = (np.arange(S) * self.n_patterns)[:, None]
            out["pattern"] = np.bincount((codes + offsets).ravel(),
                                         minlength=S * self.n_patterns).reshape(S, self.n_patterns)
        is_pos = (replicated == self.positive).astype(float)
        votes = np.asarray(self.by_item.T @ is_pos.T).T.astype(np.int64)  # (S, item)
        n_bins = self.max_votes + 1
        out["votes"] = np.bincount((votes + (np.arange(S) * n_bins)[:, None]).ravel(),
                                   minlength=S * n_bins).reshape(S, n_bins)
        with np.errstate(invalid="ignore", divide="ignore"):
            out["annotator_rate"] = np.asarray(self.by_annotator.T @ is_pos.T).T / self.n_per_annotator
            agree = np.zeros((S, labels.n_annotators, labels.n_annotators))
            for c in range(labels.n_classes):  # a loop over classes only
                counts = np.asarray(self.by_pair.T @ (replicated == c).T.astype(float)).T
                counts = counts.reshape(S, labels.n_items, labels.n_annotators)
                agree += np.einsum("sij,sik->sjk", counts, counts)
            # same-annotator pairs are excluded by taking the upper triangle only
            ratio = agree / self.pair_totals
        out["agreement"] = ratio[:, self.pair_rows, self.pair_cols]
        if self.ordinal:
            by_item = replicated[:, self.item_order]
            spread = (np.maximum.reduceat(by_item, self.item_starts, axis=1)
                      - np.minimum.reduceat(by_item, self.item_starts, axis=1))  # (S, item)
            C = labels.n_classes
            out["grade_range"] = np.bincount((spread + (np.arange(S) * C)[:, None]).ravel(),
                                             minlength=S * C).reshape(S, C)
        return out


@dataclass(frozen=True)
class AnnotationPredictiveCheck:
    """Observed and replicated statistics; each table is indexed by the statistic's entries.

    ``observed[name]``: ``pd.Series``; ``replicated[name]``: ``pd.DataFrame`` (sample x entry).
    """

    observed: dict
    replicated: dict
    interval: float = 0.95

    def p_values(self, name: str) -> pd.Series:
        """Mid p-value of every entry of statistic ``name``."""
        rep, obs = self.replicated[name], self.observed[name]
        values = mid_p_value(rep.to_numpy(), obs.to_numpy()[None])
        values = np.where(obs.isna().to_numpy(), np.nan, values)
        return pd.Series(values, index=obs.index, name="p_value")

    def summary(self, name: str) -> pd.DataFrame:
        """Observed value, replicated median and central interval, mid p-value, and whether
        the observed value lies in the interval, per entry of statistic ``name``."""
        rep, obs = self.replicated[name], self.observed[name]
        tail = (1 - self.interval) / 2
        low, high = rep.quantile(tail), rep.quantile(1 - tail)
        lo_name, hi_name = f"{100 * tail:g}%", f"{100 * (1 - tail):g}%"
        return pd.DataFrame({
            "observed": obs, "median": rep.median(), lo_name: low, hi_name: high,
            "p_value": self.p_values(name), "inside": (obs >= low) & (obs <= high),
        })

    @property
    def names(self) -> list[str]:
        """The statistics this check computed, in the module's order."""
        return [n for n in STATISTICS if n in self.observed]

def annotation_predictive_check(labels: Labels, replicated, *, positive: int | None = None,
                                max_patterns: int = 1024, interval: float = 0.95,
                                ordinal: bool = False) -> AnnotationPredictiveCheck:
    """Compare observed labels with labels replicated from the posterior.

    Parameters
    ----------
    labels : Labels
        The observed long labels.
    replicated : int array ``(sample, annotation)``
        Class indices replicated in the design of ``labels`` (column ``k`` is item
        ``labels.item[k]``, annotator ``labels.annotator[k]``), one row per posterior draw.
    positive : int
        Class index counted by ``votes`` and ``annotator_rate`` (default the last class).
    max_patterns : int
        The ``pattern`` statistic is computed when the design is complete and has at most
        this many possible patterns (``classes ** annotators``).
    ordinal : bool
        The classes are ordered grades: add ``grade_range`` (module).
    """
    replicated = np.asarray(replicated)
    if replicated.ndim != 2 or replicated.shape[1] != labels.n_annotations:
        raise ValueError(f"replicated must be (sample, {labels.n_annotations}) labels in the "
                         f"observed design, got shape {replicated.shape}")
    if replicated.min() < 0 or replicated.max() >= labels.n_classes:
        raise ValueError(f"replicated labels must be class indices in 0..{labels.n_classes - 1}")
    positive = labels.n_classes - 1 if positive is None else int(positive)
    design = _Design(labels, positive, max_patterns, ordinal)
    obs = design.statistics(labels.label[None])
    rep = design.statistics(replicated)
    names = {"votes": np.arange(design.max_votes + 1), "annotator_rate": list(labels.annotators),
             "agreement": [f"{labels.annotators[a]}-{labels.annotators[b]}"
                           for a, b in zip(design.pair_rows, design.pair_cols)]}
    if design.complete:
        names["pattern"] = design.pattern_names
    if ordinal:
        names["grade_range"] = np.arange(labels.n_classes)
    observed = {k: pd.Series(obs[k][0], index=pd.Index(names[k], name=k)) for k in names}
    replicated_tables = {k: pd.DataFrame(rep[k], columns=pd.Index(names[k], name=k)) for k in names}
    order = [n for n in STATISTICS if n in names]
    return AnnotationPredictiveCheck({k: observed[k] for k in order},
                                     {k: replicated_tables[k] for k in order}, interval)
