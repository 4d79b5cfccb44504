"""Aggregation models: each ``build(data, *, reliability=..., ...)`` returns a ``pm.Model`` with
dims ``item`` and ``class`` whose posterior holds ``plausibility (chain, draw, item, class)``.

:func:`available` lists them with the annotation format each accepts and what its
reliability means; :func:`get` returns a builder by name (:mod:`plausible.models.registry`).
Also here: the deterministic aggregates they are compared with (:mod:`irn`,
:mod:`plackett_luce_mle`), the latent-class layer of the label models (:mod:`latent_class`)
and the shared pieces of the ratings model (:mod:`ratings_nig`, :mod:`ratings_empirical`,
:mod:`ratings_stream`).
"""

from plausible.models import (
    annotator_beta,
    bradley_terry,
    dawid_skene,
    dirichlet,
    glad,
    irn,
    latent_class,
    ordered_probit,
    multi_label,
    plackett_luce,
    plackett_luce_mle,
    prirn,
    ratings,
    su_difficulty,
)
from plausible.models.registry import (FORMATS, ITEM_DISTRIBUTION, LABEL_MARGINALS, MEANINGS,
                                       RANK_DISTRIBUTION, TRUE_CLASS_POSTERIOR, ModelEntry,
                                       available, entry, get, ordinal_model)

__all__ = [
    "FORMATS",
    "ITEM_DISTRIBUTION",
    "LABEL_MARGINALS",
    "MEANINGS",
    "RANK_DISTRIBUTION",
    "ModelEntry",
    "TRUE_CLASS_POSTERIOR",
    "annotator_beta",
    "bradley_terry",
    "available",
    "dawid_skene",
    "dirichlet",
    "entry",
    "get",
    "glad",
    "irn",
    "latent_class",
    "ordered_probit",
    "ordinal_model",
    "multi_label",
    "plackett_luce",
    "plackett_luce_mle",
    "prirn",
    "ratings",
    "su_difficulty",
]
