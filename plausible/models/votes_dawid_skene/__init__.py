"""Dawid–Skene for anonymous votes: one true class per item, and votes on the same item that
agree with each other more than independent votes would (a Dirichlet-multinomial per class;
Dawid & Skene 1979 with the votes pooled, as in CIFAR-10H, where no annotator is named).

Item ``i`` has vote counts ``n_i (class,)``::

    pi        ~ Dirichlet(a)                      class prevalence (or a classifier's prior)
    psi_c     ~ Dirichlet(beta_c)                 how votes fall when the truth is c
    kappa     ~ Gamma(shape, rate)                how alike the votes on one item are
    z_i       ~ Categorical(pi)
    theta_i   ~ Dirichlet(kappa psi_{z_i})        item i's own vote distribution
    n_i       ~ Multinomial(N_i, theta_i)         (likelihood to the power gamma)

``theta_i`` is integrated out: given its class, an item's votes are Dirichlet-multinomial,
``log p(n_i | z_i = c) = lgamma(kappa) - lgamma(kappa + N_i) + sum_x lgamma(kappa psi_cx +
n_ix) - lgamma(kappa psi_cx)`` (as a sequence of votes, without the multinomial
coefficient). A small ``kappa`` says that the votes on an item are correlated: a hard item
draws many wrong votes, an easy one none. Independent votes (Dawid–
Skene with one anonymous voter, ``kappa -> infinity``) read three agreeing votes as near
certainty; here the model learns from all items how much a second and third agreeing vote
add, so that an item whose few votes split, or disagree with a classifier, keeps its doubt.
One vote per item says nothing about ``kappa``; the items with several do. ``kappa`` is one
number for the crowd, not one per class: with a ``kappa_c`` per class, a class whose
``kappa_c`` goes to 0 explains any unanimous item by a vertex of its ``psi_c`` and becomes a
catch-all (on CIFAR-10H thinned to 1-5 votes, chains settled there and named the true class
of 0.63-0.78 of the images).

**Where it fails.** Without a classifier, votes of one fixed small number per item barely tie
the classes down: on CIFAR-10H thinned to exactly 3 votes an image, ``kappa`` goes to about 0.2
(each item's votes nearly unanimous on a class drawn from a diffuse ``psi_c``) whatever its
prior, and the consensus falls below majority vote. Items of 1-5 votes, or a classifier's
prior, hold it.

**Prior.** ``beta_c`` puts ``confusion_prior[0]`` on the diagonal and ``confusion_prior[1]``
elsewhere (default ``(4, 1)``, which orients the classes like the votes);
``concentration_prior`` (default ``(2, 0.1)``: mean 20, wide) for ``kappa``; ``a =
class_concentration`` (1). ``predictions=``: a classifier's probabilities as each item's
prior in place of ``pi``, with a learned temperature and class bias
(:mod:`plausible.models.classifier_prior`).

**Gibbs** (:mod:`plausible.models.votes_dawid_skene.sampler`): ``psi_c | kappa, z`` for
each class and ``kappa | psi, z`` by slice sampling of the Dirichlet-multinomial rows, ``pi | z`` exactly (or the
classifier's ``(tau, b) | z``), then every item's class from ``softmax(log prior_i +
gamma L[i])``; :func:`plausible.sample` runs it compiled and ``pm.sample`` takes the same
kernel as its one step (``pl.inference.steps(model)``). ``gibbs=False`` sums the classes
out and runs NUTS on the same model (the independent check).

**Plausibility**: per draw the class posterior ``P(z_i | pi, kappa, psi, n_i)``
(Rao-Blackwellised; the posterior of one true class, not the votes' distribution of the
Dirichlet models). **Per-item log-likelihood** (``az.loo``): ``logsumexp_c(log pi_c +
gamma L[i, c])``, the class summed out, on the same scale as the Dirichlet models' term.
"""

from __future__ import annotations

import functools

import numpy as np
import pymc as pm
import pytensor.tensor as pt
import xarray as xr

from plausible.data.tables import reads
from plausible.data.validation import positive
from plausible.diagnostics.annotation_predictive import thinned_draws
from plausible.diagnostics.vote_predictive import replicated_vote_check
from plausible.inference.bridges.as_pymc_step import declare_kernel
from plausible.inference.declarations import declare_log_likelihood
from plausible.metrics.chunks import iter_sample_blocks
from plausible.metrics.meaning import TRUE_CLASS_POSTERIOR
from plausible.models import classifier_prior
from plausible.models.model_entry import ModelEntry
from plausible.models.votes_dawid_skene.sampler import (VoteDesign, VotesDawidSkeneKernel,
                                                        item_kernel)

CONCENTRATION_PRIOR = (2.0, 0.1)
"""Gamma ``(shape, rate)`` of ``kappa``: mean 20 votes' worth, from a few to about 60."""


def _concentration(n_classes: int, confusion_prior) -> np.ndarray:
    """``beta (class, label_class)``: ``confusion_prior[0]`` on the diagonal, ``[1]``
    elsewhere."""
    diagonal, off = (positive("confusion_prior", v) for v in confusion_prior)
    beta = np.full((n_classes, n_classes), off)
    np.fill_diagonal(beta, diagonal)
    return beta


def _class_log_likelihood(counts, alpha, gamma):
    """``gamma L (item, class)`` as a tensor, for ``counts (item, label_class)`` and ``alpha
    (class, label_class)``: zero counts add nothing, so the sum runs over every class."""
    n = pt.constant(np.asarray(counts, dtype=np.float64))
    kappa = alpha.sum(axis=1)
    total = n.sum(axis=1)
    per_vote = (pt.gammaln(alpha[None, :, :] + n[:, None, :]) - pt.gammaln(alpha)[None]).sum(2)
    return gamma * (pt.gammaln(kappa)[None, :] - pt.gammaln(kappa[None, :] + total[:, None])
                    + per_vote)


@reads("votes")
def build(votes, *, reliability: float = 1.0, gibbs: bool = True,
          confusion_prior: tuple = (4.0, 1.0), concentration_prior: tuple = CONCENTRATION_PRIOR,
          class_concentration: float = 1.0, predictions=None) -> pm.Model:
    """PyMC model of Dawid–Skene for anonymous votes (module) for a
    :class:`~plausible.data.Votes` (``C >= 2`` classes).

    Variables: ``population_confusion (class, label_class)`` (``psi``), ``concentration``
    (``kappa``), ``class_prior (class)`` (or, with ``predictions``, ``temperature``
    and ``class_bias (class)``), ``true_class (item)`` (Gibbs build), deterministic
    ``plausibility (item, class)``. ``reliability``: ``gamma > 0``, the power of the votes'
    likelihood given the classes. ``gibbs``: the compiled kernel (module), also ``pm.sample``'s
    one step; False sums the classes out for NUTS. ``predictions``: a classifier's
    probabilities ``(item, class)`` (anything :func:`plausible.data.read_predictions` reads),
    each item's prior (:mod:`plausible.models.classifier_prior`).
    """
    C = len(votes.classes)
    if C < 2:
        raise ValueError(f"votes-dawid-skene needs at least 2 classes, got {C}")
    gamma = positive("reliability", reliability)
    beta = _concentration(C, confusion_prior)
    shape, rate = (positive("concentration_prior", v) for v in concentration_prior)
    a = np.full(C, positive("class_concentration", class_concentration))
    log_p = (None if predictions is None else
             classifier_prior.log_probabilities(predictions, votes.items, votes.classes))
    design = VoteDesign(votes.counts)
    z0 = np.asarray(votes.counts).argmax(axis=1)
    kernel = VotesDawidSkeneKernel(design, beta, (shape, rate), a, gamma,
                                   classifier=None if log_p is None else
                                   classifier_prior.ClassifierPrior(log_p))
    start = np.exp(kernel.population_start(z0)[:, 1:])
    coords = {"item": votes.items, "class": votes.classes, "label_class": votes.classes}
    with pm.Model(coords=coords) as model:
        pm.Data("reliability", gamma)
        pm.Data("confusion_concentration", beta, dims=("class", "label_class"))
        psi = pm.Dirichlet("population_confusion", a=beta, dims=("class", "label_class"),
                           initval=start)
        kappa = pm.Gamma("concentration", alpha=shape, beta=rate, initval=float(C))
    if log_p is None:
        with model:
            pi = pm.Dirichlet("class_prior", a=a, dims="class")
        log_prior, class_prior = pt.log(pi)[None, :], {"p": pi}
    else:
        log_prior = classifier_prior.add_prior(model, log_p)
        class_prior = {"logit_p": log_prior}
    with model:
        L = _class_log_likelihood(votes.counts, kappa * psi, gamma)
        log_joint = log_prior + L
        if gibbs:
            z = pm.Categorical("true_class", **class_prior, dims="item", initval=z0)
            pm.Potential("votes", L[pt.arange(design.n_items), z].sum())
        else:
            pm.Potential("votes", pt.logsumexp(log_joint, axis=1).sum())
        pm.Deterministic("plausibility", pt.special.softmax(log_joint, axis=1),
                         dims=("item", "class"))
    if gibbs:
        constant = {"reliability": gamma}
        if log_p is not None:
            constant[classifier_prior.CONSTANT] = (("item", "class"), log_p)
        declare_kernel(model, kernel, coords={"item": votes.items, "class": votes.classes,
                                              "label_class": votes.classes},
                       constant_data=constant)
    observed = xr.DataArray(np.asarray(votes.counts), dims=("item", "class"),
                            coords={"item": votes.items, "class": votes.classes})
    cached = functools.cache(lambda: design)
    declare_log_likelihood(model, "votes", lambda trace: log_likelihood(trace, cached()),
                           observed=observed)
    return model


def _log_prior(trace, chain, draw) -> np.ndarray:
    """The class log prior at the draws ``(chain, draw)`` (index arrays), ``(sample, item,
    class)`` with a classifier's prior, else ``(sample, 1, class)``."""
    posterior = trace["posterior"]
    if classifier_prior.uses_classifier(trace):
        return classifier_prior.log_prior(posterior, trace["constant_data"], chain, draw)
    pi = posterior["class_prior"].transpose("chain", "draw", "class").values[chain, draw]
    with np.errstate(divide="ignore"):
        return np.log(np.asarray(pi, dtype=np.float64)).reshape(-1, 1, posterior.sizes["class"])


def _alpha(posterior, chain, draw) -> np.ndarray:
    """``alpha = kappa psi`` ``(sample, class, label_class)`` at the draws."""
    psi = posterior["population_confusion"].transpose("chain", "draw", "class", "label_class")
    kappa = posterior["concentration"].transpose("chain", "draw")
    C = posterior.sizes["class"]
    return np.ascontiguousarray(
        (kappa.values[chain, draw][..., None, None] * psi.values[chain, draw]).reshape(-1, C, C))


def log_likelihood(trace, design: VoteDesign) -> xr.DataArray:
    """Per-item ``logsumexp_c(log prior_ic + gamma L[i, c])``, ``(chain, draw, item)``, read in
    blocks of draws."""
    posterior = trace["posterior"]
    gamma = float(trace["constant_data"]["reliability"])
    shape = (posterior.sizes["chain"], posterior.sizes["draw"])
    out = np.empty((shape[0] * shape[1], design.n_items))
    empty = np.empty((0, 0, 0))
    for samples, (chain, draw) in iter_sample_blocks(shape, design.n_items * design.n_classes):
        draws = np.arange(posterior.sizes["draw"])[draw]
        chains = np.full(draws.size, chain)
        item_kernel(design.offsets, design.label, design.value_index, design.total_index,
                    design.values, design.totals, _alpha(posterior, chains, draws),
                    np.ascontiguousarray(_log_prior(trace, chains, draws)), gamma, 0,
                    design.n_items, empty, out[samples])
    return xr.DataArray(out.reshape(*shape, design.n_items), dims=("chain", "draw", "item"),
                        coords={"chain": posterior["chain"].values,
                                "draw": posterior["draw"].values,
                                "item": posterior["item"].values})


def replicate_votes(trace, votes, *, draws: int = 500, seed: int | None = None) -> np.ndarray:
    """Replicated vote counts int ``(sample, item, class)`` with each item's observed number
    of votes: per thinned draw, ``z_i`` from the class prior, ``theta_i ~ Dirichlet(kappa_z
    psi_z)``, ``n_i ~ Multinomial(N_i, theta_i)``."""
    posterior = trace["posterior"]
    chain, draw = thinned_draws(posterior, draws)
    rng = np.random.default_rng(seed)
    counts = np.asarray(votes.counts)
    totals = counts.sum(axis=1)
    N, C = counts.shape
    out = np.empty((chain.size, N, C), dtype=np.int64)
    for s in range(chain.size):
        alpha = _alpha(posterior, chain[s:s + 1], draw[s:s + 1])[0]
        prior = np.exp(_log_prior(trace, chain[s:s + 1], draw[s:s + 1])[0])
        prior = np.broadcast_to(prior / prior.sum(axis=1, keepdims=True), (N, C))
        z = (rng.random((N, 1)) > np.cumsum(prior, axis=1)).sum(axis=1).clip(max=C - 1)
        theta = _dirichlet_rows(rng, alpha[z])
        out[s] = rng.multinomial(totals, theta)
    return out


def _dirichlet_rows(rng, concentration: np.ndarray) -> np.ndarray:
    """A Dirichlet draw per row of ``concentration (row, class)``, by normalised Gammas."""
    g = rng.standard_gamma(concentration)
    total = g.sum(axis=1, keepdims=True)
    return np.where(total > 0, g / np.where(total > 0, total, 1.0), 1.0 / g.shape[1])


def predictive_check(trace, votes, *, draws: int = 200, seed: int | None = None):
    """The vote predictive check (:func:`plausible.diagnostics.replicated_vote_check`) of votes
    replicated from the model (:func:`replicate_votes`): does it reproduce how often the votes
    on an item agree?"""
    observed = xr.DataArray(np.asarray(votes.counts), dims=("item", "class"),
                            coords={"item": votes.items, "class": votes.classes})
    return replicated_vote_check(observed, replicate_votes(trace, votes, draws=draws, seed=seed))


__all__ = ["CONCENTRATION_PRIOR", "build", "log_likelihood", "predictive_check",
           "replicate_votes"]


ENTRIES = (
    ModelEntry("votes-dawid-skene", build, "votes", "tempering", False,
               "Dawid-Skene for anonymous votes: one true class per item, the votes on an item "
               "Dirichlet-multinomial given it (alike votes learned); slice + exact Gibbs "
               "(compiled)", plausibility=TRUE_CLASS_POSTERIOR,
               predictive_check=predictive_check),
)
"""The registry entry of this family (:mod:`plausible.models.registry`)."""
