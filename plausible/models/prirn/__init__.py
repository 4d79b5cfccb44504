"""Probabilistic IRN (PrIRN) for partial rankings (Stutz et al. 2023).

``p(lambda | b) = Dirichlet(gamma * IRN(b) + alpha)`` with ``IRN`` the normalised inverse
rank normalisation of :mod:`plausible.models.prirn.irn`. As a PyMC model:
``lambda ~ Dirichlet(alpha)`` plus the pseudo-likelihood ``gamma * sum_c IRN_c log lambda_c``
(a ``Potential``: rankings have no generative model here). The trace's
``log_likelihood/rankings`` holds that pseudo-likelihood per item, ``gamma sum_c IRN_ic log
lambda_ic``: LOO compares PrIRN fits with each other, not with Plackett–Luce. Reference defaults
``alpha = 0.01``; reliabilities ``gamma`` in {10, 20, 30, 50, 100} in the paper's figures.
"""

import pymc as pm
from pytensor.tensor.special import xlogy

from plausible.data.tables import reads
from plausible.inference.declarations import declare_log_likelihood
from plausible.models.dirichlet import pseudo_count_log_likelihood, pseudo_count_prior
from plausible.models.prirn.irn import irn
from plausible.models.model_entry import ModelEntry, most_named


@reads("rankings")
def build(
    rankings, *, reliability: float = 10.0, alpha: float = 0.01, divide_by_block_size: bool = False
) -> pm.Model:
    """PyMC model of PrIRN plausibilities for a :class:`Rankings`.

    ``divide_by_block_size`` switches IRN to the paper's formula (weights ``1/(i |b_i|)``)
    instead of the reference implementation's ``1/i``. Dims ``item``, ``class``; free
    variable ``plausibility (item, class)``; ``pm.Data`` ``irn`` holds the IRN point estimate.
    """
    scores = irn(rankings, divide_by_block_size=divide_by_block_size)
    coords = {"item": rankings.items, "class": rankings.classes}
    with pm.Model(coords=coords) as model:
        pseudo_counts = pm.Data("irn", scores.values, dims=("item", "class"))
        plausibility, gamma = pseudo_count_prior(pseudo_counts, reliability=reliability, alpha=alpha)
        pm.Potential("rankings", gamma * xlogy(pseudo_counts, plausibility).sum())
    declare_log_likelihood(model, "rankings", pseudo_count_log_likelihood(scores.values),
                           observed=rankings.to_dataarray())
    return model


ENTRIES = (
    ModelEntry("prirn", build, "rankings", "tempering", True,
               "probabilistic inverse rank normalisation: Dirichlet(gamma * IRN + alpha)",
               candidate_width=most_named),
)
"""The registry entries of this family (:mod:`plausible.models.registry`)."""
