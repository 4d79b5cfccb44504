"""plausible: Bayesian annotation aggregation with PyMC.

Disagreeing annotations become posterior *plausibilities* (per item, a distribution
over classes); uncertainty-adjusted metrics, diagnostics and posterior predictive
checks read those draws from an ArviZ ``xarray.DataTree``.
"""

import pytensor

# Bit-identical draws for identical seeds: fast-math lets LLVM reorder float
# reductions, which changes results across compilations.
pytensor.config.numba__fastmath = False

__version__ = "0.1.0"
