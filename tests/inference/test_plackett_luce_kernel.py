"""Compiled PL sweep (plausible.models.plackett_luce.kernel) against independent routes:
the numpy likelihood, the enumeration-checked numpy augmentation, and (slow) simulation-based
calibration of the whole sweep, Metropolis moves included."""

import numpy as np
import pytest

from plausible.data.rankings import Rankings
from plausible.models.plackett_luce import kernel
from plausible.maths.logspace import log_gamma_draw, log_gamma_draws
from plausible.models.plackett_luce.gibbs import (
    augment,
    augment_reference,
    draw_worths,
    rescale_log_shift,
)
from plausible.models.plackett_luce.sampler import reference_parts, sample_candidates
from plausible.maths import plackett_luce as pll
from plausible.maths.plackett_luce import logsumexp
from plackett_luce_cases import random_rankings, tile_items


def _scratch(lay):
    width = lay.max_candidates
    max_block = int(np.diff(lay.entry_offsets).max(initial=1))
    return np.empty(width), np.empty(lay.block_offsets.size), np.empty(1 << max_block)


@pytest.mark.parametrize("spread", [1.0, 30.0, 300.0])
def test_item_log_likelihood_matches_numpy(spread):
    rng = np.random.default_rng(int(spread))
    rankings, _ = random_rankings(rng, 40, 9, max_readers=4, max_block=4, max_ranked=8)
    lay = pll.layout(rankings)
    log_cand = np.where(lay.candidate_class >= 0,
                        spread * rng.normal(size=lay.candidate_class.shape), -np.inf)
    log_pool = np.where(lay.n_pooled > 0, spread * rng.normal(size=lay.n_items), -np.inf)
    expected = np.add.reduceat(pll.reader_log_likelihood(lay, log_cand, log_pool),
                               lay.reader_start)
    starts = np.r_[lay.reader_start, lay.n_readers_total]
    got = np.array([
        kernel.item_log_likelihood(starts[i], starts[i + 1], lay.block_offsets,
                                   lay.entry_offsets, lay.entry_candidate, lay.rank,
                                   log_cand[i], log_pool[i], lay.n_candidates[i],
                                   *_scratch(lay))
        for i in range(lay.n_items)
    ])
    finite = np.isfinite(expected)
    assert finite.mean() > 0.8
    np.testing.assert_allclose(got[finite], expected[finite], rtol=1e-9, atol=1e-9)
    assert np.all(got[~finite] == -np.inf)


@pytest.mark.parametrize(("gamma", "offset"), [(1, 0.0), (3, 0.0), (2, -400.0)])
def test_augmentation_with_copies_matches_reference(gamma, offset):
    """Kernel with each reader counted ``gamma`` times (copy-summed size-1 gaps) vs the numpy
    reference on the layout with ``gamma`` explicit copies: same exposure distribution.
    ``offset`` -400 scales every worth by ``e^-400`` (exposures scale by ``e^400``), so every
    tied block takes the log-space lattice, checked against the linear-space reference."""
    rng = np.random.default_rng(gamma)
    rankings, _ = random_rankings(rng, 2, 7, max_readers=3, max_block=4, max_ranked=6)
    n = 20_000
    tiled = tile_items(rankings, n)
    lay1, lay = pll.layout(tiled), pll.layout(tiled, gamma)
    width = lay.max_candidates
    log_cand = np.tile(rng.normal(size=(2, width)), (n, 1))
    log_cand = np.where(lay.candidate_class >= 0, log_cand, -np.inf)
    log_pool = np.where(lay.n_pooled > 0, np.tile(rng.normal(size=2), n), -np.inf)
    got = augment(lay1, log_cand + offset, log_pool + offset, np.random.default_rng(4),
                  gamma=gamma)
    got = [g * np.exp(offset) for g in got]
    ref = augment_reference(lay, log_cand, log_pool, np.random.default_rng(5))
    for g, r in zip(got, ref):
        g, r = g.reshape(n, 2, -1), r.reshape(n, 2, -1)
        se = np.sqrt((g.var(axis=0) + r.var(axis=0)) / n) + 1e-12
        assert np.all(np.abs(g.mean(axis=0) - r.mean(axis=0)) < 5 * se)
        np.testing.assert_allclose(g.std(axis=0), r.std(axis=0), rtol=0.05, atol=1e-9)


@pytest.mark.parametrize("gamma", [1, 3])
def test_gibbs_transition_matches_reference(gamma):
    """One compiled sweep without Metropolis from a fixed state vs the numpy route
    (reference augmentation, conjugate draws, total-worth redraw): same distribution of the
    new log-worths."""
    rng = np.random.default_rng(10 + gamma)
    rankings, _ = random_rankings(rng, 2, 6, max_readers=3, max_block=3, max_ranked=5)
    n, shape, rate = 20_000, 0.3, 1.5
    tiled = tile_items(rankings, n)
    lay1, lay = pll.layout(tiled), pll.layout(tiled, gamma)
    width = lay.max_candidates
    start_cand = np.where(lay.candidate_class >= 0,
                          np.tile(rng.normal(size=(2, width)), (n, 1)), -np.inf)
    start_pool = np.where(lay.n_pooled > 0, np.tile(rng.normal(size=2), n), -np.inf)

    log_cand, log_pool = start_cand.copy(), start_pool.copy()
    kernel.sweep_kernel(
        np.random.default_rng(3),
        np.r_[lay1.reader_start, lay1.n_readers_total], lay1.block_offsets,
        lay1.entry_offsets, lay1.entry_candidate, lay1.rank, lay1.n_candidates, lay1.n_pooled,
        lay1.ranked_count, gamma, rankings.n_classes, shape, rate, 0,
        np.zeros(lay1.n_items, dtype=np.int64), np.zeros((lay1.n_items, width)),
        np.ones((lay1.n_items, width, width)), 5.0, log_cand, log_pool,
        np.zeros(lay1.n_items), np.zeros((lay1.n_items, width, width + 1)),
        np.empty((1, 1, width)), np.empty((1, 1)), False, False)

    ref_rng = np.random.default_rng(6)
    exposure, pool_exposure = augment_reference(lay, start_cand, start_pool, ref_rng)
    ref_cand, ref_pool = draw_worths(lay, exposure, pool_exposure, shape, rate, ref_rng)
    shift = rescale_log_shift(np.logaddexp(logsumexp(ref_cand, axis=1), ref_pool),
                              lay.n_classes, shape, rate, ref_rng)
    ref_cand, ref_pool = ref_cand + shift[:, None], ref_pool + shift

    def features(c, p):  # log-worths of valid slots and the log pool, (n, 2, width + 1)
        both = np.concatenate([c, p[:, None]], axis=1).reshape(n, 2, width + 1)
        return np.where(np.isfinite(both), both, 0.0)

    got, ref = features(log_cand, log_pool), features(ref_cand, ref_pool)
    se = np.sqrt((got.var(axis=0) + ref.var(axis=0)) / n) + 1e-12
    assert np.all(np.abs(got.mean(axis=0) - ref.mean(axis=0)) < 5 * se)
    np.testing.assert_allclose(got.std(axis=0), ref.std(axis=0), rtol=0.05, atol=1e-9)


def test_log_gamma_draws_match_numpy():
    """Kernel ``log G(s)`` (boosted below 1) vs the numpy route, tiny shapes included."""
    for s in (1.0 / 419, 0.3, 1.0, 7.5):
        rng = np.random.default_rng(int(s * 1000))
        got = np.array([log_gamma_draw(rng, s) for _ in range(40_000)])
        ref = log_gamma_draws(np.random.default_rng(1), np.full(40_000, s))
        se = np.sqrt((got.var() + ref.var()) / got.size)
        assert abs(got.mean() - ref.mean()) < 5 * se, s
        np.testing.assert_allclose(got.std(), ref.std(), rtol=0.05)


def _simulate(rng, n_items, n_classes, shape, n_readers):
    """Worths from the prior; each reader a PL arrival order, truncated at a random length and
    cut into random (non-informative) tied blocks."""
    worth = np.maximum(rng.gamma(shape, 1.0, size=(n_items, n_classes)), 1e-300)
    selectors = []
    for i in range(n_items):
        readers = []
        for _ in range(n_readers):
            order = np.argsort(rng.exponential(size=n_classes) / worth[i])
            m = int(rng.integers(1, 5))
            cuts = np.flatnonzero(rng.random(m - 1) < 0.6) + 1
            readers.append([b.tolist() for b in np.split(order[:m], cuts)])
        selectors.append(readers)
    return worth / worth.sum(axis=1, keepdims=True), Rankings.from_selectors(
        selectors, classes=n_classes)


@pytest.mark.slow
@pytest.mark.parametrize("rounds", [0, 2])
def test_sweep_simulation_based_calibration(rounds):
    """SBC of the whole compiled sweep (Gibbs + ``rounds`` Metropolis rounds): for items
    drawn from the prior the rank of the true candidate plausibility / pooled mass among
    thinned posterior draws is uniform (items are independent replicates)."""
    from scipy import stats

    rng = np.random.default_rng(2026 + rounds)
    truth, rankings = _simulate(rng, n_items=600, n_classes=8, shape=0.25, n_readers=6)
    trace = sample_candidates(rankings, draws=100, tune=200, chains=2, thin=5,
                              seed=rounds, shape=0.25, metropolis_rounds=rounds,
                              dtype=np.float64)
    post = trace["posterior"]
    cand_class = trace["constant_data"]["candidate_class"].values
    valid = cand_class >= 0
    true_cand = np.take_along_axis(truth, np.maximum(cand_class, 0), axis=1)
    pooled = trace["constant_data"]["n_pooled"].values > 0
    true_pool = np.where(pooled[:, None], truth, 0.0)
    mask = np.ones_like(truth, dtype=bool)
    mask[np.nonzero(valid)[0], cand_class[valid]] = False
    true_pool = np.where(mask, truth, 0.0).sum(axis=1)
    draws_c = post["plausibility_candidates"].values.reshape(-1, *valid.shape)
    draws_p = post["pooled_mass"].values.reshape(-1, valid.shape[0])
    ranks = np.r_[(draws_c < true_cand).sum(axis=0)[valid],
                  (draws_p < true_pool).sum(axis=0)[pooled]]
    bins = 10
    counts = np.bincount(np.minimum(ranks * bins // (draws_c.shape[0] + 1), bins - 1),
                         minlength=bins)
    assert stats.chisquare(counts).pvalue > 0.001, counts


def test_independence_moves_keep_the_posterior():
    """Independence moves alone (no Gibbs step), from a mis-centred, too narrow t proposal,
    leave the posterior invariant: replicates of one item started from Gibbs draws (the Gibbs
    step is checked against the reference above) keep the distribution that further Gibbs
    sweeps give. A wrong Hastings ratio would drift toward the proposal."""
    rng = np.random.default_rng(21)
    rankings, _ = random_rankings(rng, 1, 6, max_readers=3, max_block=3, max_ranked=4)
    n, gamma, shape, rate = 4000, 2, 0.5, 1.0
    lay = pll.layout(tile_items(rankings, n))
    width = lay.max_candidates
    starts = np.r_[lay.reader_start, lay.n_readers_total]
    layout_arrays = (lay.block_offsets, lay.entry_offsets, lay.entry_candidate, lay.rank)
    ref = reference_parts(lay)
    d = int(lay.n_candidates[0] + (lay.n_pooled[0] > 0) - 1)
    mean = np.ones((n, width))  # far from the posterior's centre
    chol = np.broadcast_to(0.7 * np.eye(width), (n, width, width)).copy()
    gen = np.random.default_rng(5)

    def gibbs(log_cand, log_pool, sweeps):
        for _ in range(sweeps):
            kernel.sweep_kernel(
                gen, starts, *layout_arrays, lay.n_candidates, lay.n_pooled,
                lay.ranked_count, gamma, rankings.n_classes, shape, rate, 0, ref, mean, chol,
                5.0, log_cand, log_pool, np.zeros(n), np.zeros((n, width, width + 1)),
                np.empty((1, 1, width)), np.empty((1, 1)), False, False)

    log_cand = np.where(lay.candidate_class >= 0, 0.0, -np.inf)
    log_pool = np.where(lay.n_pooled > 0, 0.0, -np.inf)
    gibbs(log_cand, log_pool, 100)
    gibbs_cand, gibbs_pool = log_cand.copy(), log_pool.copy()
    gibbs(gibbs_cand, gibbs_pool, 20)

    scratch = [np.empty(width) for _ in range(4)] + list(_scratch(lay))
    accepted = 0
    for i in range(n):
        log_pool[i], moves = kernel._metropolis_item(
            gen, starts[i], starts[i + 1], gamma, *layout_arrays, log_cand[i], log_pool[i],
            lay.n_candidates[i], lay.n_pooled[i], shape, rate, ref[i], mean[i], chol[i], 5.0,
            20, *scratch)
        accepted += moves
    assert 0.05 < accepted / (20 * n) < 0.8  # the ratio matters: many moves are rejected

    def log_plausibilities(c, p):
        both = np.concatenate([c, p[:, None]], axis=1)
        both = both - logsumexp(both, axis=1)[:, None]
        return both[:, np.isfinite(both[0])][:, : d + 1]

    got = log_plausibilities(log_cand, log_pool)
    ref_draws = log_plausibilities(gibbs_cand, gibbs_pool)
    se = np.sqrt((got.var(axis=0) + ref_draws.var(axis=0)) / n)
    assert np.all(np.abs(got.mean(axis=0) - ref_draws.mean(axis=0)) < 5 * se)
    np.testing.assert_allclose(got.std(axis=0), ref_draws.std(axis=0), rtol=0.08)
