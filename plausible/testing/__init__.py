"""Deprecated: :mod:`plausible.evaluation` under its old name.

``plausible.testing`` read as test helpers (the convention of ``numpy.testing`` and
``xarray.testing``), so testing a classifier against noisy labels moved to
:mod:`plausible.evaluation`. This alias re-exports it, submodules included
(``plausible.testing.binary`` is ``plausible.evaluation.binary``), warns once imported, and is
removed in the next release.
"""

import importlib
import sys
import warnings

from plausible import evaluation
from plausible.evaluation import *  # noqa: F403
from plausible.evaluation import __all__  # noqa: F401

warnings.warn("plausible.testing is now plausible.evaluation; the old name will be removed in "
              "the next release", DeprecationWarning, stacklevel=2)

SUBMODULES = ("binary", "confusion_gibbs", "credible_regions", "labeler_baselines", "model",
              "multiclass", "mutual_information", "noisy_logistic", "ratio_normal", "studies")
for _name in SUBMODULES:
    globals()[_name] = sys.modules[f"{__name__}.{_name}"] = importlib.import_module(
        f"{evaluation.__name__}.{_name}")
