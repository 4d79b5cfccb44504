"""The consensus rating of an item on the rating scale: the expected rating of a new rater,
under the Gaussian ratings model and under the censored one (ratings recorded at the scale's
ends)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy.special import ndtr

from plausible.metrics.options import OPTIONS


def expected_rating(mu, sigma2, censor_low: float = -np.inf, censor_high: float = np.inf):
    """``E[clip(y, l, u)]``, ``y ~ N(mu, sigma2)``: the mean of a rating recorded at the
    scale's ends ``[l, u]`` (elementwise; ``mu`` itself without censoring):
    ``mu + E[(l - y)+] - E[(y - u)+]`` with ``E[(l - y)+] = (l - mu) Phi(a) + sigma phi(a)``,
    ``E[(y - u)+] = (mu - u) Phi(-b) + sigma phi(b)``, ``a = (l - mu) / sigma``, ``b = (u -
    mu) / sigma``."""
    mu, sd = np.asarray(mu, dtype=np.float64), np.sqrt(np.asarray(sigma2, dtype=np.float64))
    out = mu.copy()
    for end, sign in ((censor_low, 1.0), (censor_high, -1.0)):
        if np.isfinite(end):  # the mass beyond the end moves onto it
            z = (end - mu) / sd
            beyond = ndtr(sign * z)
            out += (end - mu) * beyond + sign * sd * np.exp(-0.5 * z * z) / math.sqrt(2 * math.pi)
    return out


CONSENSUS_QUANTILES = (0.025, 0.975)
"""The interval of :func:`consensus` (95 %, equal-tailed)."""


def consensus(trace) -> pd.DataFrame:
    """Per item (index: the item ids) the consensus rating on the rating scale: the expected
    rating of a new rater, :func:`expected_rating` of each draw's ``mu_i``, ``sigma2_i`` at
    the trace's ``censor_low``/``censor_high`` (none for the Gaussian model; rounding to a
    resolution left out, it moves the mean by a fraction of a step), summarised over the
    draws: ``consensus_score`` (posterior mean), ``consensus_q025`` and ``consensus_q975``
    (its 95 % interval). Read in blocks of items, every draw of an item at once."""
    posterior = trace["posterior"]
    constant = trace["constant_data"] if "constant_data" in trace.children else None
    ends = {name: float(constant[name]) for name in ("censor_low", "censor_high")
            if constant is not None and name in constant.data_vars}
    mu = posterior["mu"].transpose("chain", "draw", "item")
    sigma2 = posterior["sigma2"].transpose("chain", "draw", "item")
    n_samples, n_items = mu.shape[0] * mu.shape[1], mu.shape[2]
    step = max(1, OPTIONS["chunk_elements"] // max(n_samples, 1))
    out = np.empty((n_items, 1 + len(CONSENSUS_QUANTILES)))
    for start in range(0, n_items, step):
        block = slice(start, min(start + step, n_items))
        value = expected_rating(np.asarray(mu.data[:, :, block]).reshape(n_samples, -1),
                                np.asarray(sigma2.data[:, :, block]).reshape(n_samples, -1),
                                **ends)
        out[block, 0] = value.mean(axis=0)
        out[block, 1:] = np.quantile(value, CONSENSUS_QUANTILES, axis=0).T
    return pd.DataFrame(out, columns=["consensus_score", "consensus_q025", "consensus_q975"],
                        index=pd.Index(mu["item"].values, name="item"))
