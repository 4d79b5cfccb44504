"""Maximum-likelihood Plackett–Luce worths for partial rankings with ties (Stutz et al. 2023).

The deterministic counterpart of the Bayesian PL model (as IRN is to PrIRN): maximise the
exact tied log-likelihood ``sum_r gamma log p(b^r | lambda)`` of every item over the
log-worths of its *candidates* (classes ranked by someone). Classes ranked by nobody only
ever appear in denominators, so the likelihood decreases in their mass and their ML
plausibility is 0 (the limit); they are left out. The likelihood is scale-free, so the
log-worths are centred per item; they are boxed in ``[-bound, bound]`` because the ML
estimate is on the boundary when a candidate is never beaten (e.g. one reader: its first
block takes everything) — such items converge to the bound, i.e. a near-deterministic
plausibility, as IRN does.

Optimiser: L-BFGS-B on the sum over items (items are separable) with the exact gradient
of the pytensor likelihood.
"""

from __future__ import annotations

import numpy as np
import pytensor
import pytensor.tensor as pt
import scipy.optimize
import xarray as xr

from plausible.maths.plackett_luce import NEG, block_log_likelihood, layout


def _objective(lay):
    log_cand = pt.matrix("log_cand")
    log_pool = pt.as_tensor_variable(np.full(lay.n_items, NEG))
    total = sum(values.sum() for values in block_log_likelihood(lay, log_cand, log_pool))
    return pytensor.function([log_cand], [-total, -pytensor.grad(total, log_cand)])


def maximum_likelihood(rankings, *, bound: float = 20.0, tol: float = 1e-10,
                       max_iter: int = 5000) -> xr.DataArray:
    """ML plausibilities ``(item, class)`` (candidates get ``softmax(log lambda)``, the
    classes ranked by nobody 0). A reliability would scale the log-likelihood and leave the
    estimate unchanged, so there is none."""
    lay = layout(rankings)
    valid = lay.candidate_class >= 0
    fn = _objective(lay)
    shape = lay.candidate_class.shape

    def fun(x):
        log_cand = np.where(valid, x.reshape(shape), NEG)
        value, grad = fn(log_cand)
        return float(value), np.where(valid, grad, 0.0).ravel()

    result = scipy.optimize.minimize(
        fun, np.zeros(valid.size), jac=True, method="L-BFGS-B",
        bounds=[(-bound, bound)] * valid.size,
        options={"maxiter": max_iter, "ftol": tol, "gtol": tol * 1e-2},
    )
    log_cand = np.where(valid, result.x.reshape(shape), -np.inf)
    cand = np.exp(log_cand - log_cand.max(axis=1, keepdims=True))
    cand /= cand.sum(axis=1, keepdims=True)
    dense = np.zeros((lay.n_items, lay.n_classes))
    rows, slots = np.nonzero(valid)
    dense[rows, lay.candidate_class[rows, slots]] = cand[rows, slots]
    return xr.DataArray(
        dense, dims=("item", "class"),
        coords={"item": rankings.items, "class": rankings.classes},
        name="plausibility", attrs={"converged": bool(result.success)},
    )
