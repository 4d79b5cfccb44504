"""Decisions from the posterior about annotation: which item (and which annotator) to
annotate next, and when to stop (:mod:`plausible.active.allocation`), from the expected
information of one more annotation (:mod:`plausible.active.information`), and for
comparisons which pairs to compare next (:mod:`plausible.active.pairs`) and for label sets
which sets to ask for (:mod:`plausible.active.label_sets`);
:mod:`plausible.active.study` replays allocation strategies on real annotation pools.

>>> result = pl.aggregate(df)                     # doctest: +SKIP
>>> result.next_items(50)                         # doctest: +SKIP
"""

from plausible.active.allocation import STRATEGIES, candidate_pairs, expected_gain, next_items, settled
from plausible.active.information import latent_class_information, top_class_information
from plausible.active.label_sets import label_set_gain, next_label_sets, settled_label_sets
from plausible.active.pairs import next_pairs, pair_information

__all__ = ["STRATEGIES", "candidate_pairs", "expected_gain", "label_set_gain",
           "latent_class_information", "next_items", "next_label_sets", "next_pairs",
           "pair_information", "settled", "settled_label_sets", "top_class_information"]
