"""Aggregation models: each ``build(data, *, reliability=..., ...)`` returns a ``pm.Model`` with
dims ``item`` and ``class`` whose posterior holds ``plausibility (chain, draw, item, class)``.

:func:`available` lists them with the annotation format each accepts and what its
reliability means; :func:`get` returns a builder by name (:mod:`plausible.models.registry`).
Each model family is one folder (:mod:`~plausible.models.dawid_skene`,
:mod:`~plausible.models.glad`, ...): its graph in the package, its samplers and kernels beside
it, its registry entries in ``ENTRIES`` (:class:`ModelEntry`). Also here: the latent-class
layer shared by the label models (:mod:`~plausible.models.latent_class`).
"""

from plausible.models.model_entry import (FORMATS, ITEM_DISTRIBUTION, LABEL_MARGINALS,
                                          MEANINGS, RANK_DISTRIBUTION, TRUE_CLASS_POSTERIOR,
                                          ModelEntry)
from plausible.models.registry import (AUTO_CANDIDATES, DEFAULT_MODELS, available, entry,
                                       families, get, models_taking, ordinal_model)

__all__ = [
    "AUTO_CANDIDATES",
    "DEFAULT_MODELS",
    "FORMATS",
    "ITEM_DISTRIBUTION",
    "LABEL_MARGINALS",
    "MEANINGS",
    "ModelEntry",
    "RANK_DISTRIBUTION",
    "TRUE_CLASS_POSTERIOR",
    "available",
    "entry",
    "families",
    "models_taking",
    "get",
    "ordinal_model",
    "latent_class",
    *families(),
]
