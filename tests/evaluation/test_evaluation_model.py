"""Bayesian testing model in PyMC (Su 2024, beyond the paper): NUTS posterior vs
Algorithm 1 and the truth."""

import numpy as np
import pytest

from plausible.data.su_simulation import simulate_su
from plausible.inference.sampling import sample
from plausible.evaluation import binary as T
from plausible.maths.fallibility import label_log_likelihood
from plausible.evaluation.model import build_model, metrics_from_trace


@pytest.mark.slow
def test_binary_posterior_agrees_with_algorithm1():
    s = simulate_su(600, 5, prior=[0.8, 0.2], operating_point=(0.8, 0.3), seed=11)
    L = label_log_likelihood(s.labels, s.difficulty, s.fallibility)
    trace = sample(build_model(L, s.prediction), 300, tune=300, chains=2, seed=0, progressbar=False,
                   check_convergence=False)
    metrics = metrics_from_trace(trace, s.prediction, seed=0)
    alg1 = T.algorithm_ratios(L, s.prior, s.prediction, log=True)
    truth = T.empirical_metrics(s.truth, s.prediction)
    for k in T.METRICS:
        mean, sd = float(metrics[k].mean()), float(metrics[k].std())
        assert abs(mean - alg1.metrics[k]) < 0.5 * sd, k
        assert abs(mean - truth[k]) < 3 * sd, k
    post = trace["posterior"]
    # The population operating point: within 3 posterior sds of the realised one.
    for name, k in [("p_d", "recall"), ("p_fa", "p_fa")]:
        assert abs(float(post[name].mean()) - truth[k]) < 3 * float(post[name].std()), name


def test_multiclass_model_builds_and_rejects_bad_input():
    K = np.full((3, 3), 0.2) + 0.4 * np.eye(3)
    s = simulate_su(50, 3, prior=[0.5, 0.3, 0.2], confusion=K, seed=0)
    L = label_log_likelihood(s.labels, s.difficulty, s.fallibility)
    model = build_model(L, s.prediction)
    assert model["confusion"].eval().shape == (3, 3)
    assert np.isfinite(model.compile_logp()(model.initial_point()))
    with pytest.raises(ValueError, match="outside the classes"):
        build_model(L, np.full(50, 3))
    with pytest.raises(ValueError, match="Beta parameters"):
        build_model(L, s.prediction, operating_point_prior=(0, 1))
