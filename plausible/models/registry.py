"""The registry of aggregation models: which annotation format each accepts, what its
reliability means, and its builder.

The entries are collected from the model families' folders (each ``plausible.models.<family>``
lists its :class:`~plausible.models.model_entry.ModelEntry` rows in ``ENTRIES``) and from
installed packages that declare an entry point in the group ``plausible.models`` (a module
with ``ENTRIES``): a new model is its folder, nothing else. They are listed by annotation
format, then family, in each family's own order.

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

import inspect

import importlib
import pkgutil
import warnings
from collections.abc import Callable
from importlib.metadata import entry_points
from pathlib import Path

import pandas as pd
import pymc as pm

from plausible.models.model_entry import FORMATS, ModelEntry

FAMILIES = Path(__file__).parent
"""The folder of the model families: each package in it is one."""
ENTRY_POINTS = "plausible.models"
"""The entry-point group of model packages installed beside plausible: each names a module
whose ``ENTRIES`` is a tuple of :class:`~plausible.models.model_entry.ModelEntry`."""


def families() -> tuple[str, ...]:
    """The names of the model families: the packages in :data:`FAMILIES`."""
    return tuple(sorted(i.name for i in pkgutil.iter_modules([str(FAMILIES)]) if i.ispkg))


def _family_modules():
    for name in families():
        yield importlib.import_module(f"plausible.models.{name}")
    for point in sorted(entry_points(group=ENTRY_POINTS), key=lambda p: p.name):
        try:
            yield point.load()
        except Exception as error:  # a broken plug-in must not break plausible's own models
            warnings.warn(f"the model package {point.value!r} (entry point {point.name!r} in "
                          f"{ENTRY_POINTS!r}) failed to import and is not registered: "
                          f"{type(error).__name__}: {error}", stacklevel=2)


def _collect() -> tuple[ModelEntry, ...]:
    found = [(FORMATS.index(e.data), order, e) for order, module in enumerate(_family_modules())
             for e in getattr(module, "ENTRIES", ())]
    names = [e.name for *_, e in found]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ValueError(f"models registered twice: {twice}")
    return tuple(e for *_, e in sorted(found, key=lambda f: f[:2]))


def refresh() -> None:
    """Collect the entries (at import, and again after installing, or putting on
    ``sys.path``, a package that declares models under the entry-point group
    :data:`ENTRY_POINTS` in a running process)."""
    global ENTRIES, _BY_NAME
    importlib.invalidate_caches()
    ENTRIES = _collect()
    _BY_NAME = {e.name: e for e in ENTRIES}


ENTRIES: tuple[ModelEntry, ...] = ()
"""Every registered model's entry, by format, then family."""
_BY_NAME: dict[str, ModelEntry] = {}
refresh()


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


def models_taking(option: str) -> list[str]:
    """The registered models whose builder takes ``option`` (e.g. ``"scale"``,
    ``"predictions"``), in the registry's order."""
    return [e.name for e in ENTRIES if option in inspect.signature(e.build).parameters]


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
