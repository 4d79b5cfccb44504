"""Which model :func:`~plausible.aggregation.aggregate` fits when none is named: the format's
default (:data:`~plausible.models.registry.DEFAULT_MODELS`; for labels, :data:`DEFAULT_REASON`
says why), the model for ordered grades, and the candidates that ``model="auto"`` chooses
among (:data:`~plausible.models.registry.AUTO_CANDIDATES`)."""

from __future__ import annotations

from plausible import models
from plausible.data.tables import format_of
from plausible.models.registry import AUTO_CANDIDATES, DEFAULT_MODELS

AUTO = "auto"
"""The model name that asks :func:`~plausible.aggregation.aggregate` to choose among
:data:`~plausible.models.registry.AUTO_CANDIDATES`."""
DEFAULT_REASON = ("the default for labels: it names each item's one true class, and on every "
                  "public crowd with gold of the project's panel it came closest to the better "
                  "of EM Dawid-Skene and majority vote while its chains mix")
"""Why a label model fitted by default is the one it is (the result's repr and the command
line say it)."""


def _kind(data) -> str:
    kind = format_of(data)
    return "labels (binary)" if kind == "labels" and data.n_classes == 2 else kind


def default_model(data, ordinal: bool = False, init=None, predictions: bool = False) -> str:
    """The registry name of the model fitted when none is named: with ``init`` (an earlier
    result, a warm start) its model, which a warm start continues; with ``ordinal`` (the
    classes are ordered grades) the model that declares it reads them so
    (:func:`plausible.models.registry.ordinal_model`); otherwise the default for the
    container's format (:data:`~plausible.models.registry.DEFAULT_MODELS`), or, with
    ``predictions`` (a classifier's prior) where that default takes none, the format's first
    registered model that takes them (for votes: a true class per item, which the
    classifier predicts, where the default keeps each item's vote distribution)."""
    if init is not None:
        return init.model
    if ordinal:
        return models.ordinal_model(format_of(data))
    name = DEFAULT_MODELS[_kind(data)]
    if predictions and name not in models.models_taking("predictions"):
        taking = [n for n in models.models_taking("predictions")
                  if models.entry(n).data == format_of(data)]
        return taking[0] if taking else name  # none: the default refuses them by name
    return name


def auto_candidates(data) -> tuple[str, ...]:
    """The models ``model="auto"`` chooses among for a container (:data:`AUTO_CANDIDATES`;
    for a format without a candidate set, its default model alone)."""
    kind = _kind(data)
    return AUTO_CANDIDATES.get(kind, (DEFAULT_MODELS[kind],))
