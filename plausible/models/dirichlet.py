"""Dirichlet model for top-1 votes (spec 01 §3.1).

``lambda_i ~ Dirichlet(alpha)`` and the votes ``s_i`` enter with reliability ``gamma``:

    log p(lambda | s) = sum_ic (alpha - 1 + gamma s_ic) log lambda_ic + const
    =>  lambda_i | s_i ~ Dirichlet(gamma * s_i + alpha)

The votes are an observed ``Multinomial(n_i, lambda_i)`` (so the trace carries
``observed_data`` and ``pm.sample_posterior_predictive`` makes replicated vote histograms);
reliability ``gamma != 1`` tempers that likelihood through a ``Potential`` adding
``(gamma - 1) sum s log lambda``. The trace's ``log_likelihood/votes (chain, draw, item)`` is
``gamma sum_c s_ic log lambda_ic`` (:func:`pseudo_count_log_likelihood`): the log-probability
of the item's votes as a sequence of labels, without the multinomial coefficient, so that it
compares with the annotator models' on the same labels. ``gamma -> inf`` collapses the
posterior on the vote shares; ``gamma`` and ``alpha`` are ``pm.Data``, so a reliability
sweep is ``pm.set_data`` plus a new :func:`plausible.sample` call.
"""

import numba
import numpy as np
import pymc as pm
import pytensor.tensor as pt
import xarray as xr
from pytensor.tensor.special import xlogy

from plausible.data.validation import positive
from plausible.inference.declarations import declare_gibbs, declare_log_likelihood
from plausible.inference.dirichlet_gibbs import DirichletGibbs
from plausible.metrics.chunks import iter_blocks, read
from plausible.metrics.storage import NAME, CandidateStorage, layout, storage_form


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


@numba.njit(parallel=True, nogil=True, cache=True)
def _weighted_log_sum(values, weights, out):  # pragma: no cover - compiled
    """``out[s, i] = sum_{c: w_ic > 0} w_ic log values[s, i, c]`` in float64 (``values``
    ``(sample, item, slot)`` float32 or float64, ``weights`` ``(item, slot)``); parallel over
    samples, each sum in slot order (the same bits on any number of threads)."""
    for s in numba.prange(values.shape[0]):
        for i in range(values.shape[1]):
            total = 0.0
            for c in range(values.shape[2]):
                if weights[i, c] > 0:
                    total += weights[i, c] * np.log(np.float64(values[s, i, c]))
            out[s, i] = total


def weighted_log_plausibility(trace, weights: np.ndarray) -> xr.DataArray:
    """``sum_c w_ic log lambda_ic`` per draw and item, ``(chain, draw, item)``, from either
    storage (:mod:`plausible.metrics.storage`), in blocks of bounded size.

    ``weights`` float ``(item, class)``, ``>= 0``; a term with ``w_ic = 0`` is 0 whatever
    ``lambda_ic``. In candidate form only the candidates may carry weight (the pooled classes
    are those no annotation names); a weight on a pooled class is a ``ValueError``.
    """
    weights = np.asarray(weights, dtype=np.float64)
    posterior = trace["posterior"]
    if storage_form(trace) == "dense":
        values = posterior[NAME].transpose("chain", "draw", "item", "class")
        slot_weights = weights
        items = values["item"].values
    else:
        storage = CandidateStorage.from_trace(trace)
        values = storage.values.transpose("chain", "draw", "item", "candidate")
        rows, slots = np.nonzero(storage.candidate_class >= 0)
        slot_weights = np.zeros(storage.candidate_class.shape)
        slot_weights[rows, slots] = weights[rows, storage.candidate_class[rows, slots]]
        if not np.isclose(slot_weights.sum(), weights.sum(), rtol=1e-12, atol=0):
            raise ValueError("weights on pooled classes: the candidate form stores only the "
                             "classes the annotations name")
        items = storage.items
    lay = layout(values.rename({values.dims[-1]: "class"}))
    out = np.empty((lay.n_samples, lay.n_items))
    for block in iter_blocks(lay, slot_weights.shape[1]):
        _weighted_log_sum(read(values, block), slot_weights[block.items],
                          out[block.samples, block.items])
    return xr.DataArray(out.reshape(*lay.sample_shape, lay.n_items), dims=("chain", "draw", "item"),
                        coords={"chain": posterior["chain"].values,
                                "draw": posterior["draw"].values, "item": items})


def pseudo_count_log_likelihood(pseudo_counts: np.ndarray):
    """The pointwise log-likelihood of a pseudo-count model, ``trace -> gamma sum_c s_ic log
    lambda_ic`` ``(chain, draw, item)`` with ``gamma`` the trace's ``reliability``
    (:func:`weighted_log_plausibility`). For votes it is the log-probability of each item's
    votes as a sequence of labels; for PrIRN's IRN scores it is a pseudo-likelihood, so LOO
    compares PrIRN fits with each other only."""

    def pointwise(trace) -> xr.DataArray:
        gamma = float(trace["constant_data"]["reliability"])
        return gamma * weighted_log_plausibility(trace, pseudo_counts)

    return pointwise


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
    declare_log_likelihood(model, "votes", pseudo_count_log_likelihood(votes.counts))
    return model


def set_reliability(model: pm.Model, reliability: float) -> None:
    """Change ``gamma`` of a built Dirichlet or PrIRN model in place (it is ``pm.Data``).

    The next :func:`plausible.sample` call samples the new posterior without rebuilding.
    """
    pm.set_data({"reliability": positive("reliability", reliability)}, model=model)
