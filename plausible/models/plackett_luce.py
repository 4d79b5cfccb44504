"""Bayesian Plackett–Luce model for partial rankings with ties (spec 01 §3.3).

Worths ``lambda_ik ~ Gamma(a, b)`` i.i.d. (dims ``item``, ``class``; default ``a = 1/K``,
``b = 1``), plausibilities ``lambda_i / sum_k lambda_ik``. Each reader's ranking
``b_1 > ... > b_{L-1} > (unranked)`` has the exact tied PL likelihood of
:mod:`plausible.models.plackett_luce_likelihood`; readers are independent given ``lambda``.

Reliability ``gamma``:

* ``repetitions`` (integer): every reader counts ``gamma`` times. The model declares the exact
  :class:`~plausible.inference.plackett_luce_gibbs.PlackettLuceGibbs` step (each copy with its
  own augmentation), so :func:`plausible.sample` needs no NUTS.
* ``tempering`` (real ``> 0``): the likelihood raised to ``gamma`` (tempered PL). There is no
  conjugate sampler; the model has no Gibbs declaration and PyMC samples ``log lambda`` with
  NUTS using the exact differentiable likelihood. ``tempering=g`` with integer ``g`` is the
  same posterior as ``repetitions=g`` (this is how the Gibbs step is checked against NUTS).

The likelihood enters the model as ``pm.Potential("ranking_likelihood", gamma * log p)``
(the rankings are not a PyMC distribution), so the model's ``logp`` is the exact posterior
density in both cases.
"""

from __future__ import annotations

import numpy as np
import pymc as pm
import pytensor.tensor as pt

from plausible.inference.conjugacy import declare_gibbs
from plausible.inference.plackett_luce_gibbs import PlackettLuceGibbs
from plausible.models.plackett_luce_likelihood import layout, log_likelihood_pt


def _positive(name, value) -> float:
    value = float(value)
    if not (np.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be finite and > 0, got {value}")
    return value


def build(rankings, *, repetitions: int = 1, tempering: float | None = None,
          shape: float | None = None, rate: float = 1.0) -> pm.Model:
    """PyMC model of PL worths for a :class:`~plausible.data.Rankings`.

    Free variable ``worth (item, class)`` (``Gamma(shape, rate)``, value ``worth_log__``);
    deterministic ``plausibility (item, class)``; potential ``ranking_likelihood``.
    ``repetitions`` (Gibbs) and ``tempering`` (NUTS) are exclusive ways to set reliability.
    """
    n_classes = rankings.n_classes
    shape = _positive("shape", 1.0 / n_classes if shape is None else shape)
    rate = _positive("rate", rate)
    if tempering is not None:
        if repetitions != 1:
            raise ValueError("give either repetitions (Gibbs) or tempering (NUTS), not both")
        weight = _positive("tempering", tempering)
    else:
        gibbs_layout = layout(rankings, repetitions)  # validates repetitions
        weight = float(repetitions)
    coords = {"item": rankings.items, "class": rankings.classes}
    with pm.Model(coords=coords) as model:
        worth = pm.Gamma("worth", alpha=shape, beta=rate, dims=("item", "class"))
        pm.Deterministic(
            "plausibility", worth / worth.sum(axis=1, keepdims=True), dims=("item", "class")
        )
        log_lik = log_likelihood_pt(layout(rankings), pt.log(worth))
        pm.Potential("ranking_likelihood", weight * log_lik)
    if tempering is None:
        declare_gibbs(model, PlackettLuceGibbs, [worth], layout=gibbs_layout, shape=shape,
                      rate=rate)
    return model
