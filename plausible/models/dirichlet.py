"""Dirichlet model for top-1 votes (spec 01 §3.1).

``lambda_i ~ Dirichlet(alpha)`` and the votes ``s_i`` enter with reliability ``gamma``:

    log p(lambda | s) = sum_ic (alpha - 1 + gamma s_ic) log lambda_ic + const
    =>  lambda_i | s_i ~ Dirichlet(gamma * s_i + alpha)

The votes are an observed ``Multinomial(n_i, lambda_i)`` (so the trace carries
``observed_data`` and ``log_likelihood`` and ``pm.sample_posterior_predictive`` makes
replicated vote histograms); reliability ``gamma != 1`` tempers that likelihood through a
``Potential`` adding ``(gamma - 1) sum s log lambda``. ``gamma -> inf`` collapses the
posterior on the vote shares; ``gamma`` and ``alpha`` are ``pm.Data``, so a reliability
sweep is ``pm.set_data`` plus a new :func:`plausible.sample` call.
"""

import numpy as np
import pymc as pm
import pytensor.tensor as pt
from pytensor.tensor.special import xlogy

from plausible.data.validation import positive
from plausible.inference.declarations import declare_gibbs
from plausible.inference.dirichlet_gibbs import DirichletGibbs


def pseudo_count_prior(pseudo_counts, *, reliability, alpha):
    """``Dirichlet(alpha)`` plausibilities and the ``gamma * pseudo_counts`` concentration.

    Declares the exact :class:`DirichletGibbs` step; call inside a model context with
    coords ``item`` and ``class``. Returns ``(plausibility, concentration)``.
    """
    gamma = pm.Data("reliability", positive("reliability", reliability))
    prior = pm.Data("alpha", np.asarray(positive("alpha", alpha, scalar=False)))
    shape = pseudo_counts.shape
    plausibility = pm.Dirichlet(
        "plausibility", a=pt.broadcast_to(prior, shape), dims=("item", "class")
    )
    concentration = prior + gamma * pseudo_counts
    declare_gibbs(pm.modelcontext(None), DirichletGibbs, [plausibility], concentration=concentration,
                  pseudo_counts=pseudo_counts)
    return plausibility, gamma


def build(votes, *, reliability: float = 1.0, alpha: float = 1.0) -> pm.Model:
    """PyMC model of ``Dirichlet(gamma * s + alpha)`` plausibilities for a :class:`Votes`.

    Dims: ``item`` (votes.items), ``class`` (votes.classes). Free variable:
    ``plausibility (item, class)``; observed: ``votes (item, class)``.
    """
    coords = {"item": votes.items, "class": votes.classes}
    with pm.Model(coords=coords) as model:
        counts = pm.Data("vote_counts", votes.counts, dims=("item", "class"))
        plausibility, gamma = pseudo_count_prior(counts, reliability=reliability, alpha=alpha)
        pm.Multinomial(
            "votes", n=counts.sum(axis=1), p=plausibility, observed=votes.counts,
            dims=("item", "class"),
        )
        pm.Potential("tempering", (gamma - 1.0) * xlogy(counts, plausibility).sum())
    return model


def set_reliability(model: pm.Model, reliability: float) -> None:
    """Change ``gamma`` of a built Dirichlet or PrIRN model in place (it is ``pm.Data``).

    The next :func:`plausible.sample` call samples the new posterior without rebuilding.
    """
    pm.set_data({"reliability": positive("reliability", reliability)}, model=model)
