"""Bayesian testing model (beyond Su 2024): the classifier's prediction as an
observed node next to the annotator likelihoods, so that one posterior covers the operating
point, the class prior, the labels and every metric.

For per-item class log-likelihoods ``log l_i(y)`` ``(item, class)`` from any annotator model
(constant data, e.g. :func:`plausible.maths.fallibility.label_log_likelihood`)::

    pi ~ Dirichlet(class_concentration)                       (class,)
    binary:      p_D ~ Beta(a, b),  p_FA ~ Beta(a, b);  K = [[1 - p_FA, p_FA], [1 - p_D, p_D]]
    multi-class: K[l] ~ Dirichlet(confusion_concentration)    (class, class) rows P(yhat | y = l)
    log p(yhat_i, z_i) = logsumexp_y [log pi_y + log l_i(y) + log K[y, yhat_i]]   (y summed out)
    plausibility[i, y] = p(y | yhat_i, z_i) (Deterministic, (item, class))

All variables are continuous, so NUTS samples it (:func:`plausible.inference.sampling.sample`).
:func:`metrics_from_trace` draws one label vector per posterior draw from ``plausibility``
and reports the empirical metrics of the test set, ``(chain, draw)``: their joint posterior.
Checked against Algorithm 1 and the truth in ``tests/evaluation/test_evaluation_model.py``.
"""

from __future__ import annotations

import numpy as np
import pymc as pm
import pytensor.tensor as pt
import xarray as xr

from plausible.evaluation.binary import check_likelihood, check_prediction, metrics_from_uv


def build_model(log_likelihood, prediction, *, operating_point_prior=(1.0, 1.0),
          confusion_concentration: float = 1.0, class_concentration: float = 1.0) -> pm.Model:
    """PyMC model of the predictions and labels; ``log_likelihood`` ``(item, class)``,
    ``prediction`` ``(item,)`` int classes. Binary (2 classes): Beta priors on ``p_D``,
    ``p_FA``; otherwise Dirichlet rows of ``confusion``."""
    L = check_likelihood(log_likelihood, log=True)
    N, C = L.shape
    yhat = check_prediction(prediction, N, C)
    a, b = operating_point_prior
    if not (a > 0 and b > 0):
        raise ValueError(f"operating_point_prior must be Beta parameters > 0, got {operating_point_prior}")
    coords = {"item": np.arange(N), "class": np.arange(C), "predicted": np.arange(C)}
    with pm.Model(coords=coords) as model:
        loglik = pm.Data("label_log_likelihood", L, dims=("item", "class"))
        pi = pm.Dirichlet("class_prior", a=np.full(C, float(class_concentration)), dims="class")
        if C == 2:
            p_d = pm.Beta("p_d", a, b)
            p_fa = pm.Beta("p_fa", a, b)
            K = pt.stack([pt.stack([1 - p_fa, p_fa]), pt.stack([1 - p_d, p_d])])
        else:
            K = pm.Dirichlet("confusion", a=np.full((C, C), float(confusion_concentration)),
                             dims=("class", "predicted"))
        log_joint = pt.log(pi)[None, :] + loglik + pt.log(K[:, yhat].T)
        pm.Potential("predictions_and_labels", pt.logsumexp(log_joint, axis=1).sum())
        pm.Deterministic("plausibility", pt.special.softmax(log_joint, axis=1),
                         dims=("item", "class"))
    return model


def metrics_from_trace(trace, prediction, *, beta: float = 1.0, seed=None) -> xr.Dataset:
    """Posterior of the test-set metrics (binary): per draw, ``y ~ plausibility`` and the
    empirical accuracy, precision, recall, p_FA, F_beta; ``xarray.Dataset`` ``(chain, draw)``."""
    plaus = trace["posterior"]["plausibility"].transpose("chain", "draw", "item", "class")
    P = np.asarray(plaus.values)
    if P.shape[-1] != 2:
        raise ValueError("metrics_from_trace needs a binary model")
    yhat = check_prediction(prediction, P.shape[2], 2)
    y = np.random.default_rng(seed).random(P.shape[:3]) < P[..., 1]
    N = yhat.size
    u = (y & (yhat == 1)).sum(-1) / N
    v = (y & (yhat == 0)).sum(-1) / N
    values = metrics_from_uv(u, v, (yhat == 1).mean(), beta)
    return xr.Dataset({k: (("chain", "draw"), val) for k, val in values.items()},
                      coords={"chain": plaus["chain"].values, "draw": plaus["draw"].values})
