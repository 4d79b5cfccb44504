"""The classic split R-hat of raw draws: the independent route for the one computed from the
moments accumulated while sampling."""

import numpy as np


def classic_split_rhat(x):
    """Split R-hat of the raw values ``x (chain, draw, ...)`` (BDA3 §11.4), odd draws
    leaving the middle one in the second half."""
    half = x.shape[1] // 2
    halves = [x[:, :half], x[:, half:]]
    means = np.concatenate([h.mean(1) for h in halves])
    within = np.concatenate([h.var(1, ddof=1) for h in halves]).mean(0)
    n = x.shape[1] / 2
    return np.sqrt(((n - 1) / n * within + means.var(0, ddof=1)) / within)
