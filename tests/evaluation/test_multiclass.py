"""Algorithm 4 (multi-class testing, Su 2024): count moments vs sampled label vectors,
projection, recovery of the confusion matrix. The joint Gibbs sampler of the classes and the
confusion matrix (:func:`confusion_gibbs`): against the exact posterior of tiny cases,
enumerated over every label vector with ``K`` integrated out, and on the ``N = 1000`` setting.
"""

import itertools

import numpy as np
import pytest
from scipy import stats
from scipy.special import gammaln

from plausible.data.su_simulation import simulate_su
from plausible.evaluation.confusion_gibbs import confusion_gibbs
from plausible.evaluation.multiclass import (
    algorithm_multiclass, count_moments, project_rows, sample_classes,
    sample_confusion_counts, sampled_confusion_counts,
)
from plausible.maths.fallibility import label_likelihood

K_TRUE = np.array([[0.7, 0.1, 0.1, 0.1], [0.1, 0.6, 0.2, 0.1],
                   [0.05, 0.15, 0.7, 0.1], [0.1, 0.1, 0.1, 0.7]])


@pytest.fixture(scope="module")
def setting():
    s = simulate_su(1000, 5, prior=[0.4, 0.3, 0.2, 0.1], confusion=K_TRUE, seed=0)
    L = label_likelihood(s.labels, s.difficulty, s.fallibility)
    return s, L, algorithm_multiclass(L, s.prior, s.prediction, n_samples=2000, seed=0)


def test_count_moments_match_sampling(setting):
    s, _, r = setting
    y = sample_classes(r.posterior, 20000, seed=1)
    counts = sampled_confusion_counts(y, s.prediction, 4)  # (M, yhat, y)
    mean, var, acc = count_moments(r.posterior, s.prediction)
    sd = np.sqrt(var)
    np.testing.assert_allclose(counts.mean(0), mean, atol=0.05 * sd.max() + 0.02)
    np.testing.assert_allclose(counts.std(0), sd, rtol=0.05, atol=0.02)
    lo, hi = np.quantile(counts, [0.025, 0.975], axis=0)
    np.testing.assert_allclose(lo, r.counts_interval[0], atol=0.15 * sd.max() + 1)
    np.testing.assert_allclose(hi, r.counts_interval[1], atol=0.15 * sd.max() + 1)
    sampled_acc = (y == s.prediction).mean(1)
    assert abs(sampled_acc.mean() - acc.mean()) < 0.05 * acc.std()
    assert sampled_acc.std() == pytest.approx(acc.std(), rel=0.05)


def test_recovers_confusion(setting):
    s, _, r = setting
    assert r.converged
    truth = sampled_confusion_counts(s.truth[None], s.prediction, 4)[0]
    covered = (truth >= r.counts_interval[0]) & (truth <= r.counts_interval[1])
    assert covered.mean() >= 0.8
    # Against the realised P(yhat | y) (class 3 has only ~100 items: its row is noisy).
    realised = (truth / truth.sum(0, keepdims=True)).T
    np.testing.assert_allclose(r.confusion, realised, atol=0.1)
    assert abs(r.accuracy.mean() - (s.truth == s.prediction).mean()) < 3 * r.accuracy.std()


def test_projection_and_seed(setting):
    K = project_rows(np.array([[1.0, 0.0, 0.0], [0.5, 0.5, 0.0]]), 0.01)
    np.testing.assert_allclose(K.sum(1), 1)
    assert K.min() >= 0.01 - 1e-12 and K.max() <= 0.99 + 1e-12
    np.testing.assert_allclose(K[0], [0.98, 0.01, 0.01], atol=1e-9)
    with pytest.raises(ValueError, match="infeasible"):
        project_rows(np.eye(3), 0.5)
    s, L, _ = setting
    a = algorithm_multiclass(L, s.prior, s.prediction, n_samples=300, j_max=2, seed=3)
    b = algorithm_multiclass(L, s.prior, s.prediction, n_samples=300, j_max=2, seed=3)
    np.testing.assert_array_equal(a.confusion, b.confusion)
    with pytest.raises(ValueError, match="outside the classes"):
        algorithm_multiclass(L, s.prior, np.full(1000, 4))


def test_sample_confusion_counts_matches_count_moments(setting):
    s, _, r = setting
    counts = sample_confusion_counts(r.posterior, s.prediction, 20000, seed=2)  # (M, yhat, y)
    mean, var, _ = count_moments(r.posterior, s.prediction)
    sd = np.sqrt(var)
    sizes = np.bincount(s.prediction, minlength=4)
    np.testing.assert_array_equal(counts.sum(2), np.broadcast_to(sizes, (20000, 4)))
    np.testing.assert_allclose(counts.mean(0), mean, atol=5 * sd.max() / np.sqrt(20000))
    np.testing.assert_allclose(counts.std(0), sd, rtol=0.05, atol=0.02)
    again = sample_confusion_counts(r.posterior, s.prediction, 20000, seed=2)
    np.testing.assert_array_equal(counts, again)


def exact_confusion_posterior(likelihood, prior, prediction, concentration):
    """Exact posterior of a tiny case by enumerating all ``C^N`` label vectors ``y`` with each
    row ``K[l] ~ Dirichlet(a)`` integrated out (Dirichlet-multinomial):
    ``p(y) ∝ prod_i pi_{y_i} l_i(y_i) prod_l B(a + n_l) / B(a)``, ``n_l = (#{y = l, yhat = m})_m``,
    ``B(v) = prod_k Gamma(v_k) / Gamma(sum_k v_k)``.

    Returns ``(matrices, prob, mean_K, marginal)``: the distinct count matrices
    ``#{yhat = n, y = l}`` flattened ``(M, C * C)`` and their probabilities ``(M,)``;
    ``E[K | data] = sum_y p(y) (a + n_l) / (sum a + |n_l|)`` ``(C, C)``; ``p(y_i = l)``
    ``(item, class)``."""
    N, C = likelihood.shape
    a = np.broadcast_to(np.asarray(concentration, dtype=np.float64), (C,))
    ys = np.array(list(itertools.product(range(C), repeat=N)))  # (C^N, item)
    rows = np.zeros((len(ys), C, C))  # n[y-vector, l, m]
    np.add.at(rows, (np.arange(len(ys))[:, None], ys, prediction[None]), 1)

    def log_beta(v):
        return gammaln(v).sum(-1) - gammaln(v.sum(-1))

    log_p = (np.log(prior[ys] * likelihood[np.arange(N), ys]).sum(1)
             + (log_beta(a + rows) - log_beta(a)).sum(1))
    p = np.exp(log_p - log_p.max())
    p /= p.sum()
    mean_K = np.einsum("s,slm->lm", p, (a + rows) / (a.sum() + rows.sum(2, keepdims=True)))
    marginal = np.stack([p @ (ys == l) for l in range(C)], axis=1)
    matrices, index = np.unique(rows.transpose(0, 2, 1).reshape(len(ys), -1), axis=0,
                                return_inverse=True)
    return matrices, np.bincount(index.ravel(), weights=p), mean_K, marginal


def gibbs_vs_exact(likelihood, prior, prediction, exact_concentration, concentration, seed):
    """Chi-square test of the Gibbs count-matrix draws against the exact distribution, the
    draws thinned to about independent ones (every ``ceil(draws / min bulk ESS of the
    cells)``-th), categories with an expected count < 5 pooled; also the total-variation
    distance of all draws and the Gibbs result."""
    matrices, prob, mean_K, marginal = exact_confusion_posterior(
        likelihood, prior, prediction, exact_concentration)
    r = confusion_gibbs(likelihood, prior, prediction, draws=10000, tune=100,
                        concentration=concentration, seed=seed)
    C = likelihood.shape[1]
    lookup = {tuple(m): k for k, m in enumerate(matrices.astype(int))}
    code = np.array([lookup[tuple(m)] for m in r.count_draws.reshape(-1, C * C)]).reshape(
        r.count_draws.shape[:2])  # (chain, draw) index of the matrix
    thinned = code[:, ::int(np.ceil(code.size / np.nanmin(r.ess_bulk)))].ravel()
    observed = np.bincount(thinned, minlength=prob.size)
    expected = prob * thinned.size
    rare = expected < 5
    if rare.any():
        observed = np.r_[observed[~rare], observed[rare].sum()]
        expected = np.r_[expected[~rare], expected[rare].sum()]
    chi2 = ((observed - expected) ** 2 / expected).sum()
    p_value = stats.chi2.sf(chi2, observed.size - 1)
    tv = 0.5 * np.abs(np.bincount(code.ravel(), minlength=prob.size) / code.size - prob).sum()
    return p_value, tv, r, mean_K, marginal


TINY = [  # (likelihood seed, classes, prediction, concentration)
    (5, 3, [0, 1, 2, 1], 1.0),
    (6, 2, [0, 1, 1, 0, 1], (2.0, 0.5)),
]


@pytest.mark.parametrize("case", TINY)
def test_confusion_gibbs_matches_exact_posterior(case):
    seed, C, prediction, a = case
    prediction = np.array(prediction)
    L = np.random.default_rng(seed).uniform(0.05, 1, (prediction.size, C))
    prior = np.arange(C, 0, -1) / np.arange(C, 0, -1).sum()
    p_value, tv, r, mean_K, marginal = gibbs_vs_exact(L, prior, prediction, a, a, seed=1)
    assert p_value > 1e-3
    assert tv < 0.025
    # Posterior means of K and of the classes (Rao-Blackwellised) within 5 Monte Carlo se.
    se_K = r.confusion_draws.std(axis=(0, 1)) / np.sqrt(np.nanmin(r.ess_bulk))
    assert np.all(np.abs(r.confusion - mean_K) < 5 * se_K + 1e-12)
    np.testing.assert_allclose(r.posterior, marginal, atol=0.01)
    np.testing.assert_allclose(r.posterior.sum(1), 1)


def test_confusion_gibbs_detects_a_wrong_concentration():
    """The comparison has power: draws under Dirichlet(2) rows against the exact posterior
    under Dirichlet(1) rows are rejected, and so are draws under Dirichlet(0.5) rows."""
    seed, C, prediction, _ = TINY[0]
    prediction = np.array(prediction)
    L = np.random.default_rng(seed).uniform(0.05, 1, (prediction.size, C))
    prior = np.array([0.5, 0.3, 0.2])
    for wrong in (2.0, 0.5):
        p_value, tv, *_ = gibbs_vs_exact(L, prior, prediction, 1.0, wrong, seed=1)
        assert p_value < 1e-10 and tv > 0.04


def test_confusion_gibbs_on_simulated_data(setting):
    s, L, alg4 = setting
    r = confusion_gibbs(L, s.prior, s.prediction, seed=0)
    assert r.count_draws.shape == r.confusion_draws.shape == (4, 1000, 4, 4)
    sizes = np.bincount(s.prediction, minlength=4)
    np.testing.assert_array_equal(r.count_draws.sum(3), np.broadcast_to(sizes, (4, 1000, 4)))
    np.testing.assert_allclose(r.confusion_draws.sum(3), 1)
    assert r.converged and np.nanmax(r.rhat) < 1.01 and np.nanmin(r.ess_bulk) > 1000
    truth = sampled_confusion_counts(s.truth[None], s.prediction, 4)[0]
    lo, hi = r.counts_interval
    assert np.all(lo <= r.counts_mean) and np.all(r.counts_mean <= hi)
    assert ((truth >= lo) & (truth <= hi)).mean() >= 0.8
    # Same posterior centre as Algorithm 4, but wider: K's uncertainty is included.
    np.testing.assert_allclose(r.confusion, alg4.confusion, atol=0.03)
    np.testing.assert_allclose(r.counts_mean, alg4.counts_mean, atol=0.5 * alg4.counts_sd.max())
    assert np.median(r.counts_sd / alg4.counts_sd) > 1.05
    assert abs(r.accuracy.mean() - (s.truth == s.prediction).mean()) < 3 * r.accuracy.std()
    np.testing.assert_allclose(r.posterior.sum(1), 1)
    again = confusion_gibbs(L, s.prior, s.prediction, draws=20, tune=5, seed=3)
    np.testing.assert_array_equal(again.count_draws,
                                  confusion_gibbs(L, s.prior, s.prediction, draws=20, tune=5,
                                                  seed=3).count_draws)
    with pytest.raises(ValueError, match="concentration"):
        confusion_gibbs(L, s.prior, s.prediction, concentration=0.0)
    with pytest.raises(ValueError, match="chains >= 2"):
        confusion_gibbs(L, s.prior, s.prediction, chains=1)
    with pytest.raises(ValueError, match="outside the classes"):
        confusion_gibbs(L, s.prior, np.full(1000, 4))
