"""The debiasing study of Mimori et al. 2021: plug-in against debiased
epistemic and calibration losses for a perfect predictor.

Binary task, ``mu_i ~ U(0, 1)``, perfect predictor ``q_i = (mu_i, 1 - mu_i)``, ``n``
labels per item, ``N`` items, 15 bins. The true EL and CL are 0, so every estimate is
pure bias plus noise: the plug-in EL is biased up by ``sum_k E[mu_k (1 - mu_k)] / n =
1 / (3 n)``, the plug-in CL by about ``(number of filled bins) x Var(muhat | bin) / N``
per class; the debiased estimates centre on 0.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from plausible.calibration.losses import calibration_loss, epistemic_loss
from plausible.calibration.bins import N_BINS

N_LABELS = (2, 5)
N_ITEMS = (100, 250, 500, 1000, 2500, 5000, 10000)
ESTIMATES = ("el_plugin", "el_debiased", "cl_plugin", "cl_debiased")


def debiasing_study(
    n_labels: Sequence[int] = N_LABELS,
    n_items: Sequence[int] = N_ITEMS,
    repetitions: int = 10,
    *,
    n_bins: int = N_BINS,
    within: str = "labels",
    seed: int | None = 0,
) -> pd.DataFrame:
    """One row per (``n``, ``N``, repetition): ``n_labels``, ``n_items``, ``repetition``
    and the four estimates ``el_plugin``, ``el_debiased``, ``cl_plugin``, ``cl_debiased``
    (true value 0 for all). Same seed, same table."""
    rng = np.random.default_rng(seed)
    rows = []
    for n in n_labels:
        for N in n_items:
            for rep in range(repetitions):
                mu = rng.uniform(size=N)
                k = rng.binomial(n, mu)
                counts = np.stack([k, n - k], axis=1)
                q = np.stack([mu, 1.0 - mu], axis=1)
                rows.append(
                    {
                        "n_labels": n,
                        "n_items": N,
                        "repetition": rep,
                        "el_plugin": float(epistemic_loss(counts, q, debiased=False)),
                        "el_debiased": float(epistemic_loss(counts, q)),
                        "cl_plugin": float(calibration_loss(counts, q, debiased=False, n_bins=n_bins)),
                        "cl_debiased": float(calibration_loss(counts, q, n_bins=n_bins, within=within)),
                    }
                )
    return pd.DataFrame(rows)


def summarize_study(study: pd.DataFrame) -> pd.DataFrame:
    """Per (``n_labels``, ``n_items``) and estimate: ``mean``, standard error ``se``
    (std ddof 1 over repetitions / sqrt(reps)) and ``z = mean / se`` (``|z| <= 2``: centred
    on the true value 0 within two standard errors)."""
    long = study.melt(["n_labels", "n_items", "repetition"], list(ESTIMATES), "estimate", "value")
    grouped = long.groupby(["n_labels", "n_items", "estimate"], sort=True)["value"]
    out = grouped.agg(mean="mean", std="std", reps="count")
    out["se"] = out["std"] / np.sqrt(out["reps"])
    out["z"] = out["mean"] / out["se"]
    return out.drop(columns="std").reset_index()
