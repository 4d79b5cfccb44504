"""The ordered-probit annotator model (:mod:`plausible.models.ordered_probit`): its sampler
against NUTS on the same model and SBC, each annotator move against its conditional by
quadrature, the compiled label probabilities and the log-likelihood against scipy's normal
CDF, its replicates, and what it buys on ordinal data."""

import warnings

import numpy as np
import pytest
from scipy import stats
from scipy.special import logsumexp

import plausible as pl
from plausible.data.labels import Labels
from plausible.inference.memory import MemoryBudgetError
from plausible.models.ordered_probit.sampler import OrderedProbitKernel
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
    """The exact sampler (perceptions and indicators integrated out) against NUTS with the
    grades summed out, reliability 1.5 and prevalence concentration 2: prevalence, biases,
    noises, random-answer rates and plausibilities within 4.5 MCSE."""
    labels, _ = simulated_grades(n_items=30, n_annotators=4, per_item=3)
    options = {"reliability": 1.5, "class_concentration": 2.0}
    gibbs = pl.sample(ordered_probit.build(labels, **options), draws=1500, chains=4,
                      seed=1, log_likelihood=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        nuts = pl.sample(ordered_probit.build(labels, **options, gibbs=False), draws=1000,
                         chains=4, seed=2, progressbar=False, log_likelihood=False,
                         target_accept=0.9)
    assert pl.diagnostics.convergence_report(gibbs).ok
    assert pl.diagnostics.convergence_report(nuts).ok
    assert_same_posterior(gibbs, nuts, ("class_prior", "bias", "noise", "spam", "plausibility"))


def annotator_log_density(labels, z, b, log_s, logit, prior=(0.5, 3.0, 0.5, 1.0, 4.0)):
    """One annotator's ``log p(b, log s, logit e | z, x)`` up to a constant, written out with
    scipy's normal CDF (each argument broadcast over a grid)."""
    K = labels.n_classes
    scale, a, r, a_spam, b_spam = prior
    s, e = np.exp(log_s), 1 / (1 + np.exp(-logit))
    total = -0.5 * b ** 2 / scale ** 2 - 2 * a * log_s - r * np.exp(-2 * log_s)
    total = total + a_spam * np.log(e) + b_spam * np.log1p(-e)
    for x, c in zip(labels.label, z[labels.item]):
        hi = 1.0 if x == K - 1 else stats.norm.cdf((x + 0.5 - c - b) / s)
        lo = 0.0 if x == 0 else stats.norm.cdf((x - 0.5 - c - b) / s)
        total = total + np.log(e / K + (1 - e) * (hi - lo))
    return total


def one_annotator(rng, n_items, K, label):
    """Labels of one annotator on ``n_items`` items, and the kernel and counts given ``z``."""
    z = rng.integers(K, size=n_items)
    labels = Labels(np.arange(n_items), np.zeros(n_items, dtype=int), label(z),
                    np.arange(n_items), np.arange(1), np.arange(K))
    kernel = OrderedProbitKernel(labels, bias_scale=0.5, noise_shape=3.0, noise_rate=0.5,
                                 spam_prior=(1.0, 4.0), gamma=1)
    return labels, z, kernel, kernel.counts(z)[0]


def quadrature_moments(log_f, grid):
    """Means and spreads of the density ``exp(log_f)`` over the points ``grid (point, d)``."""
    weight = np.exp(log_f - log_f.max())
    weight /= weight.sum()
    mean = weight @ grid
    return mean, np.sqrt(weight @ (grid - mean) ** 2), weight


def test_the_slice_moves_draw_an_annotators_conditional_by_quadrature():
    """Step 1 alone (slice updates of bias, log noise and logit random-answer rate and along
    the two lines in log noise and logit random-answer rate, the perceptions and indicators
    integrated out) on one annotator's 40 labels given the grades:
    over 4000 sweeps the means and spreads of the three match their joint conditional
    integrated on a 70^3 grid (means within 5 batch-means standard errors, spreads within
    6 %)."""
    rng = np.random.default_rng(2)
    labels, z, kernel, counts = one_annotator(
        rng, 40, 3, lambda z: np.clip(np.round(z + 0.3 + 0.6 * rng.standard_normal(z.size)),
                                      0, 2).astype(int))
    state, draws = (np.zeros(1), np.log(np.full(1, 0.5)), np.full(1, -1.4)), []
    for _ in range(4000):
        state = kernel.annotator_moves(rng, counts, *state, moves=1, grid=np.zeros(1, bool))
        draws.append(np.concatenate(state))
    draws = np.array(draws)
    axes = (np.linspace(-1.5, 2.0, 70), np.linspace(np.log(0.15), np.log(3.0), 70),
            np.linspace(-12.0, 3.0, 70))
    grid = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, 3)
    mean, sd, weight = quadrature_moments(annotator_log_density(labels, z, *grid.T), grid)
    for d in range(3):  # the grid holds the mass: little at its faces
        face = np.isclose(grid[:, d], axes[d][0]) | np.isclose(grid[:, d], axes[d][-1])
        assert weight[face].sum() < 0.01
    batches = draws.reshape(40, 100, 3).mean(axis=1)
    se = batches.std(axis=0, ddof=1) / np.sqrt(40)
    assert np.all(np.abs(draws.mean(axis=0) - mean) < 5 * se), (draws.mean(axis=0), mean, se)
    np.testing.assert_allclose(draws.std(axis=0), sd, rtol=0.06)


def test_the_joint_noise_and_random_answer_move_draws_its_conditional_by_quadrature():
    """Step 2 alone, from a state off its grid and from one on it, on an annotator who gives
    only the end grades (the full conditional of ``(log s, logit e)`` has a mode of small
    noise with random answers and one of noise past the end grades): over 3000 moves the means
    and spreads of ``log s`` and ``logit e`` match the conditional restricted to the grid,
    integrated on a 300 x 300 grid (means within 5 standard errors, spreads within 6 %); from
    off the grid the move never leaves the state."""
    rng = np.random.default_rng(4)
    labels, z, kernel, counts = one_annotator(
        rng, 40, 3, lambda z: np.where(rng.random(z.size) < 0.7, 2, 0))
    bias, every = np.array([0.8]), np.ones(1, bool)
    off = (np.array([np.log(100.0)]), np.array([-0.8]))  # noise past the grid's last edge
    for _ in range(20):
        assert kernel.annotator_moves(rng, counts, bias, *off, moves=0, grid=every)[1:] == off
    state, draws = (np.log(np.full(1, 0.5)), np.full(1, -1.4)), []
    for _ in range(3000):
        state = kernel.annotator_moves(rng, counts, bias, *state, moves=0, grid=every)[1:]
        draws.append(np.concatenate(state))
    draws = np.array(draws)
    from plausible.models.ordered_probit.sampler import LOG_NOISE_EDGES, LOGIT_SPAM_EDGES
    log_s = np.linspace(LOG_NOISE_EDGES[0], LOG_NOISE_EDGES[-1], 301)
    logit = np.linspace(LOGIT_SPAM_EDGES[0], LOGIT_SPAM_EDGES[-1], 301)
    grid = np.stack(np.meshgrid(0.5 * (log_s[1:] + log_s[:-1]),
                                0.5 * (logit[1:] + logit[:-1]), indexing="ij"),
                    axis=-1).reshape(-1, 2)
    mean, sd, weight = quadrature_moments(annotator_log_density(labels, z, 0.8, *grid.T), grid)
    assert weight[grid[:, 0] > np.log(3.0)].sum() > 0.05  # both modes hold mass
    assert weight[grid[:, 0] < np.log(1.0)].sum() > 0.05
    batches = draws.reshape(30, 100, 2).mean(axis=1)  # batch means: the moves' autocorrelation
    se = batches.std(axis=0, ddof=1) / np.sqrt(30)
    assert np.all(np.abs(draws.mean(axis=0) - mean) < 5 * se), (draws.mean(axis=0), mean, se)
    np.testing.assert_allclose(draws.std(axis=0), sd, rtol=0.06)


def test_the_compiled_label_probabilities_hold_far_into_the_tails():
    """The compiled ``log P(x | c, b, s, e)`` (per label, as the annotator moves read it, and
    from the shared interval ends, as the tables are built) against scipy's ``log_ndtr``,
    exact in both tails: labels up to 200 standard deviations from the perception, relative
    error below 1e-9."""
    from scipy.special import log_ndtr

    from plausible.models.ordered_probit import kernel as compiled

    K = 5
    bias = np.array([0.0, 0.3, -1.7, 2.9, 0.49])
    noise = np.array([1.0, 0.02, 0.3, 0.015, 7.0])
    logit = np.array([-700.0, -2.0, 0.5, -30.0, 1.0])
    table = np.empty((bias.size * K, K))
    compiled.fill_table(bias, noise, logit, K, table)
    for j in range(bias.size):
        for x in range(K):
            for c in range(K):
                a = -np.inf if x == 0 else (x - 0.5 - c - bias[j]) / noise[j]
                b = np.inf if x == K - 1 else (x + 0.5 - c - bias[j]) / noise[j]
                if a > 0:
                    a, b = -b, -a
                earnest = log_ndtr(b) + np.log1p(-np.exp(log_ndtr(a) - log_ndtr(b)))
                e = 1 / (1 + np.exp(-logit[j]))
                expected = np.logaddexp(np.log(e / K), np.log1p(-e) + earnest)
                np.testing.assert_allclose(table[j * K + x, c], expected, rtol=1e-9)
                one = np.zeros((bias.size * K, K), dtype=np.int64)
                one[j * K + x, c] = 1  # one label: the per-label route of the annotator moves
                np.testing.assert_allclose(compiled.annotator_log_likelihood(
                    j, bias[j], noise[j], logit[j], one, 1.0), expected, rtol=1e-9)


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
    """Grades from the model (a tenth of them random answers) pass the ordinal check; the
    same design with 40 % of the items split between the lowest and the highest grade
    (ambiguity, which one true grade plus rater noise cannot produce) fails it: too many
    items span the whole scale."""
    rng = np.random.default_rng(0)
    labels = perceived_grades(rng, rng.integers(5, size=60), rng.normal(0, 0.4, 8),
                              rng.uniform(0.3, 1.0, 8), 4, 5, spam=np.full(8, 0.1))
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
