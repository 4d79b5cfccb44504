"""Monte Carlo certainty and UA accuracy of thresholded NIG plausibilities, streamed.

For data sets where a ``(draws, items, classes)`` trace does not fit (AVA: 255,000 images),
draws of ``(mu, sigma2)`` are made straight from the conjugate posterior with numpy, a
chunk of draws at a time, and reduced on the fly:

* the top-1 class of draw ``m`` is ``[mu^(m) >= t]`` (class 1 ``at_or_above``, class 0
  ``below``; the plausibility ``(Phi((t - mu)/sigma), 1 - Phi((t - mu)/sigma))`` ranks the
  classes this way), counted per item -> label certainty and annotation certainty
  ``AC_1 = max(count_below, count_above) / M``;
* with predictions ``c_i``, the UA top-1 accuracy of draw ``m`` is
  ``(1/N) sum_i 1[[mu_i^(m) >= t] = c_i]`` (a dataset value per draw; its mean, spread and
  histogram via :func:`plausible.metrics.summarize` / ``histogram``).

Memory is ``O(chunk_elements + items)`` whatever the number of draws. Every draw row has
its own random stream (``SeedSequence(seed).spawn(draws)``), so the numbers depend on the
seed only, not on the chunk size.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import xarray as xr

from plausible.data.validation import fmt, raise_first
from plausible.maths.logspace import log_gamma_draws
from plausible.metrics.predictions import score_order
from plausible.models.ratings.nig import CLASSES, NIGPosterior, check_threshold


CHUNK_ELEMENTS = 2**20
"""Default draws x items per chunk: three float64 buffers of 8 MiB each."""


@dataclass(frozen=True)
class StreamedCertainty:
    """Results of :func:`stream_certainty`.

    ``label_certainty`` float64 ``(item, class)``: share of draws with each top-1 class;
    ``annotation_certainty`` float64 ``(item,)``: its maximum;
    ``ua_accuracy`` float64 ``(chain=1, draw)``: dataset UA top-1 accuracy per draw, or None
    without predictions; ``n_draws``.
    """

    label_certainty: xr.DataArray
    annotation_certainty: xr.DataArray
    ua_accuracy: xr.DataArray | None
    n_draws: int


def predicted_class(predictions, items: np.ndarray) -> np.ndarray:
    """Predicted class index per item (0 ``below``, 1 ``at_or_above``) as int8 ``(item,)``.

    ``predictions``: bool ``(item,)`` (True = at or above), ints in {0, 1} ``(item,)``, or
    scores ``(item, 2)`` (top-1 class, ties to the lowest index).
    """
    values = np.asarray(predictions)
    n_items = items.size
    if values.ndim == 2:
        if values.shape != (n_items, len(CLASSES)):
            raise ValueError(f"prediction scores have shape {values.shape}, expected ({n_items}, 2)")
        raise_first(np.isnan(values).any(axis=1), lambda i: f"prediction scores of item {fmt(items[i])} contain NaN")
        return score_order(values)[:, 0].astype(np.int8)
    if values.shape != (n_items,):
        raise ValueError(f"predictions have shape {values.shape}, expected ({n_items},) or ({n_items}, 2)")
    if values.dtype != bool and not np.isin(values, (0, 1)).all():
        raise ValueError("predictions must be bool, 0/1 class indices, or (item, 2) scores")
    return values.astype(np.int8)


def _check_draws(draws) -> None:
    if isinstance(draws, bool) or not isinstance(draws, (int, np.integer)) or draws < 1:
        raise ValueError(f"draws must be a positive int, got {draws!r}")


def iter_draws(posterior: NIGPosterior, draws: int, *, seed=None, chunk_elements: int | None = None):
    """Exact NIG draws in chunks of draws: yields ``(rows, mu, log_sigma)``.

    ``rows`` is the slice of draw indices, ``mu`` and ``log_sigma`` float64
    ``(len(rows), item)`` views into buffers that the next chunk overwrites. Per draw ``m``
    and item ``i``: ``G ~ Gamma(alpha_n)``, ``log sigma = (log beta_n - log G) / 2``,
    ``mu = mu_n + exp(log sigma - log(kappa_n) / 2) z`` with ``z ~ N(0, 1)``. Draw ``m`` comes
    from its own stream ``SeedSequence(seed).spawn(draws)[m]``, so the draws do not depend
    on ``chunk_elements`` (draws x items per chunk, default :data:`CHUNK_ELEMENTS`).
    """
    _check_draws(draws)
    n_items = posterior.n_items
    budget = CHUNK_ELEMENTS if chunk_elements is None else int(chunk_elements)
    step = max(1, min(draws, budget // max(n_items, 1)))
    alpha = posterior.alpha_n
    half_log_beta = 0.5 * np.log(posterior.beta_n)
    half_log_kappa = 0.5 * np.log(posterior.kappa_n)
    small_shape = bool((alpha < 1).any())
    rngs = [np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(draws)]
    log_sigma_buffer = np.empty((step, n_items))
    mu_buffer = np.empty((step, n_items))
    sd_buffer = np.empty((step, n_items))
    for start in range(0, draws, step):
        rows = min(step, draws - start)
        log_sigma, mu, sd = log_sigma_buffer[:rows], mu_buffer[:rows], sd_buffer[:rows]
        for r in range(rows):  # one vectorised call per draw and stream
            rng = rngs[start + r]
            if small_shape:
                log_sigma[r] = log_gamma_draws(rng, alpha)
            else:
                rng.standard_gamma(alpha, out=log_sigma[r])
                np.log(log_sigma[r], out=log_sigma[r])
            rng.standard_normal(out=mu[r])
        log_sigma *= -0.5
        log_sigma += half_log_beta
        np.subtract(log_sigma, half_log_kappa, out=sd)
        np.exp(sd, out=sd)
        mu *= sd
        mu += posterior.mu_n
        yield slice(start, start + rows), mu, log_sigma


def stream_certainty(
    posterior: NIGPosterior,
    threshold: float,
    *,
    draws: int = 1000,
    predictions=None,
    seed: int | None = None,
    chunk_elements: int | None = None,
) -> StreamedCertainty:
    """Monte Carlo label/annotation certainty and UA accuracy without holding the draws.

    Exact NIG draws from :func:`iter_draws`; the top-1 class of draw ``m`` and item ``i``
    is ``[mu >= t]``.

    Parameters
    ----------
    posterior : NIGPosterior
        Per-item conjugate posterior (:func:`plausible.models.ratings.nig_posterior`).
    threshold : float
        ``t``.
    draws : int
        ``M``, draws per item.
    predictions : optional
        Classifier decisions per item (see :func:`predicted_class`) for UA accuracy.
    seed : int, optional
        Same seed, same numbers (independently of ``chunk_elements``).
    chunk_elements : int, optional
        Draws x items processed at once (default :data:`CHUNK_ELEMENTS`, at least one
        draw); peak extra memory is about three float64 arrays of this size.

    Returns
    -------
    StreamedCertainty
    """
    _check_draws(draws)
    threshold = check_threshold(threshold)
    n_items = posterior.n_items
    predicted = None if predictions is None else predicted_class(predictions, posterior.items)
    above_count = np.zeros(n_items, dtype=np.int64)
    accuracy = np.empty(draws) if predicted is not None else None
    for rows, mu, _ in iter_draws(posterior, draws, seed=seed, chunk_elements=chunk_elements):
        above = mu >= threshold  # (rows, item): the top-1 class index
        above_count += above.sum(axis=0)
        if predicted is not None:
            accuracy[rows] = (above == predicted).mean(axis=1)

    counts = np.stack([draws - above_count, above_count], axis=1)
    item_coords = {"item": posterior.items}
    label = xr.DataArray(
        counts / draws, dims=("item", "class"), coords={**item_coords, "class": list(CLASSES)},
        name="certainty",
    )
    annotation = xr.DataArray(
        counts.max(axis=1) / draws, dims=("item",), coords=item_coords, name="annotation_certainty",
        attrs={"top": 1, "threshold": threshold},
    )
    ua = None
    if accuracy is not None:
        ua = xr.DataArray(
            accuracy[np.newaxis], dims=("chain", "draw"),
            coords={"chain": [0], "draw": np.arange(draws)}, name="ua_topk_accuracy", attrs={"k": 1},
        )
    return StreamedCertainty(label, annotation, ua, draws)
