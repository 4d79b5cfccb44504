"""Temperature, vector and matrix scaling of logits, fitted on label histograms
(Guo et al. 2017; ODIR regulariser of Kull et al. 2019; Mimori et al. 2021).

A calibrator maps logits ``z_i`` ``(item, class)`` to ``z'_i`` and the CPE to
``q'_i = softmax(z'_i)``:

* temperature ``z' = z / T`` (``T = exp(log_t)``, 1 parameter; accuracy unchanged);
* vector ``z' = w * z + b`` (``2K`` parameters);
* matrix ``z' = W z + b`` (``K^2 + K`` parameters).

Fitted by the multinomial negative log-likelihood of the histograms, per label,

    NLL(theta) = -(1 / sum_i n_i) sum_ik n_ik log q'_ik(theta)

plus, optionally, ``bias_l2 / K * sum_k b_k^2`` and (matrix) ``off_diagonal_l2 / (K (K - 1))
* sum_{j != k} W_jk^2`` (ODIR). The gradient is analytic: ``dNLL / dz'_ik = (n_i q'_ik -
n_ik) / sum_i n_i``, chained through the affine map. The optimiser is
``scipy.optimize.minimize`` (L-BFGS-B) with Mimori et al.'s protocol: 80 % of the items fit,
20 % stop early on their (unpenalised) NLL (:mod:`plausible.calibration.early_stopping`).
Parameters start at the identity (``T = 1``, ``w = 1``, ``W = I``, ``b = 0``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize
from scipy.special import log_softmax, softmax

from plausible.calibration.early_stopping import HOLDOUT, PATIENCE, EarlyStopping, holdout_split
from plausible.data.validation import raise_first
from plausible.calibration.inputs import label_histogram


def check_logits(logits, n_classes: int | None = None, n_items: int | None = None) -> np.ndarray:
    """float64 ``(item, class)`` finite logits, optionally of a given shape."""
    z = np.asarray(logits, dtype=float)
    if z.ndim != 2:
        raise ValueError(f"logits must be 2-D (item, class), got shape {z.shape}")
    if n_classes is not None and z.shape[1] != n_classes:
        raise ValueError(f"logits have {z.shape[1]} classes, the calibrator {n_classes}")
    if n_items is not None and z.shape[0] != n_items:
        raise ValueError(f"logits have {z.shape[0]} items, the label histogram {n_items}")
    raise_first(
        ~np.isfinite(z).all(axis=1),
        lambda i: f"logits: item {i} has a non-finite value {z[i].tolist()}",
    )
    return z


def histogram_nll(logits, counts) -> float:
    """Multinomial NLL per label, ``-(1 / sum n) sum_ik n_ik log softmax(z_i)_k``."""
    counts = np.asarray(counts, dtype=float)
    return float(-(counts * log_softmax(logits, axis=1)).sum() / counts.sum())


@dataclass(frozen=True)
class FitReport:
    """How a fit went: unpenalised per-label NLL on the fit and held-out items (NaN when
    none held out), iterates run, the iterate kept, and the optimiser's message."""

    fit_nll: float
    holdout_nll: float
    n_fit: int
    n_holdout: int
    n_iter: int
    best_iter: int
    message: str


class LogitScaling:
    """Base class: subclasses define ``_initial(K)``, ``_apply(theta, z)``,
    ``_backward(theta, z, G)`` (gradient of the data term given ``G = dNLL/dz'``) and
    optionally ``_penalty(theta) -> (value, grad)``."""

    theta_: np.ndarray | None = None
    report_: FitReport | None = None
    n_classes_: int | None = None

    # -- model ---------------------------------------------------------------------
    def _initial(self, n_classes: int) -> np.ndarray:
        raise NotImplementedError

    def _apply(self, theta: np.ndarray, z: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def _backward(self, theta: np.ndarray, z: np.ndarray, grad_out: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def _penalty(self, theta: np.ndarray) -> tuple[float, np.ndarray]:
        return 0.0, np.zeros_like(theta)

    # -- use -----------------------------------------------------------------------
    def _fitted(self) -> np.ndarray:
        if self.theta_ is None:
            raise ValueError(f"{type(self).__name__} is not fitted: call fit(logits, hist) first")
        return self.theta_

    def transform(self, logits) -> np.ndarray:
        """Calibrated logits ``z'`` ``(item, class)``."""
        theta = self._fitted()
        return self._apply(theta, check_logits(logits, self.n_classes_))

    def predict(self, logits) -> np.ndarray:
        """Calibrated CPEs ``softmax(z')`` ``(item, class)``."""
        return softmax(self.transform(logits), axis=1)

    # -- fit -----------------------------------------------------------------------
    def _objective(self, theta, z, counts, total):
        zp = self._apply(theta, z)
        logq = log_softmax(zp, axis=1)
        nll = -(counts * logq).sum() / total
        grad_out = (counts.sum(axis=1, keepdims=True) * np.exp(logq) - counts) / total
        pen, pen_grad = self._penalty(theta)
        return nll + pen, self._backward(theta, z, grad_out) + pen_grad

    def fit(
        self, logits, hist, *, holdout: float = HOLDOUT, seed: int | None = 0,
        patience: int | None = PATIENCE, maxiter: int = 1000,
    ):
        """Fit on label histograms ``hist`` (``Votes``, ``LabelHistogram`` or counts) of
        the items whose ``logits`` are given; returns ``self`` with ``theta_`` and
        ``report_``."""
        hist = label_histogram(hist)
        z = check_logits(logits, hist.n_classes, hist.n_items)
        counts = hist.counts.astype(float)
        fit_idx, stop_idx = holdout_split(hist.n_items, holdout, seed)
        z_fit, c_fit = z[fit_idx], counts[fit_idx]
        z_stop, c_stop = z[stop_idx], counts[stop_idx]
        theta0 = self._initial(hist.n_classes)
        holdout_loss = (lambda th: histogram_nll(self._apply(th, z_stop), c_stop)) if stop_idx.size else None
        tracker = EarlyStopping(holdout_loss, patience)
        tracker.start(theta0)
        res = minimize(
            self._objective, theta0, args=(z_fit, c_fit, c_fit.sum()), jac=True,
            method="L-BFGS-B", callback=tracker, options={"maxiter": maxiter},
        )
        theta = tracker.best_x if stop_idx.size else res.x
        self.theta_ = theta
        self.n_classes_ = hist.n_classes
        self.report_ = FitReport(
            fit_nll=histogram_nll(self._apply(theta, z_fit), c_fit),
            holdout_nll=histogram_nll(self._apply(theta, z_stop), c_stop) if stop_idx.size else np.nan,
            n_fit=int(fit_idx.size),
            n_holdout=int(stop_idx.size),
            n_iter=len(tracker.history) - 1,
            best_iter=tracker.best_iter if stop_idx.size else len(tracker.history) - 1,
            message=str(res.message),
        )
        return self


class TemperatureScaling(LogitScaling):
    """``z' = z / T``; ``temperature_`` after fitting (> 1 softens, < 1 sharpens)."""

    def _initial(self, n_classes):
        return np.zeros(1)

    def _apply(self, theta, z):
        return z * np.exp(-theta[0])

    def _backward(self, theta, z, grad_out):
        return np.array([-(grad_out * z).sum() * np.exp(-theta[0])])

    @property
    def temperature_(self) -> float:
        """The fitted temperature ``T``."""
        return float(np.exp(self._fitted()[0]))


class VectorScaling(LogitScaling):
    """``z' = w * z + b`` with an optional ``bias_l2 / K * ||b||^2`` penalty."""

    def __init__(self, bias_l2: float = 0.0):
        if bias_l2 < 0:
            raise ValueError(f"bias_l2 must be >= 0, got {bias_l2!r}")
        self.bias_l2 = float(bias_l2)

    def _initial(self, n_classes):
        return np.concatenate([np.ones(n_classes), np.zeros(n_classes)])

    def _split(self, theta):
        k = theta.size // 2
        return theta[:k], theta[k:]

    def _apply(self, theta, z):
        w, b = self._split(theta)
        return z * w + b

    def _backward(self, theta, z, grad_out):
        return np.concatenate([(grad_out * z).sum(axis=0), grad_out.sum(axis=0)])

    def _penalty(self, theta):
        w, b = self._split(theta)
        k = b.size
        grad = np.concatenate([np.zeros(k), 2 * self.bias_l2 / k * b])
        return self.bias_l2 / k * (b @ b), grad

    @property
    def w_(self) -> np.ndarray:
        """The fitted scales ``w``, ``(class,)``."""
        return self._split(self._fitted())[0]

    @property
    def b_(self) -> np.ndarray:
        """The fitted biases ``b``, ``(class,)``."""
        return self._split(self._fitted())[1]


class MatrixScaling(LogitScaling):
    """``z' = W z + b`` with optional ODIR: ``off_diagonal_l2 / (K (K - 1)) sum_{j != k}
    W_jk^2 + bias_l2 / K ||b||^2``."""

    def __init__(self, off_diagonal_l2: float = 0.0, bias_l2: float = 0.0):
        if off_diagonal_l2 < 0 or bias_l2 < 0:
            raise ValueError("off_diagonal_l2 and bias_l2 must be >= 0")
        self.off_diagonal_l2 = float(off_diagonal_l2)
        self.bias_l2 = float(bias_l2)

    def _initial(self, n_classes):
        return np.concatenate([np.eye(n_classes).ravel(), np.zeros(n_classes)])

    def _split(self, theta):
        k = int(round((np.sqrt(1 + 4 * theta.size) - 1) / 2))
        return theta[: k * k].reshape(k, k), theta[k * k :]

    def _apply(self, theta, z):
        W, b = self._split(theta)
        return z @ W.T + b

    def _backward(self, theta, z, grad_out):
        return np.concatenate([(grad_out.T @ z).ravel(), grad_out.sum(axis=0)])

    def _penalty(self, theta):
        W, b = self._split(theta)
        k = b.size
        off = W * (1.0 - np.eye(k))
        c_off = self.off_diagonal_l2 / (k * (k - 1)) if k > 1 else 0.0
        c_b = self.bias_l2 / k
        value = c_off * (off**2).sum() + c_b * (b @ b)
        return value, np.concatenate([(2 * c_off * off).ravel(), 2 * c_b * b])

    @property
    def W_(self) -> np.ndarray:
        """The fitted matrix ``W``, ``(class, class)``."""
        return self._split(self._fitted())[0]

    @property
    def b_(self) -> np.ndarray:
        """The fitted biases ``b``, ``(class,)``."""
        return self._split(self._fitted())[1]
