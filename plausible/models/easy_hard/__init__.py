"""Easy/hard latent class model for annotators whose errors are correlated through the item
(Espeland & Handelman 1989's extended latent classes; Dawid & Skene 1979's model with two
subclasses per class).

Dawid–Skene and Carpenter's model assume an annotator's errors are independent given the
item's class. On the dentistry data that fails: five dentists agree on a caries far more often
than independent errors allow (pattern 11111: 100 patients against a predictive interval of
[42, 79]). Here every class ``c`` has two subclasses:

* **easy** (state ``2c``): every annotator labels it ``c`` with the same high probability,
  ``eta_c ~ Dirichlet(beta_easy)`` shared by all annotators, ``beta_easy = easy_prior[0]`` on
  ``c`` and ``easy_prior[1]`` elsewhere (default ``(19, 1)``: mean accuracy 0.95 for two
  classes);
* **hard** (state ``2c + 1``): each annotator has its own, weaker accuracy,
  ``theta_j[2c + 1] ~ Dirichlet(beta_hard)`` (default ``(2, 1)``: mean accuracy 2/3).

The item's state has prior weights ``w ~ Dirichlet(1, ..., 1)`` over the ``2C`` subclasses,
and labels enter with reliability ``gamma``. Given the state, labels are independent. Marginally,
the mixture of an easy and a hard subclass makes every annotator's errors depend on the
item. The plausibility of class ``c`` is the posterior weight of its two subclasses.
The priors and the sharing orient the subclasses: an easy subclass is one every annotator
gets right alike. (With easy rows of their own per annotator, a 4-class latent class model
on five binary raters, the chains on the dentistry data settled in different modes, R-hat
1.5–1.8; shared easy rows leave one mode.)

Inference: the compiled route is the exact Gibbs sampler
:mod:`plausible.models.easy_hard.sampler`; ``compiled=False`` leaves the PyMC model, with
the states summed out, to NUTS (the independent check). The per-item log-likelihood is
``logsumexp_s(log w_s + gamma L_is)`` (the state summed out; :func:`log_likelihood`), and
:func:`replicate_labels` replicates labels in the observed design for the predictive checks.
"""

from __future__ import annotations

import numpy as np
import pymc as pm
import pytensor.tensor as pt
import xarray as xr
from scipy.special import logsumexp

from plausible.data.labels import Labels
from plausible.data.tables import reads
from plausible.data.validation import positive
from plausible.diagnostics.annotation_predictive import thinned_draws
from plausible.inference.declarations import declare_log_likelihood
from plausible.inference.bridges.as_pymc_step import declare_kernel
from plausible.models.easy_hard.sampler import (EasyHardKernel, incidence_matrix,
                                                   subclass_names)
from plausible.maths.categorical import categorical_draws
from plausible.maths.known_classes import known_log_mask
from plausible.metrics.chunks import iter_sample_blocks
from plausible.models.latent_class import check_labels, coords
from plausible.models.model_entry import ModelEntry


def subclass_concentration(n_classes: int, easy_prior, hard_prior) -> np.ndarray:
    """``beta (subclass, label_class)``: row ``2c`` from ``easy_prior = (on c, elsewhere)``,
    row ``2c + 1`` from ``hard_prior``."""
    beta = np.empty((2 * n_classes, n_classes))
    for row, (on, off) in enumerate([easy_prior, hard_prior] * n_classes):
        beta[row] = positive("subclass prior", off)
        beta[row, row // 2] = positive("subclass prior", on)
    return beta


@reads("labels")
def build(labels: Labels, *, reliability: float = 1.0, easy_prior: tuple = (19.0, 1.0),
          hard_prior: tuple = (2.0, 1.0), compiled: bool = True) -> pm.Model:
    """PyMC model of the easy/hard latent class model (module) for ``labels``.

    Free variables ``subclass_prior (subclass)``, ``easy_confusion (class, label_class)`` and
    ``hard_confusion (annotator, class, label_class)``; ``confusion (annotator, subclass,
    label_class)`` and ``plausibility (item, class)``. ``compiled``: :func:`plausible.sample`
    runs the exact Gibbs sampler; False leaves the states-summed-out model to NUTS.
    """
    check_labels(labels)
    C, J, S = labels.n_classes, labels.n_annotators, 2 * labels.n_classes
    gamma = positive("reliability", reliability)
    beta = subclass_concentration(C, easy_prior, hard_prior)
    item, annotator, label = (pt.constant(v) for v in (labels.item, labels.annotator,
                                                        labels.label))
    with pm.Model(coords={**coords(labels), "subclass": subclass_names(labels.classes),
                          "label_class": labels.classes}) as model:
        pm.Data("reliability", gamma)
        w = pm.Dirichlet("subclass_prior", a=np.ones(S), dims="subclass")
        easy = pm.Dirichlet("easy_confusion", a=beta[0::2], dims=("class", "label_class"))
        hard = pm.Dirichlet("hard_confusion", a=np.broadcast_to(beta[1::2], (J, C, C)),
                            dims=("annotator", "class", "label_class"))
        theta = pm.Deterministic(
            "confusion", pt.stack([pt.broadcast_to(easy, (J, C, C)), hard], axis=2).reshape(
                (J, S, C)), dims=("annotator", "subclass", "label_class"))
        L = pt.inc_subtensor(pt.zeros((labels.n_items, S))[item],
                             pt.log(theta)[annotator, :, label])
        log_joint = pt.log(w)[None, :] + state_mask(labels) + gamma * L
        pm.Potential("labels", pt.logsumexp(log_joint, axis=1).sum())
        states = pt.exp(pt.special.log_softmax(log_joint, axis=1))
        pm.Deterministic("plausibility", states.reshape((labels.n_items, C, 2)).sum(axis=2),
                         dims=("item", "class"))
    if compiled:
        declare_kernel(model, EasyHardKernel(labels, beta, gamma),
                       coords={"item": labels.items, "class": labels.classes,
                               "annotator": labels.annotators,
                               "subclass": subclass_names(labels.classes),
                               "label_class": labels.classes},
                       constant_data={"reliability": gamma})
    declare_log_likelihood(model, "labels", lambda trace: log_likelihood(trace, labels),
                           observed=labels.to_dataarray())
    return model


def state_mask(labels: Labels):
    """``(item, subclass)`` log mask of the known classes (:attr:`Labels.known`): an item of
    known class ``k`` keeps its two states ``2k`` (easy) and ``2k + 1`` (hard); 0 when no class
    is known."""
    if labels.known is None:
        return 0.0
    return np.repeat(known_log_mask(labels.known, labels.n_items, labels.n_classes), 2, axis=1)


def _state_log_likelihood(labels: Labels, log_theta: np.ndarray) -> np.ndarray:
    """``L (sample, item, subclass)`` from ``log theta (sample, annotator, subclass,
    label_class)``."""
    per_label = log_theta[:, labels.annotator, :, labels.label]  # (annotation, sample, S)
    incidence = incidence_matrix(labels)
    n, S = log_theta.shape[0], log_theta.shape[2]
    L = incidence @ per_label.reshape(labels.n_annotations, n * S)
    return np.moveaxis(np.asarray(L).reshape(labels.n_items, n, S), 0, 1)


def _read(posterior, name, chain, draw) -> np.ndarray:
    variable = posterior[name]
    return np.asarray(variable.transpose("chain", "draw", *variable.dims[2:]).values[chain, draw],
                      dtype=np.float64)


def log_likelihood(trace, labels: Labels) -> xr.DataArray:
    """Per-item ``logsumexp_s(log w_s + gamma L_is)``, ``(chain, draw, item)``, in blocks of
    draws."""
    posterior = trace["posterior"]
    gamma = float(trace["constant_data"]["reliability"])
    shape = (posterior.sizes["chain"], posterior.sizes["draw"])
    S = posterior.sizes["subclass"]
    mask = state_mask(labels)
    out = np.empty((shape[0] * shape[1], labels.n_items))
    width = (labels.n_items + labels.n_annotations) * S
    for samples, (chain, draw) in iter_sample_blocks(shape, width):
        log_w = np.log(_read(posterior, "subclass_prior", chain, draw))
        log_theta = np.log(_read(posterior, "confusion", chain, draw))
        L = _state_log_likelihood(labels, log_theta)
        out[samples] = logsumexp(log_w[:, None, :] + mask + gamma * L, axis=-1)
    return xr.DataArray(out.reshape(*shape, labels.n_items), dims=("chain", "draw", "item"),
                        coords={"chain": posterior["chain"].values,
                                "draw": posterior["draw"].values, "item": labels.items})


def replicate_labels(trace, labels: Labels, *, draws: int = 500, seed: int | None = None
                     ) -> np.ndarray:
    """Replicated labels in the observed design, int ``(sample, annotation)``: for each of
    ``draws`` thinned draws, new states from ``w``, then ``x_k ~ theta_{j_k}[s_{i_k}]``."""
    posterior = trace["posterior"]
    chain, draw = thinned_draws(posterior, draws)
    w = _read(posterior, "subclass_prior", chain, draw)
    theta = _read(posterior, "confusion", chain, draw)
    rng = np.random.default_rng(seed)
    S = w.shape[1]
    out = np.empty((w.shape[0], labels.n_annotations), dtype=np.int64)
    # blocks of draws: the temporaries are (draws, labels or items, subclass or class)
    for block, _ in iter_sample_blocks((w.shape[0],), (labels.n_annotations + labels.n_items) * S):
        n = block.stop - block.start
        states = categorical_draws(rng, w[block, None, :], (n, labels.n_items))
        rows = theta[block][np.arange(n)[:, None], labels.annotator[None, :],
                            states[:, labels.item]]
        out[block] = categorical_draws(rng, rows)
    return out


__all__ = ["build", "log_likelihood", "replicate_labels", "subclass_concentration"]


ENTRIES = (
    ModelEntry("easy-hard", build, "labels", "tempering", False,
               "latent classes with an easy and a hard subclass each: errors correlated "
               "through the item, exact Gibbs", replicate=replicate_labels),
)
"""The registry entries of this family (:mod:`plausible.models.registry`)."""
