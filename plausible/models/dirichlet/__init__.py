"""Dirichlet models for top-1 votes (Stutz et al. 2023): a fixed concentration (:func:`build`) or
one learned from all items (:func:`build_hierarchical`).

``lambda_i ~ Dirichlet(alpha)`` and the votes ``s_i`` enter with reliability ``gamma``:

    log p(lambda | s) = sum_ic (alpha - 1 + gamma s_ic) log lambda_ic + const
    =>  lambda_i | s_i ~ Dirichlet(gamma * s_i + alpha)

The votes are an observed ``Multinomial(n_i, lambda_i)`` (so the trace carries
``observed_data`` and ``pm.sample_posterior_predictive`` makes replicated vote histograms);
reliability ``gamma != 1`` tempers that likelihood through a ``Potential`` adding
``(gamma - 1) sum s log lambda``. ``gamma -> inf`` collapses the posterior on the vote shares;
``gamma`` and ``alpha`` are ``pm.Data``, so a reliability sweep is ``pm.set_data`` plus a new
:func:`plausible.sample` call.

**Learned concentration** (:func:`build_hierarchical`): ``alpha = kappa mu`` with ``kappa ~
Gamma(s, r)`` (default ``s = 1``, ``r = 1 / C``: an exponential prior whose mean is the fixed
model's ``alpha = 1`` per class) and the base measure ``mu ~ Dirichlet(1, ..., 1)`` (or fixed
uniform, ``base="uniform"``: a scalar ``kappa / C`` per class). A fixed ``alpha = 1`` spreads
the plausibilities of an item with few votes over every class; learned from 10,000 items, the
concentration says how unanimous annotators tend to be, and how often each class is chosen.
The compiled sampler (:mod:`plausible.models.dirichlet.hierarchical_sampler`) draws
``(kappa, mu)`` with every ``lambda_i`` integrated out, then each ``lambda_i`` exactly given
them; ``compiled=False`` leaves the PyMC model to NUTS (the independent check).

**Per-item log-likelihood** (``log_likelihood/votes (chain, draw, item)``, for LOO): item
``i``'s votes as a sequence of labels with its own ``lambda_i`` integrated out, the
Dirichlet-multinomial (:func:`vote_log_likelihood`)::

    log p(s_i | alpha) = log B(alpha + gamma s_i) - log B(alpha)
                       = lgamma(A) - lgamma(A + gamma n_i) + sum_c lgamma(alpha_c + gamma s_ic) - lgamma(alpha_c),

``A = sum_c alpha_c``, ``B`` the multivariate Beta function. Leaving item ``i`` out removes
everything known about ``lambda_i``, which importance sampling of the draws of ``lambda_i``
cannot mimic (PSIS's Pareto k would be large for most items); integrated out, the term
depends on the draws only through ``alpha``, and with a fixed ``alpha`` it is the exact
leave-one-out value (:func:`plausible.diagnostics.leave_one_out.loo`). It is the
annotator models' quantity too: their per-item terms sum out the item's latent class.
"""

import math

import numba
import numpy as np
import pymc as pm
import pytensor.tensor as pt
import xarray as xr
from pytensor.tensor.special import xlogy

from plausible.data.tables import reads
from plausible.data.validation import positive
from plausible.inference.declarations import declare_gibbs, declare_log_likelihood
from plausible.inference.bridges.as_pymc_step import declare_kernel
from plausible.inference.step_methods.dirichlet_gibbs import DirichletGibbs
from plausible.models.dirichlet.hierarchical_sampler import HierarchicalDirichletKernel
from plausible.metrics.chunks import iter_blocks, read
from plausible.metrics.storage import NAME, CandidateStorage, layout, storage_form
from plausible.models.model_entry import ModelEntry, most_named


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
    (:func:`weighted_log_plausibility`): PrIRN's pseudo-likelihood of its IRN scores, so LOO
    compares PrIRN fits with each other only."""

    def pointwise(trace) -> xr.DataArray:
        gamma = float(trace["constant_data"]["reliability"])
        return gamma * weighted_log_plausibility(trace, pseudo_counts)

    return pointwise


@numba.njit(parallel=True, nogil=True, cache=True)
def _dirichlet_multinomial(alpha, indptr, slots, counts, out):  # pragma: no cover - compiled
    """``out[s, i] = log B(alpha_s + m_i) - log B(alpha_s)`` for ``alpha (sample, class)`` and
    the positive counts of item ``i`` at ``slots[indptr[i]:indptr[i + 1]]`` (classes) and the
    same range of ``counts``; parallel over samples."""
    for s in numba.prange(alpha.shape[0]):
        total_alpha = 0.0
        for c in range(alpha.shape[1]):
            total_alpha += alpha[s, c]
        lgamma_total = math.lgamma(total_alpha)
        for i in range(out.shape[1]):
            value = lgamma_total
            n = 0.0
            for k in range(indptr[i], indptr[i + 1]):
                a = alpha[s, slots[k]]
                value += math.lgamma(a + counts[k]) - math.lgamma(a)
                n += counts[k]
            out[s, i] = value - math.lgamma(total_alpha + n)


def vote_log_likelihood(vote_counts: np.ndarray):
    """The pointwise log-likelihood of the Dirichlet models (module): ``trace -> log B(alpha +
    gamma s_i) - log B(alpha)`` ``(chain, draw, item)``, ``alpha`` the posterior's
    ``concentration * base_measure`` or, with neither, the trace's constant ``alpha``."""
    vote_counts = np.asarray(vote_counts, dtype=np.float64)
    items, slots = np.nonzero(vote_counts > 0)
    indptr = np.concatenate([[0], np.cumsum(np.bincount(items, minlength=len(vote_counts)))])

    def pointwise(trace) -> xr.DataArray:
        posterior, constant = trace["posterior"], trace["constant_data"]
        gamma = float(constant["reliability"])
        sample = posterior.sizes["chain"], posterior.sizes["draw"]
        if "concentration" in posterior.data_vars:
            alpha = (posterior["concentration"] * posterior["base_measure"]).transpose(
                "chain", "draw", "class").values.reshape(-1, vote_counts.shape[1])
        else:
            alpha = np.broadcast_to(np.asarray(constant["alpha"].values, dtype=np.float64),
                                    (1, vote_counts.shape[1]))
        out = np.empty((len(alpha), len(vote_counts)))
        _dirichlet_multinomial(np.ascontiguousarray(alpha), indptr, slots,
                               gamma * vote_counts[items, slots], out)
        values = np.broadcast_to(out.reshape(-1, 1, len(vote_counts)) if len(out) == 1
                                 else out.reshape(*sample, -1), (*sample, len(vote_counts)))
        return xr.DataArray(values, dims=("chain", "draw", "item"),
                            coords={"chain": posterior["chain"].values,
                                    "draw": posterior["draw"].values,
                                    "item": posterior["item"].values})

    return pointwise


@reads("votes")
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
    declare_log_likelihood(model, "votes", vote_log_likelihood(votes.counts))
    return model


BASES = ("learned", "uniform")


@reads("votes")
def build_hierarchical(votes, *, reliability: float = 1.0, concentration_prior: tuple | None = None,
                       base: str = "learned", compiled: bool = True) -> pm.Model:
    """PyMC model of Dirichlet plausibilities whose concentration ``alpha = kappa mu`` is
    learned from all items (module) for a :class:`Votes`.

    ``concentration_prior``: Gamma ``(shape, rate)`` of ``kappa`` (default ``(1, 1 / C)``);
    ``base``: ``"learned"`` (``mu ~ Dirichlet(1, ..., 1)``) or ``"uniform"`` (fixed). Dims
    ``item``, ``class``; free variables ``concentration``, ``base_measure (class)`` (learned
    base; with a uniform one it is a deterministic) and ``plausibility (item, class)``;
    observed ``votes (item, class)``.
    ``compiled``: :func:`plausible.sample` runs the compiled partially collapsed Gibbs sampler
    (dense storage); False leaves the model to PyMC (NUTS).
    """
    if base not in BASES:
        raise ValueError(f"base must be one of {BASES}, got {base!r}")
    n_classes = len(votes.classes)
    if concentration_prior is None:
        concentration_prior = (1.0, 1.0 / n_classes)
    shape, rate = (positive("concentration_prior", v) for v in concentration_prior)
    gamma = positive("reliability", reliability)
    coords = {"item": votes.items, "class": votes.classes}
    with pm.Model(coords=coords) as model:
        counts = pm.Data("vote_counts", votes.counts, dims=("item", "class"))
        reliability_data = pm.Data("reliability", gamma)
        kappa = pm.Gamma("concentration", alpha=shape, beta=rate)
        if base == "learned":
            mu = pm.Dirichlet("base_measure", a=np.ones(n_classes), dims="class")
        else:
            # a deterministic, so that vote_log_likelihood reads it on both routes
            mu = pm.Deterministic("base_measure",
                                  pt.constant(np.full(n_classes, 1.0 / n_classes)), dims="class")
        plausibility = pm.Dirichlet("plausibility", a=pt.broadcast_to(kappa * mu, counts.shape),
                                    dims=("item", "class"))
        pm.Multinomial("votes", n=counts.sum(axis=1), p=plausibility, observed=votes.counts,
                       dims=("item", "class"))
        pm.Potential("tempering",
                     (reliability_data - 1.0) * xlogy(counts, plausibility).sum())
    if compiled:
        start = np.log(np.concatenate([[n_classes], np.full(n_classes, 1.0 / n_classes)]))
        kernel = HierarchicalDirichletKernel(
            gamma * np.asarray(votes.counts, dtype=np.float64), base_prior=np.ones(n_classes),
            concentration_prior=(shape, rate), learn_base=base == "learned", start=start)
        declare_kernel(model, kernel, coords={"item": votes.items, "class": votes.classes},
                       constant_data={"reliability": gamma})
    observed = xr.DataArray(np.asarray(votes.counts), dims=("item", "class"),
                            coords={"item": votes.items, "class": votes.classes})
    declare_log_likelihood(model, "votes", vote_log_likelihood(votes.counts), observed=observed)
    return model


def set_reliability(model: pm.Model, reliability: float) -> None:
    """Change ``gamma`` of a built Dirichlet or PrIRN model in place (it is ``pm.Data``).

    The next :func:`plausible.sample` call samples the new posterior without rebuilding.
    """
    pm.set_data({"reliability": positive("reliability", reliability)}, model=model)


ENTRIES = (
    ModelEntry("dirichlet", build, "votes", "tempering", True,
               "Dirichlet(gamma * votes + alpha) plausibilities, exact conjugate draws",
               candidate_width=most_named),
    ModelEntry("hierarchical-dirichlet", build_hierarchical, "votes", "tempering",
               False, "Dirichlet plausibilities with a concentration learned from all items: "
               "slice for the concentration (items integrated out) + exact draws (compiled)"),
)
"""The registry entries of this family (:mod:`plausible.models.registry`)."""
