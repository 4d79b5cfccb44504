"""A classifier's predicted probabilities as the prior of each item's class, with a learned
strength: the layer a latent-class model takes in place of its class prevalence when
``predictions=`` is given.

With ``p_i`` the classifier's probabilities for item ``i`` ``(item, class)``::

    tau        ~ LogNormal(0, 1)                 temperature: how much the classifier is trusted
    b          ~ ZeroSumNormal(BIAS_SCALE)       class bias, (class,)
    z_i        ~ Categorical(softmax(b + tau log p_i))

and the annotators' labels given ``z`` as the model has them. This is temperature scaling with
a bias per class (Guo et al. 2017; Platt 1999 for two classes) learned from the annotators
instead of from held-out gold: ``tau = 0`` ignores the classifier (the bias alone is then the
class prevalence), ``tau = 1`` takes its probabilities as they are, ``tau > 1`` sharpens an
under-confident classifier. The annotators' labels say which items' classes the classifier
got right, so the posterior of ``tau`` says how far it is to be trusted, with an interval.
Each item's class posterior is ``softmax(b + tau log p_i + gamma L[i])`` (``L`` the labels'
class log-likelihood): the classifier is one more source of evidence per item, weighed
against the labels by the learned temperature, not a vote.

Probabilities are floored at :data:`FLOOR` before the log (a float32 zero would otherwise rule
a class out whatever the labels say).

**Gibbs.** Given the classes, ``(tau, b)`` is a multinomial logistic regression of ``z`` on
``log p`` with a normal prior: :class:`ClassifierPrior` updates it :data:`STEPS` times a sweep
by independence Metropolis–Hastings from a Laplace approximation of that conditional (exact:
the proposal is a function of the classes only once a chain is under way). The items' classes
are then drawn from their conditional as the model draws them, with ``log_softmax(b + tau log
p_i)`` in place of ``log pi``.
"""

from __future__ import annotations

import math

import numba
import numpy as np
import pytensor.tensor as pt
import pymc as pm
import xarray as xr
from scipy.special import log_softmax, softmax

from plausible.data.predictions import read_predictions
from plausible.maths.logspace import tempered_logsumexp

FLOOR = 1e-10
"""Smallest probability the classifier's log is taken of."""
BIAS_SCALE = 1.5
"""Standard deviation of the class bias ``b`` (ZeroSumNormal): a class's prior odds may move
by a factor of about 20 either way within two of them."""
CONSTANT = "classifier_log_probability"
"""The trace's ``constant_data`` name of ``log p (item, class)``: what the trace's log prior
is computed from when read, and how a trace says it took a classifier."""
STEPS = 1
"""Metropolis–Hastings updates of ``(tau, b)`` per sweep: one, since most proposals are
accepted and each is drawn afresh from the (nearly) exact conditional."""


def log_probabilities(predictions, items, classes) -> np.ndarray:
    """``log max(p, FLOOR)`` float64 ``(item, class)`` of a classifier's probabilities for
    ``items`` over ``classes`` (``predictions``: anything
    :func:`plausible.data.read_predictions` reads, checked as it checks probabilities:
    ``ValueError`` naming the row at fault)."""
    p = read_predictions(predictions, items, classes, probabilities=True).values
    return np.log(np.maximum(p, FLOOR))


def add_prior(model: pm.Model, log_p: np.ndarray):
    """Add ``temperature`` and ``class_bias (class)`` to ``model`` (which has the ``class``
    dimension) and return the items' log prior ``log_softmax(b + tau log p)`` ``(item,
    class)`` as a tensor."""
    with model:
        tau = pm.LogNormal("temperature", 0.0, 1.0, initval=1.0)
        b = pm.ZeroSumNormal("class_bias", sigma=BIAS_SCALE, dims="class")
        pm.Data(CONSTANT, log_p, dims=("item", "class"))
    return pt.special.log_softmax(b[None, :] + tau * pt.constant(log_p), axis=1)


def log_prior(posterior: xr.Dataset, constant_data: xr.Dataset, chain, draw, start: int = 0,
              stop: int | None = None) -> np.ndarray:
    """The items' log prior ``log_softmax(b + tau log p_i)`` at the draws ``(chain, draw)``
    (index arrays or slices), float64 ``(sample, item, class)`` for items ``start..stop``."""
    tau = np.asarray(posterior["temperature"].transpose("chain", "draw").values[chain, draw],
                     dtype=np.float64).reshape(-1)
    b = np.asarray(posterior["class_bias"].transpose("chain", "draw", "class")
                   .values[chain, draw], dtype=np.float64).reshape(tau.size, -1)
    log_p = constant_data[CONSTANT].transpose("item", "class").values
    return block_log_prior(tau, b, log_p[start:stop])


def block_log_prior(tau: np.ndarray, b: np.ndarray, log_p: np.ndarray) -> np.ndarray:
    """``log_softmax(b_s + tau_s log p_i)`` float64 ``(sample, item, class)`` for draws ``tau
    (sample,)``, ``b (sample, class)`` and the items' ``log_p (item, class)``."""
    return log_softmax(b[:, None, :] + tau[:, None, None] * log_p[None], axis=2)


def same_classifier(trace, predicted: np.ndarray, scores: np.ndarray | None) -> bool:
    """Whether a classifier's predictions (its classes ``predicted (item,)``, and its
    ``scores (item, class)`` when it gave them) are those ``trace`` took as its classifier
    prior: the same probabilities, or, with classes only, the same class on every item."""
    constant = trace["constant_data"] if "constant_data" in trace.children else None
    if constant is None or CONSTANT not in constant.data_vars:
        return False
    own = constant[CONSTANT].transpose("item", "class").values
    if scores is None:
        return bool(np.array_equal(predicted, own.argmax(axis=1)))
    log_scores = np.log(np.maximum(np.asarray(scores, dtype=np.float64), FLOOR))
    return bool(np.allclose(log_scores, own, atol=1e-5))


def uses_classifier(trace) -> bool:
    """Whether ``trace`` is of a model that took a classifier's predictions."""
    return "temperature" in trace["posterior"].data_vars and "class_bias" in \
        trace["posterior"].data_vars


@numba.njit(cache=True, nogil=True)
def log_density(log_p, z, x, bias_scale):  # pragma: no cover - compiled
    """``log p(tau, b | z)`` up to a constant at ``x = (tau, b_0..b_{C-1})``: the classes'
    multinomial logistic log-likelihood plus the priors (``-inf`` for ``tau <= 0``)."""
    n_items, n_classes = log_p.shape
    tau, bias = x[0], x[1:]
    if tau <= 0.0:
        return -np.inf
    total = _prior_log_density(x, bias_scale)
    row = np.empty(n_classes)
    for i in range(n_items):
        row[:] = log_p[i]
        normaliser = tempered_logsumexp(row, bias, tau)  # row becomes b + tau log p_i
        total += row[z[i]] - normaliser
    return total


@numba.njit(cache=True, nogil=True, inline="always")
def _prior_log_density(x, bias_scale):  # pragma: no cover - compiled
    """The priors' log-density at ``x = (tau, b)``, ``tau > 0``: log-normal and normal."""
    log_tau = math.log(x[0])
    total = -log_tau - 0.5 * log_tau * log_tau
    for c in range(1, x.size):
        total -= 0.5 * (x[c] / bias_scale) ** 2
    return total


@numba.njit(cache=True, nogil=True)
def log_density_at(log_prior, z, x, bias_scale):  # pragma: no cover - compiled
    """:func:`log_density` at ``x`` from the items' log prior there, ``log_prior =
    log_softmax(b + tau log p)`` ``(item, class)`` (:func:`item_log_prior`): the same value,
    reading one entry per item."""
    total = _prior_log_density(x, bias_scale)
    for i in range(z.size):
        total += log_prior[i, z[i]]
    return total


DEGREES = 5
"""Degrees of freedom of the proposal's Student t: tails heavier than the conditional's, so
that an independence sampler also reaches a temperature the labels barely bound (a classifier
so sure that any large ``tau`` explains the classes alike)."""


@numba.njit(cache=True, nogil=True)
def independence_metropolis(rng, log_p, z, y, current, basis, centre, chol, bias_scale,
                            steps):  # pragma: no cover - compiled
    """``steps`` independence Metropolis–Hastings updates of ``y = (log tau, beta)`` (in
    place; ``b = basis @ beta``) with a multivariate Student t proposal (:data:`DEGREES`),
    centre ``centre`` and scale ``chol @ chol.T``; ``current`` is the log-density of ``y``
    (:func:`log_density` plus ``log tau``, the Jacobian of the log scale). Returns the new
    ``current`` and the number accepted."""
    d = y.size
    x = np.empty(basis.shape[0] + 1)
    e = np.empty(d)
    proposal = np.empty(d)
    accepted = 0
    q_current = _t_log_density(y, centre, chol)
    for _ in range(steps):
        chi2 = 0.0
        for k in range(DEGREES):
            g = rng.standard_normal()
            chi2 += g * g
        scale = math.sqrt(DEGREES / chi2)
        for k in range(d):
            e[k] = rng.standard_normal() * scale
        for k in range(d):
            s = centre[k]
            for m in range(k + 1):
                s += chol[k, m] * e[m]
            proposal[k] = s
        q_proposal = _t_log_density(proposal, centre, chol)
        _to_x(proposal, basis, x)
        value = log_density(log_p, z, x, bias_scale) + proposal[0]
        if math.log(rng.random()) < (value - current) - (q_proposal - q_current):
            y[:] = proposal
            current, q_current = value, q_proposal
            accepted += 1
    return current, accepted


@numba.njit(cache=True, nogil=True, inline="always")
def _t_log_density(y, centre, chol):  # pragma: no cover - compiled
    """The proposal's log-density up to a constant, ``-(nu + d) / 2 log(1 + |chol^-1 (y -
    centre)|^2 / nu)`` (forward substitution)."""
    d = y.size
    w = np.empty(d)
    total = 0.0
    for k in range(d):
        s = y[k] - centre[k]
        for m in range(k):
            s -= chol[k, m] * w[m]
        w[k] = s / chol[k, k]
        total += w[k] * w[k]
    return -0.5 * (DEGREES + d) * math.log1p(total / DEGREES)


@numba.njit(cache=True, nogil=True, inline="always")
def _to_x(y, basis, x):  # pragma: no cover - compiled
    """``x = (tau, basis @ beta)`` from ``y = (log tau, beta)``."""
    x[0] = math.exp(y[0])
    for c in range(basis.shape[0]):
        s = 0.0
        for k in range(basis.shape[1]):
            s += basis[c, k] * y[1 + k]
        x[1 + c] = s


@numba.njit(cache=True, nogil=True)
def item_log_prior(log_p, x, out):  # pragma: no cover - compiled
    """``out[i] = log_softmax(b + tau log p_i)`` at ``x = (tau, b)``."""
    bias = x[1:]
    for i in range(log_p.shape[0]):
        out[i] = log_p[i]
        normaliser = tempered_logsumexp(out[i], bias, x[0])  # out[i] becomes b + tau log p_i
        out[i] -= normaliser


def zero_sum_basis(n_classes: int) -> np.ndarray:
    """An orthonormal basis ``(class, class - 1)`` of the vectors that sum to zero: the class
    bias is ``basis @ beta`` with ``beta ~ Normal(0, BIAS_SCALE)`` per coordinate, which is
    ZeroSumNormal's density."""
    q, _ = np.linalg.qr(np.eye(n_classes) - 1.0 / n_classes)
    return np.ascontiguousarray(q[:, :n_classes - 1])


def mode(log_p: np.ndarray, z: np.ndarray, bias_scale: float = BIAS_SCALE,
         iterations: int = 50) -> dict:
    """The posterior mode of ``y = (log tau, beta)`` (class bias ``basis @ beta``,
    :func:`zero_sum_basis`; ``log tau ~ Normal(0, 1)``) given the classes ``z``, by
    Newton's method with the Fisher information, as ``{"y": mode, "precision": (C, C),
    "covariance": its inverse, "expected": (C + 1,), "prior_gradient": (C,), "jacobian":
    (C + 1, C)}``: the curvature at the mode (Fisher information of the logistic regression plus the priors'), and what
    :func:`newton_centre` needs to move it to other classes: the expected sufficient
    statistics ``(sum_i E[log p_{i z_i}], E[counts])``, the prior's gradient and the
    Jacobian of ``(tau, b)`` in ``y`` there."""
    n_items, C = log_p.shape
    basis = zero_sum_basis(C)
    statistics = sufficient_statistics(log_p, z)
    y = np.zeros(C)
    for _ in range(iterations):
        tau, b = math.exp(y[0]), basis @ y[1:]
        p = softmax(b + tau * log_p, axis=1)
        expected = np.r_[(p * log_p).sum(), p.sum(axis=0)]
        centred = log_p - (p * log_p).sum(axis=1)[:, None]
        fisher = np.empty((C + 1, C + 1))
        fisher[0, 0] = (p * centred ** 2).sum()
        fisher[0, 1:] = fisher[1:, 0] = (p * centred).sum(axis=0)
        fisher[1:, 1:] = np.diag(p.sum(axis=0)) - p.T @ p
        jacobian = np.zeros((C + 1, C))
        jacobian[0, 0] = tau
        jacobian[1:, 1:] = basis
        prior_gradient = np.r_[-y[0], -y[1:] / bias_scale ** 2]
        precision = jacobian.T @ fisher @ jacobian
        precision[0, 0] += 1.0
        precision[1:, 1:] += np.eye(C - 1) / bias_scale ** 2
        step = np.linalg.solve(precision, jacobian.T @ (statistics - expected) + prior_gradient)
        step *= min(1.0, 1.0 / max(abs(step[0]), 1e-300))  # log tau moves at most 1 a step
        y = y + step
        if np.abs(step).max() < 1e-9:
            break
    return {"y": y, "precision": precision, "covariance": np.linalg.inv(precision),
            "expected": expected, "prior_gradient": prior_gradient, "jacobian": jacobian}


def sufficient_statistics(log_p: np.ndarray, z: np.ndarray) -> np.ndarray:
    """``(sum_i log p_{i z_i}, counts of z)`` ``(C + 1,)``: what the classes tell ``(tau,
    b)``."""
    return np.r_[log_p[np.arange(z.size), z].sum(),
                 np.bincount(z, minlength=log_p.shape[1])].astype(np.float64)


def newton_centre(fit: dict, statistics: np.ndarray) -> np.ndarray:
    """One Newton step from the mode ``fit`` (of :func:`mode`) towards the mode given classes
    with sufficient statistics ``statistics``: the log-density is nearly quadratic, so this
    is the new mode to within a small share of its standard deviation."""
    gradient = fit["jacobian"].T @ (statistics - fit["expected"]) + fit["prior_gradient"]
    return fit["y"] + fit["covariance"] @ gradient


ADAPT = 20
"""The sweep at which a chain centres its proposal anew, at the mode given its classes then
(its start's classes are the labels' shares, before the classifier has moved any): the
proposal is fixed from then on."""
SPREAD = 1.2
"""The proposal's standard deviations, in those of the Laplace approximation: wider than the
conditional posterior, whose mode moves a little with the classes."""


class ClassifierPrior:
    """The layer's half-sweep for a compiled kernel: ``log_p (item, class)`` (of
    :func:`log_probabilities`); :meth:`start` the chain's state from its starting classes,
    :meth:`draw` the Metropolis–Hastings updates and the items' log prior.

    The updates are independence Metropolis–Hastings steps for ``p(log tau, beta | z)``,
    whose Student t proposal (:data:`DEGREES`) depends on the current classes only: centred
    at the conditional's mode (:func:`newton_centre`, one Newton step from a reference mode)
    with the reference curvature, widened by :data:`SPREAD`. The reference is the mode given
    the chain's start, made again at sweep :data:`ADAPT` and fixed from then on, so every later sweep is the same
    Markov kernel with the posterior as its stationary law. With thousands of items the
    conditional is close to Gaussian, so most proposals are accepted and successive draws of
    ``(tau, b)`` are nearly independent given the classes."""

    def __init__(self, log_p: np.ndarray, bias_scale: float = BIAS_SCALE, steps: int = STEPS):
        self.log_p = np.ascontiguousarray(log_p, dtype=np.float64)
        self.bias_scale, self.steps = float(bias_scale), int(steps)
        self.basis = zero_sum_basis(self.log_p.shape[1])

    def start(self, z: np.ndarray, x: np.ndarray | None = None) -> dict:
        """State at classes ``z``: ``y = (tau, beta)`` (from ``x = (tau, b)`` when given,
        else the mode given ``z``), the reference mode and the sweeps made."""
        state = {"sweeps": 0}
        self._reference(z, state)
        if x is not None:
            x = np.asarray(x, dtype=np.float64)
            state["y"] = np.r_[math.log(x[0]), self.basis.T @ x[1:]]
        state["log_prior"] = np.empty(self.log_p.shape)
        item_log_prior(self.log_p, self.x(state), state["log_prior"])
        return state

    def _reference(self, z: np.ndarray, state: dict) -> None:
        fit = mode(self.log_p, z, self.bias_scale)
        state["fit"] = fit
        state["chol"] = np.linalg.cholesky(fit["covariance"] * SPREAD ** 2)
        state.setdefault("y", fit["y"].copy())

    def draw(self, rng, z: np.ndarray, state: dict) -> None:
        """Update ``state``'s ``(tau, beta)`` given ``z``, and its ``log_prior =
        log_softmax(b + tau log p)`` ``(item, class)`` when they moved."""
        state["sweeps"] += 1
        if state["sweeps"] == ADAPT:
            self._reference(z, state)
        centre = newton_centre(state["fit"], sufficient_statistics(self.log_p, z))
        current = (log_density_at(state["log_prior"], z, self.x(state), self.bias_scale)
                   + state["y"][0])
        _, accepted = independence_metropolis(rng, self.log_p, z, state["y"], current,
                                              self.basis, centre, state["chol"],
                                              self.bias_scale, self.steps)
        if accepted:
            item_log_prior(self.log_p, self.x(state), state["log_prior"])

    def x(self, state: dict) -> np.ndarray:
        """``(tau, b)`` of ``state``."""
        y = state["y"]
        return np.r_[math.exp(y[0]), self.basis @ y[1:]]

    def values(self, state: dict) -> dict:
        """The trace's ``temperature`` and ``class_bias`` of ``state``."""
        x = self.x(state)
        return {"temperature": x[0], "class_bias": x[1:]}


__all__ = ["ADAPT", "BIAS_SCALE", "CONSTANT", "DEGREES", "ClassifierPrior", "FLOOR", "SPREAD",
           "STEPS", "add_prior", "block_log_prior", "independence_metropolis", "item_log_prior",
           "log_density", "log_density_at", "log_prior", "log_probabilities", "mode",
           "newton_centre", "same_classifier", "sufficient_statistics", "uses_classifier",
           "zero_sum_basis"]
