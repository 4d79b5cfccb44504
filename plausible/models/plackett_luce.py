"""Bayesian Plackett–Luce model for partial rankings with ties (spec 01 §3.3).

Worths ``lambda_ik ~ Gamma(a, b)`` i.i.d. (dims ``item``, ``class``; default ``a = 1/K``,
``b = 1``), plausibilities ``lambda_i / sum_k lambda_ik``. Each reader's ranking
``b_1 > ... > b_{L-1} > (unranked)`` has the exact tied PL likelihood of
:mod:`plausible.maths.plackett_luce`; readers are independent given ``lambda``.

Reliability ``gamma`` multiplies the rankings' log-likelihood:

* ``gibbs=True`` (default): ``gamma`` must be a whole number, the number of times every reader
  counts. The model declares the exact
  :class:`~plausible.inference.plackett_luce_gibbs.PlackettLuceGibbs` step (each copy with its
  own augmentation), so PyMC's loop needs no NUTS, and the compiled candidate-space sampler
  :func:`~plausible.inference.plackett_luce_sampler.sample_candidates` (the same sweep plus
  independence Metropolis moves), which :func:`plausible.sample` runs unless dense storage is
  asked for: its trace holds the candidate form of :mod:`plausible.metrics.storage`.
* ``gibbs=False``: any real ``gamma > 0`` (tempered PL). There is no conjugate sampler; the
  model has no Gibbs declaration and PyMC samples ``log lambda`` with NUTS using the exact
  differentiable likelihood. With a whole ``gamma`` both builds have the same posterior (this
  is how the Gibbs step is checked against NUTS).

The likelihood enters the model as ``pm.Potential("ranking_likelihood", gamma * log p)``
(the rankings are not a PyMC distribution), so the model's ``logp`` is the exact posterior
density in both cases.
"""

from __future__ import annotations

import numpy as np
import pymc as pm
import pytensor.tensor as pt

from plausible.data.rankings import Rankings
from plausible.data.validation import positive, positive_integer
from plausible.inference.declarations import declare_gibbs, declare_sampler
from plausible.inference.plackett_luce_gibbs import PlackettLuceGibbs
from plausible.inference.plackett_luce_sampler import sample_candidates
from plausible.maths.plackett_luce import layout, log_likelihood, log_likelihood_pt

WHOLE_RELIABILITY = "the Gibbs sampler repeats every reader; pass gibbs=False to temper with NUTS"


def build(rankings, *, reliability: float = 1, gibbs: bool = True,
          shape: float | None = None, rate: float = 1.0) -> pm.Model:
    """PyMC model of PL worths for a :class:`~plausible.data.Rankings`.

    Free variable ``worth (item, class)`` (``Gamma(shape, rate)``, value ``worth_log__``);
    deterministic ``plausibility (item, class)``; potential ``ranking_likelihood``.
    ``reliability``: a whole number of repetitions with ``gibbs=True``, any real > 0 with
    ``gibbs=False`` (see the module docstring).
    """
    n_classes = rankings.n_classes
    shape = positive("shape", 1.0 / n_classes if shape is None else shape)
    rate = positive("rate", rate)
    if gibbs:
        weight = positive_integer("reliability", reliability, WHOLE_RELIABILITY)
        gibbs_layout = layout(rankings, weight)
    else:
        weight = positive("reliability", reliability)
    coords = {"item": rankings.items, "class": rankings.classes}
    with pm.Model(coords=coords) as model:
        worth = pm.Gamma("worth", alpha=shape, beta=rate, dims=("item", "class"))
        pm.Deterministic(
            "plausibility", worth / worth.sum(axis=1, keepdims=True), dims=("item", "class")
        )
        log_lik = log_likelihood_pt(layout(rankings), pt.log(worth))
        pm.Potential("ranking_likelihood", weight * log_lik)
    if gibbs:
        declare_gibbs(model, PlackettLuceGibbs, [worth], layout=gibbs_layout, shape=shape,
                      rate=rate)
        declare_sampler(model, sample_candidates, width=gibbs_layout.max_candidates,
                        rankings=rankings, reliability=weight, shape=shape, rate=rate)
    return model


def ranking_probability(blocks, worth) -> float:
    """``p(b | lambda)`` of one reader's blocks (list of lists of class ids) for worths
    ``(K,)``; e.g. ``ranking_probability([[2], [1], [4]], [0.3, 0.15, 0.4, 0.1, 0.05])``
    is ``0.0111111``."""
    worth = np.asarray(worth, dtype=float)
    rankings = Rankings.from_selectors([[blocks]], classes=worth.size)
    return float(np.exp(log_likelihood(rankings, worth[None])[0]))
