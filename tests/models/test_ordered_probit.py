"""The ordered-probit annotator model (:mod:`plausible.models.ordered_probit`): its Gibbs
sampler against NUTS on the same model and each conditional against its closed form, its
log-likelihood and a new label's probabilities against a plain loop over the normal CDF,
its replicates, and what it buys on ordinal data."""

import warnings

import numpy as np
import pytest
from scipy import stats
from scipy.special import logsumexp

import plausible as pl
from plausible.data.labels import Labels
from plausible.inference.memory import MemoryBudgetError
from plausible.inference.ordered_probit_sampler import OrderedProbitKernel, thresholds
from plausible.models import ordered_probit

from posterior_agreement import assert_same_posterior


def simulated_grades(n_items=80, n_annotators=8, per_item=4, n_grades=4, seed=0,
                     bias=0.4, noise=(0.3, 1.0)):
    """Grades perceived as ``z + b_j + s_j e`` and rounded; returns the labels and the truth
    ``(z, b, s)``."""
    rng = np.random.default_rng(seed)
    z = rng.integers(n_grades, size=n_items)
    b = rng.normal(0, bias, n_annotators)
    s = rng.uniform(*noise, n_annotators)
    return perceived_grades(rng, z, b, s, per_item, n_grades), (z, b, s)


def perceived_grades(rng, z, b, s, per_item, n_grades, spam=None) -> Labels:
    """Each item labelled by ``per_item`` distinct annotators, each reporting the grade
    nearest to ``z_i + b_j + s_j u`` (the end grades take the tails), or with probability
    ``spam[j]`` (when given) a uniform grade."""
    item = np.repeat(np.arange(z.size), per_item)
    annotator = np.concatenate([rng.choice(b.size, per_item, replace=False)
                                for _ in range(z.size)])
    y = z[item] + b[annotator] + s[annotator] * rng.standard_normal(item.size)
    label = np.clip(np.floor(y + 0.5), 0, n_grades - 1).astype(int)
    if spam is not None:
        random = rng.random(item.size) < spam[annotator]
        label = np.where(random, rng.integers(n_grades, size=item.size), label)
    return Labels(item, annotator, label, np.arange(z.size), np.arange(b.size),
                  np.arange(n_grades))


@pytest.mark.slow
def test_gibbs_matches_nuts_on_the_same_model():
    """Exact Gibbs (perceptions augmented, grades drawn with them integrated out) against
    NUTS with the grades summed out, reliability 2 (repetitions): prevalence, biases, noises,
    random-answer rates and plausibilities within 4.5 MCSE."""
    labels, _ = simulated_grades(n_items=30, n_annotators=4, per_item=3)
    gibbs = pl.sample(ordered_probit.build(labels, reliability=2), draws=1500, chains=4,
                      seed=1, log_likelihood=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        nuts = pl.sample(ordered_probit.build(labels, reliability=2, gibbs=False), draws=1000,
                         chains=4, seed=2, progressbar=False, log_likelihood=False,
                         target_accept=0.9)
    assert pl.diagnostics.convergence_report(gibbs).ok
    assert pl.diagnostics.convergence_report(nuts).ok
    assert_same_posterior(gibbs, nuts, ("class_prior", "bias", "noise", "spam", "plausibility"))


def test_bias_and_noise_draw_their_conjugate_conditionals():
    """From one state, a sweep draws the perceptions (truncated normals), the bias ``N(m_j,
    1/P_j)`` given them and the noise variance ``InvGamma(a + n_j/2, r + SS_j/2)`` given
    both: over 4000 sweeps the bias and noise draws match the same composition written by
    hand with scipy's truncated normal (means within 4.5 standard errors, spreads within
    8 %)."""
    labels, _ = simulated_grades(n_items=30, n_annotators=3, per_item=3)
    kernel = OrderedProbitKernel(labels, bias_scale=0.5, noise_shape=3.0, noise_rate=0.5,
                                 spam_prior=(1.0, 4.0), gamma=1)
    kernel.moves, kernel.grid, kernel.shift = 0, False, False  # the conjugate steps alone (the
    # moves: the NUTS check above)
    z = np.array([labels.label[labels.item == i][0] for i in range(labels.n_items)])
    state = (z, np.zeros(3), np.full(3, 0.25), np.full(3, 1e-300))  # every answer earnest
    rng = np.random.default_rng(0)
    lower, upper = thresholds(labels.n_classes)
    draws = []
    for _ in range(4000):
        out = {"class_prior": np.empty(4), "bias": np.empty(3), "noise": np.empty(3),
               "spam": np.empty(3)}
        kernel.sweep(rng, state, out)
        draws.append(np.concatenate([out["bias"], out["noise"]]))
    draws = np.array(draws)
    # the same composition by hand: perceptions, then the normal conditional
    rng = np.random.default_rng(1)
    loc = z[labels.item].astype(float)
    by_hand = []
    for _ in range(4000):
        y = stats.truncnorm.rvs((lower[labels.label] - loc) / 0.5,
                                (upper[labels.label] - loc) / 0.5, loc=loc, scale=0.5,
                                random_state=rng)
        precision = 1 / 0.25 + np.bincount(labels.annotator, minlength=3) / 0.25
        mean = np.bincount(labels.annotator, y - loc, minlength=3) / 0.25 / precision
        bias = mean + rng.standard_normal(3) / np.sqrt(precision)
        squares = np.bincount(labels.annotator, (y - loc - bias[labels.annotator]) ** 2,
                              minlength=3)
        n = np.bincount(labels.annotator, minlength=3)
        variance = stats.invgamma.rvs(3.0 + n / 2, scale=0.5 + squares / 2, random_state=rng)
        by_hand.append(np.concatenate([bias, np.sqrt(variance)]))
    by_hand = np.array(by_hand)
    se = np.sqrt(draws.var(0) / 4000 + by_hand.var(0) / 4000)
    assert np.all(np.abs(draws.mean(0) - by_hand.mean(0)) < 4.5 * se)
    np.testing.assert_allclose(draws.std(0), by_hand.std(0), rtol=0.08)


def test_the_joint_noise_and_random_answer_move_draws_its_conditional_by_quadrature():
    """Step 3c alone, from a state off its grid and from one on it, on an annotator who gives
    only the end grades (the full conditional of ``(log s, logit e)`` has a mode of small
    noise with random answers and one of noise past the end grades): over 3000 moves the means
    and spreads of ``log s`` and ``logit e`` match the conditional restricted to the grid,
    integrated on a 300 x 300 grid (means within 5 standard errors, spreads within 6 %); from
    off the grid the move never leaves the state."""
    rng = np.random.default_rng(4)
    n_items, K = 40, 3
    z = rng.integers(K, size=n_items)
    label = np.where(rng.random(n_items) < 0.7, K - 1, 0)
    labels = Labels(np.arange(n_items), np.zeros(n_items, dtype=int), label,
                    np.arange(n_items), np.arange(1), np.arange(K))
    kernel = OrderedProbitKernel(labels, bias_scale=0.5, noise_shape=3.0, noise_rate=0.5,
                                 spam_prior=(1.0, 4.0), gamma=1)
    bias = np.array([0.8])
    # off the grid (noise past its last edge): never moved
    off = (np.array([1e4]), np.array([0.3]))
    for _ in range(20):
        assert kernel._grid_moves(rng, z, bias, *off) == off
    variance, spam = np.array([0.25]), np.array([0.2])
    draws = []
    for _ in range(3000):
        variance, spam = kernel._grid_moves(rng, z, bias, variance, spam)
        draws.append([0.5 * np.log(variance[0]), np.log(spam[0] / (1 - spam[0]))])
    draws = np.array(draws)
    # the same conditional by quadrature on the grid's region
    from plausible.inference.ordered_probit_sampler import LOG_NOISE_EDGES, LOGIT_SPAM_EDGES
    log_s = np.linspace(LOG_NOISE_EDGES[0], LOG_NOISE_EDGES[-1], 301)
    log_s = 0.5 * (log_s[1:] + log_s[:-1])
    logit = np.linspace(LOGIT_SPAM_EDGES[0], LOGIT_SPAM_EDGES[-1], 301)
    logit = 0.5 * (logit[1:] + logit[:-1])
    S, E = (g.reshape(-1, 1) for g in np.meshgrid(log_s, logit, indexing="ij"))
    log_f = (kernel._annotator_log_likelihoods(kernel._cells(z), bias[None], np.exp(S),
                                               1 / (1 + np.exp(-E)))
             + kernel._log_prior(S, E))[:, 0]
    weight = np.exp(log_f - log_f.max())
    weight /= weight.sum()
    grid = np.column_stack([S[:, 0], E[:, 0]])
    mean = weight @ grid
    sd = np.sqrt(weight @ (grid - mean) ** 2)
    assert weight[S[:, 0] > np.log(3.0)].sum() > 0.05  # both modes hold mass
    assert weight[S[:, 0] < np.log(1.0)].sum() > 0.05
    batches = draws.reshape(30, 100, 2).mean(axis=1)  # batch means: the moves' autocorrelation
    se = batches.std(axis=0, ddof=1) / np.sqrt(30)
    assert np.all(np.abs(draws.mean(axis=0) - mean) < 5 * se), (draws.mean(axis=0), mean, se)
    np.testing.assert_allclose(draws.std(axis=0), sd, rtol=0.06)


def test_log_likelihood_and_new_label_probabilities_by_a_plain_loop():
    """Each item's term is ``log sum_c pi_c prod_k P(x_k | c)^gamma`` with ``P(x | c) = e / K +
    (1 - e) [Phi((x + 1/2 - c - b) / s) - Phi((x - 1/2 - c - b) / s)]`` (end grades open), and
    a new label's probabilities are those rows, summing to 1."""
    labels, _ = simulated_grades(n_items=12, n_annotators=4, per_item=3)
    trace = pl.sample(ordered_probit.build(labels, reliability=2), draws=4, chains=1, seed=0,
                      check_convergence=False)
    posterior = trace.posterior
    K = labels.n_classes

    def p_label(x, c, b, s, e):
        hi = 1.0 if x == K - 1 else stats.norm.cdf((x + 0.5 - c - b) / s)
        lo = 0.0 if x == 0 else stats.norm.cdf((x - 0.5 - c - b) / s)
        return e / K + (1 - e) * (hi - lo)

    for draw in (0, 3):
        pi = posterior["class_prior"].values[0, draw]
        b, s, e = (posterior[name].values[0, draw] for name in ("bias", "noise", "spam"))
        for i in range(labels.n_items):
            terms = np.log(pi).copy()
            for k in np.flatnonzero(labels.item == i):
                j = labels.annotator[k]
                terms += 2 * np.log([p_label(labels.label[k], c, b[j], s[j], e[j])
                                     for c in range(K)])
            np.testing.assert_allclose(trace.log_likelihood["labels"].values[0, draw, i],
                                       logsumexp(terms), rtol=1e-9)
    probabilities = ordered_probit.label_probabilities(trace, np.array([0]), np.array([3]),
                                                       np.array([0, 5]), np.array([1, 2]))
    assert probabilities.shape == (1, 2, K, K)
    np.testing.assert_allclose(probabilities.sum(-1), 1.0)
    b, s, e = (posterior[name].values[0, 3] for name in ("bias", "noise", "spam"))
    np.testing.assert_allclose(probabilities[0, 1, 2], [p_label(x, 2, b[2], s[2], e[2])
                                                        for x in range(K)], rtol=1e-9)


def test_replicates_keep_the_design_and_same_seed_gives_same_draws():
    labels, _ = simulated_grades(n_items=20)
    model = ordered_probit.build(labels)
    first, second = (pl.sample(model, draws=50, chains=2, seed=3, check_convergence=False)
                     for _ in range(2))
    np.testing.assert_array_equal(first.posterior["bias"].values, second.posterior["bias"].values)
    replicated = ordered_probit.replicate_labels(first, labels, draws=30, seed=0)
    assert replicated.shape == (30, labels.n_annotations)
    assert replicated.min() >= 0 and replicated.max() <= labels.n_classes - 1


def test_a_whole_number_reliability_or_nuts():
    labels, _ = simulated_grades(n_items=5)
    with pytest.raises(ValueError, match="gibbs=False"):
        ordered_probit.build(labels, reliability=1.5)
    ordered_probit.build(labels, reliability=1.5, gibbs=False)


def test_on_ordinal_data_it_recovers_annotators_and_beats_unordered_dawid_skene():
    """Simulated grades with annotator bias and noise: the biases and noises are recovered
    (correlation with the truth), and the most plausible grade is right more often, and off
    by less, than Dawid-Skene's."""
    labels, (z, b, s) = simulated_grades(n_items=300, n_annotators=20, per_item=5, n_grades=5,
                                         seed=4)
    fit = pl.aggregate(labels, "ordered-probit", draws=1000, seed=0)
    unordered = pl.aggregate(labels, "dawid-skene", draws=1000, seed=0)
    posterior = fit.trace.posterior.mean(("chain", "draw"))
    assert np.corrcoef(posterior["bias"].values, b)[0, 1] > 0.9
    assert np.corrcoef(posterior["noise"].values, s)[0, 1] > 0.7
    top, top_ds = (r.labels()["top_class"].to_numpy().astype(int) for r in (fit, unordered))
    assert (top == z).mean() > (top_ds == z).mean() + 0.03
    assert np.abs(top - z).mean() < np.abs(top_ds - z).mean()


def simulate_from_prior(rng, n_items=20, n_annotators=4, per_item=3, n_grades=3):
    """``(truth, labels)`` with every parameter drawn from the model's default prior."""
    pi = rng.dirichlet(np.ones(n_grades))
    b = rng.normal(0, 0.5, n_annotators)
    s = np.sqrt(0.5 / rng.gamma(3.0, size=n_annotators))
    e = rng.beta(1.0, 4.0, size=n_annotators)
    z = rng.choice(n_grades, n_items, p=pi)
    labels = perceived_grades(rng, z, b, s, per_item, n_grades, spam=e)
    return {"class_prior": pi, "bias": b, "noise": s, "spam": e}, labels


@pytest.mark.slow
def test_simulation_based_calibration():
    """Ranks of the true prevalence, biases, noises and random-answer rates among the posterior
    draws are uniform
    over 25 data sets drawn from the prior (Talts et al. 2018)."""
    from plausible.inference.sbc import simulation_based_calibration

    result = simulation_based_calibration(ordered_probit.build, simulate_from_prior,
                                          var_names=["class_prior", "bias", "noise", "spam"],
                                          n_simulations=25, draws=160, chains=2, thin=4,
                                          tune=100, seed=5, log_likelihood=False)
    for name, p in result.p_values(bins=10).items():
        assert p > 1e-3, (name, p)


def test_the_predictive_check_flags_items_split_between_the_ends_of_the_scale():
    """Grades from the model pass the ordinal check; the same design with 40 % of the items
    split between the lowest and the highest grade (ambiguity, which one true grade plus rater
    noise cannot produce) fails it: too many items span the whole scale."""
    labels, _ = simulated_grades(n_items=60, n_grades=5, seed=0)
    rng = np.random.default_rng(0)
    split = rng.random(labels.n_items) < 0.4
    ends = np.where(rng.random(labels.n_annotations) < 0.5, 0, 4)
    ambiguous = Labels(labels.item, labels.annotator,
                       np.where(split[labels.item], ends, labels.label), labels.items,
                       labels.annotators, labels.classes)
    outside = {}
    for name, data in (("model's", labels), ("split", ambiguous)):
        fit = pl.aggregate(data, "ordered-probit", draws=300, chains=2, seed=0)
        summary = fit.check(draws=100).predictive.summary("grade_range")
        outside[name] = summary.index[~summary["inside"]].tolist()
    assert outside["model's"] == []
    assert 4 in outside["split"]  # whole-scale items: far more than replicated


def test_a_scale_too_fine_for_memory_is_refused_before_sampling(monkeypatch):
    labels, _ = simulated_grades(n_items=10)
    monkeypatch.setattr("plausible.inference.memory.DEFAULT_BUDGET", 5_000)
    with pytest.raises(MemoryBudgetError, match="bin the 4 grades into fewer"):
        ordered_probit.build(labels)
