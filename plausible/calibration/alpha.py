"""alpha-calibration as a PyMC model (Mimori et al. 2021).

A classifier's CPE ``q_i`` becomes a Dirichlet predictive ``Dir(alpha0(x_i) q_i)`` whose
concentration is learned from items with several labels:

    alpha0(x_i) = exp(w^T h_i + b)           (frozen features h_i, e.g. logits)
    n_i | w, b  ~ DirichletMultinomial(n_i, alpha0(x_i) q_i)

The CPE is unchanged (``E pi = q``: accuracy, L, EL, CL, CE are untouched); the DPE
shrinks to ``alpha0 / (alpha0 + 1) (1 - sum_k q_k^2)``. It stacks after temperature
scaling: pass the temperature-scaled CPE as ``cpe``.

**Prior = the paper's penalty.** The paper minimises over ``theta = (w, b)``

    (1/N) sum_i -log DirMult(n_i | alpha0(x_i) q_i)  +  lambda (1/N) sum_i (log alpha0(x_i))^2 .

Times ``N``, the penalty is ``lambda sum_i (h~_i^T theta)^2 = lambda theta^T H~^T H~ theta``
with ``h~_i = (h_i, 1)``: a quadratic form in ``theta``, hence *exactly* the negative
log-density (up to a constant) of the Gaussian prior

    theta ~ Normal(0, P^{-1}),   P = 2 lambda H~^T H~

This is a Zellner-type prior, in effect a prior on the values ``v_i = log alpha0(x_i)`` at
the fitted items: ``v ~ N(0, Hat / (2 lambda))`` with ``Hat`` the hat matrix of ``H~``, so each
``log alpha0(x_i)`` has prior variance ``d / (2 lambda N)`` on average (``d`` = features + 1),
centred on ``alpha0 = 1``, the paper's initialisation. It is invariant to any invertible affine
re-parametrisation of the features. The log posterior is the negative objective times ``N``
(plus a constant), so the MAP *is* the penalised estimate for any ``lambda > 0``, and the full
posterior is the Bayesian version of the same fit. As the penalty, the prior tightens with
``N`` at the same rate as the likelihood; it depends on the features, never on the labels.
An independent prior on ``(w, b)`` (e.g. ``Normal(0, s)`` per coefficient) could only match
the penalty when ``H~^T H~`` is diagonal; the penalty acts on ``alpha0``, not on the weights.

``jitter`` (relative to ``trace(P) / d``) is added to ``P``'s diagonal so that collinear
features (e.g. logits whose rows sum to 0) give a proper prior; along such a direction
``alpha0`` does not change at all. The sampler works on ``z = L^T theta``
(``P = L L^T``), ``z ~ Normal(0, I)`` -- non-centred, and whitened by the features.

Fitting: :func:`fit_alpha_map` (``pm.find_MAP``, L-BFGS-B, with Mimori et al.'s 80 % fit / 20 %
early-stopping split) and :func:`fit_alpha_posterior` (:func:`plausible.sample`, NUTS). Both
return an :class:`AlphaCalibration`.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pymc as pm
import pytensor.tensor as pt
import scipy.linalg
import xarray as xr
from better_optimize import StopOptimization
from scipy.special import gammaln

from plausible.calibration.early_stopping import HOLDOUT, PATIENCE, EarlyStopping, holdout_split
from plausible.data.validation import fmt, raise_first
from plausible.inference.sampling import sample
from plausible.calibration.inputs import check_cpe, label_histogram
from plausible.calibration.cpe import DirichletCPE

#: The paper's penalty weight ``lambda``.
LAMBDA = 0.005
JITTER = 1e-8
BIAS = "bias"


# -- inputs ------------------------------------------------------------------------
def _features(features, n_items: int) -> np.ndarray:
    if features is None:
        return np.zeros((n_items, 0))
    if isinstance(features, xr.DataArray) and "item" in features.dims:
        features = features.transpose("item", ...)
    x = np.asarray(features, dtype=float)
    if x.ndim == 1:
        x = x[:, None]
    if x.ndim != 2 or x.shape[0] != n_items:
        raise ValueError(f"features must be (item, feature) with {n_items} items, got shape {x.shape}")
    raise_first(~np.isfinite(x).all(axis=1), lambda i: f"features: item {i} has a non-finite value")
    return x


def _inputs(hist, cpe, features):
    hist = label_histogram(hist)
    q = check_cpe(cpe, hist)
    raise_first(
        (q <= 0).any(axis=1),
        lambda i: f"cpe: item {fmt(hist.items[i])} has a zero probability; alpha-calibration needs q > 0",
    )
    return hist, q, _features(features, hist.n_items)


def prior_factor(features, lam: float = LAMBDA, jitter: float = JITTER) -> np.ndarray:
    """``A = L^{-T}`` with ``L L^T = P = 2 lambda H~^T H~ (+ jitter)``: ``theta = A z`` has
    covariance ``P^{-1}`` when ``z ~ N(0, I)``. ``(d, d)`` with ``d = n_features + 1``."""
    if not np.isfinite(lam) or lam <= 0:
        raise ValueError(f"lam must be finite and > 0 (the penalty weight), got {lam!r}")
    x = _features(features, len(features))
    if x.shape[0] == 0:
        raise ValueError("the prior needs the features of at least one item")
    design = np.column_stack([x, np.ones(x.shape[0])])
    precision = 2.0 * lam * design.T @ design
    d = precision.shape[0]
    precision += jitter * max(np.trace(precision) / d, 1e-300) * np.eye(d)
    chol = np.linalg.cholesky(precision)
    return scipy.linalg.solve_triangular(chol.T, np.eye(d), lower=False)


def dirichlet_multinomial_nll(counts, alpha) -> np.ndarray:
    """Per-item ``-log DirMult(n_i | alpha_i)`` without the multinomial coefficient:
    ``-[lgamma(alpha0) - lgamma(alpha0 + n) + sum_k (lgamma(alpha_k + n_k) - lgamma(alpha_k))]``."""
    counts = np.asarray(counts, dtype=float)
    alpha = np.asarray(alpha, dtype=float)
    a0 = alpha.sum(axis=1)
    series = np.where(counts > 0, gammaln(alpha + counts) - gammaln(alpha), 0.0).sum(axis=1)
    return -(gammaln(a0) - gammaln(a0 + counts.sum(axis=1)) + series)


# -- model -------------------------------------------------------------------------
def build(hist, cpe, features=None, *, lam: float = LAMBDA, jitter: float = JITTER,
          feature_names=None, store_alpha0: bool = False) -> pm.Model:
    """PyMC alpha-calibration model (module docstring).

    Parameters
    ----------
    hist : Votes, LabelHistogram or (item, class) counts
        Label histograms of the calibration items (items with one label carry no
        information on ``alpha0`` but enter the prior, as in the paper's penalty).
    cpe : (item, class)
        The classifier's CPEs (> 0), e.g. after temperature scaling.
    features : (item, feature) or None
        Frozen features ``h`` (logits or penultimate layer); None: a global ``alpha0``.
    lam : float
        The penalty weight ``lambda`` (default 0.005) setting the prior precision.
    store_alpha0 : bool
        Also keep ``log_alpha0 (item,)`` as a Deterministic (grows the trace by items x draws).

    Dims ``item``, ``class``, ``feature``, ``coef`` (features + ``"bias"``). Free variable
    ``z (coef)``; Deterministics ``w (feature)``, ``b``; observed ``labels (item, class)``.
    """
    hist, q, x = _inputs(hist, cpe, features)
    names = np.arange(x.shape[1]) if feature_names is None else np.asarray(feature_names)
    if names.shape != (x.shape[1],):
        raise ValueError(f"feature_names must have {x.shape[1]} entries, got {names.shape}")
    factor = prior_factor(x, lam, jitter)
    coords = {
        "item": hist.items, "class": hist.classes, "feature": names,
        "coef": [*map(str, names), BIAS],
    }
    with pm.Model(coords=coords) as model:
        # every array is pm.Data (no constant folded into the graph), so models of equal
        # structure share one compiled function whatever their data
        h = pm.Data("features", x, dims=("item", "feature"))
        cpe_data = pm.Data("cpe", q, dims=("item", "class"))
        counts = pm.Data("label_counts", hist.counts, dims=("item", "class"))
        prior = pm.Data("prior_factor", factor)
        z = pm.Normal("z", 0.0, 1.0, dims="coef")
        theta = pt.dot(prior, z)
        w = pm.Deterministic("w", theta[:-1], dims="feature")
        b = pm.Deterministic("b", theta[-1])
        log_alpha0 = pt.dot(h, w) + b
        if store_alpha0:
            log_alpha0 = pm.Deterministic("log_alpha0", log_alpha0, dims="item")
        pm.DirichletMultinomial(
            "labels", n=counts.sum(axis=1), a=pt.exp(log_alpha0)[:, None] * cpe_data,
            observed=counts, dims=("item", "class"),
        )
    return model


# -- fitted calibration ------------------------------------------------------------
@dataclass(frozen=True)
class AlphaFitReport:
    """Fit diagnostics: mean per-item DirMult NLL (unpenalised) on the fit and held-out
    items (NaN when none), optimiser iterates, the iterate kept, optimiser message."""

    method: str
    fit_nll: float
    holdout_nll: float
    n_fit: int
    n_holdout: int
    n_iter: int
    best_iter: int
    message: str


@dataclass(frozen=True)
class AlphaCalibration:
    """A fitted alpha-calibration: ``log alpha0(h) = h^T w + b``.

    ``w`` ``(feature,)`` and ``b`` are the MAP (:func:`fit_alpha_map`) or the posterior mean
    (:func:`fit_alpha_posterior`); ``theta_draws`` ``(draw, coef)`` holds posterior draws of
    ``(w, b)`` (None for MAP).
    """

    w: np.ndarray
    b: float
    lam: float
    theta_draws: np.ndarray | None = None
    report: AlphaFitReport | None = None

    def log_alpha0(self, features=None, n_items: int | None = None) -> np.ndarray:
        """Point ``log alpha0`` ``(item,)`` at the fitted ``(w, b)``."""
        x = self._x(features, n_items)
        return x @ self.w + self.b

    def log_alpha0_draws(self, features=None, n_items: int | None = None) -> np.ndarray:
        """Posterior draws of ``log alpha0``: ``(draw, item)``."""
        if self.theta_draws is None:
            raise ValueError("this alpha-calibration was fitted by MAP: it has no posterior draws")
        x = self._x(features, n_items)
        return self.theta_draws[:, :-1] @ x.T + self.theta_draws[:, -1:]

    def _x(self, features, n_items):
        if features is None:
            if self.w.size:
                raise ValueError(f"this alpha-calibration needs features with {self.w.size} columns")
            if n_items is None:
                raise ValueError("pass n_items when the calibration has no features")
            return np.zeros((n_items, 0))
        x = _features(features, np.shape(features)[0])
        if x.shape[1] != self.w.size:
            raise ValueError(f"features have {x.shape[1]} columns, the calibration {self.w.size}")
        return x

    def alpha0(self, features=None, n_items: int | None = None) -> np.ndarray:
        """Effective concentration ``(item,)``. MAP: ``exp(h^T w + b)``. Posterior: the
        ``alpha0`` whose DPE shrinkage equals the posterior mean shrinkage,
        ``m / (1 - m)`` with ``m = E_post[alpha0 / (alpha0 + 1)]`` (so the DPE of
        :meth:`predict` is the posterior-averaged DPE)."""
        if self.theta_draws is None:
            return np.exp(self.log_alpha0(features, n_items))
        shrink = 1.0 / (1.0 + np.exp(-self.log_alpha0_draws(features, n_items)))  # a0 / (a0 + 1)
        m = np.clip(shrink.mean(axis=0), 1e-300, 1 - 1e-16)
        return m / (1.0 - m)

    def predict(self, cpe, features=None) -> DirichletCPE:
        """The calibrated predictive ``Dir(alpha0(h_i) q_i)`` (CPE unchanged)."""
        q = check_cpe(cpe)
        return DirichletCPE.from_cpe(q, self.alpha0(features, q.shape[0]))


def _factor(model: pm.Model) -> np.ndarray:
    return model["prior_factor"].get_value()


def _theta_of(model: pm.Model, z: np.ndarray) -> np.ndarray:
    return _factor(model) @ z


def fit_alpha_map(
    hist, cpe, features=None, *, lam: float = LAMBDA, holdout: float = HOLDOUT, seed: int | None = 0,
    patience: int | None = PATIENCE, maxiter: int = 1000, jitter: float = JITTER,
) -> AlphaCalibration:
    """MAP alpha-calibration with ``pm.find_MAP`` (L-BFGS-B from ``w = 0, b = 0``).

    ``holdout`` (default 0.2) of the items, drawn with ``seed``, are kept out of the fit;
    the optimiser's iterate with the lowest held-out DirMult NLL is kept and the optimiser
    stops after ``patience`` iterates without improvement. ``holdout = 0``: the plain MAP
    on every item.
    """
    hist, q, x = _inputs(hist, cpe, features)
    fit_idx, stop_idx = holdout_split(hist.n_items, holdout, seed)
    model = build(hist.subset(fit_idx), q[fit_idx], x[fit_idx], lam=lam, jitter=jitter)
    counts_stop, q_stop, x_stop = hist.counts[stop_idx], q[stop_idx], x[stop_idx]

    def holdout_loss(z):
        theta = _theta_of(model, z)
        a0 = np.exp(x_stop @ theta[:-1] + theta[-1])
        return dirichlet_multinomial_nll(counts_stop, a0[:, None] * q_stop).mean()

    tracker = EarlyStopping(holdout_loss if stop_idx.size else None, patience, StopOptimization)
    tracker.start(np.zeros(x.shape[1] + 1))
    with model, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit = pm.find_MAP(
            method="L-BFGS-B", callback=tracker, jitter=False, progressbar=False,
            return_inferencedata=True, maxiter=maxiter,
        )
    z_end = fit.posterior["z"].values.reshape(-1)
    z = tracker.best_x if stop_idx.size else z_end
    theta = _theta_of(model, z)
    fit_hist = hist.subset(fit_idx)
    fit_nll = dirichlet_multinomial_nll(
        fit_hist.counts, np.exp(x[fit_idx] @ theta[:-1] + theta[-1])[:, None] * q[fit_idx]
    ).mean()
    message = "; ".join(str(w.message) for w in caught if "converge" in str(w.message)) or "converged"
    report = AlphaFitReport(
        method="MAP", fit_nll=float(fit_nll),
        holdout_nll=float(holdout_loss(z)) if stop_idx.size else np.nan,
        n_fit=int(fit_idx.size), n_holdout=int(stop_idx.size), n_iter=len(tracker.history) - 1,
        best_iter=tracker.best_iter if stop_idx.size else len(tracker.history) - 1, message=message,
    )
    return AlphaCalibration(w=theta[:-1], b=float(theta[-1]), lam=lam, report=report)


def fit_alpha_posterior(
    hist, cpe, features=None, *, lam: float = LAMBDA, draws: int = 1000, tune: int = 1000,
    chains: int = 4, seed: int | None = 0, jitter: float = JITTER, progressbar: bool = False, **kwargs,
) -> tuple[AlphaCalibration, xr.DataTree]:
    """Full-posterior alpha-calibration: NUTS through :func:`plausible.sample` on every
    item given (no early stopping: the prior regularises). Returns the calibration
    (posterior mean ``(w, b)`` plus the draws) and the trace (``posterior``: ``z``, ``w``,
    ``b``)."""
    hist, q, x = _inputs(hist, cpe, features)
    model = build(hist, q, x, lam=lam, jitter=jitter)
    trace = sample(model, draws, tune=tune, chains=chains, seed=seed, progressbar=progressbar, **kwargs)
    z = trace.posterior["z"].values.reshape(-1, x.shape[1] + 1)
    theta = z @ _factor(model).T
    mean = theta.mean(axis=0)
    nll = dirichlet_multinomial_nll(hist.counts, np.exp(x @ mean[:-1] + mean[-1])[:, None] * q).mean()
    report = AlphaFitReport(
        method="NUTS", fit_nll=float(nll), holdout_nll=np.nan, n_fit=hist.n_items, n_holdout=0,
        n_iter=int(draws), best_iter=-1, message=f"{chains} chains x {draws} draws",
    )
    return AlphaCalibration(w=mean[:-1], b=float(mean[-1]), lam=lam, theta_draws=theta, report=report), trace
