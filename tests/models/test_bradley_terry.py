"""The Bradley–Terry model of pairwise comparisons and its noisy variant
(:mod:`plausible.models.bradley_terry`): the container's validation, each conditional of the
Gibbs sampler against its closed form, the posterior on three items against importance
sampling from the prior, the noisy sampler against NUTS on the same model, PyMC's route
against the driver's, simulation-based calibration, and a spammer found."""

import math
import warnings

import numpy as np
import pandas as pd
import pymc as pm
import pytest
from scipy import stats

import plausible as pl
from plausible.data.comparisons import Comparisons
from plausible.models.bradley_terry.sampler import (BradleyTerryKernel, PairDesign,
                                                       outcome_log_probabilities, rank_one_hot)
from plausible.inference.sbc import simulation_based_calibration
from plausible.models import bradley_terry

from posterior_agreement import assert_same_posterior


def simulate(rng, worth, n_comparisons, n_annotators, spam=None):
    """Comparisons of random distinct pairs by random annotators, each a Bradley–Terry pick
    of ``worth`` or, at annotator ``j``'s rate ``spam[j]``, a fair coin."""
    n = worth.size
    left = rng.integers(n, size=n_comparisons)
    right = (left + rng.integers(1, n, size=n_comparisons)) % n
    annotator = rng.integers(n_annotators, size=n_comparisons)
    picks = rng.random(n_comparisons) < worth[left] / (worth[left] + worth[right])
    if spam is not None:
        random = rng.random(n_comparisons) < spam[annotator]
        picks = np.where(random, rng.random(n_comparisons) < 0.5, picks)
    return Comparisons(left, right, annotator, picks, np.arange(n), np.arange(n_annotators))


@pytest.fixture(scope="module")
def small():
    """5 items, 40 comparisons by 3 annotators, the first a spammer."""
    rng = np.random.default_rng(0)
    return simulate(rng, rng.gamma(1.0, size=5), 40, 3, spam=np.array([1.0, 0.0, 0.0]))


@pytest.fixture(scope="module")
def three():
    """3 items, 9 comparisons by 2 annotators (an item that wins most, one that loses most)."""
    left = np.array([0, 0, 0, 1, 1, 2, 0, 2, 1])
    right = np.array([1, 2, 1, 2, 0, 0, 2, 1, 2])
    winner_is_left = np.array([1, 1, 0, 1, 0, 0, 1, 0, 1], dtype=bool)
    annotator = np.array([0, 1, 0, 1, 0, 1, 0, 1, 1])
    return Comparisons(left, right, annotator, winner_is_left, np.array(["a", "b", "c"]),
                       np.array(["u", "v"]))


# --- the container ---------------------------------------------------------------------------

FRAME = pd.DataFrame({"worker": ["w1", "w2", "w1", "w3"], "left": ["a", "b", "c", "a"],
                      "right": ["b", "c", "a", "c"], "label": ["a", "c", "a", "c"]},
                     index=[10, 11, 12, 17])


@pytest.mark.parametrize("change, message", [
    ({"right": ["b", "c", "a", "a"]}, "row 17: item 'a' compared with itself"),
    ({"label": ["a", "c", "a", "z"]}, "row 17: label 'z' is neither the left item 'a' nor the "
                                      "right item 'c'"),
    ({"worker": ["w1", "w2", "w1", None]}, "row 17: missing worker"),
    ({"left": ["a", "b", "c", None]}, "row 17: missing left"),
])
def test_from_frame_names_the_row_of_each_error(change, message):
    with pytest.raises(ValueError, match=f"^data.csv: {message}"):
        Comparisons.from_frame(FRAME.assign(**change), source="data.csv")


def test_the_container_round_trips_and_its_classes_are_rank_positions():
    comparisons = Comparisons.from_frame(FRAME)
    assert list(comparisons.items) == ["a", "b", "c"]  # first appearance, left before right
    assert list(comparisons.annotators) == ["w1", "w2", "w3"]
    np.testing.assert_array_equal(comparisons.classes, [1, 2, 3])
    np.testing.assert_array_equal(comparisons.winner_is_left, [True, False, False, False])
    assert comparisons.n_comparisons == 4
    again = Comparisons.from_frame(comparisons.to_frame())
    assert again.content_hash == comparisons.content_hash
    flipped = Comparisons.from_frame(FRAME.assign(label=["b", "c", "a", "c"]))
    assert flipped.content_hash != comparisons.content_hash
    pair = comparisons.subset([0, 2])  # the comparisons between a and c
    assert list(pair.items) == ["a", "c"] and pair.n_comparisons == 2
    with pytest.raises(ValueError, match="item 'b' has no comparison"):
        Comparisons(np.array([0]), np.array([2]), np.array([0]), np.array([True]),
                    np.array(["a", "b", "c"]), np.array(["u"]))


# --- the conditionals -------------------------------------------------------------------------

def test_a_sweep_draws_the_pair_auxiliaries_then_the_gamma_worths_then_the_scale(small):
    """From one state, ``Z_ij ~ Gamma(n_ij, w_i + w_j)``, ``w_i ~ Gamma(a + W_i, b + sum_j
    Z_ij)``, then the worths rescaled to a total ``~ Gamma(n a, b)``: 3000 sweeps against
    the same composition by hand with scipy (log-worth means within 4.5 standard errors,
    spreads within 8 %), and the total against its Gamma law (Kolmogorov–Smirnov)."""
    kernel = BradleyTerryKernel(small, prior=(1.5, 2.0), gamma=2)
    state = (np.log(np.array([0.5, 1.0, 2.0, 0.3, 1.2])), None)
    rng = np.random.default_rng(0)
    draws = np.array([kernel.sweep(rng, state, None)[0] for _ in range(3000)])
    design, n = PairDesign(small), small.n_items
    counts = 2 * np.bincount(design.pair)
    wins = 2 * np.bincount(small.winner, minlength=n)
    w = np.exp(state[0])
    rng = np.random.default_rng(1)
    by_hand = []
    for _ in range(3000):
        z = stats.gamma.rvs(counts, scale=1 / (w[design.first] + w[design.second]),
                            random_state=rng)
        rate = 2.0 + np.bincount(design.first, z, n) + np.bincount(design.second, z, n)
        new = stats.gamma.rvs(1.5 + wins, scale=1 / rate, random_state=rng)
        total = stats.gamma.rvs(n * 1.5, scale=1 / 2.0, random_state=rng)
        by_hand.append(np.log(new * total / new.sum()))
    by_hand = np.array(by_hand)
    se = np.sqrt(draws.var(0) / 3000 + by_hand.var(0) / 3000)
    assert np.all(np.abs(draws.mean(0) - by_hand.mean(0)) < 4.5 * se)
    np.testing.assert_allclose(draws.std(0), by_hand.std(0), rtol=0.08)
    totals = np.exp(draws).sum(axis=1)
    assert stats.kstest(totals, stats.gamma(n * 1.5, scale=1 / 2.0).cdf).pvalue > 1e-3


def test_random_answers_draw_their_conditional_and_the_rates_their_beta(small):
    """Each copy is a random answer with probability ``(e/2) / (e/2 + (1 - e) p_k)``: the
    mean earnest copies per comparison over 4000 draws within 4.5 standard errors, and the
    rates ``Beta(1 + #random, 4 + #earnest)`` given them (mean of ``e - E[e | r]`` near 0)."""
    kernel = BradleyTerryKernel(small, prior=(1.0, 1.0), gamma=2, spam_prior=(1.0, 4.0))
    log_worth = np.log(np.array([0.5, 1.0, 2.0, 0.3, 1.2]))
    spam = np.array([0.7, 0.2, 0.05])
    log_p = outcome_log_probabilities(log_worth, small)
    rng = np.random.default_rng(0)
    earnest, residual = [], []
    for _ in range(4000):  # the kernel keeps the rates as log-odds
        kept, logit_rates = kernel._earnest(rng, log_p, np.log(spam) - np.log1p(-spam))
        rates = 1.0 / (1.0 + np.exp(-logit_rates))
        n_earnest = np.bincount(small.annotator, kept, minlength=3)
        n_copies = 2 * np.bincount(small.annotator, minlength=3)
        earnest.append(kept)
        residual.append(rates - (1.0 + n_copies - n_earnest) / (5.0 + n_copies))
    earnest = np.array(earnest)
    p = np.exp(log_worth[small.winner]) / (np.exp(log_worth[small.left])
                                           + np.exp(log_worth[small.right]))
    e = spam[small.annotator]
    q = (1 - e) * p / (e / 2 + (1 - e) * p)
    se = np.sqrt(2 * q * (1 - q) / 4000)
    assert np.all(np.abs(earnest.mean(0) - 2 * q) < 4.5 * se + 1e-12)
    residual = np.array(residual)
    assert np.all(np.abs(residual.mean(0)) < 4.5 * residual.std(0) / np.sqrt(4000))


# --- the posterior --------------------------------------------------------------------------

def importance_sampling(comparisons, prior, spam_prior=None, n=400_000, seed=0):
    """Self-normalised importance sampling from the prior: ``(log_worth, rank table)`` means
    and their standard errors, each ``(item,)`` and ``(item, class)``."""
    rng = np.random.default_rng(seed)
    log_worth = np.log(rng.gamma(prior[0], 1 / prior[1], size=(n, comparisons.n_items)))
    spam = (rng.beta(*spam_prior, size=(n, comparisons.n_annotators))
            if spam_prior is not None else None)
    log_weight = outcome_log_probabilities(log_worth, comparisons, spam).sum(axis=1)
    weight = np.exp(log_weight - log_weight.max())
    weight /= weight.sum()
    out = []
    for f in (log_worth, rank_one_hot(log_worth, np.float64).reshape(n, -1)):
        mean = weight @ f
        se = np.sqrt(weight ** 2 @ (f - mean) ** 2)
        out.append((mean, se))
    return out


@pytest.mark.parametrize("noisy", [False, True])
def test_three_items_posterior_matches_importance_sampling(three, noisy):
    """On three items the log-worths and the rank table of the Gibbs sampler (plain, and
    noisy with the rates summed out of the weights) agree with importance sampling from the
    prior within 4.5 combined standard errors."""
    build = bradley_terry.build_noisy if noisy else bradley_terry.build
    trace = pl.sample(build(three, prior=(2.0, 1.0)), draws=1000, chains=2, seed=3,
                      log_likelihood=False)
    (worth_mean, worth_se), (rank_mean, rank_se) = importance_sampling(
        three, (2.0, 1.0), (1.0, 4.0) if noisy else None)
    for name, mean, se in (("log_worth", worth_mean, worth_se),
                           ("plausibility", rank_mean, rank_se)):
        draws = trace.posterior[name].transpose("chain", "draw", ...).values.astype(float)
        draws = draws.reshape(*draws.shape[:2], -1)
        total_se = np.hypot(pl.diagnostics.mcse_mean(draws), se)
        assert np.all(np.abs(draws.mean((0, 1)) - mean) < 4.5 * np.maximum(total_se, 1e-9)), name


@pytest.mark.slow  # NUTS; the noisy model's importance-sampling check stays in the quick suite
def test_noisy_gibbs_matches_nuts_on_the_same_model(small):
    """The noisy sampler (indicators and pair auxiliaries augmented, reliability 2 as
    repetitions) against NUTS on the log-worths and log-odds of the rates with everything
    augmented summed out: log-worths, rates and rank table within 4.5 MCSE."""
    gibbs = pl.sample(bradley_terry.build_noisy(small, reliability=2), draws=2000, chains=4,
                      seed=1, log_likelihood=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        nuts = pl.sample(bradley_terry.build_noisy(small, reliability=2, gibbs=False),
                         draws=500, tune=500, chains=4, seed=2, cores=1, progressbar=False,
                         log_likelihood=False)
    assert pl.diagnostics.convergence_report(gibbs).ok
    assert_same_posterior(gibbs, nuts, ("log_worth", "spam", "plausibility"))


def test_pymc_with_the_kernel_step_samples_the_posterior_of_pl_sample(small):
    model = bradley_terry.build(small)
    [step] = pl.inference.steps(model)
    assert isinstance(step, pl.inference.KernelStep)
    assert {v.name for v in step.vars} == {v.name for v in model.value_vars}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        trace = pm.sample(model=model, step=[step], chains=2, draws=1000, tune=100,
                          random_seed=1, progressbar=False, compute_convergence_checks=False,
                          cores=1)
    reference = pl.sample(model, draws=1000, chains=2, seed=2, log_likelihood=False)
    assert_same_posterior(trace, reference, ("worth", "log_worth", "plausibility"))


def test_simulation_based_calibration():
    """Ranks of the true log-worths (and of the noisy rates) among the posterior draws are
    uniform over 30 (noisy: 20) data sets drawn from the prior (Talts et al. 2018)."""
    def plain(rng):
        worth = rng.gamma(1.0, size=6)
        return {"log_worth": np.log(worth)}, simulate(rng, worth, 25, 2)

    def noisy(rng):
        worth, spam = rng.gamma(1.0, size=6), rng.beta(1.0, 4.0, size=3)
        return ({"log_worth": np.log(worth), "spam": spam},
                simulate(rng, worth, 40, 3, spam=spam))

    for build, simulator, names, n in ((bradley_terry.build, plain, ["log_worth"], 30),
                                       (bradley_terry.build_noisy, noisy, ["log_worth", "spam"],
                                        20)):
        result = simulation_based_calibration(build, simulator, var_names=names,
                                              n_simulations=n, draws=100, chains=2, thin=2,
                                              tune=50, seed=4, log_likelihood=False)
        for name, p in result.p_values(bins=10).items():
            assert p > 1e-3, (name, p)


# --- what the model gives ---------------------------------------------------------------------

def test_same_seed_same_draws_log_likelihood_replicates_and_summary(small):
    """Same seed, same draws; the per-comparison log-likelihood is ``gamma (log w_win -
    log(w_l + w_r))`` (a plain loop); replicates keep the design; the rank table computed
    when read is the stored one's mean."""
    model = bradley_terry.build(small, reliability=2)
    first, second = (pl.sample(model, draws=100, chains=2, seed=5, check_convergence=False)
                     for _ in range(2))
    np.testing.assert_array_equal(first.posterior["worth"].values,
                                  second.posterior["worth"].values)
    w = first.posterior["worth"].values[1, 7]
    expected = [2 * (math.log(w[small.winner[k]]) - math.log(w[small.left[k]] + w[small.right[k]]))
                for k in range(small.n_comparisons)]
    np.testing.assert_allclose(first.log_likelihood["comparisons"].values[1, 7], expected,
                               rtol=1e-9)
    assert first.observed_data["comparisons"].sizes["comparison"] == small.n_comparisons
    replicated = bradley_terry.replicate_comparisons(first, small, draws=30, seed=0)
    assert replicated.shape == (30, small.n_comparisons) and replicated.dtype == bool
    summary = pl.sample(model, draws=100, chains=2, seed=5, keep="summary",
                        check_convergence=False)
    assert "plausibility" in summary.posterior.attrs["computed_when_read"]
    np.testing.assert_array_equal(summary.posterior["plausibility"].values,
                                  first.posterior["plausibility"].values)
    top = first.posterior["plausibility"].mean(("chain", "draw")).values
    np.testing.assert_allclose(top.sum(axis=0), 1.0, rtol=1e-6)  # one item at each rank
    np.testing.assert_allclose(top.sum(axis=1), 1.0, rtol=1e-6)


def test_reliability_and_data_frames():
    frame = Comparisons.from_frame(FRAME)
    with pytest.raises(ValueError, match="gibbs=False"):
        bradley_terry.build(frame, reliability=1.5)
    bradley_terry.build(frame, reliability=1.5, gibbs=False)
    model = bradley_terry.build_noisy(FRAME)
    assert list(model.coords["item"]) == ["a", "b", "c"] and "spam" in model.named_vars


def test_the_noisy_variant_finds_a_spammer_that_fails_the_plain_models_check():
    """Two of six annotators answer at random: the noisy model's rates single them out (a
    rate of random answers above 1/2, the others' below 0.3) and it ranks the items no
    worse; the plain model's predictive check flags the spammers' consistency (observed far
    below its replicates, p > 0.99) and, trusting them, the earnest annotators' too; the
    noisy model's flags at most half as many, and no earnest annotator."""
    rng = np.random.default_rng(7)
    worth = np.exp(rng.normal(0, 2.0, size=15))
    spam = np.array([1.0, 1.0, 0, 0, 0, 0.1])
    comparisons = simulate(rng, worth, 900, 6, spam=spam)
    plain, noisy = (pl.sample(build(comparisons), draws=500, chains=2, seed=0,
                              log_likelihood=False, check_convergence=False)
                    for build in (bradley_terry.build, bradley_terry.build_noisy))
    rates = noisy.posterior["spam"].mean(("chain", "draw")).values
    assert rates[:2].min() > 0.5 and rates[2:].max() < 0.3
    flagged = []
    for trace in (plain, noisy):
        check = bradley_terry.predictive_check(trace, comparisons, draws=200, seed=0)
        p = check.query("statistic == 'annotator_consistency'")["p_value"].to_numpy()
        flagged.append((p < 0.01) | (p > 0.99))
    assert flagged[0][:2].all() and flagged[0].sum() >= 2 * flagged[1].sum()
    assert not flagged[1][2:].any()
    rho = [stats.spearmanr(t.posterior["log_worth"].mean(("chain", "draw")), worth)[0]
           for t in (plain, noisy)]
    assert rho[1] >= rho[0] - 0.01
