"""Predictive distributions over class probability estimates (Mimori et al. 2021).

A classifier's belief about item ``i``'s label distribution ``pi_i`` is a distribution
``p(pi | x_i)``. Three families, one interface:

* :class:`PointCPE` ``q``: CPE ``q``, DPE ``1 - sum_k q_k^2``;
* :class:`DirichletCPE` ``Dir(alpha)``, ``alpha = alpha0 q``: CPE ``alpha / alpha0 = q``,
  DPE ``alpha0 / (alpha0 + 1) (1 - sum_k q_k^2)``;
* :class:`EnsembleCPE` members ``q^(s)`` with weights ``w_s`` (default ``1/S``): CPE
  ``sum_s w_s q^(s)``, DPE ``1 - sum_s w_s sum_k (q_k^(s))^2``.

(The DPE is ``E[1 - sum_k pi_k^2]``, the probability that two labels drawn from ``pi``
disagree.)

Each has ``cpe`` ``(item, class)``, ``dpe`` ``(item,)``, ``kernel_expectation(r, kernel)``
(``E`` of an order-``r`` kernel of :mod:`plausible.calibration.disagreement` on ``r`` labels
drawn from ``pi``; the DPE is ``r = 2``, disagreement) and ``posterior(counts)``, the
predictive after observing new labels ``n'_i`` of the same item:

* point: unchanged (a point mass does not learn);
* Dirichlet: ``Dir(alpha + n')``, posterior CPE ``(alpha_k + n'_k) / (alpha0 + n')``;
* ensemble: importance weights ``w'_s ∝ w_s prod_k (q_k^(s))^(n'_k)`` -- the *product*
  likelihood of the new labels under member ``s`` (the reference code sums
  ``q_k^(n'_k)`` over classes, which is not a likelihood), computed in log space
  (``log w_s + sum_k n'_k log q_k^(s)``, normalised with log-sum-exp) so that many labels
  do not underflow. A member giving probability 0 to an observed class gets weight 0.

Arrays are validated on construction; a ``ValueError`` names the offending row
(``item`` is the row position).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import gammaln, logsumexp, xlogy

from plausible.data.validation import fmt, raise_first
from plausible.calibration.inputs import SUM_TOL, check_cpe
from plausible.calibration.disagreement import DISAGREEMENT, Kernel, check_order, compositions, kernel_values


def _new_labels(counts, shape: tuple[int, int]) -> np.ndarray:
    counts = np.asarray(counts)
    if counts.shape != shape:
        raise ValueError(f"new label counts have shape {counts.shape}, expected {shape} (item, class)")
    if counts.dtype.kind == "f":
        raise_first(
            (~np.isfinite(counts) | (counts != np.round(counts))).any(axis=1),
            lambda i: f"new label counts: item {i} has a non-integer count {counts[i].tolist()}",
        )
    raise_first(
        (counts < 0).any(axis=1),
        lambda i: f"new label counts: item {i} has a negative count {counts[i].tolist()}",
    )
    return counts.astype(np.int64)


def _log_multinomial_coef(m: np.ndarray) -> np.ndarray:
    """``log(r! / prod_k m_k!)`` per histogram row."""
    return gammaln(m.sum(axis=1) + 1.0) - gammaln(m + 1.0).sum(axis=1)


def _multinomial_expectation(q: np.ndarray, r: int, kernel: Kernel) -> np.ndarray:
    """``E kappa`` with ``r`` labels i.i.d. ``Cat(q)``: ``q`` ``(..., K)`` -> ``(...)``."""
    if kernel == DISAGREEMENT:
        return 1.0 - (q**r).sum(axis=-1)
    kappa = kernel_values(kernel, r, q.shape[-1])
    m = compositions(r, q.shape[-1])
    log_p = _log_multinomial_coef(m) + (xlogy(m, q[..., None, :])).sum(axis=-1)
    return np.exp(log_p) @ kappa


@dataclass(frozen=True)
class PointCPE:
    """A point CPE ``q`` ``(item, class)``: ``p(pi | x) = delta_q``."""

    q: np.ndarray

    def __post_init__(self):
        object.__setattr__(self, "q", check_cpe(self.q, what="point CPE"))

    @property
    def cpe(self) -> np.ndarray:
        """The CPE ``q``, ``(item, class)``."""
        return self.q

    @property
    def dpe(self) -> np.ndarray:
        """``1 - sum_k q_k^2``."""
        return 1.0 - (self.q**2).sum(axis=1)

    def kernel_expectation(self, r: int = 2, kernel: Kernel = DISAGREEMENT) -> np.ndarray:
        """``E`` of an order-``r`` kernel on ``r`` labels drawn from ``q``, ``(item,)``
        (module)."""
        return _multinomial_expectation(self.q, check_order(r), kernel)

    def posterior(self, counts) -> PointCPE:
        """The predictive after new labels ``counts``: a point mass does not learn, so itself
        (the counts are validated)."""
        _new_labels(counts, self.q.shape)
        return self


@dataclass(frozen=True)
class DirichletCPE:
    """``p(pi | x_i) = Dir(alpha_i)``, ``alpha`` ``(item, class)``, all entries > 0."""

    alpha: np.ndarray

    def __post_init__(self):
        alpha = np.asarray(self.alpha, dtype=float)
        if alpha.ndim != 2:
            raise ValueError(f"alpha must be 2-D (item, class), got shape {alpha.shape}")
        raise_first(
            (~np.isfinite(alpha) | (alpha <= 0)).any(axis=1),
            lambda i: f"Dirichlet alpha: item {i} has an entry that is not finite and > 0: "
            f"{alpha[i].tolist()}",
        )
        object.__setattr__(self, "alpha", alpha)

    @classmethod
    def from_cpe(cls, cpe, alpha0) -> DirichletCPE:
        """``alpha = alpha0 * q`` with ``alpha0`` a scalar or ``(item,)``; ``q`` must be > 0."""
        q = check_cpe(cpe, what="cpe")
        a0 = np.broadcast_to(np.asarray(alpha0, dtype=float), (q.shape[0],))
        raise_first(
            ~np.isfinite(a0) | (a0 <= 0),
            lambda i: f"alpha0: item {i}: {fmt(a0[i])} is not finite and > 0",
        )
        raise_first(
            (q <= 0).any(axis=1),
            lambda i: f"cpe: item {i} has a zero probability; a Dirichlet needs q > 0",
        )
        return cls(a0[:, None] * q)

    @property
    def alpha0(self) -> np.ndarray:
        """Concentration ``sum_k alpha_k``: ``(item,)``."""
        return self.alpha.sum(axis=1)

    @property
    def cpe(self) -> np.ndarray:
        """The CPE ``alpha / alpha0``, ``(item, class)``."""
        return self.alpha / self.alpha0[:, None]

    @property
    def dpe(self) -> np.ndarray:
        """``alpha0 / (alpha0 + 1) (1 - sum_k q_k^2)``."""
        a0 = self.alpha0
        return a0 / (a0 + 1.0) * (1.0 - (self.cpe**2).sum(axis=1))

    def kernel_expectation(self, r: int = 2, kernel: Kernel = DISAGREEMENT) -> np.ndarray:
        """``E kappa`` with ``r`` labels from ``DirMult(r, alpha)``; disagreement:
        ``1 - sum_k alpha_k^[r] / alpha0^[r]`` (rising factorials)."""
        r = check_order(r)
        a = self.alpha
        a0 = self.alpha0
        if kernel == DISAGREEMENT:
            log_rise = gammaln(a + r) - gammaln(a)
            return 1.0 - np.exp(log_rise - (gammaln(a0 + r) - gammaln(a0))[:, None]).sum(axis=1)
        kappa = kernel_values(kernel, r, a.shape[1])
        m = compositions(r, a.shape[1])
        log_p = (
            _log_multinomial_coef(m)[None, :]
            + (gammaln(a[:, None, :] + m[None]) - gammaln(a[:, None, :])).sum(axis=2)
            - (gammaln(a0 + r) - gammaln(a0))[:, None]
        )
        return np.exp(log_p) @ kappa

    def posterior(self, counts) -> DirichletCPE:
        """``Dir(alpha + n')``."""
        return DirichletCPE(self.alpha + _new_labels(counts, self.alpha.shape))


@dataclass(frozen=True)
class EnsembleCPE:
    """A weighted ensemble of CPEs: ``members`` ``(item, member, class)``, ``weights``
    ``(item, member)`` (rows summing to 1; default uniform) -- MC dropout, test-time
    augmentation, deep ensembles."""

    members: np.ndarray
    weights: np.ndarray | None = None

    def __post_init__(self):
        m = np.asarray(self.members, dtype=float)
        if m.ndim != 3:
            raise ValueError(f"ensemble members must be 3-D (item, member, class), got shape {m.shape}")
        n_items, n_members, n_classes = m.shape
        check_cpe(m.reshape(-1, n_classes), what="ensemble member CPE (row = item * members + member)")
        if self.weights is None:
            w = np.full((n_items, n_members), 1.0 / n_members)
        else:
            w = np.asarray(self.weights, dtype=float)
            if w.shape != (n_items, n_members):
                raise ValueError(f"weights must have shape {(n_items, n_members)}, got {w.shape}")
            raise_first(
                (~np.isfinite(w) | (w < 0)).any(axis=1) | (np.abs(w.sum(axis=1) - 1) > SUM_TOL),
                lambda i: f"ensemble weights: item {i} is not a probability vector: {w[i].tolist()}",
            )
        object.__setattr__(self, "members", m)
        object.__setattr__(self, "weights", w)

    @property
    def cpe(self) -> np.ndarray:
        """The CPE ``sum_s w_s q^(s)``, ``(item, class)``."""
        return np.einsum("is,isk->ik", self.weights, self.members)

    @property
    def dpe(self) -> np.ndarray:
        """``1 - sum_s w_s sum_k (q_k^(s))^2``."""
        return 1.0 - np.einsum("is,is->i", self.weights, (self.members**2).sum(axis=2))

    def kernel_expectation(self, r: int = 2, kernel: Kernel = DISAGREEMENT) -> np.ndarray:
        """``E`` of an order-``r`` kernel on ``r`` labels drawn from ``pi``: the members'
        expectations, weighted, ``(item,)`` (module)."""
        per_member = _multinomial_expectation(self.members, check_order(r), kernel)  # (item, member)
        return np.einsum("is,is->i", self.weights, per_member)

    def posterior(self, counts) -> EnsembleCPE:
        """Reweight the members by the likelihood ``prod_k (q_k^(s))^(n'_k)`` of the new labels."""
        counts = _new_labels(counts, (self.members.shape[0], self.members.shape[2]))
        with np.errstate(divide="ignore"):
            log_w = np.log(self.weights) + xlogy(counts[:, None, :], self.members).sum(axis=2)
        norm = logsumexp(log_w, axis=1, keepdims=True)
        raise_first(
            ~np.isfinite(norm[:, 0]),
            lambda i: f"ensemble posterior: item {i}: every member gives probability 0 to the "
            f"new labels {counts[i].tolist()}",
        )
        return EnsembleCPE(self.members, np.exp(log_w - norm))
