"""Testing a binary classifier against noisy labels (Su 2024): estimate the metrics,
never the labels.

Inputs everywhere: per-item label likelihoods ``l_i(y) = p(z_i | y)`` ``(item, class)`` from
any annotator model (e.g. :func:`plausible.maths.fallibility.label_likelihood`), the class
prior ``pi`` ``(class,)`` and the predictions ``yhat`` ``(item,)``.

* Label posterior [R]: ``p(y | yhat_i, z_i) ∝ K[y, yhat_i] l_i(y) pi(y)``, ``K[y, n] = P(yhat = n | y)``
  (binary: the operating point ``(p_D, p_FA)``); with ``K`` constant in ``y`` it is the
  labels-only posterior ``p(y | z_i)``.
* With ``p_i = P(Y_i = 1 | .)``: ``U = (1/N) sum_{yhat_i = 1} Y_i``, ``V = (1/N) sum_{yhat_i = 0} Y_i``
  are independent, ``mu_U = (1/N) sum_{yhat=1} p_i``, ``s_U^2 = (1/N^2) sum_{yhat=1} p_i (1 - p_i)``
  (likewise V) [R], approximately normal when each prediction group has >= 30 items.
  accuracy = ``U - V - n1 + 1`` and precision = ``U / n1`` are normal; ``p_D``, ``p_FA`` and
  ``F_beta`` are ratios of correlated normals (:mod:`plausible.evaluation.ratio_normal`).
* Joint densities of (precision, recall) and (p_D, p_FA) by change of variables from
  ``N(u) N(v)`` [R]; sampled posteriors from ``M`` label vectors.
* Algorithms 1 (ratios), 2 (sampling), 3 (label estimation) for the unknown operating point;
  the prior-averaged "Full Bayes" of the paper (per-labeler baselines:
  :mod:`plausible.evaluation.labeler_baselines`).

Every analytic posterior is checked against sampled label vectors in
``tests/evaluation/test_binary.py``.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
from scipy import stats
from scipy.special import logsumexp

from plausible.evaluation.ratio_normal import RatioNormal

MIN_GROUP = 30
METRICS = ("accuracy", "precision", "recall", "p_fa", "f_beta")


# ---------------------------------------------------------------------------- label posteriors
def check_likelihood(likelihood, log: bool) -> np.ndarray:
    """Log-likelihoods ``(item, class)`` from likelihoods (``log=False``) or log-likelihoods."""
    L = np.asarray(likelihood, dtype=np.float64)
    if L.ndim != 2 or L.shape[1] < 2:
        raise ValueError(f"likelihood must be (item, class) with >= 2 classes, got shape {L.shape}")
    if log:
        if np.isnan(L).any() or (L == np.inf).any():
            raise ValueError("log-likelihood must not contain NaN or +inf")
        return L
    if not np.all(np.isfinite(L)) or (L < 0).any():
        raise ValueError("likelihood must be finite and non-negative")
    with np.errstate(divide="ignore"):
        return np.log(L)


def _check_prior(prior, n_classes) -> np.ndarray:
    pi = np.asarray(prior, dtype=np.float64)
    if pi.shape != (n_classes,):
        raise ValueError(f"prior must have shape ({n_classes},), got {pi.shape}")
    if (pi < 0).any() or not np.isclose(pi.sum(), 1.0):
        raise ValueError(f"prior must be non-negative and sum to 1, got {pi}")
    return pi


def check_prediction(prediction, n_items, n_classes) -> np.ndarray:
    """Predictions as int64 ``(item,)`` in ``0..C-1``; raises naming the first bad item."""
    yhat = np.asarray(prediction)
    if yhat.shape != (n_items,):
        raise ValueError(f"prediction must have shape ({n_items},), got {yhat.shape}")
    if not np.issubdtype(yhat.dtype, np.integer):
        if not np.all(np.mod(yhat, 1) == 0):
            raise ValueError("prediction must hold integer class indices")
    yhat = yhat.astype(np.int64)
    bad = (yhat < 0) | (yhat >= n_classes)
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        raise ValueError(f"prediction of item {k} is {yhat[k]}, outside the classes 0..{n_classes - 1}")
    return yhat


def operating_point_confusion(p_d: float, p_fa: float) -> np.ndarray:
    """``K[y, yhat] = P(yhat | y)`` of a binary operating point: ``[[1-p_FA, p_FA], [1-p_D, p_D]]``."""
    for name, value in [("p_D", p_d), ("p_FA", p_fa)]:
        if not 0 <= value <= 1:
            raise ValueError(f"{name} must lie in [0, 1], got {value}")
    return np.array([[1 - p_fa, p_fa], [1 - p_d, p_d]])


def label_posterior(likelihood, prior, prediction=None, confusion=None, *, log=False) -> np.ndarray:
    """``p(y | yhat_i, z_i) ∝ K[y, yhat_i] l_i(y) pi(y)`` [R], float64 ``(item, class)``.

    ``likelihood`` ``(item, class)`` (log-likelihood with ``log=True``); without
    ``prediction``/``confusion``: the labels-only ``p(y | z_i)``.
    """
    L = check_likelihood(likelihood, log)
    pi = _check_prior(prior, L.shape[1])
    with np.errstate(divide="ignore"):
        log_joint = L + np.log(pi)
        if (prediction is None) != (confusion is None):
            raise ValueError("give both prediction and confusion, or neither")
        if prediction is not None:
            yhat = check_prediction(prediction, L.shape[0], L.shape[1])
            K = _check_confusion(confusion, L.shape[1])
            log_joint = log_joint + np.log(K[:, yhat].T)
    norm = logsumexp(log_joint, axis=1, keepdims=True)
    if not np.all(np.isfinite(norm)):
        k = int(np.flatnonzero(~np.isfinite(norm.ravel()))[0])
        raise ValueError(f"item {k}: every class has zero posterior probability")
    return np.exp(log_joint - norm)


def _check_confusion(confusion, C) -> np.ndarray:
    K = np.asarray(confusion, dtype=np.float64)
    if K.shape != (C, C):
        raise ValueError(f"confusion must have shape ({C}, {C}), got {K.shape}")
    if (K < 0).any() or (K > 1).any() or not np.allclose(K.sum(axis=1), 1.0):
        raise ValueError("confusion rows P(yhat | y) must lie in [0, 1] and sum to 1")
    return K


def plausibility_posterior(trace) -> np.ndarray:
    """Labels-only ``p(y | z_i)`` from a trace: the posterior mean of ``plausibility``
    over chains and draws, ``(item, class)`` (any annotator model of the package)."""
    plaus = trace["posterior"]["plausibility"]
    return np.asarray(plaus.mean(dim=("chain", "draw")).transpose("item", ...).values)


def likelihood_from_posterior(posterior, prior) -> np.ndarray:
    """Likelihood vectors ``l_i(y) ∝ p(y | z_i) / pi(y)`` ``(item, class)`` from labels-only
    posteriors (e.g. :func:`plausibility_posterior`) and the prior they were formed with."""
    P = np.asarray(posterior, dtype=np.float64)
    pi = _check_prior(prior, P.shape[1])
    if (pi == 0).any():
        raise ValueError("prior must be positive to recover likelihoods")
    return P / pi


# ---------------------------------------------------------------------------- U/V moments
@dataclass(frozen=True)
class UVMoments:
    """Moments of ``U``, ``V`` (fractions of all ``N`` items) and ``n1 = #{yhat = 1} / N``."""

    mu_u: float
    var_u: float
    mu_v: float
    var_v: float
    n1: float
    n_items: int

    @property
    def rho(self) -> float:
        """Correlation of ``U`` and ``U + V``: ``s_U / sqrt(s_U^2 + s_V^2)``."""
        return float(np.sqrt(self.var_u / (self.var_u + self.var_v)))


def uv_moments(p1, prediction) -> UVMoments:
    """``mu_U = (1/N) sum_{yhat=1} p_i``, ``s_U^2 = (1/N^2) sum_{yhat=1} p_i (1 - p_i)``, same for V
    over ``yhat = 0`` [R]. ``p1`` ``(item,)``: ``P(Y_i = 1 | .)``. Warns when a prediction group
    has fewer than 30 items (normal approximation doubtful)."""
    p = np.asarray(p1, dtype=np.float64)
    if p.ndim != 1:
        raise ValueError(f"p1 must be (item,), got shape {p.shape}")
    if not np.all((p >= 0) & (p <= 1)):
        k = int(np.flatnonzero(~((p >= 0) & (p <= 1)))[0])
        raise ValueError(f"p1[{k}] = {p[k]} is not a probability")
    yhat = check_prediction(prediction, p.size, 2)
    N = p.size
    pos = yhat == 1
    for name, size in [("yhat = 1", pos.sum()), ("yhat = 0", (~pos).sum())]:
        if size < MIN_GROUP:
            warnings.warn(f"only {size} items with {name} (< {MIN_GROUP}): the normal "
                          "approximation of U, V is doubtful; prefer sampled posteriors",
                          stacklevel=2)
    var = p * (1 - p)
    return UVMoments(p[pos].sum() / N, var[pos].sum() / N**2, p[~pos].sum() / N,
                     var[~pos].sum() / N**2, pos.mean(), N)


def metrics_from_uv(u, v, n1, beta: float = 1.0) -> dict:
    """Metrics in ``U``, ``V``, ``n1`` (arrays broadcast): accuracy ``U - V - n1 + 1``,
    precision ``U / n1``, recall ``U / (U + V)``, p_FA ``(n1 - U) / (1 - U - V)``,
    F_beta ``(1 + b^2) U / (b^2 (U + V) + n1)``."""
    u, v = np.asarray(u, float), np.asarray(v, float)
    b2 = beta**2
    with np.errstate(invalid="ignore", divide="ignore"):
        return {"accuracy": u - v - n1 + 1, "precision": u / n1, "recall": u / (u + v),
                "p_fa": (n1 - u) / (1 - u - v), "f_beta": (1 + b2) * u / (b2 * (u + v) + n1)}


# ---------------------------------------------------------------------------- analytic posteriors
def accuracy_posterior(m: UVMoments):
    """``accuracy ~ N(mu_U - mu_V - n1 + 1, s_U^2 + s_V^2)`` (frozen ``scipy.stats.norm``)."""
    return stats.norm(m.mu_u - m.mu_v - m.n1 + 1, np.sqrt(m.var_u + m.var_v))


def precision_posterior(m: UVMoments):
    """``precision ~ N(mu_U / n1, s_U^2 / n1^2)`` (frozen ``scipy.stats.norm``)."""
    return stats.norm(m.mu_u / m.n1, np.sqrt(m.var_u) / m.n1)


def ratio_posterior(m: UVMoments, metric: str, beta: float = 1.0) -> RatioNormal:
    """Ratio-of-normals posterior of ``"recall"`` (= p_D), ``"p_fa"`` or ``"f_beta"`` (spec table)."""
    su, sv, mu, mv = m.var_u, m.var_v, m.mu_u, m.mu_v
    if metric == "recall":
        return RatioNormal(mu, su, mu + mv, su + sv, su)
    if metric == "p_fa":
        return RatioNormal(m.n1 - mu, su, 1 - mu - mv, su + sv, su)
    if metric == "f_beta":
        b2 = beta**2
        return RatioNormal((1 + b2) * mu, (1 + b2) ** 2 * su, b2 * (mu + mv) + m.n1,
                           b2**2 * (su + sv), b2 * (1 + b2) * su)
    raise ValueError(f"metric must be 'recall', 'p_fa' or 'f_beta', got {metric!r}")


def posterior_summary(m: UVMoments, beta: float = 1.0) -> dict:
    """``{metric: (mean, sd)}`` of all five metrics from the analytic posteriors."""
    out = {}
    for name, dist in [("accuracy", accuracy_posterior(m)), ("precision", precision_posterior(m))]:
        out[name] = (float(dist.mean()), float(dist.std()))
    for name in ("recall", "p_fa", "f_beta"):
        mean, var, _ = ratio_posterior(m, name, beta).moments()
        out[name] = (float(mean), float(np.sqrt(var)))
    return out


def _normal_pdf(x, mean, var):
    return np.exp(-0.5 * (x - mean) ** 2 / var) / np.sqrt(2 * np.pi * var)


def precision_recall_density(m: UVMoments, precision, recall) -> np.ndarray:
    """Joint density on the grid ``(precision, recall)`` [R]: ``u = n1 prec``,
    ``v = n1 prec (1 - rec) / rec``, ``p = n1^2 prec / rec^2 N(u) N(v)`` (0 at rec = 0)."""
    P, R = np.meshgrid(np.asarray(precision, float), np.asarray(recall, float), indexing="ij")
    with np.errstate(divide="ignore", invalid="ignore"):
        u = m.n1 * P
        v = m.n1 * P * (1 - R) / R
        d = m.n1**2 * P / R**2 * _normal_pdf(u, m.mu_u, m.var_u) * _normal_pdf(v, m.mu_v, m.var_v)
    return np.where(R > 0, np.nan_to_num(d), 0.0)


def operating_point_density(m: UVMoments, p_d, p_fa) -> np.ndarray:
    """Joint density on the grid ``(p_D, p_FA)`` [R]: ``S = (n1 - p_FA) / (p_D - p_FA)``,
    ``u = p_D S``, ``v = (1 - p_D) S``,
    ``p = |(n1 - p_D)(n1 - p_FA)| / |p_D - p_FA|^3 N(u) N(v)`` (0 on the chance line)."""
    D, F = np.meshgrid(np.asarray(p_d, float), np.asarray(p_fa, float), indexing="ij")
    with np.errstate(divide="ignore", invalid="ignore"):
        S = (m.n1 - F) / (D - F)
        d = (np.abs((m.n1 - D) * (m.n1 - F)) / np.abs(D - F) ** 3
             * _normal_pdf(D * S, m.mu_u, m.var_u) * _normal_pdf((1 - D) * S, m.mu_v, m.var_v))
    return np.where(D != F, np.nan_to_num(d), 0.0)


# ---------------------------------------------------------------------------- sampled posteriors
def sample_labels(p1, n_samples: int, seed=None, chunk: int = 1000):
    """``(n_samples, item)`` bool label vectors ``Y_i ~ Bernoulli(p1_i)`` independently."""
    rng = np.random.default_rng(seed)
    p = np.asarray(p1, dtype=np.float64)
    return np.concatenate([rng.random((min(chunk, n_samples - s), p.size)) < p
                           for s in range(0, n_samples, chunk)])


def sampled_metrics(p1, prediction, n_samples: int = 5000, *, beta: float = 1.0, seed=None) -> dict:
    """Metrics of ``n_samples`` label vectors drawn from ``p1`` ``(item,)``: ``{metric: (M,)}``.

    The brute-force route every analytic posterior is checked against."""
    yhat = check_prediction(prediction, np.asarray(p1).size, 2)
    y = sample_labels(p1, n_samples, seed)
    N = yhat.size
    u = (y & (yhat == 1)).sum(axis=1) / N
    v = (y & (yhat == 0)).sum(axis=1) / N
    return metrics_from_uv(u, v, (yhat == 1).mean(), beta)


def empirical_metrics(truth, prediction, beta: float = 1.0) -> dict:
    """The five metrics of hard labels ``truth`` against ``prediction`` (both ``(item,)``)."""
    yhat = check_prediction(prediction, np.asarray(truth).size, 2)
    y = check_prediction(truth, yhat.size, 2) == 1
    N = yhat.size
    return {k: float(v) for k, v in metrics_from_uv(
        (y & (yhat == 1)).sum() / N, (y & (yhat == 0)).sum() / N, (yhat == 1).mean(), beta).items()}


# ---------------------------------------------------------------------------- algorithms 1-3
@dataclass(frozen=True)
class TestingResult:
    """Outcome of an operating-point algorithm: the OP ``(p_D, p_FA)``, the iterations run,
    whether it converged, the final ``p1 = P(Y = 1 | yhat, z)`` ``(item,)`` and metrics
    ``{metric: float}`` (MMSE for 1-2, empirical of the estimated labels for 3)."""

    operating_point: tuple
    iterations: int
    converged: bool
    p1: np.ndarray
    metrics: dict


def _iterate(likelihood, prior, prediction, update, *, log, tol, j_max, alpha, start):
    L = check_likelihood(likelihood, log)
    if L.shape[1] != 2:
        raise ValueError(f"binary testing needs 2 classes, likelihood has {L.shape[1]}")
    if not 0 <= alpha < 0.5:
        raise ValueError(f"alpha must lie in [0, 0.5), got {alpha}")
    yhat = check_prediction(prediction, L.shape[0], 2)
    op = np.asarray(start, dtype=np.float64)
    converged = False
    j = 0
    while True:
        p1 = label_posterior(L, prior, yhat, operating_point_confusion(*op), log=True)[:, 1]
        if j >= j_max:
            break
        new = np.clip(update(p1, yhat), alpha, 1 - alpha)
        j += 1
        change = np.abs(new - op).max()
        op = new
        if change < tol:
            converged = True
            p1 = label_posterior(L, prior, yhat, operating_point_confusion(*op), log=True)[:, 1]
            break
    return tuple(float(x) for x in op), j, converged, p1, yhat


def algorithm_ratios(likelihood, prior, prediction, *, beta=1.0, log=False, tol=1e-3, j_max=30,
                     alpha=1e-3, start=(0.5, 0.5), approximate=False) -> TestingResult:
    """Algorithm 1: ``(p_D, p_FA) <- E[P_D], E[P_FA]`` under the ratio posteriors, clipped to
    ``[alpha, 1 - alpha]``, until the change is below ``tol``. ``j_max = 0``: labels-only.
    Means by integration on [0, 1]; ``approximate=True`` takes Marsaglia's approximate mean
    when ``b > 4`` as in the paper (biased, see :mod:`plausible.evaluation.ratio_normal`)."""
    def update(p1, yhat):
        m = uv_moments(p1, yhat)
        return np.array([ratio_posterior(m, k).moments(approximate=approximate)[0]
                         for k in ("recall", "p_fa")])

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # warn once, below, on the final moments
        op, j, ok, p1, yhat = _iterate(likelihood, prior, prediction, update, log=log, tol=tol,
                                       j_max=j_max, alpha=alpha, start=start)
    m = uv_moments(p1, yhat)
    means = {k: v[0] for k, v in posterior_summary(m, beta).items()}
    return TestingResult(op, j, ok, p1, means)


def algorithm_sampling(likelihood, prior, prediction, *, n_samples=5000, beta=1.0, log=False,
                       tol=1e-3, j_max=30, alpha=1e-3, start=(0.5, 0.5), seed=None) -> TestingResult:
    """Algorithm 2: as Algorithm 1, each update the mean empirical ``(p_D, p_FA)`` over
    ``n_samples`` label vectors drawn from the current label posteriors."""
    rng = np.random.default_rng(seed)

    def update(p1, yhat):
        s = sampled_metrics(p1, yhat, n_samples, seed=rng)
        return np.array([np.nanmean(s["recall"]), np.nanmean(s["p_fa"])])

    op, j, ok, p1, yhat = _iterate(likelihood, prior, prediction, update, log=log, tol=tol,
                                   j_max=j_max, alpha=alpha, start=start)
    s = sampled_metrics(p1, yhat, n_samples, beta=beta, seed=rng)
    return TestingResult(op, j, ok, p1, {k: float(np.nanmean(v)) for k, v in s.items()})


def algorithm_labels(likelihood, prior, prediction, *, beta=1.0, log=False, tol=1e-3, j_max=30,
                     alpha=1e-3, start=(0.5, 0.5)) -> TestingResult:
    """Algorithm 3 (suboptimal comparator): ``ycheck_i = argmax_y p(y | yhat_i, z_i)``, the OP
    from ``(yhat, ycheck)``; the metrics are the empirical ones of ``(yhat, ycheck)``."""
    def update(p1, yhat):
        e = empirical_metrics((p1 > 0.5).astype(int), yhat)
        return np.nan_to_num(np.array([e["recall"], e["p_fa"]]), nan=0.5)

    op, j, ok, p1, yhat = _iterate(likelihood, prior, prediction, update, log=log, tol=tol,
                                   j_max=j_max, alpha=alpha, start=start)
    return TestingResult(op, j, ok, p1, empirical_metrics((p1 > 0.5).astype(int), yhat, beta))


def full_bayes(likelihood, prior, prediction, *, grid: int = 41, beta=1.0, log=False,
               alpha=1e-3) -> dict:
    """The paper's "Full Bayes": the MMSE metrics averaged over a uniform grid of operating
    points ``[alpha, 1 - alpha]^2`` (``grid`` points a side), unweighted as printed (the
    evidence ``p(yhat, z | OP)`` is not used). ``{metric: float}``."""
    L = check_likelihood(likelihood, log)
    yhat = check_prediction(prediction, L.shape[0], 2)
    axis = np.linspace(alpha, 1 - alpha, grid)
    D, F = np.meshgrid(axis, axis, indexing="ij")
    # p1 for every OP at once: (op, item).
    with np.errstate(divide="ignore"):
        lp = L + np.log(_check_prior(prior, 2))
        log_k1 = np.where(yhat == 1, np.log(D.ravel())[:, None], np.log1p(-D.ravel())[:, None])
        log_k0 = np.where(yhat == 1, np.log(F.ravel())[:, None], np.log1p(-F.ravel())[:, None])
    p1 = 1 / (1 + np.exp(lp[:, 0] + log_k0 - lp[:, 1] - log_k1))
    N = yhat.size
    pos = yhat == 1
    mu_u, mu_v = p1[:, pos].sum(axis=1) / N, p1[:, ~pos].sum(axis=1) / N
    # Plug-in of the means (the ratio means are within O(1/N) of the mean ratios).
    values = metrics_from_uv(mu_u, mu_v, pos.mean(), beta)
    return {k: float(np.nanmean(v)) for k, v in values.items()}
