"""plausible: Bayesian annotation aggregation with PyMC.

Disagreeing annotations become posterior *plausibilities* (per item, a distribution
over classes); uncertainty-adjusted metrics, diagnostics and posterior predictive
checks read those draws from an ArviZ ``xarray.DataTree``::

    import plausible as pl
    votes = pl.data.load_cifar10h()
    trace = pl.sample(pl.models.dirichlet.build(votes, reliability=1.0), seed=0)
    pl.metrics.annotation_certainty(trace).mean()

or, from a table of annotations to a checked posterior in one call, ``pl.aggregate(df)``
(:mod:`plausible.aggregation`), and several models compared on it, ``pl.compare(df,
["dawid-skene", "mace"])`` (:mod:`plausible.comparison`).

Importing plausible sets PyTensor's ``numba__fastmath`` flag to False for the whole process
(see "Reproducibility" in docs/models/index.md): fast-math lets LLVM reorder floating-point
reductions differently in each compilation, and a seed must give the same draws.
"""

import pytensor

pytensor.config.numba__fastmath = False

from plausible import (  # noqa: E402
    active,
    calibration,
    conformal,
    data,
    diagnostics,
    distributed,
    evaluation,
    inference,
    maths,
    metrics,
    models,
    plots,
)
from plausible.aggregation import Aggregation, aggregate, load  # noqa: E402
from plausible.comparison import Comparison, compare  # noqa: E402
from plausible.inference import sample  # noqa: E402

__version__ = "0.1.0"
__all__ = [
    "Aggregation",
    "Comparison",
    "active",
    "aggregate",
    "conformal",
    "compare",
    "load",
    "calibration",
    "data",
    "diagnostics",
    "distributed",
    "evaluation",
    "inference",
    "maths",
    "metrics",
    "models",
    "plots",
    "sample",
]


def __getattr__(name):
    if name == "testing":  # the deprecated name of plausible.evaluation (warns once imported)
        import importlib

        return importlib.import_module("plausible.testing")
    raise AttributeError(f"module 'plausible' has no attribute {name!r}")
