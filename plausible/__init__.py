"""plausible: Bayesian annotation aggregation with PyMC.

Disagreeing annotations become posterior *plausibilities* (per item, a distribution
over classes); uncertainty-adjusted metrics, diagnostics and posterior predictive
checks read those draws from an ArviZ ``xarray.DataTree``::

    import plausible as pl
    votes = pl.data.load_cifar10h()
    trace = pl.sample(pl.models.dirichlet.build(votes, reliability=1.0), seed=0)
    pl.metrics.annotation_certainty(trace).mean()
"""

import pytensor

# Bit-identical draws for identical seeds: fast-math lets LLVM reorder float
# reductions, which changes results across compilations.
pytensor.config.numba__fastmath = False

from plausible import calibrators, data, diagnostics, metrics, models  # noqa: E402
from plausible.inference import sample  # noqa: E402

__version__ = "0.1.0"
__all__ = ["calibrators", "data", "diagnostics", "metrics", "models", "sample"]
